"""The reference runtime's JSON contract, command by command: every key path and type its adapters
parse exists here with the same type and meaning. The tables below are transcribed from the
contract's observation tables (reference runtime engine 1.1.0), not from this runtime's code.

Types: `str`, `int`, `bool`, `dict`, `list`; `(None, str)` allows null; `[str]` is a list whose
elements are strings. A key path that needs a situation to appear is listed with it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Dict

import pytest

from .conftest import PYTHON, RUNTIME, Runtime, base_env, git, page, pages_dir

NULL_STR = (None, str)

ADAPTERS = {
    "protocolVersion": str,
    "engineVersion": str,
    "codexAdapterVersion": str,
    "runtimeUpdated": bool,
    "protocolUpdated": bool,
    "guidesUpdated": [str],
    "skillsUpdated": [str],
    "commandsUpdated": [str],
    "legacySkillsRedirected": [str],
    "adapterConflicts": [str],
}

STATE = {
    "version": int,
    "protocolVersion": str,
    "engineVersion": str,
    "initialized": bool,
    "session": dict,
    "session.started": bool,
    "session.saved": bool,
    "session.lastStart": NULL_STR,
    "session.lastSave": NULL_STR,
    "stats": dict,
    "stats.totalPages": int,
    "stats.totalDailyLogs": int,
    "stats.deprecatedPages": int,
    "lastWriter": dict,
    "lastWriter.agent": NULL_STR,
    "lastWriter.adapterVersion": NULL_STR,
}


def prefixed(prefix: str, table: Dict[str, Any]) -> Dict[str, Any]:
    return {f"{prefix}.{path}": kind for path, kind in table.items()}


# 1.1 init / migrate / upgrade
INIT = {
    "ok": bool,
    "operation": str,
    "created": bool,
    "vault": str,
    "index": str,
    "indexRefresh": dict,
    "agentAdapters": dict,
    "indexRefresh.rebuilt": bool,
    "indexRefresh.migratedSummaries": [str],
    "indexRefresh.pageCount": int,
    "indexRefresh.sha256": str,
    **prefixed("agentAdapters", ADAPTERS),
    "state": dict,
    **prefixed("state", STATE),
}

MARKER = {
    "marker": dict,
    "marker.exists": bool,
    "marker.valid": bool,
    "marker.value": (None, dict),
    "marker.error": NULL_STR,
}
MARKER_VALUE = {
    "marker.value.schemaVersion": int,
    "marker.value.protocolVersion": str,
    "marker.value.generatedIndex": bool,
    "marker.value.dailyLayout": str,
    "marker.value.runtime": str,
    "marker.value.requiredFrontmatter": [str],
}
PROJECT_RUNTIME = {
    "projectRuntime": dict,
    "projectRuntime.exists": bool,
    "projectRuntime.recognized": bool,
    "projectRuntime.compatible": bool,
    "projectRuntime.current": bool,
    "projectRuntime.engineVersion": NULL_STR,
    "projectRuntime.protocolVersion": NULL_STR,
    "projectRuntime.error": NULL_STR,
}

# 1.2 protocol
PROTOCOL = {
    "ok": bool,
    "codexAdapterVersion": str,
    "engineVersion": str,
    "supportedProtocolVersion": str,
    "vaultProtocolVersion": NULL_STR,
    **MARKER,
    **PROJECT_RUNTIME,
    "runtime": str,
    "protocol": str,
    "commands": [str],
}

# 1.4 inspect / status
HEALTH_LISTS = [
    "deprecatedSlugs",
    "missingStructure",
    "invalidFrontmatter",
    "duplicateIndexEntries",
    "emptyDescriptions",
    "indexOutOfDate",
    "orphanPages",
    "missingPages",
    "conflictMarkers",
    "indexBuildErrors",
    "symbolicLinks",
    "unreadableFiles",
    "adapterConfiguration",
    "gitReadiness",
    "outdatedRuntime",
]
HEALTH = {
    "totalPages": int,
    "totalDailyLogs": int,
    "deprecatedPages": int,
    "indexTopics": int,
    **{name: [str] for name in HEALTH_LISTS},
    "generatedIndex": bool,
    "protocolVersion": str,
    "engineVersion": str,
    "codexAdapterVersion": str,
    "initialized": bool,
    "legacyVaultDetected": bool,
    "todayEntries": int,
    "scaleAlert": bool,
    "integrity": str,
    "issueCount": int,
    "stateFile": dict,
    "stateFile.exists": bool,
    "stateFile.valid": bool,
    "stateFile.error": NULL_STR,
    **MARKER,
    **PROJECT_RUNTIME,
    "git": dict,
    "git.available": bool,
    "git.ready": bool,
    "git.runtimeIgnored": bool,
    "git.trackedLocalFiles": [str],
    "git.untrackedDurableFiles": [str],
    "git.ignoredDurableFiles": [str],
    "git.openCodeCommandsIgnored": [str],
    "git.openCodeSkillsIgnored": [str],
    "git.suggestedCommands": [str],
    "storage": dict,
    "storage.totalBytes": int,
    "storage.totalFiles": int,
    "storage.markdownFiles": int,
    "storage.symlinks": [str],
    "storage.unreadableFiles": [str],
    "storage.lastModified": NULL_STR,
}
STATUS = {
    "ok": bool,
    "workspace": str,
    "vault": str,
    "state": dict,
    **prefixed("state", STATE),
    "indexRefresh": dict,
    "indexRefresh.rebuilt": bool,
    "indexRefresh.migratedSummaries": [str],
    "indexRefresh.needsRefresh": bool,
    "indexRefresh.pageCount": int,
    "indexRefresh.sha256": NULL_STR,
    "health": dict,
    **prefixed("health", HEALTH),
}

# 1.6 hydrate, 1.8-1.13
HYDRATE = {
    "ok": bool,
    "index": str,
    "indexRefresh.sha256": str,
    "indexRefresh.rebuilt": bool,
    "indexRefresh.migratedSummaries": [str],
    "indexRefresh.pageCount": int,
    "state": dict,
    **prefixed("state", STATE),
}
SEARCH = {"ok": bool, "query": str, "truncated": bool, "results": list}
SEARCH_RESULT = {"file": str, "line": int, "text": str}
APPEND = {"ok": bool, "dailyLog": str, "kind": str, "agent": NULL_STR}
HASH = {"ok": bool, "page": str, "sha256": str}
UPSERT = {
    "ok": bool,
    "action": str,
    "pageChanged": bool,
    "page": str,
    "sha256": str,
    "indexChanged": bool,
}
END = {
    "ok": bool,
    "memorySaved": bool,
    "dailyLog": str,
    "index": str,
    "agent": NULL_STR,
    "pagesWritten": int,
}
REBUILD = {
    "ok": bool,
    "index": str,
    "sha256": str,
    "rebuilt": bool,
    "migratedSummaries": [str],
    "pageCount": int,
}

COMMANDS = {
    "init",
    "migrate",
    "upgrade",
    "protocol",
    "configure-agents",
    "inspect",
    "hydrate",
    "start",
    "status",
    "search",
    "append",
    "upsert",
    "end",
    "hash",
    "rebuild-index",
}


def lookup(data: Any, path: str) -> Any:
    for part in path.split("."):
        assert isinstance(data, dict) and part in data, f"missing key path {path!r}"
        data = data[part]
    return data


def matches(value: Any, kind: Any) -> bool:
    if isinstance(kind, tuple):
        return any(matches(value, k) for k in kind)
    if kind is None:
        return value is None
    if isinstance(kind, list):
        return isinstance(value, list) and all(matches(v, kind[0]) for v in value)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def conforms(data: Dict[str, Any], table: Dict[str, Any]) -> None:
    for path, kind in table.items():
        value = lookup(data, path)
        assert matches(value, kind), f"{path!r} is {value!r}, expected {kind!r}"


def absolute(value: str) -> bool:
    return os.path.isabs(value)


SHA = re.compile(r"[0-9a-f]{64}")


def commit_all(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", "vault", "--allow-empty")


# ------------------------------------------------------------------------------------------
# 1.1 init / migrate / upgrade
# ------------------------------------------------------------------------------------------


def test_init_fresh_and_repeated(bare: Runtime, repo: Path) -> None:
    first = bare.ok("init", script=RUNTIME)
    conforms(first, INIT)
    assert first["operation"] == "init" and first["created"] is True
    assert first["vault"] == str(repo / "EchoesVault")
    assert first["index"] == str(repo / "EchoesVault/index.md")
    assert first["indexRefresh"]["rebuilt"] is True and first["indexRefresh"]["pageCount"] == 0
    assert SHA.fullmatch(first["indexRefresh"]["sha256"])
    adapters = first["agentAdapters"]
    assert adapters["protocolVersion"] == "1.0.0" and adapters["protocolUpdated"] is True
    assert sorted(adapters["guidesUpdated"]) == ["AGENTS.md", "CLAUDE.md"]
    assert ".opencode/commands/echoes-init.md" in adapters["commandsUpdated"]
    assert ".claude/skills/echoes-vault/SKILL.md" in adapters["skillsUpdated"]
    assert adapters["adapterConflicts"] == [] and adapters["legacySkillsRedirected"] == []
    state = first["state"]
    assert state["version"] == 4 and state["initialized"] is True
    assert state["protocolVersion"] == "1.0.0"
    assert state == json.loads((repo / ".echoes-vault/state.json").read_text())

    again = bare.ok("migrate")
    conforms(again, INIT)
    assert again["operation"] == "migrate" and again["created"] is False
    assert again["indexRefresh"]["rebuilt"] is False
    assert again["agentAdapters"]["guidesUpdated"] == []
    assert again["agentAdapters"]["protocolUpdated"] is False
    assert again["agentAdapters"]["runtimeUpdated"] is False


def test_init_of_a_legacy_vault(bare: Runtime, repo: Path) -> None:
    (repo / "EchoesVault/pages").mkdir(parents=True)
    legacy = "---\ntype: note\nstack: []\nstatus: active\n---\n\nBody\n"
    (repo / "EchoesVault/pages/auth.md").write_text(legacy)
    (repo / "EchoesVault/index.md").write_text("# Index\n\n- [[auth]]: Authentication.\n")
    skill = repo / ".opencode/skills/echoes-append-to-daily-log/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("Use echoes_append_to_daily_log to write EchoesVault/daily/2025-01-01.md.\n")
    other = repo / ".opencode/skills/echoes-search-vault-pages/SKILL.md"
    other.parent.mkdir(parents=True)
    other.write_text("My own notes about searching.\n")
    (repo / ".opencode/echoes-state.json").write_text(
        json.dumps({"initialized": True, "pluginVersion": "0.9.0", "session": {"saved": True}})
    )
    result = bare.ok("init", script=RUNTIME)
    conforms(result, INIT)
    assert result["created"] is True
    assert result["indexRefresh"]["migratedSummaries"] == ["auth.md"]
    assert result["agentAdapters"]["legacySkillsRedirected"] == [
        ".opencode/skills/echoes-append-to-daily-log/SKILL.md"
    ]
    assert result["agentAdapters"]["adapterConflicts"] == [
        ".opencode/skills/echoes-search-vault-pages/SKILL.md"
    ]
    redirect = skill.read_text()
    assert "Generated by EchoesVault protocol 1.0.0" in redirect and "Legacy redirect" in redirect
    assert other.read_text() == "My own notes about searching.\n"
    assert result["state"]["lastWriter"] == {"agent": "opencode", "adapterVersion": "0.9.0"}
    assert result["state"]["session"]["saved"] is True


def test_init_records_the_invoking_adapter(bare: Runtime) -> None:
    result = bare.ok("--agent", "Codex", "--adapter-version", "1.1.0", "init", script=RUNTIME)
    assert result["state"]["lastWriter"] == {"agent": "codex", "adapterVersion": "1.1.0"}


def test_init_repairs_a_marker_and_says_created(rt: Runtime, vault: Path) -> None:
    marker = vault / "EchoesVault/.echoes-vault.json"
    marker.write_text(json.dumps({**json.loads(marker.read_text()), "dailyLayout": "other"}))
    result = rt.ok("init")
    assert result["created"] is True
    assert json.loads(marker.read_text())["dailyLayout"] == "unique-files-v1"


# ------------------------------------------------------------------------------------------
# 1.2 protocol
# ------------------------------------------------------------------------------------------


def test_protocol_initialized(rt: Runtime, vault: Path) -> None:
    result = rt.ok("protocol")
    conforms(result, {**PROTOCOL, **MARKER_VALUE})
    assert result["supportedProtocolVersion"] == "1.0.0"
    assert result["vaultProtocolVersion"] == "1.0.0"
    assert result["marker"]["exists"] is True and result["marker"]["valid"] is True
    assert result["marker"]["error"] is None
    assert result["marker"]["value"]["requiredFrontmatter"] == [
        "type",
        "stack",
        "status",
        "summary",
    ]
    assert result["runtime"] == str(vault / ".echoes-vault/echoes_vault.py")
    assert result["protocol"] == str(vault / "EchoesVault/AGENT_PROTOCOL.md")
    project = result["projectRuntime"]
    assert project["exists"] and project["recognized"] and project["compatible"]
    assert project["current"] is True and project["error"] is None
    assert set(result["commands"]) == COMMANDS and len(result["commands"]) == 15


def test_protocol_uninitialized_and_unsupported(bare: Runtime, repo: Path) -> None:
    result = bare.ok("protocol", script=RUNTIME)
    conforms(result, PROTOCOL)
    assert result["vaultProtocolVersion"] is None
    assert result["marker"] == {
        "exists": False,
        "valid": False,
        "value": None,
        "error": "initialization marker is missing",
    }
    assert result["projectRuntime"]["exists"] is False
    assert result["projectRuntime"]["error"] == "project runtime is missing"
    (repo / "EchoesVault").mkdir()
    marker = repo / "EchoesVault/.echoes-vault.json"
    marker.write_text(json.dumps({"schemaVersion": 3, "protocolVersion": "2.0.0"}))
    result = bare.ok("protocol", script=RUNTIME)
    conforms(result, PROTOCOL)
    assert result["vaultProtocolVersion"] == "2.0.0" and result["marker"]["valid"] is False
    marker.write_text(json.dumps({"schemaVersion": 2, "protocolVersion": "1.0.0"}))
    error = bare.ok("protocol", script=RUNTIME)["marker"]["error"]
    assert error == "unsupported marker schema: 2"
    marker.write_text("not json")
    result = bare.ok("protocol", script=RUNTIME)
    assert result["marker"]["value"] is None and result["vaultProtocolVersion"] is None


# ------------------------------------------------------------------------------------------
# 1.3 configure-agents
# ------------------------------------------------------------------------------------------


def test_configure_agents_is_the_flattened_adapter_object(rt: Runtime, vault: Path) -> None:
    (vault / "EchoesVault/AGENT_PROTOCOL.md").unlink()
    result = rt.ok("configure-agents")
    conforms(result, {"ok": bool, **ADAPTERS})
    assert result["protocolUpdated"] is True and result["guidesUpdated"] == []
    assert result["runtimeUpdated"] is False


# ------------------------------------------------------------------------------------------
# 1.4 inspect / status
# ------------------------------------------------------------------------------------------


def test_status_healthy_committed_vault(rt: Runtime, vault: Path) -> None:
    rt.upsert("auth.md", page("Auth."))
    rt.upsert("old.md", page("Old.", status="Deprecated"))
    commit_all(vault)
    for command in ("status", "inspect"):
        result = rt.ok(command)
        conforms(result, {**STATUS, **prefixed("health", MARKER_VALUE)})
        health = result["health"]
        assert health["integrity"] == "healthy" and health["issueCount"] == 0, health
        assert health["totalPages"] == 2 and health["deprecatedPages"] == 1
        assert health["deprecatedSlugs"] == ["old"] and health["indexTopics"] == 2
        assert health["initialized"] is True and health["legacyVaultDetected"] is False
        assert health["git"] == {
            "available": True,
            "ready": True,
            "runtimeIgnored": False,
            "trackedLocalFiles": [],
            "untrackedDurableFiles": [],
            "ignoredDurableFiles": [],
            "openCodeCommandsIgnored": [],
            "openCodeSkillsIgnored": [],
            "suggestedCommands": [],
        }
        assert health["stateFile"] == {"exists": True, "valid": True, "error": None}
        assert result["indexRefresh"]["needsRefresh"] is False
        assert result["indexRefresh"]["rebuilt"] is False
        assert result["indexRefresh"]["pageCount"] == 2
        assert result["state"]["stats"]["totalPages"] == 2  # live counts
        assert health["storage"]["markdownFiles"] >= 3 and health["storage"]["lastModified"]


def test_status_counts_every_issue_the_reference_way(rt: Runtime, vault: Path) -> None:
    rt.upsert("api.md", page("API."))
    rt.upsert("merge.md", page("Merge."))
    commit_all(vault)
    pages = pages_dir(vault)
    (pages / "merge.md").write_text(page("Merge.") + "<<<<<<< ours\na\n=======\nb\n>>>>>>> x\n")
    (pages / "nofm.md").write_text("no frontmatter\n")
    (pages / "API-x.md").write_text(page("Outside the index."))
    index = vault / "EchoesVault/index.md"
    index.write_text(index.read_text() + "- [[ghost]]: Gone.\n- [[api]]: API.\n- [[nothing]]:\n")
    (vault / ".echoes-vault/state.json").unlink()
    os.symlink("api.md", pages / "link.md")
    health = rt.ok("status")["health"]
    conforms(health, HEALTH)
    assert health["conflictMarkers"] == ["pages/merge.md"]
    assert health["invalidFrontmatter"] == ["merge", "nofm"]
    assert health["orphanPages"] == ["API-x"]  # a page missing from the index
    assert "ghost" in health["missingPages"] and "nothing" in health["missingPages"]
    assert health["duplicateIndexEntries"] == ["api"]
    assert health["emptyDescriptions"] == ["nothing"]
    assert health["symbolicLinks"] == ["pages/link.md"]
    assert health["storage"]["symlinks"] == ["pages/link.md"]
    assert health["indexBuildErrors"] and all(
        e.startswith(("pages/merge.md", "pages/nofm.md")) for e in health["indexBuildErrors"]
    )
    assert health["stateFile"]["exists"] is False and health["stateFile"]["valid"] is False
    assert health["stateFile"]["error"] == "state file is missing"
    untracked = [r for r in health["gitReadiness"] if r.startswith("untracked durable file: ")]
    assert "untracked durable file: EchoesVault/pages/nofm.md" in untracked
    expected = (
        sum(len(health[name]) for name in HEALTH_LISTS if name != "deprecatedSlugs") + 1
    )  # the invalid state file
    assert health["issueCount"] == expected and health["integrity"] == "attention"


def test_status_missing_blocks_and_rules_are_missing_structure(rt: Runtime, vault: Path) -> None:
    commit_all(vault)
    (vault / "AGENTS.md").write_text("# Only my own notes\n")
    (vault / "EchoesVault/.gitignore").write_text("# nothing\n")
    report = rt.ok("status")
    health = report["health"]
    assert {"AGENTS.md", ".gitignore"} <= set(health["missingStructure"]), health
    assert health["integrity"] == "attention" and report["integrity"] == "attention"


def test_status_uncommitted_files_lower_health_integrity(rt: Runtime, vault: Path) -> None:
    """The reference counts uncommitted durable files as issues; this runtime's own top-level
    `integrity` lists them as notices (a documented difference)."""
    rt.upsert("fresh.md", page("Fresh."))
    result = rt.ok("status")
    assert result["health"]["integrity"] == "attention"
    assert result["health"]["git"]["ready"] is False
    assert any("git add" in c for c in result["health"]["git"]["suggestedCommands"])


def test_status_without_state_file_or_git(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    rt = Runtime(root)
    rt.ok("init", script=RUNTIME)
    (root / ".echoes-vault/state.json").unlink()
    result = rt.ok("status")
    conforms(result, STATUS)
    assert result["state"]["initialized"] is False
    assert result["state"]["session"] == {
        "started": False,
        "saved": False,
        "lastStart": None,
        "lastSave": None,
    }
    git_ = result["health"]["git"]
    assert (git_["available"], git_["ready"], git_["runtimeIgnored"]) == (False, True, False)


def test_status_uninitialized_and_legacy(bare: Runtime, repo: Path) -> None:
    result = bare.ok("status", script=RUNTIME)
    conforms(result, STATUS)
    assert result["health"]["initialized"] is False
    assert "index.md" in result["health"]["missingStructure"]
    assert "AGENTS.md" in result["health"]["missingStructure"]
    assert result["health"]["integrity"] == "attention"
    (repo / "EchoesVault/pages").mkdir(parents=True)
    (repo / "EchoesVault/pages/a.md").write_text(page())
    health = bare.ok("status", script=RUNTIME)["health"]
    assert health["legacyVaultDetected"] is True and health["initialized"] is False
    assert ".echoes-vault.json" in health["missingStructure"]


def test_status_reports_an_older_project_runtime(rt: Runtime, vault: Path) -> None:
    project = vault / ".echoes-vault/echoes_vault.py"
    text = project.read_text()
    old = re.sub(r'^ENGINE_VERSION = "[^"]+"', 'ENGINE_VERSION = "1.0.0"', text, flags=re.M)
    project.write_text(old)
    health = rt.ok("status", script=RUNTIME)["health"]
    assert health["projectRuntime"]["current"] is False
    assert health["projectRuntime"]["engineVersion"] == "1.0.0"
    assert health["outdatedRuntime"] == [
        f"project engine 1.0.0 is older than available engine {health['engineVersion']}"
    ]


def test_status_today_entries(rt: Runtime) -> None:
    rt.ok("append", "--payload", "-", payload={"entry": "- One."})
    rt.ok("append", "--payload", "-", payload={"entry": "- Two."})
    assert rt.ok("status")["health"]["todayEntries"] == 2


# ------------------------------------------------------------------------------------------
# 1.6 hydrate; 1.8-1.13 search, append, hash, upsert, end, rebuild-index
# ------------------------------------------------------------------------------------------


def test_hydrate(rt: Runtime, vault: Path) -> None:
    result = rt.ok("hydrate")
    conforms(result, HYDRATE)
    assert result["indexRefresh"]["rebuilt"] is False and result["state"]["version"] == 4


def test_search_append_hash_upsert_end_rebuild(rt: Runtime, vault: Path) -> None:
    created = rt.upsert("alpha", page("Alpha.", body="Shared word here.\n"))
    conforms(created, UPSERT)
    assert created["action"] == "created" and absolute(created["page"])
    assert created["indexChanged"] is True and created["sha256"] == rt.hash("alpha.md")

    hashed = rt.ok("hash", "alpha")
    conforms(hashed, HASH)
    assert hashed["page"] == str(pages_dir(vault) / "alpha.md")

    found = rt.ok("search", "  shared word ")
    conforms(found, SEARCH)
    assert found["query"] == "shared word" and found["truncated"] is False
    for item in found["results"]:
        conforms(item, SEARCH_RESULT)
    assert found["results"][0]["file"] == "EchoesVault/pages/alpha.md"
    assert rt.ok("search", "shared", "--limit", "0")["truncated"] is False

    appended = rt.ok("--agent", "Codex Bot/2", "append", "--payload", "-", payload={"entry": "x"})
    conforms(appended, APPEND)
    assert appended["kind"] == "scratchpad" and appended["agent"] == "codex-bot-2"
    assert absolute(appended["dailyLog"]) and "-scratchpad-codex-bot-2-" in appended["dailyLog"]

    payload = {
        "dailySummary": "- Done.",
        "pages": [{"filename": "beta.md", "content": page("Beta.")}],
    }
    ended = rt.ok("end", "--confirm-explicit-user-end", "--payload", "-", payload=payload)
    conforms(ended, END)
    assert ended["pagesWritten"] == 1 and ended["memorySaved"] is True
    assert "-session-" in ended["dailyLog"]

    rebuilt = rt.ok("rebuild-index")
    conforms(rebuilt, REBUILD)
    assert rebuilt["rebuilt"] is False and rebuilt["pageCount"] == 2
    assert rebuilt["migratedSummaries"] == []


def test_errors_have_the_reference_keys_and_code(rt: Runtime) -> None:
    """The bundled runtime, run by the suite's interpreter (PYTHON: the one under test), as an
    adapter runs it: exit 2, nothing on stdout, and on stderr the reference's two keys plus our
    `code`."""
    process = subprocess.run(
        [PYTHON, str(RUNTIME), "--workspace", str(rt.workspace), "hash", "nope"],
        capture_output=True,
        text=True,
        env=base_env(),
        check=False,
    )
    assert process.returncode == 2 and process.stdout == "", process
    error = json.loads(process.stderr)
    assert set(error) == {"ok", "error", "code"}, error
    assert error["ok"] is False and isinstance(error["error"], str) and error["error"]
    assert isinstance(error["code"], str) and error["code"], error


@pytest.mark.parametrize("limit, count", [("0", 1), ("1000", 2)])
def test_search_limit_is_clamped(rt: Runtime, limit: str, count: int) -> None:
    rt.upsert("s.md", page("S.", body="hit\nhit\n"))
    result = rt.ok("search", "hit", "--limit", limit)
    assert len(result["results"]) == count
    assert result["truncated"] is (count == 1)
