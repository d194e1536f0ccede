"""The pure functions behind folding ranges, selection ranges and document highlights
(`engine/folding.py`, `engine/selection.py`, `engine/highlights.py`)."""

from __future__ import annotations

from typing import List, Sequence, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from echoes_lsp.engine import folding
from echoes_lsp.engine.folding import Fold, folds, within_limit
from echoes_lsp.engine.highlights import HIGHLIGHT_LIMIT, LINK_WINDOW, highlights
from echoes_lsp.engine.link_targets import text_structure
from echoes_lsp.engine.markdown import scan
from echoes_lsp.engine.selection import Span, selection_spans
from echoes_lsp.engine.vault import PAGE, Entry
from echoes_lsp.runtime import echoes_vault as rules

PAGE_TEXT = """---
type: note
summary: A page.
tags:
  - alpha
---
# Title

Intro line
goes on [[auth#Tokens|the tokens]] here.

## Lists

- one
  more of one
  - nested
    more nested
- two

> [!note] A callout
> its body

| a | b |
|---|---|
| 1 | 2 |

```py
# not a heading
- not an item
```


## Last
See [[auth]], [[Auth.md#tokens]], [[other]] and [[#Lists]].
"""


def page_folds(text: str = PAGE_TEXT) -> List[Fold]:
    return folds(text, text_structure(text, True))


def test_every_kind_of_block_folds() -> None:
    assert page_folds() == [
        Fold(0, 5, "imports"),  # frontmatter
        Fold(6, 33, "region"),  # the title's section
        Fold(11, 29, "region"),  # `## Lists`, without the two blank lines after the code
        Fold(13, 16, None),  # the item `- one` with its nested item
        Fold(15, 16, None),  # the nested item
        Fold(19, 20, None),  # the callout
        Fold(22, 24, None),  # the table
        Fold(26, 29, None),  # the fenced code, whose `#` and `-` lines are no heading or item
        Fold(32, 33, "region"),  # `## Last`
    ]


def test_a_heading_section_ends_before_the_next_of_its_level_or_higher() -> None:
    text = "# A\nx\n## B\ny\n### C\nz\n## D\nw\n\n\n# E\nv\n"
    assert [f for f in folds(text, scan(text), is_page=False) if f.kind] == [
        Fold(0, 7, "region"),
        Fold(2, 5, "region"),
        Fold(4, 5, "region"),
        Fold(6, 7, "region"),
        Fold(10, 11, "region"),
    ]


def test_a_blank_line_ends_a_quote_but_not_a_list_item() -> None:
    text = "> a\n> b\n\n> c\n> d\n\n- item\n\n  its second paragraph\n"
    assert folds(text, scan(text), is_page=False) == [Fold(0, 1), Fold(3, 4), Fold(6, 8)]


def test_an_unclosed_frontmatter_does_not_fold() -> None:
    text = "---\ntype: note\nsummary: x\n"
    assert not [f for f in page_folds(text) if f.kind == "imports"]


def test_a_legacy_daily_file_folds_each_entry() -> None:
    text = (
        "# 2025-01-02\n\n### Scratchpad — 09:00\nfirst\nmore\n\n"
        "### Session — 10:00\nsecond\n\n---\n\nthird, after a break\nand more\n"
    )
    structure = scan(text)
    entries = folds(text, structure, is_page=False, legacy_daily=True)
    plain = folds(text, structure, is_page=False, legacy_daily=False)
    # the break ends the entry before it and begins one
    assert set(entries) - set(plain) == {Fold(6, 7, "region"), Fold(11, 12, "region")}
    assert Fold(2, 4, "region") in entries


def test_an_entry_that_ends_inside_a_deeper_section_still_nests() -> None:
    # two level-1 headings: entries begin at them and after the break; `## S` runs past the break
    text = "# A\n## S\nx\n\n---\n\ny\n# B\nz\n"
    found = folds(text, scan(text), is_page=False, legacy_daily=True)
    assert Fold(0, 2, "region") in found  # the entry `# A`, up to the break
    assert Fold(1, 2, "region") in found  # `## S`, cut where the entry around it ends
    assert Fold(1, 6, "region") not in found


def test_a_range_limit_keeps_the_outermost_ranges() -> None:
    found = page_folds()
    assert within_limit(found, None) == found
    # the outer ranges first: the nested `## Last` before the list item that comes earlier
    assert within_limit(found, 4) == [
        Fold(0, 5, "imports"),
        Fold(6, 33, "region"),
        Fold(11, 29, "region"),
        Fold(32, 33, "region"),
    ]
    assert within_limit(found, 0) == []


# -- properties ------------------------------------------------------------------------------

LINES = st.sampled_from(
    [
        "",
        "   ",
        "text",
        "# Heading",
        "## Sub | with a bar",
        "- item",
        "  - nested",
        "    deeper",
        "  continued",
        "1. first",
        "* star",
        "> quote",
        "  > indented quote",
        "| a | b |",
        "|---|---|",
        "x | y",
        "---|---",
        "[[a|b]] aliased",
        "```",
        "~~~",
        "---",
        "***",
        "[[link]] text",
    ]
)


def per_line_blocks(lines: Sequence[str], body: int, fences: Sequence[Tuple[int, int]]) -> list:
    """The block folds read line by line, every plain line too: what `_read_sections` gives
    reading only the lines `event_lines` finds."""
    blocks = folding._Blocks(body - 1)
    code = dict(fences)
    number = body
    while number < len(lines):
        line = lines[number]
        end = folding.table_end(lines, number, body, len(lines))
        if number in code:
            blocks.code(line, code[number])
            number = code[number]
        elif not line.strip():
            blocks.end_quote()
        elif end >= 0:
            blocks.table(number - 1, end)
            number = end
        else:
            blocks.text(line, number)
        number += 1
    blocks.close_items(-1)
    blocks.end_quote()
    return sorted(blocks.found)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=40))
def test_reading_only_the_event_lines_finds_what_reading_every_line_finds(
    lines: List[str],
) -> None:
    text = "\n".join(lines)
    split = text.split("\n")
    fences = folding.fence_lines(text)
    [section] = folding._read_sections(text, split, [(0, len(split))], 0)
    code = [Fold(first, last) for first, last in fences]
    # kept in order, nested, each pair of lines once, as `folds` puts them
    assert list(section.blocks) == folding.unique(code + per_line_blocks(split, 0, fences))


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=40), st.booleans())
def test_folds_lie_in_the_text_and_nest(lines: List[str], legacy: bool) -> None:
    text = "\n".join(lines)
    found = folds(text, scan(text), is_page=False, legacy_daily=legacy)
    count = len(text.split("\n"))
    assert found == sorted(found, key=lambda f: (f.start, -f.end))
    for index, fold in enumerate(found):
        assert 0 <= fold.start < fold.end < count
        for later in found[index + 1 :]:
            assert (later.start, later.end) != (fold.start, fold.end)
            assert later.start > fold.end or later.end <= fold.end, (fold, later)


# -- selection -------------------------------------------------------------------------------


def spans_at(line: int, column: int, text: str = PAGE_TEXT) -> List[Span]:
    lines = text.split("\n")
    structure = text_structure(text, True)
    return selection_spans(
        lines, structure, folds(text, structure), line, column, rules.parse_frontmatter(lines)
    )


def test_in_a_link_selection_grows_from_the_word_to_the_document() -> None:
    # line 9: `goes on [[auth#Tokens|the tokens]] here.`, the cursor in `Tokens`
    assert spans_at(9, 17) == [
        Span(9, 15, 9, 21),  # the word, which is also the heading part
        Span(9, 8, 9, 34),  # the whole link
        Span(9, 0, 9, 40),  # the line
        Span(8, 0, 9, 40),  # the paragraph
        Span(6, 0, 33, 59),  # the title's section
        Span(0, 0, 34, 0),  # the document
    ]


def test_the_alias_and_the_target_are_parts_of_their_own() -> None:
    assert spans_at(9, 30)[:3] == [Span(9, 26, 9, 32), Span(9, 22, 9, 32), Span(9, 8, 9, 34)]
    assert spans_at(9, 11)[:2] == [Span(9, 10, 9, 14), Span(9, 8, 9, 34)]


def test_in_a_nested_list_item_the_items_come_before_the_section() -> None:
    assert spans_at(16, 6) == [
        Span(16, 4, 16, 8),  # `more`
        Span(16, 0, 16, 15),
        Span(15, 0, 16, 15),  # the nested item
        Span(13, 0, 16, 15),  # the item around it
        Span(13, 0, 17, 5),  # the whole list, as a paragraph
        Span(11, 0, 29, 3),  # `## Lists`
        Span(6, 0, 33, 59),
        Span(0, 0, 34, 0),
    ]


def test_in_the_frontmatter_selection_grows_from_value_to_field_to_block() -> None:
    chain = spans_at(2, 12)
    assert chain == [
        Span(2, 11, 2, 15),  # the word `page`
        Span(2, 9, 2, 16),  # the value `A page.`
        Span(2, 0, 2, 16),  # the field
        Span(0, 0, 5, 3),  # the frontmatter block
        Span(0, 0, 34, 0),
    ]
    assert spans_at(4, 5) == [
        Span(4, 4, 4, 9),  # `alpha`, the word and the list value
        Span(3, 0, 4, 9),  # the field `tags` with its item
        Span(0, 0, 5, 3),
        Span(0, 0, 34, 0),
    ]


def test_the_blocks_of_a_section_reach_its_last_line() -> None:
    text = "# A\n- one\n  more\n# B\n- two\n  more\n"
    structure = scan(text)
    assert Fold(1, 2) in folds(text, structure, is_page=False, around=1)
    assert Fold(4, 5) in folds(text, structure, is_page=False, around=5)
    assert Fold(1, 2) not in folds(text, structure, is_page=False, around=5)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=30), st.data())
def test_every_span_holds_the_one_before(lines: List[str], data: st.DataObject) -> None:
    text = "\n".join(lines)
    split = text.split("\n")
    line = data.draw(st.integers(0, len(split) - 1))
    column = data.draw(st.integers(0, len(split[line])))
    structure = scan(text)
    chain = selection_spans(split, structure, folds(text, structure, split), line, column)
    # the blocks of the cursor's section alone are the blocks around the cursor, and give the
    # same chain
    local = folds(text, structure, split, around=line)
    every = folds(text, structure, split)
    assert [f for f in local if f.start <= line <= f.end] == [
        f for f in every if f.start <= line <= f.end
    ]
    assert selection_spans(split, structure, local, line, column) == chain
    assert chain[-1] == Span(0, 0, len(split) - 1, len(split[-1]))
    assert chain[0].line <= line <= chain[0].end_line
    for inner, outer in zip(chain, chain[1:]):
        assert outer != inner and outer.holds(inner)


# -- highlights ------------------------------------------------------------------------------


def page_entry(key: str = "notes") -> Entry:
    entry = Entry(f"/vault/pages/{key}.md", f"pages/{key}.md", PAGE)
    entry.key = key
    return entry


def test_on_a_link_every_link_to_the_same_page_is_read() -> None:
    structure = text_structure(PAGE_TEXT, True)
    found = highlights(page_entry(), structure, 33, 6)  # on `[[auth]]`
    assert [(h.line, h.start, h.end, h.declaration) for h in found] == [
        (9, 8, 34, False),
        (33, 4, 12, False),
        (33, 14, 32, False),
    ]


def test_on_a_link_with_a_heading_only_links_to_that_heading_are_read() -> None:
    structure = text_structure(PAGE_TEXT, True)
    found = highlights(page_entry(), structure, 9, 10)  # on `[[auth#Tokens|...]]`
    assert [(h.line, h.start) for h in found] == [(9, 8), (33, 14)]


def test_on_a_heading_the_links_to_it_and_the_heading_itself() -> None:
    structure = text_structure(PAGE_TEXT, True)
    found = highlights(page_entry(), structure, 11, 4)  # on `## Lists`
    assert [(h.line, h.start, h.end, h.declaration) for h in found] == [
        (11, 0, 8, True),
        (33, 48, 58, False),
    ]
    on_link = highlights(page_entry(), structure, 33, 50)  # on `[[#Lists]]`
    assert on_link == found


def test_off_links_and_headings_nothing_is_highlighted() -> None:
    structure = text_structure(PAGE_TEXT, True)
    assert highlights(page_entry(), structure, 8, 2) == []


def test_highlights_are_capped_and_look_only_near_the_cursor() -> None:
    count = LINK_WINDOW + 5000
    text = "".join(f"[[same]] [[other-{n}]]\n" for n in range(count))
    structure = scan(text)
    near_end = highlights(page_entry(), structure, count - 1, 3)
    assert len(near_end) == HIGHLIGHT_LIMIT
    lines = {h.line for h in near_end}
    # the window is the LINK_WINDOW links (two per line) before and after the cursor's link
    assert min(lines) >= count - LINK_WINDOW // 4 - 1
