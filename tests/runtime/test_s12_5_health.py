"""Spec 12.5 inspect/status: strictly read-only health."""

from __future__ import annotations

import os
from pathlib import Path

from .conftest import RUNTIME, Runtime, git, page, pages_dir, snapshot


def commit_all(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "vault")


def test_s12_5_healthy_committed_vault(rt: Runtime, vault: Path) -> None:
    rt.upsert("a.md", page("A."))
    rt.upsert("old.md", page("Old.", status="deprecated"))
    rt.ok("append", "--payload", "-", payload={"entry": "- x"})
    commit_all(vault)
    health = rt.ok("inspect")
    assert health["integrity"] == "healthy", health["issues"]
    assert health["issueCount"] == 0
    assert health["workspace"] == str(vault) and health["vault"] == str(vault / "EchoesVault")
    assert health["counts"] == {"pages": 2, "dailyLogs": 1, "deprecatedPages": 1, "indexTopics": 2}
    assert health["indexRefresh"]["status"] == "current"
    assert all(check["ok"] for check in health["structure"]["checks"])
    assert health["git"]["ready"] is True and health["git"]["suggestedCommands"] == []
    assert health["runtime"]["project"]["compatible"] is True
    assert health["totals"]["files"] >= 5 and health["totals"]["markdownFiles"] >= 4
    assert health["totals"]["bytes"] > 0 and health["totals"]["latestModified"]
    assert health["scaleAlert"] is None
    assert rt.ok("status") == health


def test_s12_5_status_is_strictly_read_only(rt: Runtime, vault: Path) -> None:
    """Nothing is created, locked or rewritten, even with stale, broken and legacy content."""
    rt.upsert("a.md", page("A."))
    (pages_dir(vault) / "legacy.md").write_text("---\ntype: a\nstack: []\nstatus: active\n---\n")
    (vault / "EchoesVault/index.md").write_text("# old\n- [[legacy]]: From the old index.\n")
    (vault / ".echoes-vault/state.json").unlink()
    (vault / ".echoes-vault/index-cache.json").unlink(missing_ok=True)
    (vault / ".opencode/commands/echoes-end.md").unlink()
    before = snapshot(vault)
    for args in (
        ("inspect",),
        ("status",),
        ("status", "--format", "card"),
        ("inspect", "--format", "card"),
    ):
        for bundled in (False, True):
            result = rt.run(*args, bundled=bundled)
            assert result.code == 0 and "attention" in result.stdout, (args, bundled, result)
    assert snapshot(vault) == before


def test_s12_5_detects_problems(rt: Runtime, vault: Path, tmp_path: Path) -> None:
    rt.upsert("a.md", page("A."))
    commit_all(vault)
    (pages_dir(vault) / "bad.md").write_text("---\ntype: a\n---\n")
    (vault / "EchoesVault/daily/2026-01-01").mkdir(parents=True)
    (vault / "EchoesVault/daily/2026-01-01/x.md").write_text(
        "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> other\n"
    )
    (vault / "EchoesVault/raw/latin1.md").write_bytes(b"caf\xe9\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    os.symlink(outside, vault / "EchoesVault/assets/link.txt")
    (vault / "EchoesVault/index.md").write_text(
        "# EchoesVault Index\n\n## Pages\n\n- [[a]]: A.\n- [[a]]: A.\n- [[ghost]]: Gone.\n"
    )
    health = rt.ok("status")
    kinds = {issue["kind"] for issue in health["issues"]}
    assert {
        "invalid-page",
        "conflict-marker",
        "unreadable",
        "symlink",
        "index-duplicate",
        "index-orphan",
    } <= kinds
    assert health["invalidPages"][0]["file"] == "EchoesVault/pages/bad.md"
    assert health["conflictMarkers"] == [
        {"file": "EchoesVault/daily/2026-01-01/x.md", "lines": [1, 3, 5]}
    ]
    assert health["symlinks"] == ["EchoesVault/assets/link.txt"]
    assert health["unreadable"] == [
        {"file": "EchoesVault/raw/latin1.md", "error": "not valid UTF-8"}
    ]
    assert health["index"]["duplicates"] == ["a"] and health["index"]["orphaned"] == ["ghost"]
    assert health["integrity"] == "attention" and health["issueCount"] == len(health["issues"])


def test_s12_5_missing_index_entry_and_structure(rt: Runtime, vault: Path) -> None:
    rt.upsert("a.md", page("A."))
    (pages_dir(vault) / "b.md").write_text(page("B."))
    (vault / "EchoesVault/raw").rmdir()
    health = rt.ok("status")
    assert health["index"]["missing"] == ["b"]
    assert "EchoesVault/raw" in health["structure"]["missing"]
    assert any(
        i["kind"] == "structure" and i["path"] == "EchoesVault/raw" for i in health["issues"]
    )


def test_s12_5_git_readiness_suggests_commands_without_running_them(
    rt: Runtime, vault: Path
) -> None:
    rt.upsert("a.md", page("A."))
    commit_all(vault)
    rt.upsert("new.md", page("New."))
    (vault / ".git/info/exclude").write_text("EchoesVault/pages/hidden.md\n")
    rt.upsert("hidden.md", page("Hidden."))
    git(vault, "add", "-f", ".echoes-vault/state.json")
    before = git(vault, "status", "--porcelain")
    health = rt.ok("status")
    assert health["git"]["untrackedDurable"] == ["EchoesVault/pages/new.md"]
    assert health["git"]["ignoredDurable"] == ["EchoesVault/pages/hidden.md"]
    assert health["git"]["trackedLocalOnly"] == [".echoes-vault/state.json"]
    assert health["git"]["suggestedCommands"] == [
        "git add -- EchoesVault/pages/new.md",
        "git add -f -- EchoesVault/pages/hidden.md",
        "git rm --cached -- .echoes-vault/state.json",
    ]
    kinds = {i["kind"] for i in health["issues"]}
    assert {"git-ignored-durable", "git-tracked-local"} <= kinds
    assert git(vault, "status", "--porcelain") == before
    card = rt.text("status", "--format", "card")
    assert "git add -f -- EchoesVault/pages/hidden.md" in card and "not run" in card


def test_s12_5_card_for_a_healthy_vault(rt: Runtime, vault: Path) -> None:
    rt.upsert("a.md", page("A."))
    commit_all(vault)
    card = rt.text("status", "--format", "card")
    assert card.startswith("## EchoesVault status\n")
    assert "healthy" in card and "**Pages:** 1" in card
    assert "\n- **Git:** ready\n" in card  # everything durable committed, nothing local tracked


def test_s12_5_legacy_vault_card(bare: Runtime, repo: Path) -> None:
    (repo / "EchoesVault/pages").mkdir(parents=True)
    (repo / "EchoesVault/pages/old.md").write_text("---\ntype: a\nstack: []\nstatus: active\n---\n")
    (repo / "EchoesVault/index.md").write_text("- [[old]]: Old description.\n")
    before = snapshot(repo)
    card = bare.text("status", "--format", "card", script=RUNTIME)
    assert "Legacy vault detected" in card and "init" in card and "migrate" in card
    health = bare.ok("inspect", script=RUNTIME)
    assert health["vaultState"] == "legacy"
    assert health["legacy"]["pagesMissingSummary"] == ["EchoesVault/pages/old.md"]
    assert snapshot(repo) == before


def test_s12_5_uninitialized_workspace(bare: Runtime, repo: Path) -> None:
    before = snapshot(repo)
    health = bare.ok("status", script=RUNTIME)
    assert health["vaultState"] == "uninitialized" and health["integrity"] == "attention"
    assert "init" in bare.text("status", "--format", "card", script=RUNTIME)
    assert snapshot(repo) == before
