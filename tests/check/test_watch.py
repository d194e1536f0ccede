"""--watch: a real process, real file changes, reports read from its stdout with timeouts."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, List, Optional

import pytest

from .conftest import base_env, write_page

WAIT = 15.0
SUMMARY = re.compile(r"^Checked \d+ files? in (?:\d+ms|<1ms|\d+\.\d\ds)(?:, \d+ problems?)?: ")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="signals differ on Windows")


class Watcher:
    """`echoes-lsp check --watch` with its stdout collected line by line on a thread."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "echoes_lsp",
                "check",
                "--watch",
                "--poll-interval",
                "0.1",
                *args,
            ],
            cwd=str(cwd),
            env=base_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[Optional[str]] = queue.Queue()
        self.seen: List[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self.lines.put(raw.decode("utf-8").rstrip("\n"))
        self.lines.put(None)

    def report(self, timeout: float = WAIT) -> List[str]:
        """The lines of the next complete report (up to and including its summary line)."""
        block: List[str] = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no report within {timeout}s; got {block!r}")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"watch mode exited early: {block!r} {self.stderr()}")
            block.append(line)
            self.seen.append(line)
            if SUMMARY.match(line):
                return block

    def report_where(
        self, predicate: Callable[[List[str]], bool], timeout: float = WAIT
    ) -> List[str]:
        deadline = time.monotonic() + timeout
        while True:
            block = self.report(max(0.1, deadline - time.monotonic()))
            if predicate(block):
                return block

    def quiet(self, seconds: float) -> List[str]:
        """Lines printed during `seconds` (expected: none)."""
        got = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                continue
            if line is not None:
                got.append(line)
        return got

    def stop(self, sig: int = signal.SIGINT) -> int:
        self.process.send_signal(sig)
        return self.process.wait(timeout=WAIT)

    def stderr(self) -> str:
        if self.process.poll() is None:
            return ""
        assert self.process.stderr is not None
        return self.process.stderr.read().decode("utf-8")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=WAIT)


@pytest.fixture
def watcher_factory():  # type: ignore[no-untyped-def]
    started: List[Watcher] = []

    def start(cwd: Path, *args: str) -> Watcher:
        watcher = Watcher(cwd, *args)
        started.append(watcher)
        return watcher

    yield start
    for watcher in started:
        watcher.close()


def test_a_change_is_reported_and_dependents_are_rechecked(
    clean_workspace: Path, watcher_factory
) -> None:  # type: ignore[no-untyped-def]
    vault = clean_workspace / "EchoesVault"
    watcher = watcher_factory(clean_workspace)
    first = watcher.report()
    assert first[0].startswith("[") and "watching EchoesVault every 0.1s" in first[0]
    assert first[-1].endswith("no problems.")
    write_page(vault, "api", "The public API.", "\nTokens: [[token-store]].\n")
    broken = watcher.report_where(lambda b: any("EV300" in line for line in b))
    assert any("changed: EchoesVault/pages/api.md; re-checked" in line for line in broken)
    assert "EchoesVault/pages/api.md:10:11: EV300 no page named `token-store` in pages/" in broken
    # Creating the missing page fixes api.md although api.md itself did not change.
    write_page(vault, "token-store", "Where tokens live.")
    fixed = watcher.report_where(
        lambda b: "changed: EchoesVault/pages/token-store.md" in " ".join(b)
    )
    assert not any("EV300" in line for line in fixed)
    assert fixed[-1].endswith("1 information (EV403).")  # the index now lacks two pages
    assert watcher.stop() == 0  # the last report had no error
    assert "Traceback" not in watcher.stderr()


def test_editor_temporary_files_are_ignored(clean_workspace: Path, watcher_factory) -> None:  # type: ignore[no-untyped-def]
    pages = clean_workspace / "EchoesVault" / "pages"
    watcher = watcher_factory(clean_workspace)
    watcher.report()
    for name in (
        "overview.md~",
        "4913",
        ".overview.md.swp",
        "save.tmp",
        ".#overview.md",
        "#overview.md#",
    ):
        (pages / name).write_text("partial\n", encoding="utf-8")
    assert watcher.quiet(1.0) == []
    (pages / "overview.md").write_text("no frontmatter any more\n", encoding="utf-8")
    block = watcher.report_where(lambda b: any("EV100" in line for line in b))
    assert not any(name in " ".join(block) for name in ("4913", ".tmp", "~", ".swp", "#"))
    assert watcher.stop() == 1  # the last report has an error
    assert "Traceback" not in watcher.stderr()


def test_deletes_renames_and_symlink_loops_mid_run(clean_workspace: Path, watcher_factory) -> None:  # type: ignore[no-untyped-def]
    vault = clean_workspace / "EchoesVault"
    pages = vault / "pages"
    watcher = watcher_factory(clean_workspace, "--select", "EV3,EV5")
    watcher.report()
    # overview.md links to session-tokens#Rotation: renaming the target breaks the link.
    os.rename(pages / "session-tokens.md", pages / "tokens.md")
    block = watcher.report_where(lambda b: any("EV300" in line for line in b))
    assert (
        "EchoesVault/pages/overview.md:10:7: EV300 no page named `session-tokens` in pages/"
        in block
    )
    os.rename(pages / "tokens.md", pages / "session-tokens.md")
    block = watcher.report_where(lambda b: b[-1].endswith("no problems."))
    os.symlink("loop.md", pages / "loop.md")
    os.symlink(".", pages / "again")
    block = watcher.report_where(lambda b: b[-1].endswith("2 errors (EV503 x2)."))
    assert (
        "EchoesVault/pages/loop.md:1:1: EV503 symbolic link inside the vault (points to loop.md)"
        in block
    )
    for link in ("loop.md", "again"):
        os.remove(pages / link)
    (pages / "overview.md").unlink()
    block = watcher.report_where(lambda b: "overview.md" in b[0])
    assert re.match(
        r"Checked 2 files in (?:\d+ms|<1ms|\d+\.\d\ds): no problems\.$", block[-1]
    )  # a page, index.md
    assert watcher.stop(signal.SIGTERM) == 0


def test_vault_removed_and_restored(clean_workspace: Path, watcher_factory) -> None:  # type: ignore[no-untyped-def]
    vault = clean_workspace / "EchoesVault"
    watcher = watcher_factory(clean_workspace, "--format", "concise")
    # concise reports end with their own count line, so read raw lines here.
    deadline = time.monotonic() + WAIT
    while not any(line.endswith("problems in 3 files.") for line in watcher.seen):
        line = watcher.lines.get(timeout=max(0.1, deadline - time.monotonic()))
        assert line is not None
        watcher.seen.append(line)
    moved = clean_workspace / "moved-away"
    shutil.move(str(vault), str(moved))
    while not any("is missing; waiting for it to come back" in line for line in watcher.seen):
        line = watcher.lines.get(timeout=WAIT)
        assert line is not None
        watcher.seen.append(line)
    shutil.move(str(moved), str(vault))
    while (
        not watcher.seen[-1].endswith("problems in 3 files.")
        or watcher.seen.count("0 problems in 3 files.") < 2
    ):
        line = watcher.lines.get(timeout=WAIT)
        assert line is not None
        watcher.seen.append(line)
    assert watcher.stop() == 0


def test_json_watch_prints_one_document_per_report(clean_workspace: Path, watcher_factory) -> None:  # type: ignore[no-untyped-def]
    watcher = watcher_factory(clean_workspace, "--format", "json")
    first = json.loads(watcher.lines.get(timeout=WAIT))
    assert first["summary"]["total"] == 0 and first["summary"]["filesChecked"] == 3
    (clean_workspace / "EchoesVault" / "pages" / "overview.md").write_text(
        "broken\n", encoding="utf-8"
    )
    while True:
        line = watcher.lines.get(timeout=WAIT)
        assert line is not None
        document = json.loads(line)
        if document["summary"]["total"]:
            break
    assert [d["code"] for d in document["diagnostics"]] == ["EV100"]
    assert watcher.stop() == 1
