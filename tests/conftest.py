"""Settings for every test: servers started by the tests re-raise unexpected exceptions."""

from __future__ import annotations

import os

# Read by `echoes_lsp.server.echoes_server`: a handler's unexpected exception is re-raised (the request is
# answered with it) rather than answered as an internal error, so a broken handler fails its
# test. Every server a test starts inherits this process' environment (ECHOES_LSP_STRICT=0
# in the environment runs them as a person would, with internal errors answered).
os.environ.setdefault("ECHOES_LSP_STRICT", "1")
