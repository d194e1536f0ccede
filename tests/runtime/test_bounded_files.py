"""Bounded readers: no file content makes a command answer `internal` or print a traceback.

Every JSON file the runtime reads (the marker, local state, a legacy state file, the lock, the
`end` journal, the page cache, the request memory), an adapter file and the payload get hostile
bytes: nesting 1,000 and 100,000 levels deep, more bytes than the file's limit, invalid UTF-8, a
wrong top-level type, and half a surrogate pair. Every command runs on each (in one process per
file, through `main()`, which the runtime supports). Then the documented answers are checked:
an unreadable marker is `unsupported-protocol` naming the file, an unreadable lock is waited for
and then broken by the age rule, and a payload is refused with `payload`."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from .conftest import PYTHON, Runtime, base_env, page, pages_dir

HERE = Path(__file__).resolve().parent
MIB = 1024 * 1024
# Bytes over each file's limit (the page cache's, 256 MiB, is not worth the disk: 40 MiB of
# garbage is read whole and refused all the same).
HUGE = {
    "EchoesVault/.echoes-vault.json": 1 * MIB + 10,
    ".echoes-vault/state.json": 4 * MIB + 10,
    ".opencode/echoes-state.json": 4 * MIB + 10,
    ".echoes-vault/lock": 1 * MIB,
    ".echoes-vault/end-journal.json": 32 * MIB + 10,
    ".echoes-vault/index-cache.json": 40 * MIB,
    ".echoes-vault/requests.json": 32 * MIB + 10,
    "AGENTS.md": 5 * MIB,
}


def hostile(size: int) -> Dict[str, Optional[bytes]]:
    return {
        "deep-1000": b"[" * 1000 + b"]" * 1000,
        "deep-100000": b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
        "unclosed-100000": b"[" * 100_000,
        "huge": b'{"padding": "' + b"x" * size + b'"}',
        "invalid-utf8": b'{"version": 4, "text": "\xff\xfe\xc3"}',
        "wrong-type": b'["a", "list", 3]',
        "surrogate": b'{"version": 4, "protocolVersion": "1.0.0", "session": {"lastStart": '
        b'"\\ud800"}, "lastWriter": {"agent": "\\udfff", "adapterVersion": "\\ud83d"}}',
    }


PAGE = json.dumps({"filename": "alpha.md", "content": page("Alpha, another version.")})
COMMANDS: List[Dict[str, Any]] = [
    {"argv": ["protocol"]},
    {"argv": ["inspect"]},
    {"argv": ["status", "--format", "card"]},
    {"argv": ["search", "alpha"]},
    {"argv": ["hash", "alpha"]},
    {"argv": ["append", "--payload", "-"], "payload": '{"entry": "- a fact"}'},
    {"argv": ["upsert", "--payload", "-"], "payload": PAGE},
    {
        "argv": ["end", "--confirm-explicit-user-end", "--payload", "-"],
        "payload": '{"dailySummary": "- a session"}',
    },
    {"argv": ["hydrate"]},
    {"argv": ["rebuild-index"]},
    {"argv": ["start", "--recent", "1"]},
    {"argv": ["configure-agents"]},
    {"argv": ["init"]},
    {"argv": ["migrate"]},
    {"argv": ["upgrade"]},
]


def run_all(vault: Path, rel: str, remove: List[str] = ()) -> List[Dict[str, Any]]:  # type: ignore[assignment]
    contents = {
        name: base64.b64encode(data).decode() if data is not None else None
        for name, data in hostile(HUGE[rel]).items()
    }
    plan = {
        "runtime": str(vault / ".echoes-vault/echoes_vault.py"),
        "workspace": str(vault),
        "file": rel,
        "contents": contents,
        "commands": COMMANDS,
        "remove": list(remove),
    }
    plan_file = vault.parent / "plan.json"
    plan_file.write_text(json.dumps(plan))
    env = base_env(ECHOES_VAULT_LOCK_TIMEOUT="0", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [PYTHON, str(HERE / "many_commands.py"), str(plan_file)],
        cwd=vault, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("rel", sorted(HUGE))
def test_no_file_content_makes_any_command_answer_internal(
    rt: Runtime, vault: Path, rel: str
) -> None:
    rt.upsert("alpha.md", page("Alpha."))
    # a legacy state file is read only when `state.json` is not there
    remove = [".echoes-vault/state.json"] if rel.startswith(".opencode/") else []
    assert run_all(vault, rel, remove) == []


BAD_PAYLOADS = {
    "deep-1000": b'{"entry": ' + b"[" * 1000 + b"]" * 1000 + b"}",
    "deep-100000": b"[" * 100_000,
    "huge": b'{"entry": "' + b"x" * (8 * MIB) + b'"}',
    "invalid-utf8": b'{"entry": "\xff"}',
    "wrong-type": b'["- a fact"]',
    "surrogate": b'{"entry": "- a fact \\ud800"}',
}


@pytest.mark.parametrize("content", sorted(BAD_PAYLOADS))
@pytest.mark.parametrize("command", ["append", "upsert", "end"])
def test_a_hostile_payload_is_refused_with_payload(
    rt: Runtime, vault: Path, command: str, content: str
) -> None:
    argv = [
        command,
        *(["--confirm-explicit-user-end"] if command == "end" else []),
        "--payload",
        "-",
    ]
    error = rt.fail(*argv, stdin=BAD_PAYLOADS[content], code="payload")
    assert len(error["error"]) < 300
    assert list((vault / "EchoesVault/daily").rglob("*.md")) == []


@pytest.mark.parametrize("content", ["deep-100000", "invalid-utf8", "wrong-type", "huge"])
def test_an_unreadable_marker_is_unsupported_protocol_naming_the_file(
    rt: Runtime, vault: Path, content: str
) -> None:
    marker = vault / "EchoesVault/.echoes-vault.json"
    marker.write_bytes(hostile(HUGE["EchoesVault/.echoes-vault.json"])[content] or b"")
    for argv in (["append", "--payload", "-"], ["hydrate"], ["rebuild-index"]):
        error = rt.fail(*argv, payload={"entry": "- x"}, code="unsupported-protocol")
        assert "`EchoesVault/.echoes-vault.json` cannot be read" in error["error"], error
    report = rt.ok("status")
    assert report["vaultState"] == "invalid-marker" and report["readOnly"] is True
    issue = next(i for i in report["issues"] if i["kind"] == "invalid-marker")
    assert issue["path"] == "EchoesVault/.echoes-vault.json"
    assert "cannot be read" in issue["message"]
    assert rt.ok("protocol")["marker"]["valid"] is False
    assert pages_dir(vault).exists() and list((vault / "EchoesVault/daily").rglob("*.md")) == []


@pytest.mark.parametrize("content", ["deep-100000", "huge", "invalid-utf8", "surrogate"])
def test_an_unreadable_lock_is_waited_for_then_broken_by_its_age(
    rt: Runtime, vault: Path, content: str
) -> None:
    lock = vault / ".echoes-vault/lock"
    data = hostile(HUGE[".echoes-vault/lock"])[content]
    assert data is not None
    lock.write_bytes(data)
    report = rt.ok("status")
    assert report["lock"]["ownerState"] == "unknown" and report["lock"]["stale"] is False
    started = time.monotonic()
    rt.fail("append", "--payload", "-", payload={"entry": "- x"}, code="lock-timeout",
            env=base_env(ECHOES_VAULT_LOCK_TIMEOUT="0.5"))  # fmt: skip
    assert time.monotonic() - started >= 0.5, "the lock was waited for"
    assert lock.read_bytes() == data, "not broken before its time"
    old = time.time() - 61
    os.utime(lock, (old, old))
    rt.ok("append", "--payload", "-", payload={"entry": "- x"})
    assert not lock.exists()


def test_an_adapter_file_over_its_limit_is_left_alone_and_reported(
    rt: Runtime, vault: Path
) -> None:
    guide = vault / "AGENTS.md"
    data = b"# Our guide\n" + b"x" * (4 * MIB)
    guide.write_bytes(data)
    result = rt.ok("configure-agents")
    assert result["agentAdapters"]["adapterConflicts"] == ["AGENTS.md"]
    conflicts = {c["path"]: c["reason"] for c in rt.ok("status")["adapters"]["conflicts"]}
    assert "larger than 4 MiB" in conflicts["AGENTS.md"], conflicts
    assert guide.read_bytes() == data
    issues = {i.get("path"): i["kind"] for i in rt.ok("status")["issues"]}
    assert issues["AGENTS.md"] == "adapter-conflict"
