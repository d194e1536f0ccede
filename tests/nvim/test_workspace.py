"""Where the client attaches, and how disk changes made by other programs reach the server."""

from __future__ import annotations

import sys

import pytest

from .harness import NvimRun, codes, scenario_run


def test_attaches_inside_the_vault_only(tmp_path_factory: pytest.TempPathFactory) -> None:
    run = scenario_run(tmp_path_factory, "roots").ok()
    workspace = str(run.workspace)
    assert run["daily"]["root"] == workspace, "a daily entry two folders deep finds the workspace"
    assert run["page"]["root"] == workspace
    assert run["page"]["client_id"] == run["daily"]["client_id"], "one client per workspace"
    assert run["readme"] == {"filetype": "markdown", "clients": 0}
    assert run["root_of"] == {"page": workspace, "readme": None, "vault_dir": workspace}
    assert run["clients"] == 1


def deleted_page_noticed(run: NvimRun) -> None:
    assert run["before"] == []
    after = run["after"]
    assert codes(after) == ["EV300"]
    assert "database-access" in after[0]["message"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux default of Neovim 0.11")
def test_disk_change_noticed_without_dynamic_watching(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Neovim 0.11 on Linux has no dynamic file watching: the server's polling notices."""
    run = scenario_run(
        tmp_path_factory,
        "watch",
        config={"settings": {"echoes": {"diagnostics": {"severity": {"EV300": "error"}}}}},
    ).ok()
    assert run["watched_files_dynamic"] is False
    assert run["registered"] is False
    deleted_page_noticed(run)
    # The severity setting reached the server through `settings` (workspace/configuration).
    assert run["after"][0]["severity"] == 1


def test_disk_change_noticed_with_dynamic_watching(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """With dynamic registration enabled the server registers a watcher and Neovim reports the
    change (`workspace/didChangeWatchedFiles`); the server's polling is switched off here."""
    run = scenario_run(
        tmp_path_factory,
        "watch",
        config={
            "capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}},
            "settings": {"echoes": {"watch": {"pollInterval": 0}}},
        },
    ).ok()
    assert run["watched_files_dynamic"] is True
    assert run["registered"] is True
    deleted_page_noticed(run)
    assert run["after"][0]["severity"] == 2
