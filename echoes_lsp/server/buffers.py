"""Open documents whose incremental edits cost the lines they touch, not the whole text.

pygls 2.1 applies an incremental change by splitting the whole document into lines and writing
every line out again: about 35 ms for a 5 MB page, on the event loop, for each keystroke.
`Buffer` keeps where each line begins, finds the edited range there, joins three slices and
shifts the line starts after the edit. Lines end at `\\n`, `\\r\\n` or `\\r`, as the LSP specification says; a
document with a `\\r` in it keeps pygls's own method, whose line splitting also counts other
characters (U+2028, form feeds) as line breaks that clients do not.

A document's text is kept as Unicode text: a lone surrogate (JSON can carry `"\\ud800"`) becomes
U+FFFD, which counts as one unit in every position encoding, as the surrogate did, so later edits
land where the client meant them. A document whose URI names no local file (`uri_problem`) is not
kept at all.
"""

from __future__ import annotations

import re
from itertools import repeat
from operator import add
from typing import Any, List, Optional, Sequence, Tuple
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from .lsp_convert import Columns, is_text, uri_problem

SURROGATE = re.compile("[\ud800-\udfff]")


def as_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD, the replacement character."""
    return text if is_text(text) else SURROGATE.sub("\ufffd", text)


NEWLINE = re.compile("\n")


def line_starts(text: str) -> List[int]:
    """Where each line of `text` (lines ending in `\\n` only) begins."""
    return [0, *(found.end() for found in NEWLINE.finditer(text))]


def offset_in(
    text: str, starts: Sequence[int], position: types.Position, columns: Columns
) -> Tuple[int, int]:
    """The line and the offset in `text` of an LSP position; a line past the end is the end of
    the text, a column past the end of its line is the line's end."""
    line = position.line
    if line >= len(starts):
        return len(starts) - 1, len(text)
    begin = starts[line]
    end = starts[line + 1] - 1 if line + 1 < len(starts) else len(text)
    return line, begin + columns.from_client(text[begin:end], position.character)


class Buffer(TextDocument):
    """pygls's text document with a faster incremental edit: where each line begins is kept
    between edits (an edit shifts the lines after it), so finding the edited range costs no
    search from the top of a long page."""

    def __init__(self, *args: Any, columns: Optional[Columns] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.columns = columns or Columns()
        if self._source is not None:
            self._source = as_text(self._source)
        self._starts: Tuple[Optional[str], List[int]] = (None, [0])  # (a text, its line starts)
        self._lines: Tuple[Optional[str], List[str]] = (None, [])  # (a text, its lines)

    def apply_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        change.text = as_text(change.text)
        super().apply_change(change)

    def line_starts(self, text: str) -> List[int]:
        """The line starts of `text`, kept from the last edit when it made this text."""
        if self._starts[0] is not text:
            self._starts = (text, line_starts(text))
        return self._starts[1]

    def kept_lines(self, text: str) -> List[str]:
        """`text.split("\\n")`, kept from the last edit when it made this text: the lines it did
        not touch are the same string objects as before, so whoever compares the lines with
        an earlier list, or looks them up, pays for the edited ones only. Never changed in
        place (an edit makes a new list): callers keep and compare them."""
        if self._lines[0] is not text:
            self._lines = (text, text.split("\n"))
        return self._lines[1]

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        source = self.source
        if "\r" in source or "\r" in change.text:
            super()._apply_incremental_change(change)
            return
        starts = self.line_starts(source)
        first, start = offset_in(source, starts, change.range.start, self.columns)
        last, end = offset_in(source, starts, change.range.end, self.columns)
        if end < start:  # an end before the start: an insertion at the start
            last, end = first, start
        inserted = change.text
        self._source = source[:start] + inserted + source[end:]
        shift = len(inserted) - (end - start)
        new_starts = (
            starts[: first + 1]
            + [start + found.end() for found in NEWLINE.finditer(inserted)]
            + list(map(add, starts[last + 1 :], repeat(shift)))
        )
        self._starts = (self._source, new_starts)
        if self._lines[0] is source:
            self._lines = (self._source, self._edited_lines(self._source, first, last, new_starts))

    def _edited_lines(self, text: str, first: int, last: int, starts: List[int]) -> List[str]:
        """The lines of `text`, the text after an edit of lines `first` to `last` (`starts`: its
        line starts): those lines read again from it, the others the same objects."""
        lines = self._lines[1]
        stop = last + len(starts) - len(lines)  # the last edited line, as the text now is
        end = starts[stop + 1] - 1 if stop + 1 < len(starts) else len(text)
        return lines[:first] + text[starts[first] : end].split("\n") + lines[last + 1 :]


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
