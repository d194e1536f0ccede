"""A document's whole token and hint answers are kept between requests, and after an edit only
the changed lines are made again: whatever the edits, the settings and the changes to other
pages, each answer must be the one made from nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from hypothesis import example, given, settings
from hypothesis import strategies as st

from echoes_lsp.engine.hint_texts import HintMaker
from echoes_lsp.engine.token_spans import Resolver, key_spans
from echoes_lsp.engine.vault import Vault
from echoes_lsp.server.features.semantic_tokens import encode
from echoes_lsp.server.lsp_convert import Columns, json_ints
from echoes_lsp.server.token_rows import (
    DocumentRows,
    Found,
    Placed,
    RowMemory,
    body_line,
    fenced_lines,
    page_hints,
    segments,
    token_steps,
)

ROOT = Path(tempfile.mkdtemp(prefix="echoes-hint-answers-"))
PAGES = ROOT / "EchoesVault" / "pages"
HEAD = "---\ntype: note\nstack: []\nstatus: {status}\nsummary: A page.\n---\n"
TARGETS = [
    HEAD.format(status="active") + "Block one text. ^one\n\nBlock two. ^two\n",
    HEAD.format(status="active") + "Block one changed. ^one\n\nBlock two. ^two\n",
]
PAGE = str(PAGES / "page.md")
TARGET = str(PAGES / "target.md")

LINES = [
    "See [[target#^one]] here.",
    "Also [[target#^two]] and [[old]].",
    "Old [[old]] link.",
    "Own [[#^mine]] ref.",
    "By name [[page#^mine]].",
    "A paragraph. ^mine",
    "Another paragraph. ^mine",
    "```",
    "Plain text.",
    "# Heading",
    "Missing [[nowhere#^x]].",
    "",
    "## Part [[target#Part|the part]]",
    "---",
    "summary: A page.",
]
# Each step: a line replaced, inserted or removed; the target page's block text changed; or the
# block-text hints turned off or on.
STEPS = st.tuples(
    st.floats(0, 1, exclude_max=True),
    st.sampled_from(["replace", "insert", "delete", "target", "setting"]),
    st.sampled_from(LINES),
)


def setup_vault() -> Vault:
    PAGES.mkdir(parents=True, exist_ok=True)
    (PAGES / "target.md").write_text(TARGETS[0], encoding="utf-8")
    (PAGES / "old.md").write_text(
        HEAD.format(status="deprecated") + "Use [[target]].\n", encoding="utf-8"
    )
    (PAGES / "page.md").write_text(HEAD.format(status="active"), encoding="utf-8")
    vault = Vault(str(ROOT))
    vault.load()
    vault.complete()  # every page parsed, as after the server's indexing
    return vault


def current(rows: DocumentRows, lines: Sequence[str]) -> Found:
    text = "\n".join(lines)
    body = body_line(lines, True)
    return rows.current(lines, segments(body, fenced_lines(text, lines, body), len(lines)))


def tokens(rows: DocumentRows, vault: Vault, lines: Sequence[str]) -> Tuple[List[int], str]:
    """The full token answer, as `semanticTokens/full` makes it: its integers and their JSON."""
    found = current(rows, lines)
    resolver = Resolver(vault, vault.entry(PAGE), rows.own_structure(found))
    keys = key_spans(lines)
    data = encode(keys, lines, Columns())
    placed = Placed(data, keys[-1].line if keys else 0, [json_ints(data)] if data else [])
    for _ in token_steps(rows, found, resolver, Columns(), placed):
        pass
    return placed.data, ",".join(placed.json)


def hints(
    rows: DocumentRows,
    vault: Vault,
    lines: Sequence[str],
    buffers: Dict[str, List[str]],
    shown: Tuple[bool, bool],
) -> List[Tuple[int, str]]:
    """The hints of every line, as (line, JSON of the line's hints)."""
    found = current(rows, lines)
    own = rows.own_structure(found)

    def lines_of(path: str) -> Optional[Sequence[str]]:
        return buffers.get(path) or Path(path).read_text(encoding="utf-8").split("\n")

    maker = HintMaker(vault, vault.entry(PAGE), own, lines, lines_of)
    answer = page_hints(rows, found, maker, shown, Columns())
    return list(zip(answer.numbers, answer.json))


def edited(lines: List[str], kind: str, at: int, new: str) -> List[str]:
    """The lines after one edit, as a new list (an editor's buffer never changes its lines in
    place: the kept answer holds the list it was made from)."""
    if kind == "replace":
        return lines[:at] + [new] + lines[at + 1 :]
    if kind == "insert":
        return lines[:at] + [new] + lines[at:]
    if kind == "delete" and len(lines) > 1:
        return lines[:at] + lines[at + 1 :]
    return lines


class Run:
    """A page edited step by step, as its editor and the vault see it."""

    def __init__(self, start: List[str]) -> None:
        self.vault = setup_vault()
        self.rows = RowMemory().rows(self.vault, "file:///page.md", PAGE, "utf-16")
        self.lines = HEAD.format(status="active").rstrip("\n").split("\n") + start
        self.buffers: Dict[str, List[str]] = {}
        self.shown = (True, True)

    def step(self, where: float, kind: str, new: str) -> None:
        """One step: an edit anywhere, the frontmatter's included, a change of a page linked, or
        of a setting."""
        if kind == "target":  # the target is edited in its buffer: the model hears of it
            text = TARGETS[1] if self.buffers.get(TARGET) is None else TARGETS[0]
            self.buffers[TARGET] = text.split("\n")
            self.vault.open(TARGET, text)
        elif kind == "setting":
            self.shown = (not self.shown[0], self.shown[1])
        at = int(where * len(self.lines))
        self.lines = edited(self.lines, kind, at, new)

    def hints(self, rows: DocumentRows) -> List[Tuple[int, str]]:
        return hints(rows, self.vault, self.lines, self.buffers, self.shown)

    def tokens(self, rows: DocumentRows) -> Tuple[List[int], str]:
        return tokens(rows, self.vault, self.lines)

    def fresh(self) -> DocumentRows:
        return DocumentRows(self.vault, PAGE, "utf-16")


RUNS = {
    "start": st.lists(st.sampled_from(LINES), min_size=1, max_size=20),
    "steps": st.lists(STEPS, min_size=1, max_size=10),
}


@settings(max_examples=200, deadline=None)
@given(**RUNS)
# a block's text changed on one line changes the hint of a link to it on another
@example(["Own [[#^mine]] ref.", "", "A paragraph. ^mine"], [(0.95, "replace", LINES[6])])
# the same, the link typed by an edit answered from the last answer
@example(
    ["Plain text.", "", "A paragraph. ^mine"],
    [(0.7, "replace", LINES[3]), (0.95, "replace", LINES[6])],
)
def test_kept_hints_are_the_hints_made_from_nothing(
    start: List[str], steps: List[Tuple[float, str, str]]
) -> None:
    run = Run(start)
    run.hints(run.rows)
    for step in steps:
        run.step(*step)
        assert run.hints(run.rows) == run.hints(run.fresh()), step


@settings(max_examples=200, deadline=None)
@given(**RUNS)
# the last key blanked: the first row's delta counts from the key before
@example(["See [[target#^one]] here."], [(0.6, "replace", "")])
def test_kept_tokens_are_the_tokens_made_from_nothing(
    start: List[str], steps: List[Tuple[float, str, str]]
) -> None:
    """The frontmatter's keys' tokens come before the rows: the first row's line delta counts
    from the last key."""
    run = Run(start)
    run.tokens(run.rows)
    for step in steps:
        run.step(*step)
        data, json = run.tokens(run.rows)
        assert (data, json) == run.tokens(run.fresh()), step
        assert json_ints(data) == json


@settings(max_examples=150, deadline=None)
@given(**RUNS)
def test_tokens_and_hints_asked_in_turn_are_each_made_from_nothing(
    start: List[str], steps: List[Tuple[float, str, str]]
) -> None:
    """As Neovim asks after each edit: a token answer, then the hints, of the same rows (each
    request compares the lines with the last request's, which the other one made)."""
    run = Run(start)
    for step in steps:
        run.step(*step)
        assert run.tokens(run.rows) == run.tokens(run.fresh()), step
        assert run.hints(run.rows) == run.hints(run.fresh()), step


def test_an_edit_keeps_the_other_lines_hints(tmp_path: Path) -> None:
    """The answer after a one-line edit is made from the last one: the lines that did not change
    keep their JSON (the same objects), the edited one is made again."""
    vault = setup_vault()
    rows = RowMemory().rows(vault, "file:///page.md", PAGE, "utf-16")
    lines = HEAD.format(status="active").split("\n")[:-1] + [LINES[0], LINES[2], LINES[1]]
    before = hints(rows, vault, lines, {}, (True, True))
    assert [number for number, _ in before] == [6, 7, 8]
    lines = edited(lines, "replace", 7, "Plain text.")
    after = hints(rows, vault, lines, {}, (True, True))
    assert [number for number, _ in after] == [6, 8]
    assert after[0][1] is before[0][1] and after[1][1] is before[2][1]
