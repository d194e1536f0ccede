"""Spec 5 (layout, ignore rules, managed adapters), 12.2 init and 12.4 configure-agents."""

from __future__ import annotations

from pathlib import Path

from .conftest import RUNTIME, Runtime, git

ADAPTERS = [
    ".claude/skills/echoes-vault/SKILL.md",
    ".opencode/skills/echoes-vault/SKILL.md",
    ".opencode/commands/echoes-init.md",
    ".opencode/commands/echoes-start.md",
    ".opencode/commands/echoes-status.md",
    ".opencode/commands/echoes-end.md",
]


def test_s5_init_creates_the_managed_layout(bare: Runtime, repo: Path) -> None:
    result = bare.ok("init")
    for rel in [
        "EchoesVault/.echoes-vault.json",
        "EchoesVault/.gitignore",
        "EchoesVault/AGENT_PROTOCOL.md",
        "EchoesVault/index.md",
        ".echoes-vault/.gitignore",
        ".echoes-vault/echoes_vault.py",
        ".echoes-vault/state.json",
        "AGENTS.md",
        "CLAUDE.md",
        *ADAPTERS,
    ]:
        assert (repo / rel).is_file(), rel
    for rel in ["pages", "daily", "assets", "raw"]:
        assert (repo / "EchoesVault" / rel).is_dir()
    assert not (repo / ".echoes-vault" / "lock").exists()
    assert result["ok"] is True
    for key in ("created", "vault", "index", "indexRefresh", "agentAdapters", "state"):
        assert key in result
    assert "EchoesVault/.echoes-vault.json" in result["createdPaths"]
    assert result["vault"] == str(repo / "EchoesVault")
    assert (repo / ".echoes-vault/echoes_vault.py").read_bytes() == RUNTIME.read_bytes()


def test_s5_2_ignore_files_exact_bytes(bare: Runtime, repo: Path) -> None:
    bare.ok("init")
    # the spec's rules, then ours: writers' temporary files, the `end` journal, the memory of
    # recent requests and the versions a roll-forward kept aside (recovery.md)
    assert (repo / "EchoesVault/.gitignore").read_bytes() == (
        b"# Generated locally by EchoesVault\n/index.md\n*.echoes-tmp\n"
    )
    assert (repo / ".echoes-vault/.gitignore").read_bytes() == (
        b"# EchoesVault runtime files\n/state.json\n/lock\n/index-cache.json\n"
        b"/end-journal.json\n/requests.json\n/kept/\n*.echoes-tmp\n"
    )


def test_s5_2_existing_ignore_files_are_preserved_and_completed(bare: Runtime, repo: Path) -> None:
    (repo / "EchoesVault").mkdir()
    (repo / ".echoes-vault").mkdir()
    (repo / "EchoesVault/.gitignore").write_text("/scratch/\n/index.md\n")
    (repo / ".echoes-vault/.gitignore").write_text("# mine\n/lock")
    bare.ok("init")
    assert (repo / "EchoesVault/.gitignore").read_text() == "/scratch/\n/index.md\n*.echoes-tmp\n"
    assert (repo / ".echoes-vault/.gitignore").read_text() == (
        "# mine\n/lock\n/state.json\n/index-cache.json\n/end-journal.json\n/requests.json\n"
        "/kept/\n*.echoes-tmp\n"
    )


def test_s5_2_local_files_are_ignored_by_git(rt: Runtime, vault: Path) -> None:
    rt.text("start")
    ignored = git(vault, "status", "--porcelain", "--ignored")
    assert "EchoesVault/index.md" in ignored
    assert ".echoes-vault/state.json" in ignored
    assert "index.md" not in git(vault, "status", "--porcelain")


def test_s5_3_root_block_preserves_outside_content(bare: Runtime, repo: Path) -> None:
    (repo / "AGENTS.md").write_text("# My agents\n\nKeep tabs.\n")
    (repo / "CLAUDE.md").write_text(
        "Before\n<!-- echoes-vault:start -->\nold\n<!-- echoes-vault:end -->\nAfter\n"
    )
    bare.ok("init")
    agents = (repo / "AGENTS.md").read_text()
    claude = (repo / "CLAUDE.md").read_text()
    assert agents.startswith("# My agents\n\nKeep tabs.\n\n<!-- echoes-vault:start -->\n")
    assert claude.startswith("Before\n<!-- echoes-vault:start -->\n")
    assert claude.endswith("<!-- echoes-vault:end -->\nAfter\n")
    assert "\nold\n" not in claude
    for text in (agents, claude):
        assert text.count("<!-- echoes-vault:start -->") == 1
        assert text.count("<!-- echoes-vault:end -->") == 1
    bare.ok("configure-agents")
    assert (repo / "AGENTS.md").read_text() == agents


def test_s5_3_duplicate_blocks_collapse_to_exactly_one(bare: Runtime, repo: Path) -> None:
    block = "<!-- echoes-vault:start -->\nx\n<!-- echoes-vault:end -->\n"
    (repo / "AGENTS.md").write_text("A\n" + block + "B\n" + block + "C\n")
    bare.ok("init")
    text = (repo / "AGENTS.md").read_text()
    assert text.count("<!-- echoes-vault:start -->") == 1
    assert text.startswith("A\n<!-- echoes-vault:start -->")
    assert "\nB\n" in text and text.endswith("C\n")


def test_s5_3_malformed_block_is_preserved_and_reported(bare: Runtime, repo: Path) -> None:
    original = "Mine\n<!-- echoes-vault:start -->\nunterminated\n"
    (repo / "AGENTS.md").write_text(original)
    result = bare.ok("init")
    assert (repo / "AGENTS.md").read_text() == original
    assert any(c["path"] == "AGENTS.md" for c in result["agentAdapters"]["conflicts"])
    health = bare.ok("status")
    assert any(
        i["kind"] == "adapter-conflict" and i.get("path") == "AGENTS.md" for i in health["issues"]
    )


def test_s5_3_adapters_delegate_to_the_project_runtime(rt: Runtime, vault: Path) -> None:
    for rel in [*ADAPTERS, "AGENTS.md", "CLAUDE.md", "EchoesVault/AGENT_PROTOCOL.md"]:
        text = (vault / rel).read_text()
        assert "python3 .echoes-vault/echoes_vault.py --workspace ." in text, rel
        assert (
            "EchoesVault/index.md" not in text
            or "Never edit" in text
            or "never edit" in text.lower()
        )
    end = (vault / ".opencode/commands/echoes-end.md").read_text()
    assert "--confirm-explicit-user-end" in end and "explicit" in end


def test_s12_4_user_owned_adapter_is_preserved_and_reported(rt: Runtime, vault: Path) -> None:
    mine = vault / ".opencode/commands/echoes-start.md"
    mine.write_text("my own start command\n")
    result = rt.ok("configure-agents")
    assert mine.read_text() == "my own start command\n"
    assert {"path": ".opencode/commands/echoes-start.md"}.items() <= result["agentAdapters"][
        "conflicts"
    ][0].items()
    health = rt.ok("status")
    assert health["adapters"]["conflicts"][0]["path"] == ".opencode/commands/echoes-start.md"
    assert health["integrity"] == "attention"


def test_s12_4_generated_adapters_are_repaired(rt: Runtime, vault: Path) -> None:
    skill = vault / ".claude/skills/echoes-vault/SKILL.md"
    original = skill.read_text()
    skill.write_text(original.replace("Follow", "Edited"))
    (vault / ".opencode/commands/echoes-end.md").unlink()
    result = rt.ok("configure-agents")
    assert skill.read_text() == original
    assert (vault / ".opencode/commands/echoes-end.md").is_file()
    assert ".claude/skills/echoes-vault/SKILL.md" in result["agentAdapters"]["written"]


def test_s12_4_configure_agents_requires_an_initialized_vault(bare: Runtime, repo: Path) -> None:
    bare.fail("configure-agents", code="not-initialized", script=RUNTIME)
    assert list(repo.iterdir()) == [repo / ".git"]


def test_s15_legacy_opencode_skill_is_redirected_unknown_one_preserved(
    bare: Runtime, repo: Path
) -> None:
    legacy = repo / ".opencode/skills/echoes-append/SKILL.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(
        "---\nname: echoes-append\n---\nAppend to EchoesVault/daily/2026-01-01.md directly.\n"
    )
    unknown = repo / ".opencode/skills/echoes-search/SKILL.md"
    unknown.parent.mkdir(parents=True)
    unknown.write_text("my search notes\n")
    result = bare.ok("init")
    redirected = legacy.read_text()
    assert "python3 .echoes-vault/echoes_vault.py --workspace . append --payload -" in redirected
    assert "daily/2026-01-01.md" not in redirected
    assert ".opencode/skills/echoes-append/SKILL.md" in result["agentAdapters"]["legacyReplaced"]
    assert unknown.read_text() == "my search notes\n"
    assert any(
        c["path"] == ".opencode/skills/echoes-search/SKILL.md"
        for c in result["agentAdapters"]["conflicts"]
    )


def test_s12_2_init_is_idempotent(rt: Runtime, vault: Path) -> None:
    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file() and ".git" not in p.parts}
    result = rt.ok("init")
    assert result["createdPaths"] == []
    assert result["agentAdapters"]["written"] == []
    after = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file() and ".git" not in p.parts}
    changed = {str(p.relative_to(vault)) for p in after if before.get(p) != after[p]}
    assert changed <= {".echoes-vault/state.json", ".echoes-vault/index-cache.json"}


def test_s12_2_init_preserves_existing_pages(rt: Runtime, vault: Path) -> None:
    from .conftest import page

    rt.upsert("keep.md", page("Kept across init."))
    rt.ok("init")
    assert "- [[keep]]: Kept across init." in (vault / "EchoesVault/index.md").read_text()
