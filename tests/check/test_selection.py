"""Exit codes, --select/--ignore/--fail-on, and configuration precedence."""

from __future__ import annotations

from pathlib import Path

from .conftest import by_path, codes_of, json_report, run_check, write_page


def test_exit_zero_when_clean(clean_workspace: Path) -> None:
    process = run_check(cwd=clean_workspace)
    assert process.returncode == 0, process.stdout
    assert process.stdout.endswith("no problems.\n")
    assert process.stdout.startswith("Checked 3 files in ")


def test_exit_one_on_errors_and_zero_below_fail_on(workspace: Path) -> None:
    assert run_check(cwd=workspace).returncode == 1
    only_warnings = run_check("--select", "EV30,EV502", cwd=workspace)
    assert only_warnings.returncode == 0
    assert "EV300" in only_warnings.stdout
    assert (
        run_check("--select", "EV30,EV502", "--fail-on", "warning", cwd=workspace).returncode == 1
    )
    hints = run_check("--select", "EV311", cwd=workspace)
    assert hints.returncode == 0 and "EV311" in hints.stdout
    assert run_check("--select", "EV311", "--fail-on", "information", cwd=workspace).returncode == 0
    assert run_check("--select", "EV311", "--fail-on", "hint", cwd=workspace).returncode == 1


def test_usage_errors_exit_two(workspace: Path) -> None:
    bad_flag = run_check("--no-such-flag", cwd=workspace)
    assert bad_flag.returncode == 2 and "unrecognized arguments" in bad_flag.stderr
    bad_code = run_check("--select", "EV9", cwd=workspace)
    assert bad_code.returncode == 2
    assert "'EV9' is not a diagnostic code or code prefix" in bad_code.stderr
    assert run_check("--fail-on", "fatal", cwd=workspace).returncode == 2
    assert run_check("--format", "xml", cwd=workspace).returncode == 2
    assert run_check("--watch", "--fix", cwd=workspace).returncode == 2
    assert run_check("--stdin-filename", "x.md", "EchoesVault", cwd=workspace).returncode == 2
    assert run_check("--help", cwd=workspace).returncode == 0


def test_select_and_ignore_take_codes_and_prefixes(workspace: Path) -> None:
    selected = json_report("--select", "EV3", cwd=workspace)
    assert set(codes_of(selected)) == {"EV300", "EV301", "EV302", "EV303", "EV310", "EV311"}
    narrower = json_report("--select", "EV30", cwd=workspace)
    assert set(codes_of(narrower)) == {"EV300", "EV301", "EV302", "EV303"}
    mixed = json_report("--select", "ev1, EV402,EV600", cwd=workspace)
    assert set(codes_of(mixed)) == {"EV100", "EV101", "EV102", "EV103", "EV104", "EV105", "EV600"}
    ignored = json_report("--ignore", "EV1,EV3,EV4", cwd=workspace)
    assert set(codes_of(ignored)) == {"EV200", "EV201", "EV500", "EV502", "EV504", "EV600"}
    both = json_report("--select", "EV3", "--ignore", "EV30", cwd=workspace)
    assert set(codes_of(both)) == {"EV310", "EV311"}


def test_pyproject_config_applies(workspace: Path) -> None:
    (workspace / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n\n[tool.echoes-lsp]\nselect = ["EV3"]\nignore = ["EV311"]\n'
        'fail-on = "warning"\nexclude = ["daily/*"]\n\n[tool.echoes-lsp.severity]\nEV300 = "error"\n',
        encoding="utf-8",
    )
    report = json_report(cwd=workspace)
    assert set(codes_of(report)) == {"EV300", "EV301", "EV302", "EV303", "EV310"}
    assert all(not path.startswith("EchoesVault/daily/") for path in by_path(report))
    assert {d["severity"] for d in report["diagnostics"] if d["code"] == "EV300"} == {"error"}
    assert report["summary"]["failOn"] == "warning"
    assert run_check(cwd=workspace).returncode == 1


def test_precedence_flags_over_project_file_over_pyproject(workspace: Path) -> None:
    (workspace / "pyproject.toml").write_text(
        '[tool.echoes-lsp]\nselect = ["EV3"]\nfail-on = "hint"\n'
        '[tool.echoes-lsp.severity]\nEV300 = "error"\nEV303 = "off"\n',
        encoding="utf-8",
    )
    (workspace / ".echoes-lsp.toml").write_text(
        'select = ["EV30"]\n[severity]\nEV300 = "hint"\n', encoding="utf-8"
    )
    report = json_report(cwd=workspace)
    # select from .echoes-lsp.toml; severity merged per code (EV300 from the project file, EV303
    # still off from pyproject.toml); fail-on from pyproject.toml.
    assert set(codes_of(report)) == {"EV300", "EV301", "EV302"}
    assert {d["severity"] for d in report["diagnostics"] if d["code"] == "EV300"} == {"hint"}
    assert report["summary"]["failOn"] == "hint"
    assert run_check(cwd=workspace).returncode == 1
    flags = json_report("--select", "EV303,EV31", "--fail-on", "error", cwd=workspace)
    assert set(codes_of(flags)) == {"EV310", "EV311"}  # EV303 is off by severity
    assert flags["summary"]["failOn"] == "error"
    assert run_check("--select", "EV303,EV31", "--fail-on", "error", cwd=workspace).returncode == 0
    isolated = json_report("--isolated", cwd=workspace)
    assert "EV100" in codes_of(isolated) and "EV303" in codes_of(isolated)


def test_secrets_can_be_turned_off(workspace: Path) -> None:
    assert "EV600" in codes_of(json_report(cwd=workspace))
    (workspace / ".echoes-lsp.toml").write_text("secrets = false\n", encoding="utf-8")
    assert "EV600" not in codes_of(json_report(cwd=workspace))


def test_bad_config_exits_two_with_the_file_named(workspace: Path) -> None:
    (workspace / ".echoes-lsp.toml").write_text('select = ["EV3"\n', encoding="utf-8")
    broken = run_check(cwd=workspace)
    assert broken.returncode == 2 and ".echoes-lsp.toml: not valid TOML" in broken.stderr
    (workspace / ".echoes-lsp.toml").write_text('fail-on = "sometimes"\n', encoding="utf-8")
    wrong = run_check(cwd=workspace)
    assert wrong.returncode == 2 and "`fail-on` must be one of" in wrong.stderr
    (workspace / ".echoes-lsp.toml").write_text("colour = true\n", encoding="utf-8")
    unknown = run_check(cwd=workspace)
    assert unknown.returncode == 2 and "unknown key `colour`" in unknown.stderr
    assert run_check("--isolated", cwd=workspace).returncode == 1


def test_named_files_are_checked_in_vault_context(workspace: Path) -> None:
    report = json_report("EchoesVault/pages/auth-architecture.md", cwd=workspace)
    assert set(by_path(report)) == {"EchoesVault/pages/auth-architecture.md"}
    # session-tokens exists in the vault, so its link resolves; audit-trail does not.
    messages = [d["message"] for d in report["diagnostics"]]
    assert any("audit-trail" in m for m in messages)
    assert not any("`session-tokens` in pages" in m for m in messages)
    assert report["summary"]["filesChecked"] == 1


def test_folder_and_vault_paths(workspace: Path) -> None:
    daily = json_report("EchoesVault/daily", cwd=workspace)
    assert set(by_path(daily)) == {
        "EchoesVault/daily/2026-01-15.md",
        "EchoesVault/daily/2026-01-15/20260115T101500000000Z-scratchpad-codex-1a2b3c4d.md",
    }
    whole = json_report("EchoesVault", cwd=workspace)
    assert whole["summary"]["filesChecked"] == 19
    named_workspace = json_report(".", cwd=workspace)
    assert named_workspace["summary"]["filesChecked"] == 19
    from_inside = json_report(".", cwd=workspace / "EchoesVault" / "pages")
    assert from_inside["summary"]["filesChecked"] == 16  # 14 pages, notes.txt, drafts/idea.md
    assert {"conflicted.md", "drafts/idea.md"} <= set(by_path(from_inside))


def test_no_path_means_the_workspace_of_the_working_directory(workspace: Path) -> None:
    deep = workspace / "EchoesVault" / "daily" / "2026-01-15"
    report = json_report(cwd=deep)
    # Running from deep inside still checks the whole vault. Paths below the working directory
    # are shown relative to it, the others in full.
    assert report["summary"]["filesChecked"] == 19
    paths = by_path(report)
    assert "20260115T101500000000Z-scratchpad-codex-1a2b3c4d.md" in paths
    assert str(workspace / "EchoesVault" / "pages" / "conflicted.md") in paths


def test_vault_links_resolve_case_insensitively(clean_workspace: Path) -> None:
    write_page(
        clean_workspace / "EchoesVault",
        "caps",
        "Links in capitals.",
        "\n[[SESSION-TOKENS]] [[Overview#nope]]\n",
    )
    report = json_report("EchoesVault/pages/caps.md", cwd=clean_workspace)
    assert codes_of(report) == ["EV303"]
