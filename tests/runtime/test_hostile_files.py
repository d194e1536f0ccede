"""Hostile files (issue 12, item 3): FIFOs, sockets and devices in the vault are reported, never
opened, so no command hangs; an unreadable file or folder is reported, never a crash."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
from pathlib import Path
from typing import Iterator, List

import pytest

from .conftest import PROJECT_RUNTIME, PYTHON, Runtime, base_env, page, pages_dir, snapshot
from .file_ops import hooked

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
QUICK = 20  # seconds: a command that blocks on a FIFO never returns at all


def no_dac_override() -> List[str]:
    """A command prefix under which file permissions apply even to root (they always apply to
    other users), or a skip when there is no way to get one."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    setpriv = "/usr/bin/setpriv"
    if not os.path.exists(setpriv):
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]


def restricted(vault: Path) -> Runtime:
    """The runtime run without the power to bypass file permissions."""
    return Runtime(vault, prefix=no_dac_override())


@pytest.fixture
def hostile(vault: Path) -> Iterator[Path]:
    """A FIFO named like Markdown in pages/, raw/ and assets/, a socket, and (as root) a device."""
    vault_dir = vault / "EchoesVault"
    for rel in ("pages/pipe.md", "raw/pipe.md", "assets/pipe.md"):
        os.mkfifo(vault_dir / rel)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # bound through a short relative path: socket paths are limited to about 100 bytes
    cwd = os.getcwd()
    os.chdir(vault_dir / "raw")
    try:
        listener.bind("sock.md")
    finally:
        os.chdir(cwd)
    if os.geteuid() == 0:
        os.mknod(vault_dir / "assets" / "null.md", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    yield vault
    listener.close()


@needs_fifo
def test_inspect_and_status_report_special_files_without_opening_them(
    rt: Runtime, hostile: Path
) -> None:
    report = rt.ok("inspect", timeout=QUICK)
    kinds = {item["file"]: item["kind"] for item in report["specialFiles"]}
    assert kinds["EchoesVault/raw/pipe.md"] == "FIFO"
    assert kinds["EchoesVault/assets/pipe.md"] == "FIFO"
    assert kinds["EchoesVault/pages/pipe.md"] == "FIFO"
    assert kinds["EchoesVault/raw/sock.md"] == "socket"
    if os.geteuid() == 0:
        assert kinds["EchoesVault/assets/null.md"] == "character device"
    assert {"special-file"} <= {issue["kind"] for issue in report["issues"]}
    assert report["integrity"] != "healthy"
    card = rt.text("status", timeout=QUICK)
    assert "special" in card.lower() or "attention" in card.lower()


@needs_fifo
def test_writers_and_readers_work_beside_special_files(rt: Runtime, hostile: Path) -> None:
    rt.upsert("fine.md", page(summary="Written beside a FIFO."))
    rt.ok("hydrate", timeout=QUICK)
    rt.ok("rebuild-index", timeout=QUICK)
    rt.ok("search", "FIFO", timeout=QUICK)
    assert rt.text("start", "--recent", "3", timeout=QUICK)
    assert "[[pipe]]" not in (hostile / "EchoesVault/index.md").read_text()
    rt.fail("hash", "pipe.md", timeout=QUICK, code="unsafe-path")


@needs_fifo
def test_a_page_swapped_for_a_fifo_after_the_listing_is_refused_not_read(
    rt: Runtime, vault: Path
) -> None:
    """The safe reader's own guard, which the scan's listing cannot stand in for: the page is a
    regular file when `rebuild-index` lists it and takes its `lstat`, and a FIFO by the time it
    is opened (swapped by the `file_ops` hook, as another process could). The non-blocking open
    and the `fstat` after it refuse it: the command names it and keeps the index, where an open
    that blocks would never return and a read without the check would see an empty page."""
    rt.upsert("kept.md", page(summary="Kept."))
    rt.upsert("swapped.md", page(summary="Soon a FIFO."))
    index = (vault / "EchoesVault/index.md").read_bytes()
    (vault / ".echoes-vault/index-cache.json").unlink(missing_ok=True)  # every page is read
    swapped = pages_dir(vault) / "swapped.md"
    program = [str(vault / PROJECT_RUNTIME), "--workspace", str(vault), "rebuild-index"]
    done = subprocess.run(
        hooked(PYTHON, program, str(vault), fifo=str(swapped)),
        cwd=vault, env=base_env(), capture_output=True, text=True, timeout=QUICK, check=False,
    )  # fmt: skip
    assert stat.S_ISFIFO(swapped.lstat().st_mode), "the hook swapped the page"
    assert done.returncode == 2 and done.stdout == "", done
    error = json.loads(done.stderr)
    assert error["code"] == "invalid-page", error
    assert (
        "EchoesVault/pages/swapped.md: EV401: cannot read the page "
        "(is a FIFO, not a regular file)" in error["error"]
    ), error
    assert (vault / "EchoesVault/index.md").read_bytes() == index


def test_an_unreadable_pages_folder_is_reported_and_stops_writers(vault: Path) -> None:
    rt = restricted(vault)
    rt.upsert("kept.md", page(summary="Listed in the index."))
    index = (vault / "EchoesVault/index.md").read_bytes()
    pages_dir(vault).chmod(0)
    try:
        report = rt.ok("inspect", timeout=QUICK)
        unreadable = {item["file"] for item in report["unreadable"]}
        assert "EchoesVault/pages/" in unreadable, report["unreadable"]
        assert report["integrity"] != "healthy"
        before = snapshot(vault, lock_ok=True)
        error = rt.fail(
            "upsert", "--payload", "-", payload={"filename": "x.md", "content": page()},
            timeout=QUICK,
        )  # fmt: skip
        assert "cannot be read" in error["error"] or "Permission denied" in error["error"]
        rt.fail("rebuild-index", timeout=QUICK)
        assert snapshot(vault, lock_ok=True) == before
    finally:
        pages_dir(vault).chmod(0o755)
    assert (vault / "EchoesVault/index.md").read_bytes() == index, "no index without its pages"


def test_an_unreadable_page_and_folder_are_reported(vault: Path) -> None:
    rt = restricted(vault)
    rt.upsert("locked.md", page(summary="Soon unreadable."))
    locked = pages_dir(vault) / "locked.md"
    hidden = vault / "EchoesVault" / "raw" / "private"
    hidden.mkdir()
    locked.chmod(0)
    hidden.chmod(0)
    try:
        report = rt.ok("inspect", timeout=QUICK)
        unreadable = {item["file"]: item["error"] for item in report["unreadable"]}
        assert "Permission denied" in unreadable["EchoesVault/pages/locked.md"]
        assert "Permission denied" in unreadable["EchoesVault/raw/private/"]
        rt.fail("hash", "locked.md", timeout=QUICK)
    finally:
        locked.chmod(0o644)
        hidden.chmod(0o755)
