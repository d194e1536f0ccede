"""The folds of a page kept by heading section between calls (`engine/folding.folds` with a
memory, `server/fold_memory.FoldMemories`): after any edit they are the folds of the new text,
read afresh, and only the sections an edit changed are read again."""

from __future__ import annotations

from typing import Any, List, Sequence, Set, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from echoes_lsp.engine import folding
from echoes_lsp.engine.folding import FoldMemory, folds
from echoes_lsp.engine.link_targets import outline, text_structure
from echoes_lsp.runtime import echoes_vault as rules
from echoes_lsp.server.fold_memory import KEPT_DOCUMENTS, FoldMemories

LINES = st.sampled_from(
    [
        "",
        "  ",
        "plain text",
        "more [[text]]",
        "# Title",
        "## Section | with a bar",
        "### Deeper",
        "  # indented heading",
        "- item",
        "  continued",
        "  - nested",
        "    - deeper",
        "      deeper text",
        "1. first",
        "* star",
        "> quote",
        "> [!note] A callout",
        "  > indented quote",
        "| a | b |",
        "|---|---|",
        "| 1 | 2 |",
        "```",
        "```py",
        "~~~",
        "    ```",
        "---",
        "***",
    ]
)
FRONTMATTER = ["---", "type: note", "summary: Folds.", "---"]
# One edit: where (a fraction of the page), and what: replace the line, insert one before it,
# delete it, or add a character at its start.
EDITS = st.tuples(
    st.floats(0, 1, exclude_max=True), st.sampled_from(["replace", "insert", "delete", "char"])
)


def edited(lines: List[str], where: float, how: str, new: str) -> List[str]:
    """The lines after one edit (a text has one line at least, maybe empty)."""
    lines = lines or [""]
    at = int(where * len(lines))
    if how == "replace":
        return lines[:at] + [new] + lines[at + 1 :]
    if how == "insert":
        return lines[:at] + [new] + lines[at:]
    if how == "delete" and len(lines) > 1:
        return lines[:at] + lines[at + 1 :]
    return lines[:at] + [new[:1] + lines[at]] + lines[at + 1 :]


def sections_of(text: str, is_page: bool) -> Set[str]:
    """The text of each heading section, found here on its own: from the body (after the
    frontmatter) to the first heading, then from each heading to the next."""
    lines = text.split("\n")
    frontmatter = rules.parse_frontmatter(lines) if is_page else None
    body = frontmatter.body_line if frontmatter is not None else 0
    cuts = sorted({body, len(lines)} | {h.line for h in text_structure(text, is_page).headings})
    cuts = [cut for cut in cuts if cut >= body]
    return {"\n".join(lines[a:b]) for a, b in zip(cuts, cuts[1:]) if a < b}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(LINES, max_size=40),
    st.booleans(),
    st.booleans(),
    st.lists(st.tuples(EDITS, LINES), max_size=8),
)
def test_folds_kept_across_edits_are_the_folds_of_the_new_text(
    lines: List[str], page: bool, legacy: bool, edits: List[Tuple[Tuple[float, str], str]]
) -> None:
    if page:
        lines = FRONTMATTER + lines
    memory: FoldMemory = {}
    versions = [lines]
    for (where, how), new in edits:
        versions.append(edited(versions[-1], where, how, new))
    for version in versions:
        text = "\n".join(version)
        structure = text_structure(text, page)
        fresh = folds(text, structure, is_page=page, legacy_daily=legacy)
        assert folds(text, structure, is_page=page, legacy_daily=legacy, memory=memory) == fresh
        assert set(memory) == sections_of(text, page)
        # what is kept is only ever read back, never changed
        assert folds(text, structure, is_page=page, legacy_daily=legacy, memory=memory) == fresh


def long_page(parts: int) -> List[str]:
    lines = ["---", "type: note", "summary: Long.", "---", "", "# Long page"]
    for part in range(parts):
        lines += [f"## Part {part}", "", "- item one", "  continued", "  - nested", ""]
        lines += ["> [!note] A callout", "> its body", "", "| a | b |", "|---|---|", "| 1 | 2 |"]
        lines += ["", "```py", f"x = {part}", "```", ""]
    return lines


def read_spans(monkeypatch: pytest.MonkeyPatch) -> List[Sequence[Tuple[int, int]]]:
    """Record the sections each read of the page takes in (the real reader does the work)."""
    calls: List[Sequence[Tuple[int, int]]] = []
    read = folding._read_sections

    def recording(text: str, lines: Sequence[str], spans: Any, begin: int) -> Any:
        calls.append(list(spans))
        return read(text, lines, spans, begin)

    monkeypatch.setattr(folding, "_read_sections", recording)
    return calls


def test_after_a_one_line_edit_only_its_section_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = read_spans(monkeypatch)
    lines = long_page(40)
    memory: FoldMemory = {}
    text = "\n".join(lines)
    folds(text, text_structure(text, True), memory=memory)
    assert len(calls) == 1 and len(calls[0]) == 42  # the first time, every section at once
    part = lines.index("## Part 20")
    # a character typed in the list of part 20: that section alone is read
    lines[part + 3] = "  continued, and more"
    calls.clear()
    text = "\n".join(lines)
    found = folds(text, text_structure(text, True), memory=memory)
    assert calls == [[(part, part + 17)]]
    assert found == folds(text, text_structure(text, True))
    # a line added in it: the sections below move, and are still not read
    lines.insert(part + 2, "- a new item")
    calls.clear()
    text = "\n".join(lines)
    found = folds(text, text_structure(text, True), memory=memory)
    assert calls == [[(part, part + 18)]]
    assert found == folds(text, text_structure(text, True))
    # the same text again: nothing is read
    calls.clear()
    assert folds(text, text_structure(text, True), memory=memory) == found
    assert calls == []


def test_a_heading_inside_a_list_item_ends_it() -> None:
    # the item stops where the section of the indented heading begins
    text = "- item\n  more\n  # heading in the item\n  its text\n"
    found = folds(text, text_structure(text, False), is_page=False)
    assert found == [folding.Fold(0, 1), folding.Fold(2, 3, "region")]


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=40))
def test_no_heading_lies_in_fenced_code(lines: List[str]) -> None:
    # what keeping a section by its text alone rests on: no fence is open where one begins
    text = "\n".join(lines)
    headings = [heading.line for heading in text_structure(text, False).headings]
    for first, last in folding.fence_lines(text):
        assert not [line for line in headings if first <= line <= last]


def test_a_page_with_a_very_long_section_keeps_nothing() -> None:
    lines = ["# Long", *["- item", "  more"] * folding.KEPT_SECTION_LINES]
    text = "\n".join(lines)
    memory: FoldMemory = {"stale": folding.SectionFolds(0, (), ())}
    found = folds(text, text_structure(text, False), is_page=False, memory=memory)
    assert memory == {}
    assert found == folds(text, text_structure(text, False), is_page=False)


def test_the_memories_of_the_last_documents_asked_are_kept_until_they_close() -> None:
    memories = FoldMemories()
    first = memories.memory("file:///a.md")
    first["section"] = folding.SectionFolds(0, (), ())
    assert memories.memory("file:///a.md") is first
    for number in range(KEPT_DOCUMENTS - 1):
        memories.memory(f"file:///other-{number}.md")
    memories.memory("file:///a.md")  # asked again: now the most recent
    memories.memory("file:///one-more.md")
    assert "file:///a.md" in memories
    assert "file:///other-0.md" not in memories  # the least recently asked went
    memories.closed("file:///a.md")
    assert "file:///a.md" not in memories
    assert memories.memory("file:///a.md") == {}


def plain_folds(text: str, page: bool, legacy: bool) -> List[folding.Fold]:
    """The folds as the plain rule finds them, for comparison: the frontmatter, each heading
    until the next of the same or a higher rank (from the outline), each section's blocks read
    alone, the legacy entries; all put in order, nested and made unique in one pass."""
    lines = text.split("\n")
    structure = text_structure(text, page)
    frontmatter = rules.parse_frontmatter(lines) if page else None
    found: List[folding.Fold] = []
    body = 0
    if frontmatter is not None:
        body = frontmatter.body_line
        if frontmatter.close_line is not None:
            found.append(folding.Fold(frontmatter.open_line, frontmatter.close_line, "imports"))
    pending = outline(structure, len(lines))
    while pending:
        section = pending.pop()
        pending.extend(section.children)
        start = section.heading.line
        end = folding.last_text_line(lines, start, section.end_line)
        found.append(folding.Fold(start, end, "region"))
    spans = folding.section_spans(structure, body, len(lines))
    begin = sum(len(line) + 1 for line in lines[: spans[0][0]]) if spans else 0
    fences: List[Tuple[int, int]] = []
    for section_folds in folding._read_sections(text, lines, spans, begin):
        found.extend(section_folds.blocks)
        fences.extend(section_folds.fences)
    if legacy:
        found.extend(folding._entry_folds(structure, lines, fences))
    return folding.unique(found)


@settings(max_examples=500, deadline=None)
@given(st.lists(LINES, max_size=40), st.booleans(), st.booleans(), st.booleans())
def test_the_folds_put_in_order_section_by_section_are_those_of_the_plain_rule(
    lines: List[str], page: bool, legacy: bool, unclosed: bool
) -> None:
    # `folds` puts each heading's fold before its section's blocks rather than sorting them
    # all; fenced code left open at the end runs to the last line, past the heading's fold
    if page:
        lines = FRONTMATTER + lines
    if unclosed:
        lines = [*lines, "```", "code", "", ""]
    text = "\n".join(lines)
    structure = text_structure(text, page)
    assert folds(text, structure, is_page=page, legacy_daily=legacy) == plain_folds(
        text, page, legacy
    )


def test_a_table_whose_header_row_is_a_heading_folds_once_with_the_heading() -> None:
    text = "# Head | b\n|---|---|\n| 1 | 2 |\n\n# Next\ntext\n"
    found = folds(text, text_structure(text, False), is_page=False)
    assert found == [folding.Fold(0, 2, "region"), folding.Fold(4, 5, "region")]
