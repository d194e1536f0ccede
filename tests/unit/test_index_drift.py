"""EV403 (index.md out of date) against EV402 (edited by hand), on the runtime's own index text."""

from __future__ import annotations

from echoes_lsp.engine.index_drift import EDITED, STALE, compare, generated_rows
from echoes_lsp.runtime import echoes_vault as rules

PAGES_LINE = rules.INDEX_HEADER.count("\n") - 1  # `## Pages`, 0-based


def index(*rows: tuple[str, str]) -> str:
    return rules.index_text([rules.index_line(stem, summary) for stem, summary in rows])


def test_the_same_index_has_no_drift() -> None:
    text = index(("alpha", "A."), ("beta", "B."))
    assert compare(text, text) is None


def test_a_page_added_by_hand_to_an_empty_index_points_at_the_pages_heading() -> None:
    """The old check pointed at "line 8": the empty string after the header's final newline."""
    drift = compare(index(), index(("hand", "A page.")))
    assert drift is not None
    assert drift.code == STALE and drift.line == PAGES_LINE
    assert index().split("\n")[drift.line] == "## Pages"
    assert "not listed: `hand`" in drift.message and "`hydrate`" in drift.message


def test_a_page_added_after_the_last_row_points_at_that_row() -> None:
    actual = index(("alpha", "A."))
    drift = compare(actual, index(("alpha", "A."), ("zulu", "Z.")))
    assert drift is not None and drift.code == STALE
    assert actual.split("\n")[drift.line] == "- [[alpha]]: A."


def test_a_changed_summary_and_a_removed_page_point_at_their_rows() -> None:
    actual = index(("alpha", "A."), ("beta", "Old."), ("gone", "G."))
    drift = compare(actual, index(("alpha", "A."), ("beta", "New.")))
    assert drift is not None and drift.code == STALE
    assert actual.split("\n")[drift.line] == "- [[beta]]: Old."
    assert "summary changed: `beta`" in drift.message
    assert "listed but no longer a page: `gone`" in drift.message


def test_many_missing_pages_are_counted_not_all_named() -> None:
    rows = [(f"p{n}", "x") for n in range(6)]
    drift = compare(index(), index(*rows))
    assert drift is not None and "`p0`, `p1`, `p2` and 3 more" in drift.message


def test_text_the_runtime_never_writes_is_a_hand_edit() -> None:
    generated = index(("alpha", "A."))
    for actual in (
        generated + "My own note.\n",
        generated.replace("Do not edit manually", "Edit freely"),
        "# stale\n",
        generated.replace("- [[alpha]]: A.", "* [[alpha]]: A."),
    ):
        drift = compare(actual, generated)
        assert drift is not None and drift.code == EDITED, actual
        assert actual.split("\n")[drift.line].strip(), actual  # never an empty line
        assert "edited by hand" in drift.message


def test_generated_rows_reads_only_the_runtime_shape() -> None:
    text = index(("alpha", "A."), ("beta", "B: with a colon."))
    assert [(stem, row) for _line, stem, row in generated_rows(text) or []] == [
        ("alpha", "- [[alpha]]: A."),
        ("beta", "- [[beta]]: B: with a colon."),
    ]
    assert generated_rows(index()) == []
    assert generated_rows(text + "\n") is None
