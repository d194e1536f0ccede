"""Spec 10 and 15: local state schema 4 and the legacy import order."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import RUNTIME, Runtime, page, snapshot


def read_state(root: Path) -> dict:
    return json.loads((root / ".echoes-vault/state.json").read_text())


def test_s10_state_schema_4(rt: Runtime, vault: Path) -> None:
    rt.upsert("a.md", page("A.", status="deprecated"))
    rt.ok("append", "--payload", "-", payload={"entry": "- x"})
    rt.text("--agent", "Codex", "--adapter-version", "9.9.9", "start")
    state = read_state(vault)
    assert set(state) == {
        "version",
        "protocolVersion",
        "engineVersion",
        "initialized",
        "session",
        "stats",
        "lastWriter",
    }
    assert state["version"] == 4 and state["protocolVersion"] == "1.0.0"
    assert state["initialized"] is True
    assert state["session"]["started"] is True and state["session"]["saved"] is False
    assert state["session"]["lastStart"] and state["session"]["lastSave"] is None
    assert state["stats"] == {"totalPages": 1, "totalDailyLogs": 1, "deprecatedPages": 1}
    assert state["lastWriter"] == {"agent": "codex", "adapterVersion": "9.9.9"}


def test_s10_state_is_rebuilt_when_deleted(rt: Runtime, vault: Path) -> None:
    (vault / ".echoes-vault/state.json").unlink()
    health = rt.ok("status")
    assert health["state"]["status"] == "missing" and health["integrity"] == "attention"
    rt.ok("hydrate")
    assert read_state(vault)["version"] == 4
    assert rt.ok("status")["state"]["status"] == "ok"


def test_s10_invalid_or_mismatched_state_lowers_health_only(rt: Runtime, vault: Path) -> None:
    state = vault / ".echoes-vault/state.json"
    for content, status in [
        ("{broken", "invalid"),
        (json.dumps({"version": 4, "protocolVersion": "0.9", "session": {}}), "protocol-mismatch"),
    ]:
        state.write_text(content)
        health = rt.ok("status")
        assert health["state"]["status"] == status
        assert any(i["kind"] == "state" for i in health["issues"])
        assert rt.ok("search", "anything")["ok"] is True


def test_s15_legacy_state_import_order(bare: Runtime, repo: Path) -> None:
    (repo / ".codex").mkdir()
    (repo / ".codex/echoes-vault-state.json").write_text(
        json.dumps(
            {"initialized": True, "session": {"started": True, "saved": True, "lastSave": "codex"}}
        )
    )
    (repo / ".opencode").mkdir()
    (repo / ".opencode/echoes-state.json").write_text(
        json.dumps(
            {
                "initialized": True,
                "session": {"started": True, "saved": False, "lastStart": "opencode", "junk": 1},
            }
        )
    )
    before = snapshot(repo)
    assert bare.ok("status", script=RUNTIME)["legacy"]["legacyStateFiles"] == [
        ".opencode/echoes-state.json",
        ".codex/echoes-vault-state.json",
    ]
    assert snapshot(repo) == before
    bare.ok("init", script=RUNTIME)
    state = read_state(repo)
    assert state["version"] == 4
    assert state["session"] == {
        "started": True,
        "saved": False,
        "lastStart": "opencode",
        "lastSave": None,
    }
    # the project state now wins over the legacy files
    bare.ok(
        "end", "--confirm-explicit-user-end", "--payload", "-", payload={"dailySummary": "- done"}
    )
    state = read_state(repo)
    assert state["session"]["saved"] is True and state["session"]["lastStart"] == "opencode"


def test_s10_read_only_commands_never_write_state(rt: Runtime, vault: Path) -> None:
    (vault / ".echoes-vault/state.json").unlink()
    before = snapshot(vault)
    rt.ok("status")
    rt.ok("inspect")
    rt.text("status", "--format", "card")
    rt.ok("search", "x")
    rt.ok("protocol")
    assert snapshot(vault) == before


def test_s10_last_writer_is_kept_when_no_agent_is_named(rt: Runtime, vault: Path) -> None:
    writer = {"agent": "codex", "adapterVersion": "9.9.9"}
    rt.ok(
        "--agent",
        "Codex",
        "--adapter-version",
        "9.9.9",
        "append",
        "--payload",
        "-",
        payload={"entry": "- x"},
    )
    assert read_state(vault)["lastWriter"] == writer
    # every state-writing command, run without `--agent`, keeps the last writer (as the
    # reference runtime does); so do the reports of the state
    for command in (
        ("hydrate",),
        ("migrate",),
        ("upgrade",),
        ("rebuild-index",),
        ("--adapter-version", "1.0.0", "hydrate"),
    ):
        rt.ok(*command)
        assert read_state(vault)["lastWriter"] == writer, command
    rt.text("start")
    rt.upsert("a.md", page("A."))
    rt.ok("append", "--payload", "-", payload={"entry": "- y"})
    rt.ok("end", "--confirm-explicit-user-end", "--payload", "-", payload={"dailySummary": "- z"})
    assert read_state(vault)["lastWriter"] == writer
    assert rt.ok("status")["state"]["lastWriter"] == writer
    assert rt.ok("inspect")["state"]["lastWriter"] == writer
    # naming an agent replaces the writer, whether by `--agent` or by a payload's `agent`
    rt.ok("--agent", "Claude Code", "hydrate")
    assert read_state(vault)["lastWriter"] == {"agent": "claude-code", "adapterVersion": None}
    rt.ok("append", "--payload", "-", payload={"entry": "- w", "agent": "Gemini"})
    assert read_state(vault)["lastWriter"] == {"agent": "gemini", "adapterVersion": None}
