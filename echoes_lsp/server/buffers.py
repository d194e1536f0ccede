"""Open documents whose incremental edits cost the lines they touch, not the whole text.

pygls 2.1 applies an incremental change by splitting the whole document into lines and writing
every line out again: about 35 ms for a 5 MB page, on the event loop, for each keystroke.
`Buffer` finds the edited range with a search for line breaks up to the range's last line and
joins three slices. Lines end at `\\n`, `\\r\\n` or `\\r`, as the LSP specification says; a
document with a `\\r` in it keeps pygls's own method, whose line splitting also counts other
characters (U+2028, form feeds) as line breaks that clients do not.

A document's text is kept as Unicode text: a lone surrogate (JSON can carry `"\\ud800"`) becomes
U+FFFD, which counts as one unit in every position encoding, as the surrogate did, so later edits
land where the client meant them. A document whose URI names no local file (`uri_problem`) is not
kept at all.
"""

from __future__ import annotations

import re
from typing import Any, Optional
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from .lsp_convert import Columns, is_text, uri_problem

SURROGATE = re.compile("[\ud800-\udfff]")


def as_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD, the replacement character."""
    return text if is_text(text) else SURROGATE.sub("\ufffd", text)


def offset_of(text: str, position: types.Position, columns: Columns) -> int:
    """The offset in `text` (lines ending in `\\n` only) of an LSP position; a line past the
    end is the end of the text, a column past the end of its line is the line's end."""
    start = 0
    for _ in range(position.line):
        found = text.find("\n", start)
        if found == -1:
            return len(text)
        start = found + 1
    end = text.find("\n", start)
    line = text[start : end if end != -1 else len(text)]
    return start + columns.from_client(line, position.character)


class Buffer(TextDocument):
    """pygls's text document with a faster incremental edit."""

    def __init__(self, *args: Any, columns: Optional[Columns] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.columns = columns or Columns()
        if self._source is not None:
            self._source = as_text(self._source)

    def apply_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        change.text = as_text(change.text)
        super().apply_change(change)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        source = self.source
        if "\r" in source or "\r" in change.text:
            super()._apply_incremental_change(change)
            return
        start = offset_of(source, change.range.start, self.columns)
        end = max(start, offset_of(source, change.range.end, self.columns))
        self._source = source[:start] + change.text + source[end:]


class Buffers(Workspace):
    """A workspace whose documents are `Buffer`s, for URIs that name local files."""

    def put_text_document(self, text_document: types.TextDocumentItem, *args: Any) -> None:
        if uri_problem(text_document.uri) is None:
            super().put_text_document(text_document, *args)

    def update_text_document(
        self,
        text_doc: types.VersionedTextDocumentIdentifier,
        change: types.TextDocumentContentChangeEvent,
    ) -> None:
        """Apply a change to an open document; a change to any other is ignored (the feature
        handler logs why)."""
        if self.text_documents.get(unquote(text_doc.uri)) is not None:
            super().update_text_document(text_doc, change)

    def _create_text_document(
        self,
        doc_uri: str,
        source: Optional[str] = None,
        version: Optional[int] = None,
        language_id: Optional[str] = None,
    ) -> TextDocument:
        return Buffer(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
            columns=Columns.negotiated(self.position_encoding),
        )
