"""`echoes-lsp check` beside hostile files (issue 12, item 3): FIFOs, sockets and devices are
reported as EV401 by kind and never opened; unreadable files and folders are EV401."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path
from typing import Dict, List

import pytest

from tests.runtime.file_ops import hooked
from tests.runtime.test_hostile_files import no_dac_override

QUICK = 20


def _ev401(report: dict) -> Dict[str, str]:
    return {d["path"]: d["message"] for d in report["diagnostics"] if d["code"] == "EV401"}


def _check(workspace: Path, prefix: List[str] = (), **hook: str) -> dict:  # type: ignore[assignment]
    """The JSON report of `check` in `workspace`; with `hook`, run under the `file_ops` hook."""
    import subprocess
    import sys

    from .conftest import base_env

    program = ["-m", "echoes_lsp", "check", "--format", "json"]
    command = (
        hooked(sys.executable, program, str(workspace), **hook)
        if hook
        else [sys.executable, *program]
    )
    process = subprocess.run(
        [*prefix, *command],
        cwd=workspace, env=base_env(), capture_output=True, timeout=QUICK,
    )  # fmt: skip
    assert process.returncode == 1, process.stderr
    return json.loads(process.stdout)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifos_sockets_and_devices_are_reported_by_kind(workspace: Path) -> None:
    vault = workspace / "EchoesVault"
    for rel in ("raw/pipe.md", "assets/pipe.png", "daily/pipe.md"):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(vault / rel)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    cwd = os.getcwd()
    os.chdir(vault / "raw")
    try:
        listener.bind("sock.md")
    finally:
        os.chdir(cwd)
    if os.geteuid() == 0:
        os.mknod(vault / "raw" / "null.md", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    try:
        found = _ev401(_check(workspace))
    finally:
        listener.close()
    assert "is a FIFO, not a regular file" in found["EchoesVault/raw/pipe.md"]
    assert "is a FIFO" in found["EchoesVault/assets/pipe.png"]
    assert "is a FIFO" in found["EchoesVault/daily/pipe.md"]
    assert "is a socket" in found["EchoesVault/raw/sock.md"]
    if os.geteuid() == 0:
        assert "is a character device" in found["EchoesVault/raw/null.md"]


def test_unreadable_files_and_folders_are_ev401(workspace: Path) -> None:
    prefix = no_dac_override()
    vault = workspace / "EchoesVault"
    page = vault / "pages" / "session-tokens.md"
    hidden = vault / "raw" / "private"
    hidden.mkdir(parents=True)
    (hidden / "notes.md").write_text("secret plans")
    page.chmod(0)
    hidden.chmod(0)
    try:
        found = _ev401(_check(workspace, prefix))
    finally:
        page.chmod(0o644)
        hidden.chmod(0o755)
    assert found["EchoesVault/pages/session-tokens.md"] == "file cannot be read: Permission denied"
    assert "cannot be read: Permission denied" in found["EchoesVault/raw/private"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_page_swapped_for_a_fifo_after_the_walk_is_reported_not_read(workspace: Path) -> None:
    """The safe reader's own guard, which the walk's screening cannot stand in for: the page is a
    regular file when the walk lists it and the reader takes its `lstat`, and a FIFO by the
    time it is opened (swapped by the `file_ops` hook, as another process could). The
    non-blocking open and the `fstat` after it refuse it (EV401, by kind), where an open that
    blocks would never return and a read without the check would see an empty page."""
    page = workspace / "EchoesVault" / "pages" / "auth-architecture.md"
    found = _ev401(_check(workspace, fifo=str(page)))
    assert stat.S_ISFIFO(page.lstat().st_mode), "the hook swapped the page"
    assert "is a FIFO, not a regular file" in found["EchoesVault/pages/auth-architecture.md"]
