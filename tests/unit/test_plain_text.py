"""Markdown rendered as plain text for clients that ask for `plaintext` (eglot, ALE)."""

from __future__ import annotations

from echoes_lsp.engine import plain_text
from echoes_lsp.engine.plain_text import markdown_to_plain, plain_line
from tests.step_count import count_steps


def test_block_marks_are_dropped() -> None:
    text = "# Title\n\n> ⚠️ Quoted\n> > twice\n\n---\n\n## Part ##\n- item"
    assert markdown_to_plain(text) == "Title\n\n⚠️ Quoted\ntwice\n\nPart\n- item"


def test_a_callout_reads_as_its_kind() -> None:
    text = "> [!warning] DEPRECATED\n> Replaced by [[auth]].\n>[!note]\n[!not-quoted]"
    assert markdown_to_plain(text) == "Warning: DEPRECATED\nReplaced by auth.\nNote\n[!not-quoted]"


def test_links_read_as_their_text() -> None:
    text = "See [[auth]], [[sessions#Token lifetime|lifetimes]], ![[diagram.png]], [docs](https://x.y)."
    assert markdown_to_plain(text) == "See auth, lifetimes, diagram.png, docs (https://x.y)."


def test_emphasis_marks_go_but_words_with_underscores_stay() -> None:
    text = "**type** `note` · *very* _much_ snake_case_name and a_b"
    assert markdown_to_plain(text) == "type note · very much snake_case_name and a_b"


def test_code_is_kept_as_written() -> None:
    text = "Not a link: `[[x]]` and `**y**`.\n```text\n[[z]] **w**\n# not a heading\n```\nafter"
    assert markdown_to_plain(text) == (
        "Not a link: [[x]] and **y**.\n[[z]] **w**\n# not a heading\nafter"
    )


def test_a_masked_value_stays_masked() -> None:
    stars = "*" * 40
    assert (
        markdown_to_plain(f"Use **{stars}** or {stars} here") == f"Use **{stars}** or {stars} here"
    )


def test_a_run_of_quote_marks_is_dropped_in_one_match() -> None:
    """Stripping one `>` at a time copied the line once per mark: on a pasted run of them the
    hover took time that grew with the square of its length."""
    line = ">" * 900 + " quoted"
    assert plain_line(line) == "quoted"
    assert count_steps(plain_line, line, (plain_text.__file__,), budget=200) < 200


def test_a_line_past_the_limit_is_cut_before_it_is_rendered() -> None:
    """The inline expressions are bounded by the line they read: a 256 KB line of link openers
    is cut to `MAX_LINE` characters first."""
    assert plain_line("[[" * 131_072) == "[[" * (plain_text.MAX_LINE // 2) + "…"
    assert plain_line("a" * plain_text.MAX_LINE) == "a" * plain_text.MAX_LINE
