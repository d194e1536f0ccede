"""Neovim that explains itself: the message when the server cannot start, the `python3 -m
echoes_lsp` fallback, `:checkhealth echoes_lsp`, and completion that never inserts by itself."""

from __future__ import annotations

import os
import stat
import sys
from typing import List

import pytest

from echoes_lsp import __version__
from echoes_lsp.runtime.echoes_vault import ENGINE_VERSION, PROTOCOL_VERSION

from .harness import NvimRun, scenario_run

# Only the system's directories: no `echoes-lsp`, and a python3 without the package.
SYSTEM_PATH = "/usr/bin:/bin"


def health_text(run: NvimRun) -> str:
    return "\n".join(run["health"])


def test_a_server_that_cannot_start_is_said_once_with_the_fix(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    run = scenario_run(
        tmp_path_factory, "no_server", env={"ECHOES_TEST_CMD": "null", "PATH": SYSTEM_PATH}
    ).ok()
    assert run["clients"] == 0
    about = [n for n in run["notifications"] if "echoes-lsp" in n["message"]]
    assert len(about) == 1, run["notifications"]
    # A warning of one line (an ERROR notification raises inside the FileType autocommand).
    assert about[0]["level"] == 3  # vim.log.levels.WARN
    message = about[0]["message"]
    assert message == "echoes-lsp not found: pipx install it (:checkhealth echoes_lsp)"
    health = health_text(run)
    assert "ERROR the server cannot start: `echoes-lsp` is not on PATH" in health
    assert "WARNING no echoes_lsp client is attached to this buffer" in health
    assert "pipx install /path/to/echoes-lsp" in health and "not on PyPI yet" in health
    assert f"PATH as Neovim sees it: {SYSTEM_PATH}" in health


def test_a_configured_command_that_is_not_executable_is_said_once(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    run = scenario_run(
        tmp_path_factory,
        "no_server",
        env={"ECHOES_TEST_CMD": '["/nowhere/echoes-lsp", "serve"]', "PATH": SYSTEM_PATH},
    ).ok()
    about = [n for n in run["notifications"] if "echoes-lsp" in n["message"]]
    assert len(about) == 1, run["notifications"]
    assert about[0]["message"] == "echoes-lsp cmd does not run: see :checkhealth echoes_lsp"
    assert (
        "the server cannot start: `/nowhere/echoes-lsp` (the cmd of the echoes_lsp config) is not"
        " executable" in health_text(run)
    )


def test_python3_m_echoes_lsp_is_used_when_echoes_lsp_is_not_on_path(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    bin_dir = tmp_path_factory.mktemp("python-only")
    python3 = bin_dir / "python3"
    # A python3 that has the package (this test's interpreter); no echoes-lsp executable anywhere.
    python3.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python3.chmod(python3.stat().st_mode | stat.S_IXUSR)
    run = scenario_run(
        tmp_path_factory,
        "python_fallback",
        env={"ECHOES_TEST_CMD": "null", "PATH": f"{bin_dir}{os.pathsep}{SYSTEM_PATH}"},
    ).ok()
    assert run["resolved_cmd"] == [str(python3), "-m", "echoes_lsp", "serve"]
    assert [n for n in run["notifications"] if n["level"] >= 3] == []
    health = health_text(run)
    assert f"OK server command: `{python3} -m echoes_lsp serve` (echoes-lsp {__version__}" in health
    assert "OK client attached" in health


def test_checkhealth_reports_every_part(tmp_path_factory: pytest.TempPathFactory) -> None:
    run = scenario_run(tmp_path_factory, "health").ok()
    lines: List[str] = run["health"]
    health = "\n".join(lines)
    v = f"echoes-lsp {__version__} (runtime engine {ENGINE_VERSION}, EchoesVault Protocol {PROTOCOL_VERSION})"
    assert "OK Neovim 0.11." in health
    assert "OK the echoes_lsp config is enabled" in health
    assert f"-m echoes_lsp serve` ({v})" in health
    assert f"OK Python that runs it: {sys.version_info[0]}.{sys.version_info[1]}." in health
    assert "OK vault: " in health and "EchoesVault (buffer session-tokens.md)" in health
    assert f"OK marker: EchoesVault/.echoes-vault.json, protocol {PROTOCOL_VERSION}" in health
    assert f"OK project runtime: .echoes-vault/echoes_vault.py, engine {ENGINE_VERSION}" in health
    assert "OK client attached: id " in health
    assert "ERROR" not in health and "WARNING" not in health, health


def test_checkhealth_advises_on_a_vault_without_marker_or_runtime(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    workspace_parent = tmp_path_factory.mktemp("bare")
    from .harness import make_workspace, run_scenario

    workspace = make_workspace(workspace_parent)
    (workspace / "EchoesVault" / ".echoes-vault.json").unlink()
    (workspace / ".echoes-vault" / "echoes_vault.py").unlink()
    run = run_scenario("health", workspace).ok()
    health = "\n".join(run["health"])
    assert "ERROR no readable marker EchoesVault/.echoes-vault.json" in health
    assert "ERROR no project runtime .echoes-vault/echoes_vault.py" in health
    assert "echoes-lsp runtime --workspace . init" in health


def test_completion_never_inserts_an_item_by_itself(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    run = scenario_run(tmp_path_factory, "completion_no_insert").ok()
    assert "noselect" not in run["completeopt_global"]  # Neovim's default: the plugin must act
    assert "session-tokens]]" in run["menu"]
    assert run["line_with_menu"] == "[["
    assert run["line_after_sto"] == "[[sto"
    assert run["line"] == "[[stoq"
    assert "noselect" in run["completeopt"].split(",")
