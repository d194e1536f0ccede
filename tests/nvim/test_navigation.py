"""Completion, hover and go-to-definition in Neovim."""

from __future__ import annotations

import re

import pytest

from .harness import NvimRun, scenario_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> NvimRun:
    return scenario_run(tmp_path_factory, "navigation")


def test_scenario_completes(run: NvimRun) -> None:
    run.ok()


def test_wikilink_completion_after_brackets(run: NvimRun) -> None:
    assert run["completion_error"] is None
    labels = [item["label"] for item in run["completion_all"]]
    assert sorted(labels) == ["auth-architecture", "database-access", "session-tokens"]
    items = {item["label"]: item for item in run["completion"]}
    assert "session-tokens" in items, run["completion"]
    edit = items["session-tokens"]["textEdit"]
    # `Related: [[ses|`: the edit replaces from just after `[[` (column 11) to the cursor (14).
    assert edit["range"]["start"]["character"] == 11
    assert edit["range"]["end"]["character"] == 14
    assert edit["newText"].startswith("session-tokens")


def test_hover_on_a_link_shows_the_page(run: NvimRun) -> None:
    assert run["hover_error"] is None
    hover = run["hover"]
    assert hover, "no hover text"
    assert "session-tokens" in hover
    assert "Session storage, token lifetime and rotation." in hover


def test_definition_of_page_and_heading_links(run: NvimRun) -> None:
    assert run["definition_error"] is None
    target = run.page("session-tokens.md")
    assert [d["path"] for d in run["definition"]] == [str(target)]
    heading = run["heading_definition"]
    assert [d["path"] for d in heading] == [str(target)]
    lines = target.read_text(encoding="utf-8").split("\n")
    assert lines[heading[0]["range"]["start"]["line"]] == "## Token lifetime"


def test_definition_jump_lands_on_the_heading(run: NvimRun) -> None:
    jump = run["jump"]
    assert jump["file"] == "session-tokens.md"
    assert jump["cursor"][0] == 12  # 1-based line of `## Token lifetime`


def test_builtin_completion_autotriggers_on_brackets(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`vim.lsp.completion.enable(..., {autotrigger = true})`: typing `[[` opens the menu."""
    run = scenario_run(tmp_path_factory, "builtin_completion").ok()
    assert any(word.startswith("session-tokens") for word in run["menu"]), run["menu"]
    assert run["line"] == "See [[session-tokens]]"


def test_block_id_completion_writes_the_id_to_the_target(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Neovim 0.11's `vim.lsp.completion` runs the item's command: choosing a block without an
    id inserts the link with a fresh id and the id lands at the end of that block on disk."""
    run = scenario_run(tmp_path_factory, "block_id_completion").ok()
    assert "rotation" in run["menu"] and "Refresh tokens rotate on every use." in run["menu"]
    match = re.fullmatch(r"See \[\[session-tokens#\^([0-9a-f]{6})\]\]", run["line"])
    assert match is not None, run["line"]
    assert f"Refresh tokens rotate on every use. ^{match.group(1)}\n" in run["target"]
    assert run["target"].count("^") == 2  # the page's own `^rotation`, and the new id
