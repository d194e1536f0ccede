"""Spec 15: legacy summaries migrate only through explicit init/migrate."""

from __future__ import annotations

from pathlib import Path

from .conftest import RUNTIME, Runtime, index_text, snapshot

LEGACY_PAGE = "---\ntype: architecture\nstack: [python]\nstatus: active\n---\n\n# Auth\n"


def legacy_vault(repo: Path, index: str, pages: dict) -> None:
    (repo / "EchoesVault/pages").mkdir(parents=True)
    (repo / "EchoesVault/daily").mkdir()
    (repo / "EchoesVault/daily/2025-01-02.md").write_text("## Old flat daily file\n")
    for name, text in pages.items():
        (repo / "EchoesVault/pages" / name).write_text(text)
    (repo / "EchoesVault/index.md").write_text(index)


def test_s15_init_migrates_summaries_from_the_legacy_index(bare: Runtime, repo: Path) -> None:
    legacy_vault(
        repo,
        "# Index\n\n- [[auth]]: Authentication   boundaries.\n- [[other]]: Not a page.\n",
        {
            "auth.md": LEGACY_PAGE,
            "ok.md": LEGACY_PAGE.replace("status: active\n", "status: active\nsummary: Fine.\n"),
        },
    )
    result = bare.ok("migrate", script=RUNTIME)
    assert result["migratedPages"] == ["EchoesVault/pages/auth.md"]
    text = (repo / "EchoesVault/pages/auth.md").read_text()
    assert text == LEGACY_PAGE.replace(
        "status: active\n", 'status: active\nsummary: "Authentication boundaries."\n'
    )
    assert index_text(repo).endswith("\n- [[auth]]: Authentication boundaries.\n- [[ok]]: Fine.\n")
    assert (repo / "EchoesVault/daily/2025-01-02.md").read_text() == "## Old flat daily file\n"
    health = bare.ok("status")
    assert health["legacy"]["flatDailyFiles"] == ["EchoesVault/daily/2025-01-02.md"]
    assert health["counts"]["dailyLogs"] == 1


def test_s15_ambiguous_or_missing_descriptions_stop_migration(bare: Runtime, repo: Path) -> None:
    legacy_vault(
        repo,
        "- [[auth]]: One.\n- [[auth]]: Two.\n",
        {"auth.md": LEGACY_PAGE, "nodesc.md": LEGACY_PAGE, "broken.md": "no frontmatter\n"},
    )
    before = snapshot(repo)
    error = bare.fail("init", script=RUNTIME, code="invalid-page")
    assert (
        "ambiguous" in error["error"]
        and "nodesc.md" in error["error"]
        and "broken.md" in error["error"]
    )
    after = snapshot(repo)
    assert {k: v for k, v in after.items() if not k.startswith(".echoes-vault")} == before


def test_s15_oversized_legacy_description_is_rejected(bare: Runtime, repo: Path) -> None:
    legacy_vault(repo, "- [[auth]]: " + "x" * 200 + "\n", {"auth.md": LEGACY_PAGE})
    error = bare.fail("init", script=RUNTIME, code="invalid-page")
    assert "160" in error["error"]
    assert (repo / "EchoesVault/pages/auth.md").read_text() == LEGACY_PAGE


def test_s15_legacy_description_of_exactly_the_limit_migrates(bare: Runtime, repo: Path) -> None:
    legacy_vault(repo, "- [[auth]]: " + "x" * 160 + "\n", {"auth.md": LEGACY_PAGE})
    assert bare.ok("init", script=RUNTIME)["migratedPages"] == ["EchoesVault/pages/auth.md"]
    assert f'summary: "{"x" * 160}"' in (repo / "EchoesVault/pages/auth.md").read_text()


def test_s15_legacy_description_one_over_the_limit_stops(bare: Runtime, repo: Path) -> None:
    legacy_vault(repo, "- [[auth]]: " + "x" * 161 + "\n", {"auth.md": LEGACY_PAGE})
    error = bare.fail("init", script=RUNTIME, code="invalid-page")
    assert "longer than 160 characters" in error["error"]
    assert (repo / "EchoesVault/pages/auth.md").read_text() == LEGACY_PAGE


def test_s15_read_paths_never_migrate(rt: Runtime, vault: Path) -> None:
    (vault / "EchoesVault/pages/auth.md").write_text(LEGACY_PAGE)
    (vault / "EchoesVault/index.md").write_text("- [[auth]]: From the legacy index.\n")
    before = snapshot(vault)
    rt.ok("status")
    rt.text("status", "--format", "card")
    assert snapshot(vault) == before
    rt.fail("hydrate", code="invalid-page")
    rt.fail("rebuild-index", code="invalid-page")
    assert (vault / "EchoesVault/pages/auth.md").read_text() == LEGACY_PAGE
    rt.ok("init")
    assert "summary:" in (vault / "EchoesVault/pages/auth.md").read_text()


def test_s15_legacy_marker_is_upgraded_by_init(bare: Runtime, repo: Path) -> None:
    legacy_vault(repo, "- [[auth]]: Auth.\n", {"auth.md": LEGACY_PAGE})
    (repo / "EchoesVault/.echoes-vault.json").write_text('{"schemaVersion": 2}\n')
    bare.fail(
        "append", "--payload", "-", payload={"entry": "- x"}, script=RUNTIME, code="not-initialized"
    )
    bare.ok("init", script=RUNTIME)
    assert b'"protocolVersion": "1.0.0"' in (repo / "EchoesVault/.echoes-vault.json").read_bytes()


def test_s15_upgrade_never_migrates(rt: Runtime, vault: Path, bare: Runtime) -> None:
    (vault / "EchoesVault/pages/auth.md").write_text(LEGACY_PAGE)
    (vault / "EchoesVault/index.md").write_text("- [[auth]]: From the legacy index.\n")
    result = rt.ok("upgrade")
    assert result["migratedPages"] == [] and result["indexRefresh"]["status"] == "blocked"
    assert (vault / "EchoesVault/pages/auth.md").read_text() == LEGACY_PAGE


def test_s15_upgrade_refuses_a_legacy_vault(bare: Runtime, repo: Path) -> None:
    legacy_vault(repo, "- [[auth]]: Auth.\n", {"auth.md": LEGACY_PAGE})
    before = snapshot(repo)
    bare.fail("upgrade", script=RUNTIME, code="not-initialized")
    assert snapshot(repo) == before
