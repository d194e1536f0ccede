"""`Buffer` applies incremental edits as pygls does, in time proportional to the edit."""

from __future__ import annotations

from typing import List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument

from echoes_lsp.server.buffers import Buffer, Buffers
from echoes_lsp.server.lsp_convert import Columns

ENCODINGS = {
    "utf-8": types.PositionEncodingKind.Utf8,
    "utf-16": types.PositionEncodingKind.Utf16,
    "utf-32": types.PositionEncodingKind.Utf32,
}
# Letters, spaces, accents and characters outside the Basic Multilingual Plane; no line
# breaks but `\n` (pygls splits on others too, which clients do not).
CHARS = st.sampled_from(list("ab [#é\u0301中😀\n"))
TEXTS = st.text(CHARS, max_size=60)


def documents(text: str, encoding: str) -> Tuple[Buffer, TextDocument]:
    codec = PositionCodec(encoding=ENCODINGS[encoding])
    ours = Buffer("file:///x.md", text, position_codec=codec, columns=Columns(encoding))
    theirs = TextDocument("file:///x.md", text, position_codec=codec)
    return ours, theirs


def boundaries(text: str, encoding: str) -> List[types.Position]:
    """Every position at a character boundary, in the encoding's units, plus end-of-line."""
    columns = Columns(encoding)
    positions = []
    for number, line in enumerate(text.split("\n")):
        positions.extend(
            types.Position(line=number, character=columns.to_client(line, column))
            for column in range(len(line) + 1)
        )
    return positions


@settings(max_examples=300, deadline=None)
@given(
    text=TEXTS,
    encoding=st.sampled_from(sorted(ENCODINGS)),
    inserted=TEXTS,
    data=st.data(),
)
def test_an_edit_gives_what_pygls_gives(
    text: str, encoding: str, inserted: str, data: st.DataObject
) -> None:
    places = boundaries(text, encoding)
    start = data.draw(st.sampled_from(places))
    end = data.draw(
        st.sampled_from(
            [p for p in places if (p.line, p.character) >= (start.line, start.character)]
        )
    )
    change = types.TextDocumentContentChangePartial(
        range=types.Range(start=start, end=end), text=inserted
    )
    ours, theirs = documents(text, encoding)
    ours.apply_change(change)
    theirs.apply_change(change)
    assert ours.source == theirs.source


@settings(max_examples=200, deadline=None)
@given(text=TEXTS, encoding=st.sampled_from(sorted(ENCODINGS)), data=st.data())
def test_a_run_of_edits_gives_what_pygls_gives(
    text: str, encoding: str, data: st.DataObject
) -> None:
    """The line starts kept from one edit serve the next: any that went stale would put a
    later edit in the wrong place. The lines kept across edits are the text's lines, in a new
    list after each edit (the last one, which a caller may hold, is left as it was)."""
    ours, theirs = documents(text, encoding)
    lines = ours.kept_lines(ours.source)
    for _ in range(data.draw(st.integers(min_value=2, max_value=6))):
        places = boundaries(ours.source, encoding)
        start = data.draw(st.sampled_from(places))
        end = data.draw(
            st.sampled_from(
                [p for p in places if (p.line, p.character) >= (start.line, start.character)]
            )
        )
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=start, end=end), text=data.draw(TEXTS)
        )
        before, held = ours.source, list(lines)
        ours.apply_change(change)
        theirs.apply_change(change)
        assert ours.source == theirs.source
        assert lines == held == before.split("\n")
        lines = ours.kept_lines(ours.source)
        assert lines == ours.source.split("\n")


def test_the_lines_an_edit_does_not_touch_are_kept_as_they_were() -> None:
    ours, _theirs = documents("one\ntwo\nthree\nfour", "utf-16")
    before = ours.kept_lines(ours.source)
    edit(ours, 1, 1, 2, 2, "X\nY\nZ")
    after = ours.kept_lines(ours.source)
    assert after == ["one", "tX", "Y", "Zree", "four"]
    assert after[0] is before[0] and after[-1] is before[-1]
    assert ours.kept_lines(ours.source) is after  # asked again: the same list


def edit(
    document: TextDocument, line: int, character: int, end_line: int, end: int, text: str
) -> str:
    document.apply_change(
        types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(line=line, character=character),
                end=types.Position(line=end_line, character=end),
            ),
            text=text,
        )
    )
    return document.source


def test_positions_past_the_end_are_clamped() -> None:
    ours, _theirs = documents("ab\ncd\n", "utf-16")
    assert edit(ours, 0, 99, 0, 99, "!") == "ab!\ncd\n"
    assert edit(ours, 9, 0, 9, 0, "end") == "ab!\ncd\nend"
    assert edit(ours, 1, 1, 0, 0, "X") == "ab!\ncXd\nend"  # an end before the start inserts


def test_a_document_with_carriage_returns_is_edited_by_pygls_rules() -> None:
    ours, theirs = documents("a\r\nb\r\nc", "utf-16")
    assert edit(ours, 1, 0, 1, 1, "B") == edit(theirs, 1, 0, 1, 1, "B") == "a\r\nB\r\nc"


def test_the_workspace_makes_buffers_that_count_its_encoding() -> None:
    workspace = Buffers(None, position_encoding=types.PositionEncodingKind.Utf8)
    workspace.put_text_document(
        types.TextDocumentItem(uri="file:///x.md", language_id="markdown", version=1, text="é😀x")
    )
    document = workspace.get_text_document("file:///x.md")
    assert isinstance(document, Buffer)
    assert edit(document, 0, 6, 0, 7, "y") == "é😀y"
