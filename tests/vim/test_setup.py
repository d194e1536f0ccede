"""The plugin's defaults, and where the server starts, as Vim itself evaluates them."""

from __future__ import annotations

from pathlib import Path

from tests.test_editor_settings import check_snippet

from .harness import PLUGIN, evaluate


def test_the_plugin_sends_every_setting_with_its_default() -> None:
    """The `echoes` section sent as initializationOptions and in didChangeConfiguration."""
    sent = evaluate("echoes_lsp#lsp_config(bufnr(''))")
    check_snippet(sent, "editors/vim autoload/echoes_lsp.vim")


def test_a_vimrc_setting_is_merged_over_the_defaults() -> None:
    sent = evaluate(
        '[execute(\'let g:echoes_lsp_settings = {"watch": {"pollInterval": 5},'
        ' "runtime": {"python": "/usr/bin/python3"}}\'),'
        " echoes_lsp#lsp_config(bufnr(''))][1]"
    )
    assert sent["echoes"]["watch"] == {"pollInterval": 5}
    # Merged key by key: the default timeout stays beside the chosen interpreter.
    assert sent["echoes"]["runtime"] == {"timeout": 30, "python": "/usr/bin/python3"}


def test_the_root_is_the_folder_holding_the_innermost_vault(tmp_path: Path) -> None:
    page = tmp_path / "a" / "EchoesVault" / "raw" / "b" / "EchoesVault" / "pages" / "entry.md"
    outside = tmp_path / "notes" / "todo.md"
    roots = evaluate(f"[echoes_lsp#root(bufadd('{page}')), echoes_lsp#root(bufadd('{outside}'))]")
    assert roots == [str(tmp_path / "a" / "EchoesVault" / "raw" / "b"), ""]
    assert (PLUGIN / "plugin" / "echoes_lsp.vim").is_file()
