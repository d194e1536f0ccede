"""The kept rows of semantic tokens and inlay hints read each line on its own: what they find
must be what a scan of the whole text finds, line for line (fenced code, code spans, embeds,
frontmatter, headings and block ids), however the page was edited."""

from __future__ import annotations

import tempfile
from operator import attrgetter
from pathlib import Path
from typing import List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from echoes_lsp.engine.link_targets import text_structure
from echoes_lsp.engine.token_spans import TARGET, UNRESOLVED, Resolver
from echoes_lsp.engine.vault import Vault
from echoes_lsp.server.lsp_convert import Columns
from echoes_lsp.server.token_rows import (
    DocumentRows,
    Found,
    Placed,
    Row,
    RowMemory,
    Rows,
    body_line,
    fenced_lines,
    segments,
    token_steps,
)

VAULT = tempfile.mkdtemp(prefix="echoes-rows-")

PAGE = """---
type: note
stack: [a]
status: active
summary: Tricky [[not-a-link]] in the frontmatter.
---

# Title ^not-a-block-here
See [[one]] and ![[two.png]] and `[[in code]]` then [[three#Part|alias]].
```python
[[fenced]]
```
After the fence [[four#^blk]].
~~~
[[tilde fenced]]
~~~~
Unclosed `` [[five]] `` and `[[six]]`.
A block line. ^blk
   ## Indented heading [[seven]]
```
[[unclosed fence]]
"""


def whole(text: str) -> List[Tuple[int, int, str]]:
    """(line, column, target) of every link, heading and block the whole-text scan finds."""
    structure = text_structure(text, True)
    found = [(link.line, link.start, link.target) for link in structure.links]
    found += [(h.line, h.start, "#" + h.text) for h in structure.headings]
    found += [(b.line, b.start, "^" + b.name) for b in structure.blocks]
    return sorted(found)


def per_line(rows: DocumentRows, text: str) -> List[Tuple[int, int, str]]:
    return listed(current(rows, text))


def current(rows: DocumentRows, text: str) -> Found:
    lines = text.split("\n")
    return rows.current(
        lines,
        segments(
            body_line(lines, True), fenced_lines(text, lines, body_line(lines, True)), len(lines)
        ),
    )


def own(rows: DocumentRows, kept: Found) -> Tuple[str, List[Tuple[str, int]]]:
    """This page's anchors and block ids with their lines, as the rows see them."""
    structure = rows.own_structure(kept)
    return structure.anchors, [(block.name, block.line) for block in structure.blocks]


def listed(kept: Found) -> List[Tuple[int, int, str]]:
    found = []
    for number, facts in zip(kept.numbers, kept.facts):
        found += [(number, link.start, link.target) for link in facts.links]
        found += [(number, h.start, "#" + h.text) for h in facts.headings]
        found += [(number, b.start, "^" + b.name) for b in facts.blocks]
    return sorted(found)


def test_each_line_read_alone_finds_what_the_whole_scan_finds(tmp_path: object) -> None:
    rows = DocumentRows(Vault(str(tmp_path)), "page.md", "utf-16")
    assert per_line(rows, PAGE) == whole(PAGE)
    assert (8, 4, "one") in whole(PAGE)  # the text holds what the comparison is about
    assert not [item for item in whole(PAGE) if "fenced" in item[2] or "code" in item[2]]


def test_edits_that_open_and_close_fences_are_followed(tmp_path: object) -> None:
    """Kept facts serve the next text: a fence opened above moves lines into code."""
    rows = DocumentRows(Vault(str(tmp_path)), "page.md", "utf-16")
    lines = PAGE.split("\n")
    for number, new in [(8, "```"), (8, "# Title"), (16, "~~~"), (10, "plain [[x]]"), (0, "")]:
        lines[number] = new
        text = "\n".join(lines)
        assert per_line(rows, text) == whole(text), (number, new)


LINES = [
    "See [[one]] and [[two#Part|alias]].",
    "# A heading",
    "## Part [[three]]",
    "A block line. ^blk",
    "Plain text.",
    "a [bracket] only",
    "",
    "```",
    "~~~",
    "`[[in code]]` and [[four]]",
    "---",
    "type: note",
    "[[#^blk]] here",
]


@settings(max_examples=150, deadline=None)
@given(
    start=st.lists(st.sampled_from(LINES), min_size=1, max_size=25),
    edits=st.lists(
        st.tuples(
            st.floats(0, 1, exclude_max=True),
            st.sampled_from(["replace", "insert", "delete"]),
            st.sampled_from(LINES),
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_rows_carried_across_edits_find_what_the_whole_scan_finds(
    start: List[str], edits: List[Tuple[float, str, str]]
) -> None:
    """The lines found for one request serve the next, the changed lines read again: after
    every edit (a line replaced, inserted or removed, fences opened and closed) they must be
    what a scan of the whole text finds."""
    rows = DocumentRows(Vault(VAULT), "page.md", "utf-16")
    lines = list(start)
    rows.own_structure(current(rows, "\n".join(lines)))
    for where, kind, new in edits:
        at = int(where * len(lines))
        if kind == "replace":
            lines[at] = new
        elif kind == "insert":
            lines.insert(at, new)
        elif len(lines) > 1:
            del lines[at]
        text = "\n".join(lines)
        kept = current(rows, text)
        assert listed(kept) == whole(text), (kind, at, new)
        fresh = DocumentRows(Vault(VAULT), "page.md", "utf-16")
        assert own(rows, kept) == own(fresh, current(fresh, text)), (kind, at, new)


def test_a_fence_opened_in_the_frontmatter_hides_no_link(tmp_path: object) -> None:
    """The whole-text scan reads the body alone: a line of backticks in the frontmatter opens
    no code block, so the links after it are links."""
    rows = DocumentRows(Vault(str(tmp_path)), "page.md", "utf-16")
    text = "---\n```\n---\nSee [[one]].\n"
    assert per_line(rows, text) == whole(text) == [(3, 4, "one")]


def test_segments_skip_fenced_lines() -> None:
    assert segments(2, [(4, 6), (9, 9)], 12) == [(2, 4), (7, 9), (10, 12)]
    assert segments(5, [(0, 6)], 8) == [(7, 8)]
    assert segments(0, [(3, 7)], 8) == [(0, 3)]


def test_a_reload_of_the_vault_drops_every_kept_row(tmp_path: Path) -> None:
    """A change the model does not name (a reload: every file may have changed) leaves no row
    as it was: a link to a page that appeared meanwhile resolves."""
    pages = tmp_path / "EchoesVault" / "pages"
    pages.mkdir(parents=True)
    vault = Vault(str(tmp_path))
    vault.load()
    rows = RowMemory().rows(vault, "file:///page.md", str(pages / "page.md"), "utf-16")
    lines = ["See [[later]] now."]

    def tokens() -> List[int]:
        found = rows.current(lines, [(0, 1)])
        resolver = Resolver(vault, None, rows.own_structure(found))
        placed = Placed([], 0, [])
        for _ in token_steps(rows, found, resolver, Columns(), placed):
            pass
        return placed.data

    assert tokens() == [0, 6, 5, TARGET, UNRESOLVED]
    (pages / "later.md").write_text(
        "---\ntype: note\nstack: []\nstatus: active\nsummary: Later.\n---\n", encoding="utf-8"
    )
    vault.load()
    assert tokens() == [0, 6, 5, TARGET, 0]


def test_a_changed_key_drops_the_rows_that_name_it_and_counts_the_drop() -> None:
    """Rows are found by the keys they name, also after a prune (which keeps the current lines'
    rows only) and after a row is replaced."""
    rows: Rows[Row] = Rows(attrgetter("keys"))
    rows.put("a", Row((), frozenset({"k"}), ""))
    rows.put("b", Row((), frozenset({"j"}), ""))
    rows.put("c", Row((), frozenset({"k", "j"}), ""))
    rows.prune({"a", "b", "c"})
    generation = rows.generation
    rows.mark(["k"])
    assert set(rows.fresh()) == {"b"} and rows.generation == generation + 1
    rows.put("b", Row((), frozenset({"i"}), ""))
    rows.mark(["i"])
    assert set(rows.fresh()) == set() and rows.generation == generation + 2
    rows.mark(["nothing kept names this"])
    assert rows.fresh() == {} and rows.generation == generation + 2
