"""echoes-lsp: language server, validator and runtime launcher for EchoesVault."""

__version__ = "0.1.0"
