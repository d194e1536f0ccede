"""Spec 9 and 12.8: unique daily entries."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

from .conftest import Runtime, daily_files

NAME = re.compile(r"^(\d{8})T\d{12}Z-(scratchpad|session)(?:-([a-z0-9._-]+))?-([0-9a-f]{8})\.md$")


def test_s9_append_writes_one_unique_nested_file(rt: Runtime, vault: Path) -> None:
    before = datetime.datetime.now(datetime.timezone.utc)
    result = rt.ok(
        "append", "--payload", "-", payload={"entry": "- Confirmed the boundary.", "agent": "Codex"}
    )
    after = datetime.datetime.now(datetime.timezone.utc)
    path = Path(result["dailyLog"])
    assert path.is_absolute() and path.is_file()
    assert result == {
        "ok": True,
        "dailyLog": str(path),
        "kind": "scratchpad",
        "agent": "codex",
        "warnings": [],
    }
    assert path.parent.parent == vault / "EchoesVault/daily"
    assert path.parent.name in {before.strftime("%Y-%m-%d"), after.strftime("%Y-%m-%d")}
    match = NAME.match(path.name)
    assert match and match.group(2) == "scratchpad" and match.group(3) == "codex"
    assert match.group(1) == path.parent.name.replace("-", "")
    assert not list((vault / "EchoesVault/daily").glob("*.md")), "no flat daily file"


def test_s9_entry_body_format(rt: Runtime) -> None:
    result = rt.ok(
        "append",
        "--payload",
        "-",
        payload={"entry": "\n- Fact one.\n- Fact two.  \n\n", "agent": "x"},
    )
    text = Path(result["dailyLog"]).read_text()
    match = re.fullmatch(
        r"### Scratchpad — (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d)\n\nAgent: `x`\n\n- Fact one\.\n- Fact two\.\n",
        text,
    )
    assert match, text
    stamp = datetime.datetime.fromisoformat(match.group(1))
    assert stamp.utcoffset() is not None


def test_s9_entry_without_agent_has_no_agent_line(rt: Runtime) -> None:
    result = rt.ok("append", "--payload", "-", payload={"entry": "- x"})
    assert result["agent"] is None
    name = Path(result["dailyLog"]).name
    assert NAME.match(name).group(3) is None
    assert "Agent:" not in Path(result["dailyLog"]).read_text()


def test_s9_agent_name_normalization(rt: Runtime) -> None:
    result = rt.ok(
        "--agent",
        "ignored",
        "append",
        "--payload",
        "-",
        payload={"entry": "- x", "agent": "..My Agent/v2!!" + "x" * 60 + "--"},
    )
    agent = result["agent"]
    assert re.fullmatch(r"[a-z0-9._-]{1,40}", agent)
    assert agent.startswith("my-agent-v2") and not agent.endswith(("-", "."))
    assert f"-{agent}-" in Path(result["dailyLog"]).name
    flag = rt.ok("--agent", "Claude Code", "append", "--payload", "-", payload={"entry": "- y"})
    assert flag["agent"] == "claude-code"


def test_s9_many_appends_never_reuse_a_name(rt: Runtime, vault: Path) -> None:
    paths = {
        rt.ok("append", "--payload", "-", payload={"entry": f"- {n}"})["dailyLog"] for n in range(5)
    }
    assert len(paths) == 5
    assert len(daily_files(vault)) == 5


def test_s12_8_append_requires_a_non_empty_entry(rt: Runtime, vault: Path) -> None:
    rt.fail("append", "--payload", "-", payload={}, code="payload")
    rt.fail("append", "--payload", "-", payload={"entry": "  \n"}, code="payload")
    rt.fail("append", "--payload", "-", payload={"entry": 5}, code="payload")
    assert daily_files(vault) == []


def test_s12_8_append_does_not_mark_the_session_saved(rt: Runtime, vault: Path) -> None:
    import json

    rt.ok("append", "--payload", "-", payload={"entry": "- x"})
    state = json.loads((vault / ".echoes-vault/state.json").read_text())
    assert state["session"]["saved"] is False
