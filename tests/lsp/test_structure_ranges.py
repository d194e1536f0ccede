"""Folding ranges, selection ranges and document highlights over stdio, under both clients'
capabilities, and a client that folds by columns and takes only a few ranges."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import CLIENTS, SERVER, WAIT, Session
from .nav_helpers import at, covered, doc, notify_created, start_with, units
from .nav_helpers import request as request_in_time

# A non-BMP character (two UTF-16 units, four UTF-8 bytes) before the links moves their columns.
PAGE = """---
type: note
stack: []
status: active
summary: Folding and selection.
---

# Folds 𝄞

Intro 𝄞 with [[auth#Tokens|the tokens]] and [[auth]].

## Lists

- one
  more of one
  - nested
- two

> [!note] A callout
> its body

| a | b |
|---|---|
| 1 | 2 |

```py
x = 1
```

## Last
Back to [[#Lists]] and [[auth]].
"""


async def fold(session: Session, uri: str) -> List[types.FoldingRange]:
    result = await request_in_time(
        session.client.text_document_folding_range_async(
            types.FoldingRangeParams(text_document=doc(uri))
        )
    )
    assert result is not None
    return list(result)


def shape(ranges: List[types.FoldingRange]) -> List[Tuple[int, int, Optional[str]]]:
    return [
        (r.start_line, r.end_line, str(getattr(r.kind, "value", r.kind)) if r.kind else None)
        for r in ranges
    ]


EXPECTED = [
    (0, 5, "imports"),
    (7, 30, "region"),
    (11, 27, "region"),
    (13, 15, None),
    (18, 19, None),
    (21, 23, None),
    (25, 27, None),
    (29, 30, "region"),
]


async def test_a_page_folds_by_blocks_and_sections(shared: Session) -> None:
    uri = shared.open(shared.page("folds.md"), PAGE)
    ranges = await fold(shared, uri)
    assert shape(ranges) == EXPECTED
    # both clients fold whole lines only: no columns are sent
    assert all(r.start_character is None and r.end_character is None for r in ranges)


EDITED = """---
type: note
stack: []
status: active
summary: Folds kept between requests.
---

# Edited

## One
- item
  more

## Two
> quote
> more

```py
x = 1
```

## Three
| a | b |
|---|---|
| 1 | 2 |
"""
# One-line edits (line, start, end, new text), each changing the folds: an item made in
# `## Two`; a line added above every section, which moves them all; the closing fence
# removed, so that the code runs to the end and `## Three` is no heading any more.
EDITS = [(15, 0, 0, "- new\n  item\n"), (7, 0, 0, "Moved.\n"), (22, 0, 3, "")]


async def test_folds_after_each_edit_are_those_of_a_fresh_document(shared: Session) -> None:
    uri = shared.open(shared.page("edited.md"), EDITED)
    before = shape(await fold(shared, uri))
    lines = EDITED.split("\n")
    for number, (line, start, end, text) in enumerate(EDITS):
        shared.edit(uri, line, start, end, text)
        lines[line] = lines[line][:start] + text + lines[line][end:]
        lines = "\n".join(lines).split("\n")
        after = shape(await fold(shared, uri))
        # the same text in a document never asked before: every section read afresh
        fresh = shared.open(shared.page(f"edited-{number}.md"), "\n".join(lines))
        assert after == shape(await fold(shared, fresh))
        assert after != before
        before = after


async def test_selection_grows_from_the_link_part_to_the_document(shared: Session) -> None:
    uri = shared.open(shared.page("folds.md"), PAGE)
    inside = at(shared, PAGE, "Tokens|", 2)  # in `Tokens`, after the non-BMP character
    on_alias = at(shared, PAGE, "the tokens", 1)
    result = await request_in_time(
        shared.client.text_document_selection_range_async(
            types.SelectionRangeParams(text_document=doc(uri), positions=[inside, on_alias])
        )
    )
    assert result is not None and len(result) == 2
    chain = []
    node: Any = result[0]
    while node is not None:
        chain.append(node.range)
        node = node.parent
    line = PAGE.split("\n")[9]
    assert [covered(shared, PAGE, r) for r in chain[:3]] == [
        "Tokens",
        "[[auth#Tokens|the tokens]]",
        line,
    ]
    # the line is its whole paragraph; then the title's section, then the document
    assert [(r.start.line, r.end.line) for r in chain[3:]] == [(7, 30), (0, 31)]
    assert covered(shared, PAGE, result[1].range) == "the"
    assert covered(shared, PAGE, result[1].parent.range) == "the tokens"  # type: ignore[union-attr]


async def test_a_link_highlights_the_links_to_its_page(shared: Session) -> None:
    uri = shared.open(shared.page("folds.md"), PAGE)
    on_link = at(shared, PAGE, "[[auth]]", 3)
    result = await request_in_time(
        shared.client.text_document_document_highlight_async(
            types.DocumentHighlightParams(text_document=doc(uri), position=on_link)
        )
    )
    assert result is not None
    assert [(h.range.start.line, covered(shared, PAGE, h.range)) for h in result] == [
        (9, "[[auth#Tokens|the tokens]]"),
        (9, "[[auth]]"),
        (30, "[[auth]]"),
    ]
    assert {h.kind for h in result} == {types.DocumentHighlightKind.Read}
    # the non-BMP character before them moves their columns in the client's units
    line = PAGE.split("\n")[9]
    assert result[1].range.start.character == units(shared, line[: line.index("[[auth]]")])


async def test_a_heading_highlights_itself_and_the_links_to_it(shared: Session) -> None:
    uri = shared.open(shared.page("folds.md"), PAGE)
    result = await request_in_time(
        shared.client.text_document_document_highlight_async(
            types.DocumentHighlightParams(
                text_document=doc(uri), position=types.Position(line=11, character=4)
            )
        )
    )
    assert result is not None
    assert [(h.range.start.line, h.kind) for h in result] == [
        (11, types.DocumentHighlightKind.Write),
        (30, types.DocumentHighlightKind.Read),
    ]
    assert covered(shared, PAGE, result[1].range) == "[[#Lists]]"


async def test_plain_text_highlights_nothing(shared: Session) -> None:
    uri = shared.open(shared.page("folds.md"), PAGE)
    result = await request_in_time(
        shared.client.text_document_document_highlight_async(
            types.DocumentHighlightParams(
                text_document=doc(uri), position=types.Position(line=14, character=3)
            )
        )
    )
    assert not result


async def test_a_legacy_flat_daily_file_folds_each_entry(session: Session) -> None:
    daily = session.workspace / "EchoesVault" / "daily" / "2025-01-02.md"
    daily.parent.mkdir(parents=True, exist_ok=True)
    daily.write_text(
        "# 2025-01-02\n\nfirst entry\nmore\n\n---\n\nsecond entry\nmore\n", encoding="utf-8"
    )
    notify_created(session, daily)
    uri = session.open(daily)
    assert shape(await fold(session, uri)) == [
        (0, 8, "region"),  # the title's section
        (2, 3, "region"),  # the entry before the break
        (7, 8, "region"),  # the entry after it
    ]


# -- a client that folds by columns and takes two ranges ------------------------------------------


def columns_and_limit(caps: types.ClientCapabilities) -> None:
    assert caps.text_document is not None
    caps.text_document.folding_range = types.FoldingRangeClientCapabilities(
        line_folding_only=False, range_limit=2
    )


@pytest_lsp.fixture(params=CLIENTS, config=SERVER)
async def columns_client(request: Any, lsp_client: LanguageClient, workspace: Path):
    await start_with(lsp_client, workspace, request.param, columns_and_limit)
    lsp_client.kind = request.param  # type: ignore[attr-defined]
    yield
    await request_in_time(lsp_client.shutdown_session(), WAIT)


async def test_a_range_limit_and_columns_are_honoured(
    columns_client: LanguageClient, workspace: Path
) -> None:
    session = Session(columns_client, workspace, columns_client.kind)  # type: ignore[attr-defined]
    uri = session.open(session.page("folds.md"), PAGE)
    ranges = await fold(session, uri)
    # the two outermost: the frontmatter and the title's section
    assert shape(ranges) == EXPECTED[:2]
    title = PAGE.split("\n")[7]
    last = PAGE.split("\n")[30]
    assert ranges[1].start_character == units(session, title)  # the whole first line stays
    assert ranges[1].end_character == units(session, last)
