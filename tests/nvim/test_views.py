"""Semantic tokens and inlay hints in real Neovim 0.11: the groups `vim.inspect_pos` shows on a
link, an unresolved link and a block part, and the hint `vim.lsp.inlay_hint` gets after a block
link."""

from __future__ import annotations

import pytest

from .harness import NvimRun, scenario_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> NvimRun:
    return scenario_run(tmp_path_factory, "views")


def test_scenario_completes(run: NvimRun) -> None:
    run.ok()
    assert run["capabilities"] == {"semantic_tokens": True, "inlay_hint": True}


def test_semantic_tokens_colour_link_parts(run: NvimRun) -> None:
    assert "@lsp.type.namespace.markdown" in run["target_groups"]
    assert "@lsp.mod.unresolved.markdown" not in run["target_groups"]
    assert "@lsp.type.namespace.markdown" in run["missing_groups"]
    assert "@lsp.mod.unresolved.markdown" in run["missing_groups"]
    assert "@lsp.type.enumMember.markdown" in run["block_groups"]
    assert "@lsp.type.property.markdown" in run["key_groups"]
    # the plugin gives the modifier no colour scheme knows a default look
    assert run["unresolved_link"] == "DiagnosticUnderlineWarn"


def test_an_inlay_hint_shows_the_block_text(run: NvimRun) -> None:
    line = run["line_count"] - 1
    text = run["line_text"]
    end = text.index("]]", text.index("#^rotation")) + 2
    assert {"line": line, "character": end, "label": "Access tokens live 15 minutes."} in run[
        "hints"
    ]
    assert run["hint_enabled"]
