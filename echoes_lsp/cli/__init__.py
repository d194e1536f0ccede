"""`echoes-lsp check` and `echoes-lsp init`: the checker, its reports and watch mode, `--fix`, and
the project configuration file. It builds on the engine and calls the project runtime through
`echoes_lsp.runtime_client`; it never imports the server."""
