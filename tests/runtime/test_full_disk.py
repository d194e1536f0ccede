"""Every write complete or absent on a full disk (issue 18, item 1).

The vault lives on a small tmpfs that the test mounts (it needs root; without root the tests skip,
under CI they fail). A filler file takes every free block but the few the case leaves: none, one
(room for the lock and nothing more), three, one block less than the command's payload, one
block more, and one block less than twice the payload (room for `end`'s journal, not for all of
its session entry). The command then either fails with the `io` error before its commit point, or
succeeds, naming in its `warnings` every file it could not write after it; in both cases every
file is its old bytes or its complete new bytes: no temporary file, no empty file, no lock. Once
space is freed, a failed command sent again succeeds, and after a success the next writer
finishes what the warnings named; either way the vault holds exactly one new entry."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from .conftest import PYTHON, Result, Runtime, base_env, make_repo, page
from .needs import tmpfs

SIZE = 4 * 1024 * 1024
PAYLOAD_BYTES = 100_000
LEVELS = (
    "none",
    "one-block",
    "three-blocks",
    "just-under-payload",
    "just-over-payload",
    "just-under-twice-payload",
)
NO_BYTECODE = base_env(PYTHONDONTWRITEBYTECODE="1")


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted for this test alone, unmounted afterwards."""
    with tmpfs(tmp_path / "small", SIZE) as mount:
        yield mount


def block_size(path: Path) -> int:
    return os.statvfs(path).f_frsize


def free_bytes(path: Path) -> int:
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize


def blocks(size: int, block: int) -> int:
    return -(-size // block)


def fill(mount: Path, leave: int) -> Path:
    """Take every free block of the file system but `leave` bytes (a multiple of its block)."""
    filler = mount / "filler"
    chunk = b"\0" * 65536
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(chunk)
        except OSError as error:
            assert error.errno == errno.ENOSPC, error
    os.truncate(filler, filler.stat().st_size - leave)
    assert free_bytes(mount) == leave
    return filler


def files(root: Path) -> Dict[str, bytes]:
    """Every file of the workspace but Git's, by relative path."""
    found: Dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            found[str(path.relative_to(root))] = path.read_bytes()
    return found


def is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


class Case:
    """One command: its arguments, what the vault holds before it, and how to recognise each
    file it writes when whole. Prepared once, on an ordinary disk, with `expected`: the files
    after the same command ran there."""

    argv: Tuple[str, ...] = ()
    payload: Any = None
    text = ""  # the text a new daily entry must hold whole

    def __init__(self) -> None:
        self.expected: Dict[str, bytes] = {}

    def prepare(self, rt: Runtime) -> None:
        """What the vault holds before the command."""

    def size(self) -> int:
        """The bytes of the command's largest file."""
        return PAYLOAD_BYTES

    def run(self, ws: Path) -> Result:
        return Runtime(ws).run(*self.argv, payload=self.payload, env=NO_BYTECODE)

    def complete(self, rel: str, data: bytes) -> bool:
        """Whether a file the command wrote holds whole bytes."""
        if rel.startswith(".echoes-vault/") and rel.endswith(".json"):
            return is_json(data)  # state, page cache, `end` journal: machine-local, time-stamped
        if rel.startswith("EchoesVault/daily/"):
            return self.text in data.decode("utf-8") and data.endswith(b"\n")
        return rel in self.expected and data == self.expected[rel]


def long_text(prefix: str) -> str:
    line = f"{prefix}: one line of a long note about the build, written again and again.\n"
    return line * (PAYLOAD_BYTES // len(line) + 1)


class Append(Case):
    argv = ("append", "--payload", "-")

    def __init__(self) -> None:
        super().__init__()
        self.text = long_text("- scratch")
        self.payload = {"entry": self.text}


class Upsert(Case):
    argv = ("upsert", "--payload", "-")
    content = page("The big page.", body="# Big\n\n" + long_text("body"))

    def prepare(self, rt: Runtime) -> None:
        rt.upsert("big.md", page("The big page, short for now."))
        self.payload = {
            "filename": "big.md",
            "content": self.content,
            "expectedSha256": rt.hash("big"),
        }


class End(Case):
    """A short page and a long session summary: the entry is the large file, written last."""

    argv = ("end", "--confirm-explicit-user-end", "--payload", "-")

    def prepare(self, rt: Runtime) -> None:
        rt.upsert("notes.md", page("Notes, first version."))
        self.text = long_text("- session")
        item = {
            "filename": "notes.md",
            "content": page("Notes, second version."),
            "expectedSha256": rt.hash("notes"),
        }
        self.payload = {"dailySummary": self.text, "pages": [item]}


class RebuildIndex(Case):
    argv = ("rebuild-index",)
    count = 200

    def prepare(self, rt: Runtime) -> None:
        # pages written behind the runtime's back: the index is out of date and long
        pages = rt.workspace / "EchoesVault" / "pages"
        for number in range(self.count):
            summary = (
                f"Page {number:03d} of many, with a summary long enough to fill the index. " * 2
            )
            (pages / f"page-{number:03d}.md").write_text(page(summary.strip()[:150]))

    def size(self) -> int:
        return len(self.expected["EchoesVault/index.md"])


CASES = {"append": Append, "upsert": Upsert, "end": End, "rebuild-index": RebuildIndex}


def leave_for(level: str, size: int, block: int) -> int:
    return {
        "none": 0,
        "one-block": block,
        "three-blocks": 3 * block,
        "just-under-payload": (blocks(size, block) - 1) * block,
        "just-over-payload": (blocks(size, block) + 1) * block,
        # `end`: room for the lock and its journal, but not for the whole session entry after it
        "just-under-twice-payload": (2 * blocks(size, block) - 1) * block,
    }[level]


@pytest.fixture(scope="module")
def prepared(
    tmp_path_factory: pytest.TempPathFactory, initialized_template: Path
) -> Dict[str, Tuple[Case, Path]]:
    """Each command's vault, prepared on an ordinary disk, and what a whole success writes there."""
    found = {}
    for name, kind in CASES.items():
        root = tmp_path_factory.mktemp(name)
        ws = make_repo(root / "ws")
        for item in initialized_template.iterdir():
            if item.is_dir() and item.name != ".git":
                shutil.copytree(item, ws / item.name, symlinks=True)
            elif item.is_file():
                shutil.copy2(item, ws / item.name)
        case = kind()
        case.prepare(Runtime(ws))
        reference = root / "reference"
        shutil.copytree(ws, reference, symlinks=True)
        result = case.run(reference)
        assert result.code == 0, result
        case.expected = files(reference)
        found[name] = (case, ws)
    return found


def problems(before: Dict[str, bytes], after: Dict[str, bytes], case: Case) -> List[str]:
    """Everything in `after` that is neither the old bytes nor whole new bytes."""
    found = []
    for rel, data in sorted(after.items()):
        if rel.endswith(".echoes-tmp") or ".tmp-" in rel:
            found.append(f"temporary file left: {rel}")
        elif rel == ".echoes-vault/lock":
            found.append("lock left")
        elif data == b"" and before.get(rel) != b"":
            found.append(f"empty file: {rel}")
        elif before.get(rel) != data and not case.complete(rel, data):
            found.append(f"partial file: {rel} ({len(data)} bytes)")
    found += [f"file lost: {rel}" for rel in before if rel not in after]
    return found


def success_problems(after: Dict[str, bytes], before: Dict[str, bytes], case: Case) -> List[str]:
    """What a reported success must have written, but did not."""
    missing = [
        rel
        for rel, data in case.expected.items()
        if not rel.startswith((".echoes-vault/", "EchoesVault/daily/")) and after.get(rel) != data
    ]
    if case.text:
        new = [rel for rel in after if rel.startswith("EchoesVault/daily/") and rel not in before]
        if not any(case.complete(rel, after[rel]) for rel in new):
            missing.append("the new daily entry")
    if ".echoes-vault/end-journal.json" in after:
        missing.append("`end` finished (its journal is still there)")
    return missing


def unwarned(missing: List[str], warnings: List[Dict[str, str]]) -> List[str]:
    """What a success did not write and did not name in its warnings either."""
    paths = {warning["path"] for warning in warnings}
    named = []
    for item in missing:
        if item == "the new daily entry":
            named.append(any(p.startswith("EchoesVault/daily/") for p in paths))
        elif item.startswith("`end` finished"):
            named.append(bool(warnings))
        elif item == "EchoesVault/index.md":  # the index follows the pages on disk
            named.append(any(p == item or p.startswith("EchoesVault/pages/") for p in paths))
        else:
            named.append(item in paths)
    return [item for item, seen in zip(missing, named) if not seen]


def new_entries(before: Dict[str, bytes], after: Dict[str, bytes]) -> int:
    return sum(1 for rel in after if rel.startswith("EchoesVault/daily/") and rel not in before)


def check_outcome(
    result: Result, before: Dict[str, bytes], after: Dict[str, bytes], case: Case
) -> None:
    assert problems(before, after, case) == [], result
    if result.code == 0:
        output = json.loads(result.stdout)
        assert output["ok"] is True, result
        missing = success_problems(after, before, case)
        assert unwarned(missing, output["warnings"]) == [], result
        return
    assert result.code == 2 and result.stdout == "", result
    error = result.error
    assert error["code"] == "io", error
    assert "No space left on device" in error["error"], error
    assert new_entries(before, after) == 0, "a failed request left its entry"


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_write_on_a_full_disk_is_whole_or_absent(
    small_fs: Path, prepared: Dict[str, Tuple[Case, Path]], name: str, level: str
) -> None:
    case, source = prepared[name]
    ws = small_fs / "ws"
    shutil.copytree(source, ws, symlinks=True)
    before = files(ws)
    filler = fill(small_fs, leave_for(level, case.size(), block_size(small_fs)))

    result = case.run(ws)
    check_outcome(result, before, files(ws), case)
    if level in ("none", "one-block", "three-blocks", "just-under-payload"):
        assert result.code == 2, result  # too little room for the payload: never a success

    filler.unlink()  # room again
    if result.code == 0:  # it took effect: the next writer finishes what its warnings named
        Runtime(ws).ok("hydrate", env=NO_BYTECODE)
    else:  # nothing took effect: the same command, resent, succeeds
        again = case.run(ws)
        assert again.code == 0, again
    assert success_problems(files(ws), before, case) == []
    assert problems(before, files(ws), case) == []
    assert new_entries(before, files(ws)) == (1 if case.text else 0)


def test_the_levels_leave_what_they_say(small_fs: Path) -> None:
    """The filler itself: each level leaves exactly the free bytes it names."""
    block = block_size(small_fs)
    seen: List[int] = []
    for level in LEVELS:
        filler = fill(small_fs, leave_for(level, 10 * block + 1, block))
        seen.append(free_bytes(small_fs) // block)
        filler.unlink()
    assert seen == [0, 1, 3, 10, 12, 21]


# Where the file system has no hard links (FAT, some network shares), the lock and a new daily
# entry are created with O_EXCL and written in place. This kernel mounts no such file system, so
# the runtime runs with `os.link` refusing as FAT does (EPERM), on the same full tmpfs.
WITHOUT_LINKS = """\
import errno, os, runpy, sys

def refuse(*args, **kwargs):
    raise OSError(errno.EPERM, "Operation not permitted")

os.link = refuse
sys.argv = sys.argv[2:]  # ["-c", interpreter, runtime, arguments...]: the runtime and its arguments
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.parametrize("level", LEVELS)
def test_without_hard_links_a_full_disk_leaves_no_empty_lock_or_entry(
    small_fs: Path, prepared: Dict[str, Tuple[Case, Path]], level: str
) -> None:
    case, source = prepared["append"]
    ws = small_fs / "ws"
    shutil.copytree(source, ws, symlinks=True)
    runtime = Runtime(ws, prefix=[PYTHON, "-c", WITHOUT_LINKS])
    before = files(ws)
    filler = fill(small_fs, leave_for(level, case.size(), block_size(small_fs)))

    result = runtime.run(*case.argv, payload=case.payload, env=NO_BYTECODE)
    check_outcome(result, before, files(ws), case)
    assert result.code == 2, result  # the fallback needs room for the entry twice, never there

    filler.unlink()
    runtime.ok(*case.argv, payload=case.payload, env=NO_BYTECODE)
    assert success_problems(files(ws), before, case) == []
    assert problems(before, files(ws), case) == []
    assert new_entries(before, files(ws)) == 1
