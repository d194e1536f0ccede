"""Snippet text for quick fixes: the first tab stop selects the placeholder; the rest is literal."""

from __future__ import annotations

from echoes_lsp.engine.page_fixes import placeholder_summary, snippet_with_tab_stop


def test_the_tab_stop_selects_the_placeholder() -> None:
    text = 'status: active\nsummary: "TODO: summary of broken."\n'
    assert snippet_with_tab_stop(text, placeholder_summary("broken")) == (
        'status: active\nsummary: "${1:TODO: summary of broken.}"\n$0'
    )


def test_snippet_syntax_in_the_text_is_escaped() -> None:
    text = "cost: $5 {a} \\ x: TODO: y}"
    assert snippet_with_tab_stop(text, "TODO: y}") == "cost: \\$5 {a\\} \\\\ x: ${1:TODO: y\\}}$0"


def test_no_snippet_when_the_placeholder_is_not_there() -> None:
    assert snippet_with_tab_stop("summary: written", placeholder_summary("broken")) is None
    assert snippet_with_tab_stop("anything", "") is None
