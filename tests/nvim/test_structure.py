"""Folding and document highlights in real Neovim 0.11: `vim.lsp.foldexpr()` folds a vault
page by the server's ranges, and `vim.lsp.buf.document_highlight()` marks the links."""

from __future__ import annotations

import pytest

from .harness import NvimRun, scenario_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> NvimRun:
    return scenario_run(tmp_path_factory, "structure")


def test_scenario_completes(run: NvimRun) -> None:
    run.ok()
    assert run["capabilities"] == {"folding": True, "highlight": True}


def test_foldexpr_folds_the_frontmatter_and_the_sections(run: NvimRun) -> None:
    levels = run["foldlevels"]
    # 1-based lines: the frontmatter (1-6), the title's section (8-19) holding `## Token
    # lifetime` (12-14) and `## Rotation` (16-19)
    assert levels[0:6] == [1] * 6
    assert levels[7] == 1 and levels[11] == 2 and levels[13] == 2 and levels[15] == 2
    assert levels[6] == 0  # the blank line between the frontmatter and the title


def test_closing_every_fold_leaves_the_outer_ones(run: NvimRun) -> None:
    closed = run["closed"]
    assert closed[0:6] == [1] * 6  # the frontmatter folds into its first line
    assert closed[7:] == [8] * (len(closed) - 7)  # everything from the title on, into the title
    assert closed[6] == -1


def test_the_frontmatter_closes_by_its_kind(run: NvimRun) -> None:
    assert run["imports_closed"] == [1, -1]


def test_document_highlight_marks_each_link_to_the_page(run: NvimRun) -> None:
    marks = sorted((m["line"], m["col"]) for m in run["highlights"])
    assert marks == [(9, 8), (18, 6)]
    assert {m["group"] for m in run["highlights"]} == {"LspReferenceRead"}
