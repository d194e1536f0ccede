"""Durable once reported (issue 18, item 1): the system calls of real writes, traced with strace.

For every file a command puts in place, the order must be: fsync of the temporary file, its
rename or link to the final name, fsync of the directory holding that name, and only then the
success on stdout. A directory the command creates has its parent synced before the success too.
strace comes from Debian (installed by the test when missing); without it, or where it cannot
trace, the test skips, and under CI it fails."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Iterator, List, NamedTuple, Optional

import pytest

from .conftest import Runtime, page
from .needs import debian_tool, unavailable

SYSCALLS = "fsync,fdatasync,rename,renameat,renameat2,link,linkat,mkdir,mkdirat,write"
CALL = re.compile(r"^(?:\[pid +\d+\] |\d+ +)?(\w+)\((.*)\) += (-?\d+)")
QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
FD_PATH = re.compile(r"^\d+<(.*?)>")


class Event(NamedTuple):
    kind: str  # fsync, place (rename or link), mkdir, success
    path: str  # the file synced, the final name placed, the directory made
    source: str = ""  # the temporary name a rename or link moved


@pytest.fixture(scope="module")
def strace() -> str:
    path = debian_tool("strace", "strace")
    if path is None:
        unavailable("strace is not installed and could not be installed from Debian")
    probe = subprocess.run([path, "-f", "-qq", "-e", "trace=none", "true"],
                           capture_output=True, text=True, check=False)  # fmt: skip
    if probe.returncode != 0:
        unavailable(f"strace cannot trace here: {probe.stderr.strip()}")
    return path


def event(name: str, args: str) -> Optional[Event]:
    """The event one successful system call stands for, if any."""
    quoted = QUOTED.findall(args)
    fd = FD_PATH.match(args)
    if name in ("fsync", "fdatasync") and fd:
        return Event("fsync", fd.group(1))
    if name.startswith(("rename", "link")) and len(quoted) >= 2:
        return Event("place", os.path.realpath(quoted[1]), os.path.realpath(quoted[0]))
    if name.startswith("mkdir") and quoted:
        return Event("mkdir", os.path.realpath(quoted[-1]))
    if name == "write" and args.startswith("1<") and '\\"ok\\": true' in args:
        return Event("success", "")
    return None


def trace(strace: str, tmp_path: Path, rt: Runtime, *args: str, payload: object) -> List[Event]:
    """Run one runtime command under strace; the events of its successful calls, in order."""
    log = tmp_path / "strace.log"
    prefix = [strace, "-f", "-qq", "-y", "-s", "64", "-o", str(log), "-e", f"trace={SYSCALLS}"]
    traced = Runtime(rt.workspace, prefix=prefix)
    result = traced.run(*args, payload=payload)
    assert result.code == 0, result
    events = []
    for line in log.read_text(errors="replace").splitlines():
        match = CALL.match(line)
        if match and int(match.group(3)) >= 0:
            found = event(match.group(1), match.group(2))
            if found is not None:
                events.append(found)
    return events


def order_problems(events: List[Event]) -> Iterator[str]:
    """Every placement not framed fsync(file) -> rename/link -> fsync(directory) -> success."""
    kinds = [item.kind for item in events]
    if kinds.count("success") != 1:
        yield f"{kinds.count('success')} successes reported"
        return
    done = kinds.index("success")
    for at, item in enumerate(events):
        if item.kind == "place":
            if Event("fsync", item.source) not in events[:at]:
                yield f"{item.path} placed from a file never synced"
            if Event("fsync", os.path.dirname(item.path)) not in events[at + 1 : done]:
                yield f"{item.path} placed, its directory not synced before the success"
        if (
            item.kind == "mkdir"
            and Event("fsync", os.path.dirname(item.path)) not in events[at + 1 : done]
        ):
            yield f"{item.path} made, its parent not synced before the success"
        if item.kind in ("place", "mkdir") and at > done:
            yield f"{item.path} written after the success was reported"


def placed(events: List[Event]) -> List[str]:
    return [item.path for item in events if item.kind == "place"]


def test_an_upsert_syncs_file_then_renames_then_syncs_the_directory(
    strace: str, rt: Runtime, vault: Path, tmp_path: Path
) -> None:
    rt.upsert("p.md", page("First."))
    payload = {"filename": "p.md", "content": page("Second."), "expectedSha256": rt.hash("p")}
    events = trace(strace, tmp_path, rt, "upsert", "--payload", "-", payload=payload)
    target = os.path.realpath(vault / "EchoesVault/pages/p.md")
    assert target in placed(events)  # the page itself was traced, renamed over the old one
    assert (vault / "EchoesVault/pages/p.md").read_text() == page("Second.")
    assert list(order_problems(events)) == []


def test_an_append_syncs_file_then_links_then_syncs_the_directory(
    strace: str, rt: Runtime, vault: Path, tmp_path: Path
) -> None:
    events = trace(strace, tmp_path, rt, "append", "--payload", "-", payload={"entry": "- x"})
    daily = os.path.realpath(vault / "EchoesVault/daily")
    entries = [path for path in placed(events) if path.startswith(daily + os.sep)]
    assert len(entries) == 1 and Path(entries[0]).read_text().endswith("- x\n")
    days = [item.path for item in events if item.kind == "mkdir" and item.path.startswith(daily)]
    assert days == [os.path.dirname(entries[0])]  # the day's folder was made by this append
    assert list(order_problems(events)) == []
