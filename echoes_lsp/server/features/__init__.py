"""LSP handlers, one module per feature. Each module lists its handlers in `FEATURES` (and its
commands in `COMMANDS`); `app.build_server` registers them all, wrapped in `guard.guarded`. What
every document request starts from is written once, in `document_context`."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple


class Feature(NamedTuple):
    """An LSP method, the module-level function that handles it, and its registration options."""

    method: str
    handler: Callable[..., Any]
    options: Any = None


class Command(NamedTuple):
    """A `workspace/executeCommand` command and its handler."""

    name: str
    handler: Callable[..., Any]
