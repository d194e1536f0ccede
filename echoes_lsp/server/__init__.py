"""The language server: transports, client settings, the server object and `features/`, one
module per LSP feature. It builds on the engine and calls the project runtime through
`echoes_lsp.runtime_client`; it never imports the CLI."""
