"""Recovery after a crash (issue 12, item 2): lock owner tokens and the dead-owner rule, SIGTERM
releasing the lock, the server's polite stop, temporary files, and `end` rolled forward after real
SIGKILLs just before each of its file changes (chosen by `file_ops`, not by a timer)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import pytest

from .conftest import PYTHON, Runtime, base_env, daily_files, page, pages_dir
from .file_ops import hooked, is_at, read_log

LINUX = os.path.exists("/proc/self/stat")
needs_proc = pytest.mark.skipif(not LINUX, reason="owner identity comes from /proc")
FAST_FAIL = base_env(ECHOES_VAULT_LOCK_TIMEOUT="1.5")
NO_WAIT = base_env(ECHOES_VAULT_LOCK_TIMEOUT="0")
JOURNAL = "end-journal.json"


def wait_for(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
    """Poll a condition (the event itself, not a fixed sleep) until it holds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        time.sleep(0.0005)


def lock_of(vault: Path) -> Path:
    return vault / ".echoes-vault" / "lock"


def fill(vault: Path, count: int) -> None:
    """Valid pages written directly, so that a writer spends a while under the lock."""
    body = "# Topic\n\n" + "Some durable fact about the system. " * 40 + "\n"
    for number in range(count):
        (pages_dir(vault) / f"topic-{number:05d}.md").write_text(
            page(summary=f"Topic number {number}.", body=body), encoding="utf-8"
        )


def temp_files(vault: Path) -> List[Path]:
    return [p for p in vault.rglob("*") if p.name.endswith(".echoes-tmp") or ".tmp-" in p.name]


def start_writer(vault: Path, name: str = "slow.md") -> subprocess.Popen:
    payload = vault.parent / "payload.json"
    payload.write_text(json.dumps({"filename": name, "content": page()}))
    return subprocess.Popen(
        [PYTHON, str(vault / ".echoes-vault/echoes_vault.py"), "--workspace", str(vault),
         "upsert", "--payload", str(payload)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_env(),
    )  # fmt: skip


def run_hooked(vault: Path, args: Sequence[str], **plan: Any) -> subprocess.CompletedProcess:
    """The project runtime on `vault`, run with the file-operation hook of `file_ops`."""
    program = [str(vault / ".echoes-vault/echoes_vault.py"), "--workspace", str(vault), *args]
    return subprocess.run(
        hooked(PYTHON, program, str(vault), **plan),
        cwd=vault, env=base_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def logged_changes(vault: Path, args: Sequence[str], log: Path) -> List[Tuple[str, ...]]:
    """The file changes, in order, of one whole run of the command (which must succeed)."""
    done = run_hooked(vault, args, log=str(log))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return read_log(str(log))


def stop_while_locked(vault: Path, attempts: int = 20) -> subprocess.Popen:
    """A real writer, frozen (SIGSTOP) while it holds the lock: returns the stopped process."""
    for _ in range(attempts):
        (vault / ".echoes-vault" / "index-cache.json").unlink(missing_ok=True)
        process = start_writer(vault)
        lock = lock_of(vault)

        def seen(lock: Path = lock, process: subprocess.Popen = process) -> bool:
            return lock.exists() or process.poll() is not None

        try:
            wait_for(seen, what="the lock")
        except AssertionError:
            process.kill()
            raise
        if process.poll() is None:
            os.kill(process.pid, signal.SIGSTOP)
            try:
                token = json.loads(lock.read_text())
            except (OSError, ValueError):
                token = {}
            if token.get("pid") == process.pid:
                return process
            os.kill(process.pid, signal.SIGCONT)
        process.communicate(timeout=60)
        (pages_dir(vault) / "slow.md").unlink(missing_ok=True)
    raise AssertionError("never caught the writer holding the lock")


# --- lock owner tokens ------------------------------------------------------------------------------


@needs_proc
def test_the_lock_token_names_its_owner(rt: Runtime, vault: Path) -> None:
    fill(vault, 1500)
    process = stop_while_locked(vault)
    try:
        token = json.loads(lock_of(vault).read_text())
        assert token["format"] == "echoes-vault-lock/1"
        assert token["pid"] == process.pid
        assert token["host"] == os.uname().nodename
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        assert token["boot"] == boot
        started = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        assert token["start"] == started
        report = rt.ok("inspect")
        assert report["lock"]["present"] is True
        assert report["lock"]["ownerState"] == "alive" and report["lock"]["stale"] is False
        assert report["lock"]["owner"]["pid"] == process.pid
    finally:
        os.kill(process.pid, signal.SIGCONT)
        process.communicate(timeout=60)
    assert process.returncode == 0
    assert rt.ok("inspect")["lock"] == {"path": ".echoes-vault/lock", "present": False}


def upsert_placing_its_lock(vault: Path, tmp_path: Path) -> Tuple[List[str], int]:
    """An `upsert` of a new page, and the number of its file change that places the lock, found
    by running the same command on a copy of the vault first."""
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"filename": "slow.md", "content": page()}))
    args = ["upsert", "--payload", str(payload)]
    probe = tmp_path / "probe"
    shutil.copytree(vault, probe, symlinks=True)
    changes = logged_changes(probe, args, tmp_path / "changes.json")
    return args, next(n for n, change in enumerate(changes) if is_at(change, "os.link", "lock"))


def test_a_writer_terminated_just_after_placing_its_lock_takes_it_back(
    vault: Path, tmp_path: Path
) -> None:
    """SIGTERM (a client that gives up) between the link that places the lock and the moment the
    writer holds it: the writer unwinds and removes its own lock, rather than leaving it for the
    next writer to judge stale."""
    args, placed = upsert_placing_its_lock(vault, tmp_path)
    terminated = run_hooked(vault, args, term=placed + 1)
    assert terminated.returncode != 0, terminated.stdout
    assert not lock_of(vault).exists(), "the terminated writer left its lock"
    assert not (pages_dir(vault) / "slow.md").exists()


@needs_proc
def test_a_lock_left_by_a_killed_writer_is_removed_at_once(
    rt: Runtime, vault: Path, tmp_path: Path
) -> None:
    """A writer SIGKILLed just after placing its lock, before removing the lock's temporary name,
    leaves both behind; the next writer removes them without waiting for the lock at all."""
    args, placed = upsert_placing_its_lock(vault, tmp_path)
    killed = run_hooked(vault, args, kill=placed + 1)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert lock_of(vault).exists(), "the killed writer left its lock"
    assert temp_files(vault) != [], "and its lock's temporary name"
    report = rt.ok("inspect")
    assert report["lock"]["ownerState"] == "dead" and report["lock"]["stale"] is True
    assert "stale-lock" in {i["kind"] for i in report["issues"]}
    assert report["integrity"] != "healthy"
    # With a lock timeout of 0, a writer that waited for the lock at all would fail.
    rt.ok("append", "--payload", "-", payload={"entry": "- after the crash"}, env=NO_WAIT)
    assert not lock_of(vault).exists()
    assert temp_files(vault) == []
    assert not (pages_dir(vault) / "slow.md").exists()


@needs_proc
def test_a_reused_pid_is_not_mistaken_for_the_owner(rt: Runtime, vault: Path) -> None:
    """Our own PID with another start time: the owner it names is gone."""
    me = Path(f"/proc/{os.getpid()}/stat").read_text().rsplit(")", 1)[1].split()[19]
    token = {
        "format": "echoes-vault-lock/1",
        "host": os.uname().nodename,
        "boot": Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
        "pidNamespace": os.readlink("/proc/self/ns/pid"),
        "pid": os.getpid(),
        "start": str(int(me) + 1),
        "nonce": "0" * 32,
    }
    lock_of(vault).write_text(json.dumps(token) + "\n")
    assert rt.ok("inspect")["lock"]["ownerState"] == "dead"
    rt.ok("append", "--payload", "-", payload={"entry": "- fine"}, env=FAST_FAIL)
    token["start"] = me  # now it is this live test process: the lock is respected
    lock_of(vault).write_text(json.dumps(token) + "\n")
    assert rt.ok("inspect")["lock"]["ownerState"] == "alive"
    rt.fail(
        "append", "--payload", "-", payload={"entry": "- x"}, env=FAST_FAIL, code="lock-timeout"
    )


@pytest.mark.parametrize(
    "content",
    [
        "12345 0123456789abcdef0123456789abcdef\n",  # earlier engines
        "",  # a writer that died between creating and writing its lock
        '{"format": "echoes-vault-lock/1", "host": "another-host", "boot": null, '
        '"pidNamespace": null, "pid": 1, "start": null}\n',
        '{"format": "some-other-runtime/3", "pid": 999999}\n',
    ],
    ids=["old-format", "empty", "other-host", "other-runtime"],
)
def test_a_lock_it_cannot_attribute_keeps_the_60_second_rule(
    rt: Runtime, vault: Path, content: str
) -> None:
    lock_of(vault).write_text(content)
    assert rt.ok("inspect")["lock"]["ownerState"] == "unknown"
    rt.fail(
        "append", "--payload", "-", payload={"entry": "- x"}, env=FAST_FAIL, code="lock-timeout"
    )
    assert lock_of(vault).read_text() == content, "an unattributable lock is left alone"
    old = time.time() - 61
    os.utime(lock_of(vault), (old, old))
    assert rt.ok("inspect")["lock"]["stale"] is True
    rt.ok("append", "--payload", "-", payload={"entry": "- after 60 s"}, env=FAST_FAIL)
    assert not lock_of(vault).exists()


@needs_proc
def test_sigterm_makes_a_writer_release_its_lock(rt: Runtime, vault: Path) -> None:
    fill(vault, 1500)
    process = stop_while_locked(vault)
    os.kill(process.pid, signal.SIGTERM)
    os.kill(process.pid, signal.SIGCONT)
    _out, err = process.communicate(timeout=60)
    assert process.returncode == 2, err
    assert json.loads(err.decode())["code"] == "interrupted"
    assert not lock_of(vault).exists()
    assert temp_files(vault) == []
    assert not (pages_dir(vault) / "slow.md").exists()


def _pending_sigterm(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # gone
    masks = [int(line.split()[1], 16) for line in status.splitlines() if "Pnd:" in line]
    return any(mask & (1 << (signal.SIGTERM - 1)) for mask in masks)


@needs_proc
def test_the_server_client_stops_a_runtime_politely_on_timeout(rt: Runtime, vault: Path) -> None:
    """`runtime_client.run` on timeout: SIGTERM first, so the runtime releases its lock."""
    from echoes_lsp.runtime_client import RuntimeCall, RuntimeFailure, run

    fill(vault, 1500)
    (vault / ".echoes-vault" / "index-cache.json").unlink(missing_ok=True)
    outcome: Dict[str, Any] = {}

    def call() -> None:
        try:
            run(RuntimeCall(str(vault), timeout=1.0), ["upsert", "--payload", "-"],
                {"filename": "slow.md", "content": page()})  # fmt: skip
        except RuntimeFailure as failure:
            outcome["failure"] = failure

    thread = threading.Thread(target=call)
    thread.start()
    lock = lock_of(vault)
    pid = None
    try:
        wait_for(lock.exists, what="the lock")
        pid = json.loads(wait_for(lock.read_text, what="the token"))["pid"]
        os.kill(pid, signal.SIGSTOP)  # hold it inside the lock until the client gives up
        wait_for(lambda: _pending_sigterm(pid), what="SIGTERM from the client")
    finally:
        if pid is not None:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        thread.join(60)
    assert outcome["failure"].code == "timeout"
    assert not lock.exists(), "the runtime released its lock"
    assert temp_files(vault) == []


# --- temporary files ------------------------------------------------------------------------------


@needs_proc
def test_temp_files_of_dead_writers_are_ignored_reported_and_removed(
    rt: Runtime, vault: Path
) -> None:
    fill(vault, 3)
    dead = subprocess.run([PYTHON, "-c", "import os; print(os.getpid())"], capture_output=True)
    pid = int(dead.stdout)
    leftovers = [
        pages_dir(vault) / f".topic-00001.md.{pid}-1234-0badf00d.echoes-tmp",
        vault / "EchoesVault" / f".index.md.{pid}-1234-0badf00d.echoes-tmp",
        vault / ".echoes-vault" / f".state.json.{pid}-1234-0badf00d.echoes-tmp",
        pages_dir(vault) / ".topic-00002.md.tmp-0badf00d",  # earlier engines
    ]
    for path in leftovers:
        path.write_bytes(b"x" * 2_000_000)
    old = time.time() - 120
    os.utime(leftovers[-1], (old, old))
    alive = pages_dir(vault) / f".topic-00000.md.{os.getpid()}-0-0badf00d.echoes-tmp"
    alive.write_text("a live writer's")

    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--ignored"],
        cwd=vault, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    for path in [*leftovers[:3], alive]:
        rel = path.relative_to(vault).as_posix()
        assert f"!! {rel}" in status, (rel, status)  # git-ignored, so `git add -A` skips it

    report = rt.ok("inspect")
    found = {item["file"]: item["ownerState"] for item in report["tempFiles"]}
    for path in leftovers:
        assert found[path.relative_to(vault).as_posix()] == "dead"
    assert found[alive.relative_to(vault).as_posix()] == "alive"
    assert "temp-file" in {i["kind"] for i in report["issues"]}

    rt.ok("append", "--payload", "-", payload={"entry": "- fine"})
    assert all(not path.exists() for path in leftovers)
    assert alive.exists(), "a live writer's file is kept"


# --- `end` rolled forward -----------------------------------------------------------------------


def digest(path: Path) -> Optional[str]:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def end_payload(rt: Runtime, vault: Path, round_: int) -> Dict[str, Any]:
    return {
        "dailySummary": f"- Finished round {round_}.",
        "agent": "crash-test",
        "pages": [
            *(
                {
                    "filename": f"topic-{n:05d}.md",
                    "content": page(summary=f"Topic {n} after round {round_}.", body="# New\n"),
                    "expectedSha256": rt.hash(f"topic-{n:05d}.md"),
                }
                for n in range(2)
            ),
            {"filename": "new-0.md", "content": page(summary="New page 0.")},
        ],
    }


@needs_proc
def test_end_killed_at_each_file_change_is_wholly_before_or_after(
    rt: Runtime, vault: Path, tmp_path: Path
) -> None:
    """`end` SIGKILLed just before each file change it makes, one change after another: up to
    the rename that places its journal (the commit point) the vault ends up as before it, from
    then on as after it, once the next writer has run."""
    fill(vault, 30)
    rt.ok("rebuild-index")
    # No page cache: whether it is saved depends on the pages' age, and so would the changes.
    (vault / ".echoes-vault" / "index-cache.json").unlink()
    template = tmp_path / "template"
    shutil.copytree(vault, template, symlinks=True)
    payload = end_payload(rt, vault, 1)
    names = [item["filename"] for item in payload["pages"]]
    before = {name: digest(pages_dir(vault) / name) for name in names}
    before_index = (vault / "EchoesVault/index.md").read_bytes()
    payload_file = tmp_path / "end.json"
    payload_file.write_text(json.dumps(payload))
    args = ["end", "--confirm-explicit-user-end", "--payload", str(payload_file)]

    changes = logged_changes(vault, args, tmp_path / "changes.json")
    after = {name: digest(pages_dir(vault) / name) for name in names}
    after_index = (vault / "EchoesVault/index.md").read_bytes()
    commit = next(
        n
        for n, change in enumerate(changes)
        if is_at(change, "os.rename", JOURNAL) or is_at(change, "os.link", JOURNAL)
    )
    assert 0 < commit < len(changes) - 1, changes  # kill points on both sides of it

    for point, change in enumerate(changes):
        shutil.rmtree(vault)
        shutil.copytree(template, vault, symlinks=True)
        killed = run_hooked(vault, args, kill=point)
        assert killed.returncode == -signal.SIGKILL, (point, change, killed.stderr)
        # the next command, any writer, finishes or discards what the crash left
        rt.ok("rebuild-index", env=NO_WAIT)
        now = {name: digest(pages_dir(vault) / name) for name in names}
        sessions = [p for p in daily_files(vault) if "-session-" in p.name]
        index = (vault / "EchoesVault/index.md").read_bytes()
        if point <= commit:
            assert (now, sessions, index) == (before, [], before_index), (point, change)
        else:
            assert (now, index) == (after, after_index), (point, change)
            assert len(sessions) == 1 and sessions[0].read_text().endswith("round 1.\n")
            state = json.loads((vault / ".echoes-vault/state.json").read_text())
            assert state["session"]["saved"] is True
        assert not lock_of(vault).exists()
        assert not (vault / ".echoes-vault" / JOURNAL).exists()
        assert temp_files(vault) == []


def test_a_resent_end_or_upsert_needs_no_hash_when_bytes_are_equal(
    rt: Runtime, vault: Path
) -> None:
    text = page(summary="Same bytes.")
    first = rt.upsert("same.md", text)
    assert first["pageChanged"] is True
    again = rt.upsert("same.md", text)  # no expectedSha256: the page already holds these bytes
    # The reference's action, and a key that says nothing changed.
    assert again["action"] == "updated" and again["pageChanged"] is False
    ended = rt.ok(
        "end", "--confirm-explicit-user-end", "--payload", "-",
        payload={"dailySummary": "- resent", "pages": [{"filename": "same.md", "content": text}]},
    )  # fmt: skip
    assert ended["pages"][0]["pageChanged"] is False
    changed = rt.upsert("same.md", page(summary="Other bytes."), expectedSha256=again["sha256"])
    assert changed["action"] == "updated" and changed["pageChanged"] is True
    rt.fail("upsert", "--payload", "-", payload={"filename": "same.md", "content": page()},
            code="missing-hash")  # fmt: skip


def test_an_interrupted_end_is_reported_then_finished_by_the_next_writer(
    rt: Runtime, vault: Path
) -> None:
    """A journal as `end` leaves it when killed just after writing it."""
    entry = "EchoesVault/daily/2026-01-02/20260102T030405000000Z-session-codex-0123abcd.md"
    journal = {
        "format": "echoes-vault-end/1",
        "pages": [{"rel": "EchoesVault/pages/rolled.md", "text": page(summary="Rolled forward.")}],
        "daily": {"rel": entry, "text": "### Session — 2026-01-02T03:04:05+00:00\n\n- done\n"},
        "agent": "codex",
        "adapterVersion": None,
        "lastSave": "2026-01-02T03:04:05+00:00",
    }
    (vault / ".echoes-vault/end-journal.json").write_text(json.dumps(journal))
    report = rt.ok("inspect")
    assert report["pendingEnd"]["pages"] == ["EchoesVault/pages/rolled.md"]
    assert "interrupted-end" in {i["kind"] for i in report["issues"]}
    assert not (pages_dir(vault) / "rolled.md").exists(), "inspect stays read-only"
    rt.ok("hydrate")
    assert (pages_dir(vault) / "rolled.md").read_text() == journal["pages"][0]["text"]
    assert (vault / entry).read_text().endswith("- done\n")
    assert "[[rolled]]: Rolled forward." in (vault / "EchoesVault/index.md").read_text()
    state = json.loads((vault / ".echoes-vault/state.json").read_text())
    assert state["session"]["saved"] is True
    assert not (vault / ".echoes-vault/end-journal.json").exists()
    assert rt.ok("inspect")["pendingEnd"] is None
