"""The vimrc of the Vim guide and of `editors/vim/README.md`, verbatim: the plugin found by
`echoes-lsp editor-dir vim`, the server by name on PATH, diagnostics in the page."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.nvim.harness import make_workspace

from .harness import HERE, PLUGIN, ROOT, run_scenario

GUIDES = [ROOT / "docs" / "editors" / "vim.md", ROOT / "editors" / "vim" / "README.md"]


def documented_vimrc(guide: Path) -> str:
    """The ```vim block of `guide` that starts with `" ~/.vimrc`."""
    blocks = re.findall(r"```vim\n(.*?)```", guide.read_text(encoding="utf-8"), re.DOTALL)
    (block,) = [b for b in blocks if b.startswith('" ~/.vimrc\n')]
    return block


def test_the_guide_and_the_readme_show_the_same_vimrc() -> None:
    assert documented_vimrc(GUIDES[0]) == documented_vimrc(GUIDES[1])


def test_the_documented_vimrc_starts_the_server_for_a_vault_page(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    workspace = make_workspace(tmp_path_factory.mktemp("documented"), defects=True)
    vimrc = workspace.parent / "vimrc"
    driver = HERE / "driver.vim"
    vimrc.write_text(documented_vimrc(GUIDES[0]) + f"source {driver}\n", encoding="utf-8")
    run = run_scenario("documented", workspace, vimrc=vimrc).ok()
    assert "EV300" in run["codes"]
    assert run["plugin"] == [str(PLUGIN / "plugin" / "echoes_lsp.vim")]
    assert run["executable"] == str(Path(sys.executable).parent / "echoes-lsp")
    assert run["omnifunc"] == "echoes_lsp#complete"
