"""ALE's own `:ALEHover` and `:ALEGoToDefinition` on a wikilink."""

from __future__ import annotations

import pytest

from .harness import VimRun, scenario_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> VimRun:
    return scenario_run(tmp_path_factory, "navigation")


def test_definition_opens_the_linked_page(run: VimRun) -> None:
    run.ok()
    definition = run["definition"]
    assert definition["file"] == str(run.page("session-tokens.md"))


def test_hover_shows_the_linked_pages_summary(run: VimRun) -> None:
    hover = "\n".join(run["hover"])
    assert "session-tokens" in hover
    assert "Session storage, token lifetime and rotation." in hover


# ALE asks for plain text (`contentFormat: ["plaintext"]`), and the server honours it.
def test_hover_is_plain_text_as_ale_asked(run: VimRun) -> None:
    hover = "\n".join(run["hover"])
    assert "**" not in hover and "`" not in hover, hover
