"""Conversions between engine values (paths, code-point columns) and LSP types."""

from __future__ import annotations

import json
import os
from typing import Callable, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path, to_fs_path

from ..engine.codes import CODES, ERROR, HINT, INFORMATION, WARNING
from ..engine.findings import Finding
from ..engine.plain_text import markdown_to_plain
from ..runtime import echoes_vault as rules

REQUEST_FAILED = -32803
SOURCE = "echoes"

LSP_SEVERITY = {
    ERROR: types.DiagnosticSeverity.Error,
    WARNING: types.DiagnosticSeverity.Warning,
    INFORMATION: types.DiagnosticSeverity.Information,
    HINT: types.DiagnosticSeverity.Hint,
}


class JsonText(str):
    """A request's result already written as JSON (ASCII, as `json.dumps` writes it), sent as it
    is (`transport.EchoesProtocol`). For the answers that list a whole page (its folding ranges,
    inlay hints, semantic tokens): thousands of protocol objects, or even of plain dictionaries
    and integers, cost milliseconds to convert and encode on every request, while the text of
    each part can be made once and kept between requests."""


def json_list(parts: Iterable[str]) -> JsonText:
    """A JSON array of items each already written as JSON."""
    return JsonText("[" + ",".join(parts) + "]")


# The JSON text of the small integers (semantic tokens are mostly integers under a hundred).
SMALL_INTS = tuple(map(str, range(4096)))


def int_texts(numbers: Sequence[int]) -> List[str]:
    """The JSON text of each of non-negative integers (line numbers past the table, as the
    hints of a long page have, are written one by one)."""
    if max(numbers, default=0) < len(SMALL_INTS):
        return list(map(SMALL_INTS.__getitem__, numbers))
    return list(map(str, numbers))


def json_ints(numbers: Sequence[int]) -> str:
    """Non-negative integers as the items of a JSON array, without the brackets."""
    return ",".join(int_texts(numbers))


# An `InlayHint` as JSON is its line's number between these and what `hint_rest` writes.
HINT_OPEN = '{"position":{"line":'


def hint_rest(character: int, label: str) -> str:
    """What follows the line number in an `InlayHint` as JSON."""
    return f',"character":{character}}},"label":{json.dumps(label)},"paddingLeft":true}}'


def hint_json(line: int, character: int, label: str) -> str:
    """An `InlayHint` as JSON."""
    return HINT_OPEN + str(line) + hint_rest(character, label)


def hint_pieces(hints: Iterable[Tuple[int, str]]) -> Tuple[str, ...]:
    """The hints of one line, (client column, label) each, as JSON items of a list, in the
    pieces that its line's number joins (`number.join(pieces)`): a line's hints are written
    once and stay right when lines above it are added or removed."""
    rests = [hint_rest(character, label) for character, label in hints]
    if not rests:
        return ("",)
    return (HINT_OPEN, *(rest + "," + HINT_OPEN for rest in rests[:-1]), rests[-1])


def is_text(text: str) -> bool:
    """Whether `text` is Unicode text that can be written as UTF-8: JSON can carry lone
    surrogates (`"\\ud800"`), which neither a file name nor a file can hold."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def uri_problem(uri: str) -> Optional[str]:
    """Why a URI from the client names no local file this server may read, or None. Such a URI
    is ignored wherever it comes: a path holding NUL or an undecodable byte would make every
    later look at the disk fail."""
    scheme, colon, _rest = uri.partition(":")
    if not colon or scheme.lower() != "file":
        return "not a file: URI"
    try:
        decoded = unquote(uri, errors="strict")
    except UnicodeDecodeError:
        return "it holds a %-escape that is not UTF-8 text"
    if "\x00" in decoded:
        return "it holds a NUL byte"
    if not is_text(decoded):
        return "it holds a lone surrogate, which no file name can hold"
    try:
        path = to_fs_path(uri)
    except Exception:  # a URI that does not parse
        return "it cannot be read as a file path"
    if not path or not os.path.isabs(path):
        return "it names no absolute path"
    return None


def uri_to_path(uri: str) -> Optional[str]:
    """The absolute path a `file:` URI names; None for any URI with a `uri_problem`."""
    if uri_problem(uri) is not None:
        return None
    path = to_fs_path(uri)
    return os.path.abspath(path) if path else None


def path_to_uri(path: str) -> str:
    return from_fs_path(path) or ("file://" + path)


def markup(kind: types.MarkupKind, markdown: str) -> types.MarkupContent:
    """Markdown in the format the client asked for, credential-shaped text masked: before the
    rendering (which must never see a value) and after it (which must not assemble one)."""
    value = rules.mask_secrets(markdown)
    if kind == types.MarkupKind.PlainText:
        value = rules.mask_secrets(markdown_to_plain(value))
    return types.MarkupContent(kind=kind, value=value)


def request_failed(message: str, data: Optional[dict] = None) -> JsonRpcException:
    return JsonRpcException(message=message, code=REQUEST_FAILED, data=data)


def shown(error: JsonRpcException) -> JsonRpcException:
    """Mark an error whose message the user has already been shown."""
    error.shown = True  # type: ignore[attr-defined]
    return error


class Columns:
    """Code-point columns ↔ client units (UTF-16 unless UTF-32/UTF-8 was negotiated)."""

    def __init__(self, encoding: str = "utf-16") -> None:
        self.encoding = encoding

    @classmethod
    def negotiated(cls, encoding: object) -> Columns:
        """The columns of a negotiated position encoding: a `PositionEncodingKind`, the plain
        string a client sent, or None (UTF-16, the protocol's default)."""
        name = getattr(encoding, "value", encoding) or "utf-16"
        return cls(str(name).lower())

    def units(self, text: str) -> int:
        if self.encoding == "utf-32" or text.isascii():
            return len(text)
        if self.encoding == "utf-8":
            return len(text.encode("utf-8"))
        return len(text.encode("utf-16-le", "surrogatepass")) // 2

    def same_as_code_points(self, line_text: str) -> bool:
        """Whether every column of this line is the same in client units and code points."""
        if self.encoding == "utf-32" or line_text.isascii():
            return True
        return self.encoding == "utf-16" and self.units(line_text) == len(line_text)

    def to_client(self, line_text: str, column: int) -> int:
        column = max(0, min(column, len(line_text)))
        if self.encoding == "utf-32" or line_text.isascii():
            return column
        return self.units(line_text[:column])

    def from_client(self, line_text: str, character: int) -> int:
        """Client units to a code-point column, clamped to the line."""
        if character <= 0:
            return 0
        if self.encoding == "utf-32" or line_text.isascii():
            return min(character, len(line_text))
        count = 0
        for index, ch in enumerate(line_text):
            if count >= character:
                return index
            count += self.units(ch)
        return len(line_text)


def make_range(
    lines: Sequence[str],
    columns: Columns,
    line: int,
    start: int,
    end_line: int,
    end: int,
) -> types.Range:
    """An LSP range for engine coordinates, clamped to the text so it is always valid."""
    last = max(0, len(lines) - 1)
    line = max(0, min(line, last))
    end_line = max(line, min(end_line, last))
    first_text = lines[line] if lines else ""
    last_text = lines[end_line] if lines else ""
    start_char = columns.to_client(first_text, start)
    end_char = columns.to_client(last_text, end)
    if end_line == line and end_char < start_char:
        end_char = start_char
    return types.Range(
        start=types.Position(line=line, character=start_char),
        end=types.Position(line=end_line, character=end_char),
    )


def to_diagnostic(
    finding: Finding,
    severity: str,
    lines: Sequence[str],
    columns: Columns,
    lines_of: Callable[[str], List[str]],
) -> types.Diagnostic:
    code = CODES[finding.code]
    related = None
    if finding.related:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=path_to_uri(item.path),
                    range=make_range(
                        lines_of(item.path), columns, item.line, item.start, item.line, item.end
                    ),
                ),
                message=item.message,
            )
            for item in finding.related
        ]
    return types.Diagnostic(
        range=make_range(
            lines, columns, finding.line, finding.start, finding.end_line, finding.end
        ),
        message=finding.message,
        severity=LSP_SEVERITY[severity],
        code=finding.code,
        code_description=types.CodeDescription(href=code.url) if code.url else None,
        source=SOURCE,
        related_information=related,
        tags=[types.DiagnosticTag.Deprecated] if finding.code == "EV301" else None,
        data={"code": finding.code},
    )
