"""Every write has one effect: each writing command's commit point, what a failure after it
reports, and what a retry does, with real processes and real files.

- The local state, the index and the page cache of every writing command fail in turn, three
  ways: the process's file-size limit (RLIMIT_FSIZE), an immutable file (`chattr +i`), and a full
  file system (a small tmpfs filled to its last byte at the moment the file is written). A
  failure after the commit point is a success with `warnings`; at the commit point it is `io`.
- `append`, `upsert` and `end` are killed just before each of their file changes (the audit hook
  of `file_ops`), then sent again with and without their `requestId`.

After each run the entries, the page versions and the kept versions on disk are counted.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from .conftest import PYTHON, Result, Runtime, base_env, daily_files, page, pages_dir
from .file_ops import hooked, is_at, read_log
from .needs import tmpfs, unavailable

FS_SIZE = 16 * 1024 * 1024
NO_WAIT = base_env(ECHOES_VAULT_LOCK_TIMEOUT="0", PYTHONDONTWRITEBYTECODE="1")
TARGETS = {
    "state": ".echoes-vault/state.json",
    "index": "EchoesVault/index.md",
    "cache": ".echoes-vault/index-cache.json",
}
METHODS = ("fsize", "immutable", "full")
COMMANDS = ("append", "upsert", "end", "hydrate", "rebuild-index", "start")
# Where each command's commit point is: a failure of these files fails the request itself.
COMMIT_FILES = {"hydrate": "index", "rebuild-index": "index", "start": "state"}
WARNING_KIND = {"state": "state-not-written", "index": "index-not-written"}


@pytest.fixture(scope="module")
def small_fs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A 16 MiB tmpfs for this module (it needs root; under CI it must be there)."""
    with tmpfs(tmp_path_factory.mktemp("one-effect") / "fs", FS_SIZE) as mount:
        yield mount


@pytest.fixture(scope="module")
def chattr(small_fs: Path) -> str:
    """`chattr`, when it can make a file immutable on the tmpfs here."""
    tool = shutil.which("chattr")
    probe = small_fs / "probe"
    probe.write_text("x")
    try:
        if tool is None:
            unavailable("chattr is not installed (Debian's e2fsprogs)")
        done = subprocess.run([tool, "+i", str(probe)], capture_output=True, text=True)
        if done.returncode != 0:
            unavailable(f"chattr +i is refused here: {done.stderr.strip()}")
        subprocess.run([tool, "-i", str(probe)], check=True)
    finally:
        probe.unlink()
    return tool


def copy_vault(template: Path, target: Path) -> Runtime:
    shutil.copytree(template, target, symlinks=True)
    return Runtime(target)


@pytest.fixture
def workspace(small_fs: Path, vault: Path, tmp_path: Path) -> Iterator[Runtime]:
    """An initialized vault on the tmpfs, with one page and a page written behind the runtime's
    back, so that every writer has a stale index and stale state to write."""
    rt = Runtime(vault)
    rt.upsert("alpha.md", page("Alpha, first version."))
    rt.ok("hydrate")
    target = small_fs / tmp_path.name
    runtime = copy_vault(vault, target)
    (pages_dir(target) / "outside.md").write_text(page("Written by hand."))
    # a page cache that is no cache: every writer replaces it (pages this recent are not cached)
    (target / TARGETS["cache"]).write_text("{}")
    yield runtime
    subprocess.run(["chattr", "-R", "-i", str(target)], capture_output=True, check=False)
    shutil.rmtree(target, ignore_errors=True)


def payload_of(rt: Runtime, command: str, request_id: Optional[str]) -> Optional[Dict[str, Any]]:
    key = {"requestId": request_id} if request_id else {}
    if command == "append":
        return {"entry": "- One verified fact.", **key}
    if command == "upsert":
        content = page("Alpha, second version.")
        return {"filename": "alpha.md", "content": content,
                "expectedSha256": rt.hash("alpha"), **key}  # fmt: skip
    if command == "end":
        item = {"filename": "alpha.md", "content": page("Alpha, from the end."),
                "expectedSha256": rt.hash("alpha")}  # fmt: skip
        return {"dailySummary": "- Session outcome.", "pages": [item], **key}
    return None


def argv_of(command: str, payload_file: Optional[Path]) -> List[str]:
    if command == "start":
        return ["start", "--recent", "1"]
    if payload_file is None:
        return [command]
    extra = ["--confirm-explicit-user-end"] if command == "end" else []
    return [command, *extra, "--payload", str(payload_file)]


def run_hooked(rt: Runtime, argv: List[str], **plan: Any) -> Result:
    program = [str(rt.workspace / ".echoes-vault/echoes_vault.py"), "--workspace",
               str(rt.workspace), *argv]  # fmt: skip
    done = subprocess.run(
        hooked(PYTHON, program, str(rt.workspace), **plan),
        cwd=rt.workspace, env=NO_WAIT, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    decoded = subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )
    result = Result(decoded)
    assert "Traceback" not in result.stderr, result
    return result


class Counts:
    """What is on disk: entries, session entries, the page's text, kept versions, a journal."""

    def __init__(self, root: Path) -> None:
        entries = daily_files(root)
        self.entries = len(entries)
        self.sessions = sum(1 for p in entries if "-session" in p.name)
        self.pages = sorted(p.name for p in pages_dir(root).glob("*.md"))
        alpha = pages_dir(root) / "alpha.md"
        self.alpha = alpha.read_text() if alpha.exists() else None
        self.kept = sorted(str(p) for p in (root / ".echoes-vault/kept").rglob("*") if p.is_file())
        self.journal = (root / ".echoes-vault/end-journal.json").exists()


def effect_of(command: str, before: Counts, after: Counts) -> Tuple[int, Optional[str]]:
    """(new entries, the text of the page the command writes) between two counts."""
    return after.entries - before.entries, after.alpha if after.alpha != before.alpha else None


EXPECTED_TEXT = {
    "upsert": page("Alpha, second version."),
    "end": page("Alpha, from the end."),
}
EXPECTED_ENTRIES = {"append": 1, "end": 1}


def make_failing(rt: Runtime, target: str, method: str, fs: Path) -> Dict[str, Any]:
    """Prepare the failure of writes of `target`; the hook's plan for it."""
    if method == "immutable":
        path = rt.workspace / TARGETS[target]
        assert path.exists(), f"{path} must exist to be made immutable"
        subprocess.run(["chattr", "+i", str(path)], check=True)
        return {}
    filler = str(fs / f"filler-{rt.workspace.name}")
    return {"fail": {"name": os.path.basename(TARGETS[target]), "how": method, "filler": filler}}


def undo_failing(rt: Runtime, target: str, method: str) -> None:
    if method == "immutable":
        subprocess.run(["chattr", "-i", str(rt.workspace / TARGETS[target])], check=True)


def attempted(changes: List[Tuple[str, ...]], rel: str) -> bool:
    """Whether a run tried to write `rel` (the hook logs each change before it is made)."""
    name = os.path.basename(rel)
    return any(
        is_at(change, "os.rename", name)
        or (change[0] == "open" and os.path.basename(change[-1]).startswith(f".{name}."))
        for change in changes
    )


def check_failed_write(command: str, target: str, result: Result, before: Counts, after: Counts):
    """A failure at the commit point is `io` and has no effect; after it, a success whose
    warnings name the file (the page cache is optional: no warning)."""
    if COMMIT_FILES.get(command) == target:
        assert result.code == 2, result
        assert result.error["code"] == "io", result
        assert effect_of(command, before, after) == (0, None)
        return
    assert result.code == 0, result
    if command == "start":
        shown = result.stdout
        if target in WARNING_KIND:
            assert "> [!warning]" in shown and TARGETS[target] in shown, shown
        return
    output = result.json
    kinds = {w["kind"]: w["path"] for w in output["warnings"]}
    if target in WARNING_KIND:
        assert kinds.get(WARNING_KIND[target]) == TARGETS[target], output["warnings"]
    else:
        assert kinds == {}, output["warnings"]
    new_entries, text = effect_of(command, before, after)
    assert new_entries == EXPECTED_ENTRIES.get(command, 0)
    assert text == EXPECTED_TEXT.get(command), (text, output)


def check_repaired(rt: Runtime) -> None:
    """The next writer wrote what the failure left: the index is current, the state counts
    every page and entry, no journal or kept version is left."""
    report = rt.ok("status")
    assert report["indexRefresh"]["status"] == "current", report["indexRefresh"]
    stored = report["state"]["storedStats"]
    assert stored["totalPages"] == report["counts"]["pages"], report["state"]
    assert stored["totalDailyLogs"] == report["counts"]["dailyLogs"], report["state"]
    assert report["pendingEnd"] is None and report["keptVersions"] == []


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("command", COMMANDS)
def test_a_write_failing_after_the_commit_point_is_a_success_with_warnings(
    workspace: Runtime, small_fs: Path, chattr: str, command: str, target: str, method: str
) -> None:
    rt = workspace
    request_id = f"req-{command}-{target}-{method}"
    payload = payload_of(rt, command, request_id)
    payload_file = None
    if payload is not None:
        payload_file = rt.workspace.parent / f"{rt.workspace.name}.json"
        payload_file.write_text(json.dumps(payload))
    argv = argv_of(command, payload_file)
    before = Counts(rt.workspace)
    plan = make_failing(rt, target, method, small_fs)
    log = rt.workspace.parent / f"{rt.workspace.name}-changes.json"
    try:
        result = run_hooked(rt, argv, log=str(log), **plan)
    finally:
        undo_failing(rt, target, method)
    assert attempted(read_log(str(log)), TARGETS[target]), "the command never wrote the target"
    after = Counts(rt.workspace)
    check_failed_write(command, target, result, before, after)
    assert after.kept == [], "nothing was kept aside: no page changed behind the command"

    # The retry, as an agent that saw no answer would send it: the same payload and requestId.
    again = rt.run(*argv, env=NO_WAIT)
    assert again.code == 0, again
    final = Counts(rt.workspace)
    if payload is not None and result.code == 0:
        assert again.json["replayed"] is True, again
        assert effect_of(command, before, final) == effect_of(command, before, after)
    else:  # nothing had taken effect (or the command has no effect to double): it runs again
        assert final.entries - before.entries == EXPECTED_ENTRIES.get(command, 0)
    rt.ok("append", "--payload", "-", payload={"entry": "- the next writer"}, env=NO_WAIT)
    check_repaired(rt)
    assert Counts(rt.workspace).entries == final.entries + 1


# --- a kill at each file change, then the retry ------------------------------------------------


def changes_of(rt: Runtime, argv: List[str], log: Path) -> List[Tuple[str, ...]]:
    done = run_hooked(rt, argv, log=str(log))
    assert done.code == 0, done
    return read_log(str(log))


def commit_point(command: str, changes: List[Tuple[str, ...]]) -> int:
    """The number of the file change that is the command's commit point."""
    if command == "append":
        return next(n for n, c in enumerate(changes) if c[0] == "os.link" and "/daily/" in c[-1])
    name = "end-journal.json" if command == "end" else "alpha.md"
    return next(n for n, c in enumerate(changes) if is_at(c, "os.rename", name))


@pytest.mark.parametrize("with_key", [True, False], ids=["requestId", "no-requestId"])
@pytest.mark.parametrize("command", ["append", "upsert", "end"])
def test_a_request_killed_at_each_file_change_then_retried(
    vault: Path, tmp_path: Path, command: str, with_key: bool
) -> None:
    """Killed before its commit point, a request left nothing and its retry makes it once;
    killed after it, it took effect: the retry with its `requestId` returns the first result and
    writes nothing, and without one it is a new request (one more entry; a page's same bytes)."""
    rt = Runtime(vault)
    rt.upsert("alpha.md", page("Alpha, first version."))
    (vault / ".echoes-vault/index-cache.json").unlink()  # its saving depends on the pages' age
    template = tmp_path / "template"
    shutil.copytree(vault, template, symlinks=True)
    payload = payload_of(rt, command, f"kill-{command}" if with_key else None)
    payload_file = tmp_path / "payload.json"
    payload_file.write_text(json.dumps(payload))
    argv = argv_of(command, payload_file)
    probe = tmp_path / "probe"
    shutil.copytree(template, probe, symlinks=True)
    changes = changes_of(Runtime(probe), argv, tmp_path / "changes.json")
    commit = commit_point(command, changes)
    assert 0 < commit < len(changes) - 1, changes
    before = Counts(template)
    for point, change in enumerate(changes):
        shutil.rmtree(vault)
        shutil.copytree(template, vault, symlinks=True)
        killed = run_hooked(rt, argv, kill=point)
        assert killed.code == -signal.SIGKILL, (point, change, killed)
        again = rt.run(*argv, env=NO_WAIT)
        assert again.code == 0, (point, change, again)
        entries, text = effect_of(command, before, Counts(vault))
        took_effect = point > commit
        doubled = took_effect and not with_key and command in EXPECTED_ENTRIES
        assert entries == EXPECTED_ENTRIES.get(command, 0) * (2 if doubled else 1), (point, change)
        assert text == EXPECTED_TEXT.get(command), (point, change)
        assert again.json.get("replayed", False) is (took_effect and with_key), (point, change)
        after = Counts(vault)
        assert after.pages == before.pages
        assert after.kept == [] and not after.journal, (point, change)
        assert not (vault / ".echoes-vault/lock").exists()


def test_the_same_request_id_with_another_payload_is_refused(rt: Runtime, vault: Path) -> None:
    rt.ok("append", "--payload", "-", payload={"entry": "- first", "requestId": "same-key"})
    error = rt.fail(
        "append", "--payload", "-", payload={"entry": "- second", "requestId": "same-key"},
        code="request-conflict",
    )  # fmt: skip
    assert "same-key" in error["error"] and "different payload" in error["error"]
    rt.fail("upsert", "--payload", "-", code="request-conflict",
            payload={"filename": "x.md", "content": page(), "requestId": "same-key"})  # fmt: skip
    assert len(daily_files(vault)) == 1 and not (pages_dir(vault) / "x.md").exists()
    rt.ok("append", "--payload", "-", payload={"entry": "- second", "requestId": "other-key"})
    assert len(daily_files(vault)) == 2


def test_a_request_id_is_checked_and_never_echoes_a_secret(rt: Runtime, vault: Path) -> None:
    for bad in ("", "with space", "x" * 129, 7, 'quote"d'):
        rt.fail("append", "--payload", "-", payload={"entry": "- x", "requestId": bad},
                code="payload")  # fmt: skip
    token = "ghp_" + "a1B2" * 9
    error = rt.fail("append", "--payload", "-", payload={"entry": "- x", "requestId": token},
                    code="secret")  # fmt: skip
    assert token not in error["error"]
    assert daily_files(vault) == []


def test_the_request_memory_is_bounded_and_survives_the_state(rt: Runtime, vault: Path) -> None:
    """64 requests are remembered, in a file of their own: rewriting `state.json` (as the
    reference runtime does) forgets nothing, and a damaged memory is reported and replaced."""
    for number in range(66):
        rt.ok(
            "append", "--payload", "-", payload={"entry": f"- {number}", "requestId": f"r{number}"}
        )
    memory = json.loads((vault / ".echoes-vault/requests.json").read_text())
    ids = [record["id"] for record in memory["requests"]]
    assert ids == [f"r{n}" for n in range(2, 66)]
    (vault / ".echoes-vault/state.json").write_text('{"version": 4}\n')
    again = rt.ok("append", "--payload", "-", payload={"entry": "- 65", "requestId": "r65"})
    assert again["replayed"] is True and len(daily_files(vault)) == 66
    forgotten = rt.ok("append", "--payload", "-", payload={"entry": "- 0", "requestId": "r0"})
    assert "replayed" not in forgotten and len(daily_files(vault)) == 67
    (vault / ".echoes-vault/requests.json").write_text("[" * 100_000)
    damaged = rt.ok("append", "--payload", "-", payload={"entry": "- 65", "requestId": "r65"})
    assert [w["kind"] for w in damaged["warnings"]] == ["request-memory"]
    assert "replayed" not in damaged and len(daily_files(vault)) == 68
    assert (
        json.loads((vault / ".echoes-vault/requests.json").read_text())["requests"][-1]["id"]
        == "r65"
    )
