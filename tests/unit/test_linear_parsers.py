"""Every parser that reads untrusted text runs in time linear in it, and reads it as before.

Frontmatter, wikilinks, headings, block ids, callouts, code spans, index rows and conflict
markers: each regular expression is checked for the shapes that make a regex engine slow
(`tests/linear_expressions.py`), and each parser's Python work (lines run, characters of the
text read by slices and searches) is counted on adversarial texts of 64 KB and 256 KB: four
times the text, about four times the steps. The rewritten pieces are compared with the forms
they replaced.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from echoes_lsp.engine import completion_candidates, index_drift, markdown
from echoes_lsp.runtime import echoes_vault as rules
from tests.adversarial_text import MARKDOWN_TEXTS, RUNTIME_TEXTS
from tests.linear_expressions import problems
from tests.step_count import BudgetExceeded, count_steps

SMALL, LARGE = 64 * 1024, 256 * 1024

# --- Every expression -------------------------------------------------------------------------

# Expressions only ever matched at one place (`match`, `fullmatch`); every other is searched.
MATCHED = {
    "CALLOUT",
    "DEPRECATED_CALLOUT",
    "KEY_PREFIX",
    "KEY_VALUE",
    "LIST_ITEM",
    "ROW",
    "KEY_LINE",
    "CONFLICT_OPEN",
    "CONFLICT_BASE",
    "CONFLICT_CLOSE",
    "LEGACY_INDEX_ROW",
}
RUNTIME_PARSERS = ("KEY_LINE", "CONFLICT_OPEN", "CONFLICT_BASE", "CONFLICT_CLOSE")


def parser_expressions() -> Iterator[Tuple[str, str, int]]:
    for module in (markdown, completion_candidates, index_drift):
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                yield name, value.pattern, value.flags
    for name in RUNTIME_PARSERS:
        pattern = getattr(rules, name)
        yield name, pattern.pattern, pattern.flags
    yield "LEGACY_INDEX_ROW", rules.LEGACY_INDEX_ROW, 0


@pytest.mark.parametrize(
    "name, source, flags", list(parser_expressions()), ids=lambda v: str(v)[:30]
)
def test_no_parser_expression_restarts_or_backs_off(name: str, source: str, flags: int) -> None:
    assert problems(source, searched=name not in MATCHED, flags=flags) == []


@pytest.mark.parametrize(
    "source, searched",
    [
        (r"[ \t]+#+$", True),  # a heading's closing sequence, searched for
        (r"^\s*[-*]\s+\[\[([^\]|#]+)(?:\|[^\]]*)?\]\]\s*:\s*(.*?)\s*$", False),  # an index row
        (r"eyJ[A-Za-z0-9_-]{8,}\.", True),
    ],
)
def test_the_check_finds_the_slow_shapes(source: str, searched: bool) -> None:
    assert problems(source, searched=searched)


# --- The same results as the forms replaced ---------------------------------------------------

OLD_HEADING_CLOSE = re.compile(r"[ \t]+#+$")


def old_closing(title: str) -> str:
    close = OLD_HEADING_CLOSE.search(title) if title.endswith("#") else None
    return title[: close.start()] if close is not None else title


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["#", " ", "\t", "a", "# ", " #", "é"]), max_size=20))
def test_a_headings_closing_sequence_goes_as_before(parts: List[str]) -> None:
    title = "".join(parts).rstrip(" \t")
    assert markdown._without_closing_hashes(title) == old_closing(title)


def old_code_spans(line: str) -> List[Tuple[int, int]]:
    """Code spans as first computed: a search for each run's backticks from where it ends."""
    spans: List[Tuple[int, int]] = []
    index = 0
    while index < len(line):
        if line[index] != "`":
            index += 1
            continue
        run_end = index
        while run_end < len(line) and line[run_end] == "`":
            run_end += 1
        run = line[index:run_end]
        close = line.find(run, run_end)
        while close != -1 and close + len(run) < len(line) and line[close + len(run)] == "`":
            close = line.find(run, close + len(run) + 1)
        if close == -1:
            index = run_end
            continue
        spans.append((index, close + len(run)))
        index = close + len(run)
    return spans


@settings(max_examples=600, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(min_value=1, max_value=9), st.sampled_from(["", "a", " ", "[[x]]"])),
        max_size=14,
    )
)
def test_code_spans_are_found_as_before(runs: List[Tuple[int, str]]) -> None:
    line = "".join("`" * length + text for length, text in runs)
    assert markdown.code_span_ranges(line) == old_code_spans(line)


OLD_INDEX_ROW = r"^\s*[-*]\s+\[\[([^\]|#]+)(?:\|[^\]]*)?\]\]\s*:\s*(.*?)\s*$"


@settings(max_examples=600, deadline=None)
@given(
    st.lists(
        st.sampled_from(["- ", "* ", "[[", "]]", "a", "|", "#", ":", " ", "\t", "\u00a0", "\r"]),
        max_size=24,
    )
)
def test_index_rows_are_read_as_before(parts: List[str]) -> None:
    line = "".join(parts)
    old = re.match(OLD_INDEX_ROW, line)
    expected = [(rules.nfc(old.group(1).strip()), old.group(2), 0)] if old else []
    assert rules.parse_index_rows(line) == expected


def test_a_page_of_many_wanted_links_is_read_in_one_pass() -> None:
    """Past a few wanted targets, the links are found by one pass instead of a search each;
    both give the links of a full scan."""
    text = "".join(f"- [[page-{n % 40}]] `[[code]]` and ![[page-{n}]]\n" for n in range(200))
    full = markdown.scan(text).links
    for skipped in (set(), {f"page-{n}" for n in range(35)}, {f"page-{n}" for n in range(1, 200)}):
        links = markdown.Structure.deferred(text).links_except(skipped.__contains__)
        assert links == [link for link in full if link.target not in skipped]


# --- Steps grow with the text -----------------------------------------------------------------

MARKDOWN_FILE = (markdown.__file__,)
RUNTIME_FILE = (rules.__file__,)


def links_except(text: str) -> object:
    return markdown.Structure.deferred(text).links_except(lambda inner: False)


def parsers() -> Iterator[object]:
    for group, texts in MARKDOWN_TEXTS.items():
        for name, make in texts.items():
            for run_name, run in (("scan", markdown.scan), ("links_except", links_except)):
                yield pytest.param(run, make, MARKDOWN_FILE, id=f"{group}: {name} ({run_name})")
    runs: dict = {
        "frontmatter": lambda text: rules.parse_frontmatter(rules.split_lines(text)),
        "index rows": rules.parse_index_rows,
        "conflict markers": lambda text: rules.find_conflict_markers(text.split("\n")),
    }
    for group, texts in RUNTIME_TEXTS.items():
        for name, make in texts.items():
            yield pytest.param(runs[group], make, RUNTIME_FILE, id=f"{group}: {name}")


def steps(run: Callable[[str], object], text: str, files: Tuple[str, ...]) -> int:
    try:
        return count_steps(run, text, files, budget=60 * LARGE)
    except BudgetExceeded as error:
        pytest.fail(f"far more than linear: {error}")


@pytest.mark.parametrize("run, make, files", list(parsers()))
def test_a_parsers_steps_grow_with_the_text(run, make, files) -> None:  # type: ignore[no-untyped-def]
    small = steps(run, make(SMALL), files)
    large = steps(run, make(LARGE), files)
    assert large <= 4.2 * small + 1024, (small, large)


def test_the_steps_count_what_is_read() -> None:
    """A slice of the text counts its length: a parser that sliced a line once per link would
    be seen (without this, the test above would hold for any parser)."""
    text = "`a` " + "[[a]]" * 1000
    line_once = steps(markdown.scan, text, MARKDOWN_FILE)
    sliced = steps(lambda t: [t[: 5 * n] for n in range(1000)], text, MARKDOWN_FILE)
    assert sliced > 1000 * 2000 > line_once
