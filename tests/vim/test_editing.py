"""Vim + ALE on a page with defects: diagnostics, `[[` completion after the ftplugins, and a
code action through `:EchoesCodeAction`."""

from __future__ import annotations

import re

import pytest

from .harness import VimRun, scenario_run

PAGES = {"auth-architecture", "database-access", "session-tokens", "missing-fields"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> VimRun:
    return scenario_run(tmp_path_factory, "defects", defects=True)


def test_the_scenario_completes(run: VimRun) -> None:
    run.ok()


def test_diagnostics_reach_ale(run: VimRun) -> None:
    assert run["codes"] == ["EV104", "EV104", "EV300"]
    [broken] = [item for item in run["loclist"] if item["code"] == "EV300"]
    assert broken["linter_name"] == "echoes_lsp"
    # The link `[[no-such-page]]` on line 8, columns 22-33 (1-based, as ALE shows them).
    assert (broken["lnum"], broken["col"], broken["end_col"]) == (8, 22, 33)
    assert "no-such-page" in broken["text"]


def test_the_omnifunc_is_the_plugins_after_the_html_ftplugin(run: VimRun) -> None:
    """Vim's markdown ftplugin loads the html one, which sets its own omnifunc."""
    assert run["omnifunc"] == "echoes_lsp#complete"


def test_completion_keeps_a_name_with_a_hyphen_whole(run: VimRun) -> None:
    """`[[session-to` then <C-x><C-o>: the item replaces the whole typed name."""
    assert run["completed_prefix"] == "See [[session-tokens]]"


def test_completion_after_non_ascii_text_lands_in_place(run: VimRun) -> None:
    """`é`, `→` (one UTF-16 unit, several bytes) and `𝄞` (two units) before the link, and text
    after the cursor: the server is asked at the cursor and the item replaces what was typed."""
    assert run["completed_after_unicode"] == "Café → 𝄞 [[session-tokens]], then more"


def test_typing_two_brackets_opens_the_page_menu(run: VimRun) -> None:
    assert run["bracket_mapping"] == "[[<C-X><C-O>"
    # The menu's first item is inserted as Vim does by default ('completeopt' menu,preview).
    found = re.fullmatch(r"\[\[([a-z-]+)\]\]", run["completed_brackets"])
    assert found and found.group(1) in PAGES, run["completed_brackets"]


def test_a_code_action_inserts_the_missing_frontmatter_fields(run: VimRun) -> None:
    [offered] = [s for s in run["selects"] if s["prompt"] == "Code actions:"]
    assert offered["chosen"] == "Insert the missing frontmatter fields"
    text = run["after_action"]
    assert text.startswith("---\ntype: note\nstack: []\nstatus: active\nsummary: ")
    assert "\n---\n\n# Missing fields\n" in text
