"""LSP handlers, one module per feature; each registers itself on the server."""
