"""Headless Emacs 28 + eglot (Debian's `emacs-nox` and `elpa-eglot`) against the real echoes-lsp
server, on a fresh copy of the fixture vault that the Neovim suite uses.

Each scenario of `driver.el` runs in its own `emacs --batch` process (the site start-up files
activate Debian's eglot, as they do for a person) with `editors/emacs` on the load path; the
driver writes what it observed to a JSON report. The Debian packages are installed when missing
(as root); where they cannot be, the suite skips, except under `CI`, where it fails.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from tests.editor_run import ScenarioRun
from tests.nvim.harness import make_workspace
from tests.runtime.needs import is_root, unavailable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLUGIN = ROOT / "editors" / "emacs"
DRIVER = HERE / "driver.el"
SERVER = [sys.executable, "-m", "echoes_lsp", "serve"]
PACKAGES = ["emacs-nox", "elpa-eglot"]
PROCESS_TIMEOUT = 180.0


def has_eglot(emacs: str) -> bool:
    """Whether this Emacs loads eglot without any set-up of ours."""
    probe = subprocess.run(
        [emacs, "--batch", "--eval", "(require 'eglot)"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    return probe.returncode == 0


def install_debian_packages() -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
        # an image with empty package lists: fetch them, then try once more
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, check=False)
        subprocess.run(install, env=env, capture_output=True, check=False)


@functools.cache
def find_emacs() -> str:
    """Emacs with eglot, installed from Debian (as root) when missing."""
    emacs = shutil.which("emacs")
    if emacs and has_eglot(emacs):
        return emacs
    if is_root() and shutil.which("apt-get"):
        install_debian_packages()
        emacs = shutil.which("emacs")
        if emacs and has_eglot(emacs):
            return emacs
    unavailable(f"Emacs with eglot is missing: install the Debian packages {' '.join(PACKAGES)}")


class EmacsRun(ScenarioRun):
    """The report of one scenario, plus what is needed to explain a failure."""

    shown = ("messages",)


def run_emacs(
    emacs: str, scenario: str, workspace: Path, env: Optional[Dict[str, str]] = None
) -> EmacsRun:
    """Run `driver.el`'s scenario in `emacs --batch` inside `workspace`."""
    home = workspace.parent / "emacs-home"
    home.mkdir(exist_ok=True)
    out = workspace.parent / f"{scenario}.json"
    runtime = [sys.executable, str(workspace / ".echoes-vault" / "echoes_vault.py")]
    full_env = {
        **os.environ,
        "HOME": str(home),
        "ECHOES_TEST_CMD": json.dumps(SERVER),
        "ECHOES_TEST_RUNTIME": json.dumps(runtime),
        "ECHOES_TEST_PLUGIN": str(PLUGIN),
        "ECHOES_TEST_SCENARIO": scenario,
        "ECHOES_TEST_OUT": str(out),
        "PYTHONUNBUFFERED": "1",
        **(env or {}),
    }
    done = subprocess.run(
        [emacs, "--batch", "-l", str(DRIVER)],
        cwd=workspace,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
        check=False,
    )
    if not out.exists():
        raise AssertionError(
            f"Emacs exited ({done.returncode}) without a report; stderr: {done.stderr[-3000:]}"
        )
    return EmacsRun(json.loads(out.read_text(encoding="utf-8")), done.stderr, workspace)


def scenario_run(
    factory: pytest.TempPathFactory,
    scenario: str,
    defects: bool = False,
    env: Optional[Dict[str, str]] = None,
) -> EmacsRun:
    """Run a scenario in a fresh workspace (tests check their own part of the report)."""
    emacs = find_emacs()
    workspace = make_workspace(factory.mktemp(scenario), defects=defects)
    return run_emacs(emacs, scenario, workspace, env)


def messages(run: EmacsRun, text: str) -> List[str]:
    return [m for m in run["messages"] if text in m]
