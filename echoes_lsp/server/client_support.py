"""What the client said it can do, read once at `initialize`.

Every request the server sends to the client (a question, a document to show, an edit to
apply, a file to rename) and every choice of format goes through this one record, so that a
client which declares less than VS Code (eglot, ALE, a bare `vim.lsp` setup) gets a fallback
that still works instead of a request it never answers. LSP has no capability for some of what
matters (whether completion items' `command` is run, whether the file watcher sees a replace by
rename); those are known per client, by the name it sends in `clientInfo`, and listed here.
"""

from __future__ import annotations

from typing import Any, FrozenSet, Optional, Sequence

from lsprotocol import types

# The name of a client that sends no `clientInfo`. eglot 1.9 and ALE 3.3 send none (their
# `initialize` is in tests/lsp/clients/), so an unnamed client is taken to be like them.
UNNAMED = ""
# Clients, by `clientInfo.name`, that do not run a completion item's `command`: eglot 1.9 and
# ALE 3.3.0 (unnamed) insert an item's edits without running it; later eglot releases name
# themselves "Eglot", and "ale" is kept for an ALE that would. VS Code runs the command, and so
# does Neovim 0.11's `vim.lsp.completion` ("Neovim").
NO_COMPLETION_COMMANDS: FrozenSet[str] = frozenset({UNNAMED, "Eglot", "ale"})
# Clients, by `clientInfo.name`, whose file watcher misses a file replaced by rename (how the
# runtime writes), so the vault is polled for them as if no watcher was registered. eglot 1.9
# accepts the registration but drops every rename event of its file-notify watch.
WATCHER_MISSES_RENAMES: FrozenSet[str] = frozenset({UNNAMED})


def declared(capabilities: Any, path: str) -> Any:
    """A capability by dotted attribute path (`window.show_document.support`), None if absent."""
    value: Any = capabilities
    for name in path.split("."):
        value = getattr(value, name, None)
        if value is None:
            return None
    return value


def preferred_markup(formats: Optional[Sequence[types.MarkupKind]]) -> types.MarkupKind:
    """The first format the client lists (it lists them by preference); Markdown when it lists
    none, as clients that predate the list render it."""
    for kind in formats or ():
        if kind in (types.MarkupKind.Markdown, types.MarkupKind.PlainText):
            return kind
    return types.MarkupKind.Markdown if not formats else types.MarkupKind.PlainText


class ClientSupport:
    """The client's abilities that change what the server sends. Built by `of`; the default
    (no `initialize` seen) assumes nothing beyond the base protocol."""

    __slots__ = (
        "apply_edit",
        "completion_commands",
        "document_changes",
        "documentation_format",
        "folding_limit",
        "folding_lines_only",
        "hover_format",
        "inlay_hint_refresh",
        "message_requests",
        "name",
        "rename_files",
        "semantic_tokens_refresh",
        "show_document",
        "watcher_sees_renames",
    )

    def __init__(self) -> None:
        self.name = ""
        # window/showMessageRequest: the client answers a question with one of its actions.
        self.message_requests = False
        # window/showDocument: the client opens a document the server names.
        self.show_document = False
        # workspace/applyEdit: the client applies an edit the server sends.
        self.apply_edit = False
        # A workspace edit may rename files (resource operation "rename").
        self.rename_files = False
        # A workspace edit may carry `documentChanges` (versioned edits) rather than `changes`.
        self.document_changes = False
        self.hover_format = types.MarkupKind.Markdown
        # The format of a completion item's `documentation`.
        self.documentation_format = types.MarkupKind.Markdown
        # The client runs a completion item's `command` after inserting it.
        self.completion_commands = False
        self.watcher_sees_renames = True
        # workspace/inlayHint/refresh and workspace/semanticTokens/refresh: the client asks
        # again for the hints and tokens of the documents it shows.
        self.inlay_hint_refresh = False
        self.semantic_tokens_refresh = False
        # Folding ranges: the client folds whole lines only (it ignores columns), and takes at
        # most this many ranges (None: no limit).
        self.folding_lines_only = False
        self.folding_limit: Optional[int] = None

    @classmethod
    def of(cls, params: Optional[types.InitializeParams]) -> ClientSupport:
        support = cls()
        if params is None:
            return support
        caps = params.capabilities
        info = params.client_info
        support.name = info.name if info is not None else UNNAMED
        support.message_requests = declared(caps, "window.show_message") is not None
        support.show_document = bool(declared(caps, "window.show_document.support"))
        support.apply_edit = bool(declared(caps, "workspace.apply_edit"))
        operations = declared(caps, "workspace.workspace_edit.resource_operations") or ()
        support.rename_files = types.ResourceOperationKind.Rename in operations
        # Resource operations only travel in `documentChanges`, so a client that lists `rename`
        # among them accepts both (Neovim does not set `documentChanges` but applies them).
        support.document_changes = support.rename_files or bool(
            declared(caps, "workspace.workspace_edit.document_changes")
        )
        support.hover_format = preferred_markup(
            declared(caps, "text_document.hover.content_format")
        )
        # A client that lists no format for completion documentation renders it as it renders
        # hovers (eglot 1.9 shows Markdown as Markdown only with markdown-mode installed).
        listed = declared(caps, "text_document.completion.completion_item.documentation_format")
        support.documentation_format = preferred_markup(listed) if listed else support.hover_format
        support.folding_lines_only = bool(
            declared(caps, "text_document.folding_range.line_folding_only")
        )
        support.folding_limit = declared(caps, "text_document.folding_range.range_limit")
        support.completion_commands = support.name not in NO_COMPLETION_COMMANDS
        support.watcher_sees_renames = support.name not in WATCHER_MISSES_RENAMES
        support.inlay_hint_refresh = bool(declared(caps, "workspace.inlay_hint.refresh_support"))
        support.semantic_tokens_refresh = bool(
            declared(caps, "workspace.semantic_tokens.refresh_support")
        )
        return support
