"""Markdown rendered as plain text for clients that ask for `plaintext` (eglot, ALE)."""

from __future__ import annotations

from echoes_lsp.engine.plain_text import markdown_to_plain


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
