"""Real Vim 9 with ALE (both from Debian) against the real echoes-lsp server, on a fresh copy of
the fixture vault.

ALE runs the server as a job and reads it from timers and channel callbacks, which Vim runs only
with a terminal: each scenario of `driver.vim` runs in its own `vim.nox` in a pseudo-terminal,
with the documented setup (`vimrc`), and writes what it observed to a JSON report. The Debian
packages are installed when missing (as root); elsewhere the suite skips, and fails under CI.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tests.editor_run import ScenarioRun
from tests.nvim.harness import make_workspace
from tests.runtime.needs import debian_install, debian_tool, unavailable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLUGIN = ROOT / "editors" / "vim"
VIMRC = HERE / "vimrc"
# Where Debian's vim-ale puts ALE as an optional package (`packadd ale`).
ALE = Path("/usr/share/vim/vimfiles/pack/dist-bundle/opt/ale/plugin/ale.vim")
PROCESS_TIMEOUT = 120.0


def vim_with_ale() -> str:
    """Vim 9 with jobs and timers (vim-nox) and ALE, installed from Debian when missing."""
    vim = debian_tool("vim.nox", "vim-nox")
    if not ALE.is_file():
        debian_install("vim-ale")
    if vim is None or not ALE.is_file():
        unavailable("Vim with ALE is missing: install the Debian packages vim-nox and vim-ale")
    assert vim is not None
    return vim


class VimRun(ScenarioRun):
    """The report of one scenario, plus what is needed to explain a failure."""

    shown = ("selects", "messages")


def run_in_terminal(command: List[str], cwd: Path, env: Dict[str, str]) -> str:
    """Run `command` on a 50x200 pseudo-terminal until it exits; returns what it drew."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    screen = b""
    deadline = time.monotonic() + PROCESS_TIMEOUT
    try:
        while process.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    screen += os.read(master, 65536)
                except OSError:  # the terminal closed: Vim exited
                    break
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        os.close(master)
    return screen[-4000:].decode("utf-8", "replace")


def run_scenario(
    scenario: str, workspace: Path, timeout_ms: int = 60000, vimrc: Path = VIMRC
) -> VimRun:
    """Run `driver.vim`'s scenario in Vim + ALE inside `workspace`, started with `vimrc`."""
    vim = vim_with_ale()
    out = workspace.parent / f"{scenario}.json"
    home = workspace.parent / "home"
    home.mkdir(exist_ok=True)
    env = {
        # The server from this checkout's environment first (`echoes-lsp` for the documented setup).
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "TERM": "xterm",
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "ECHOES_TEST_SCENARIO": scenario,
        "ECHOES_TEST_OUT": str(out),
        "ECHOES_TEST_PLUGIN": str(PLUGIN),
        "ECHOES_TEST_PYTHON": sys.executable,
        "ECHOES_TEST_TIMEOUT_MS": str(timeout_ms),
    }
    screen = run_in_terminal([vim, "-N", "-u", str(vimrc), "-i", "NONE", "-n"], workspace, env)
    if not out.exists():
        raise AssertionError(f"Vim exited without a report; its screen ended with: {screen}")
    report = json.loads(out.read_text(encoding="utf-8"))
    return VimRun(report, screen, workspace)


def scenario_run(factory: pytest.TempPathFactory, scenario: str, defects: bool = False) -> VimRun:
    """Run a scenario in a fresh workspace (tests check their own part of the report)."""
    workspace = make_workspace(factory.mktemp(scenario), defects=defects)
    return run_scenario(scenario, workspace)


def evaluate(expression: str) -> Any:
    """A Vim expression, evaluated with the plugin on 'runtimepath' (no ALE, no terminal)."""
    vim = vim_with_ale()
    done = subprocess.run(
        [vim, "-N", "-u", "NONE", "-i", "NONE", "-n", "-es",
         "--cmd", f"set runtimepath^={PLUGIN}",
         "-c", f"call writefile([json_encode({expression})], '/dev/stdout')", "-c", "qall!"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def contents(path: Path) -> str:
    return path.read_text(encoding="utf-8")
