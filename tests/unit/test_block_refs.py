"""The blocks a `[[page#^id]]` link can name, read from a page's lines (engine/block_refs.py)."""

from __future__ import annotations

from echoes_lsp.engine.block_refs import (
    CALLOUT,
    LABEL_CHARS,
    LINE,
    LIST_ITEM,
    PARAGRAPH,
    QUOTE,
    find_blocks,
    fresh_id,
    label_text,
    line_id,
)
from tests.runtime.test_s17_secrets import SHAPES

PAGE = """---
type: note
summary: Not a block.
---

# Heading

A paragraph
over two lines. ^para

- item one
  continued
- item two ^two
  1. nested

> [!tip] Title
> body

> plain quote

```
Fenced ^not-an-id
```

## Heading with id ^head

| a | b |
"""


def test_blocks_are_paragraphs_items_callouts_and_quotes_outside_code() -> None:
    found = [(b.kind, b.first, b.last, b.text, b.name) for b in find_blocks(PAGE.split("\n"))]
    assert found == [
        (PARAGRAPH, 7, 8, "A paragraph", "para"),
        (LIST_ITEM, 10, 11, "item one", None),
        (LIST_ITEM, 12, 12, "item two", "two"),
        (LIST_ITEM, 13, 13, "nested", None),
        (CALLOUT, 15, 16, "Title", None),
        (QUOTE, 18, 18, "plain quote", None),
        (LINE, 24, 24, "## Heading with id", "head"),
    ]


def test_an_id_is_read_as_the_parser_reads_it() -> None:
    assert line_id("text ^abc-1") == "abc-1"
    assert line_id("^abc") == "abc"
    assert line_id("text^abc") is None
    assert line_id("text ^abc more") is None
    assert line_id("no caret") is None


def test_fresh_ids_are_stable_and_unique_in_the_page() -> None:
    taken = {"known"}
    first = fresh_id("Same text.", taken)
    second = fresh_id("Same text.", taken)
    assert first == fresh_id("Same text.", {"known"})  # the same text is offered the same id
    assert second == first + "-2"
    assert taken == {"known", first, second}


def test_a_label_is_masked_before_it_is_shortened() -> None:
    token = SHAPES["GitHub token"]
    line = "x" * (LABEL_CHARS - 10) + " " + token
    label = label_text(line)
    assert len(label) == LABEL_CHARS
    assert token[:8] not in label
    assert label_text("short") == "short"
