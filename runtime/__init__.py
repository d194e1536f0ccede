"""The portable EchoesVault runtime, installed as `echoes_lsp.runtime`.

`echoes_vault.py` is one stdlib-only file: `init` copies it into each project as
`.echoes-vault/echoes_vault.py`, and the server and `check` import its rules from here.
"""
