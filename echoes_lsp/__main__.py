"""`echoes-lsp` command line: `serve`, `check`, `runtime`."""

from __future__ import annotations

import os
import sys
from typing import List, Optional

from . import __version__

USAGE = """usage: echoes-lsp <command> [options]

commands:
  serve     run the language server (stdio by default; --tcp HOST:PORT, --ws HOST:PORT)
  init      put a project under EchoesVault and say what was written (--dry-run: only say)
  check     validate a vault, a folder or files (see `echoes-lsp check --help`)
  runtime   run the bundled EchoesVault runtime with the given arguments
            (`echoes-lsp runtime --version`: its engine and protocol versions)
  nvim-plugin
            print the directory of the Neovim plugin installed with the package
  --version print the version, with the bundled runtime's engine and protocol versions
"""


def nvim_plugin(rest: List[str]) -> int:
    """`echoes-lsp nvim-plugin`: where the Neovim plugin is, for 'runtimepath'. Installed from the
    wheel it is `echoes_lsp/nvim`; run from a checkout, `editors/nvim`."""
    if rest:
        sys.stderr.write("echoes-lsp nvim-plugin takes no arguments\n")
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (
        os.path.join(here, "nvim"),
        os.path.join(os.path.dirname(here), "editors", "nvim"),
    ):
        if os.path.isfile(os.path.join(candidate, "lsp", "echoes_lsp.lua")):
            sys.stdout.write(candidate + "\n")
            return 0
    sys.stderr.write("echoes-lsp: this installation has no Neovim plugin (echoes_lsp/nvim)\n")
    return 1


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command in ("--version", "version"):
        from .runtime.echoes_vault import ENGINE_VERSION, PROTOCOL_VERSION

        sys.stdout.write(
            f"echoes-lsp {__version__} (runtime engine {ENGINE_VERSION}, "
            f"EchoesVault Protocol {PROTOCOL_VERSION})\n"
        )
        return 0
    if command == "serve":
        from .server.app import serve

        return serve(rest)
    if command == "check":
        from .cli.check_command import run

        if argv is not None:
            return run(rest)
        code = run(rest, retain=True)
        # The process ends here: skip tearing down the vault models object by object.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    if command == "init":
        from .cli.init_command import main as init

        return init(rest)
    if command == "nvim-plugin":
        return nvim_plugin(rest)
    if command == "runtime":
        from .runtime_client import run_bundled

        return run_bundled(rest)
    sys.stderr.write(f"echoes-lsp: unknown command {command!r}\n\n{USAGE}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
