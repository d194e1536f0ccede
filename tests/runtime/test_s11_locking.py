"""Spec 11: the shared lock, atomic replacement and optimistic concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

from .conftest import PYTHON, Runtime, base_env, daily_files, page, pages_dir, snapshot

DRIVER = """
import sys
sys.path.insert(0, sys.argv[1])
import echoes_vault
count = int(sys.argv[3])
for number in range(count):
    code = echoes_vault.main(["--workspace", sys.argv[2], "append", "--payload", sys.argv[4]])
    if code != 0:
        sys.exit(code)
"""


def test_s11_1_concurrent_appends_all_land(rt: Runtime, vault: Path, tmp_path: Path) -> None:
    """8 processes × 50 appends each, all contending for the same lock."""
    payload = tmp_path / "entry.json"
    payload.write_text(json.dumps({"entry": "- concurrent fact", "agent": "load"}))
    processes = [
        subprocess.Popen(
            [
                PYTHON,
                "-c",
                DRIVER,
                str(vault / ".echoes-vault"),
                str(vault),
                "50",
                str(payload),
            ],
            env=base_env(ECHOES_VAULT_LOCK_TIMEOUT="60"),  # a loaded machine must not fail the test
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(8)
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    files = daily_files(vault)
    assert len(files) == 400
    assert len({f.name for f in files}) == 400
    assert all(f.read_text().endswith("- concurrent fact\n") for f in files)
    assert not (vault / ".echoes-vault/lock").exists()
    assert not [p for p in (vault / "EchoesVault/daily").rglob(".*")]
    state = json.loads((vault / ".echoes-vault/state.json").read_text())
    assert state["stats"]["totalDailyLogs"] == 400


def test_s11_3_concurrent_upserts_with_the_same_base_hash(rt: Runtime, vault: Path) -> None:
    rt.upsert("shared.md", page("Original."))
    base = rt.hash("shared")
    results = []

    def worker(number: int) -> None:
        content = page(f"Writer {number}.")
        results.append(
            rt.run(
                "upsert",
                "--payload",
                "-",
                payload={"filename": "shared.md", "content": content, "expectedSha256": base},
                env=base_env(ECHOES_VAULT_LOCK_TIMEOUT="60"),
            )
        )

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [r for r in results if r.code == 0]
    losers = [r for r in results if r.code != 0]
    assert len(winners) == 1, results
    assert len(losers) == 5 and all(r.error["code"] == "stale-hash" for r in losers)
    text = (pages_dir(vault) / "shared.md").read_text()
    assert winners[0].json["sha256"] == rt.hash("shared")
    assert text.count("summary: Writer") == 1


def test_s11_1_stale_lock_is_broken(rt: Runtime, vault: Path) -> None:
    lock = vault / ".echoes-vault/lock"
    lock.write_text("12345 someone-else\n")
    old = time.time() - 61
    os.utime(lock, (old, old))
    started = time.monotonic()
    rt.ok("append", "--payload", "-", payload={"entry": "- after a crash"})
    assert time.monotonic() - started < 5
    assert not lock.exists()


def test_s11_1_fresh_lock_makes_a_writer_wait_then_fail(rt: Runtime, vault: Path) -> None:
    lock = vault / ".echoes-vault/lock"
    lock.write_text("12345 someone-else\n")
    before = snapshot(vault)
    started = time.monotonic()
    error = rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "x.md", "content": page()},
        env=base_env(ECHOES_VAULT_LOCK_TIMEOUT="0.6"),
        code="lock-timeout",
    )
    elapsed = time.monotonic() - started
    assert 0.6 <= elapsed < 5, elapsed
    assert "lock" in error["error"]
    assert lock.read_text() == "12345 someone-else\n", "a foreign lock is never removed"
    assert snapshot(vault) == before


def test_s11_1_waiting_writer_proceeds_when_the_lock_is_released(rt: Runtime, vault: Path) -> None:
    lock = vault / ".echoes-vault/lock"
    lock.write_text("other\n")
    timer = threading.Timer(0.5, lock.unlink)
    timer.start()
    try:
        rt.ok(
            "append",
            "--payload",
            "-",
            payload={"entry": "- waited"},
            env=base_env(ECHOES_VAULT_LOCK_TIMEOUT="8"),
        )
    finally:
        timer.join()
    assert len(daily_files(vault)) == 1


def test_s11_1_stale_threshold_is_configurable(rt: Runtime, vault: Path) -> None:
    lock = vault / ".echoes-vault/lock"
    lock.write_text("other\n")
    old = time.time() - 5
    os.utime(lock, (old, old))
    env = base_env(ECHOES_VAULT_LOCK_STALE="2", ECHOES_VAULT_LOCK_TIMEOUT="0.3")
    rt.ok("append", "--payload", "-", payload={"entry": "- x"}, env=env)
    rt.fail(
        "append",
        "--payload",
        "-",
        payload={"entry": "- x"},
        env=base_env(ECHOES_VAULT_LOCK_TIMEOUT="nope"),
        code="usage",
    )


def test_s11_1_symlinked_lock_is_refused(rt: Runtime, vault: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    os.symlink(target, vault / ".echoes-vault/lock")
    rt.fail("append", "--payload", "-", payload={"entry": "- x"}, code="symlink")
    assert not target.exists()


def test_s11_1_read_only_commands_never_create_the_lock(rt: Runtime, vault: Path) -> None:
    (vault / ".echoes-vault/lock").write_text("held by a slow writer\n")
    before = snapshot(vault)
    for command in (
        ("inspect",),
        ("status",),
        ("protocol",),
        ("search", "x"),
        ("status", "--format", "card"),
    ):
        # with the lock held and no wait allowed, a command that tried to take it would fail
        result = rt.run(*command, env=base_env(ECHOES_VAULT_LOCK_TIMEOUT="0"))
        assert result.code == 0, (command, result.stderr)
    rt.fail("hash", "missing", code="not-found", env=base_env(ECHOES_VAULT_LOCK_TIMEOUT="0"))
    assert snapshot(vault) == before


def test_s11_2_failed_replacement_leaves_no_temporary_file(rt: Runtime, vault: Path) -> None:
    index = vault / "EchoesVault/index.md"
    index.unlink()
    (index / "occupied").mkdir(parents=True)
    result = rt.run("rebuild-index")
    assert result.code == 2 and result.error["code"] == "unsafe-path"
    # the replacement step itself: os.replace onto a non-empty directory fails after the
    # temporary file was written and synced; the temporary file must be removed
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import echoes_vault as ev\n"
        "try:\n    ev.place_file(sys.argv[2], b'x' * 100000)\nexcept OSError:\n    sys.exit(3)\n"
    )
    process = subprocess.run(
        [PYTHON, "-c", script, str(vault / ".echoes-vault"), str(index)], check=False
    )
    assert process.returncode == 3
    leftovers = [p.name for p in (vault / "EchoesVault").iterdir() if p.name.startswith(".index")]
    assert leftovers == []
    assert not (vault / ".echoes-vault/lock").exists()


def test_s11_3_existing_page_requires_a_current_hash(rt: Runtime, vault: Path) -> None:
    rt.upsert("p.md", page("One."))
    before = snapshot(vault, lock_ok=True)
    rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "p.md", "content": page("Two.")},
        code="missing-hash",
    )
    rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "p.md", "content": page("Two."), "expectedSha256": "0" * 64},
        code="stale-hash",
    )
    assert snapshot(vault, lock_ok=True) == before
    current = rt.hash("p")
    (pages_dir(vault) / "p.md").write_text(page("Edited outside the runtime."))
    rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "p.md", "content": page("Two."), "expectedSha256": current},
        code="stale-hash",
    )
    result = rt.upsert("p.md", page("Two."), expectedSha256=rt.hash("p"))
    assert result["action"] == "updated"
