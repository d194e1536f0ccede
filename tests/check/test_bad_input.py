"""Bad input never crashes the command and never stops it at the first problem."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CHECK_VAULT, base_env, by_path, codes_of, json_report, run_check, write_page


def _diagnostic(report: dict, path: str, code: str) -> dict:
    return next(d for d in report["diagnostics"] if d["path"] == path and d["code"] == code)


def test_binary_and_non_utf8_pages_are_ev401_and_the_rest_is_still_checked(workspace: Path) -> None:
    pages = workspace / "EchoesVault" / "pages"
    (pages / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01")
    report = json_report(cwd=workspace)
    binary = _diagnostic(report, "EchoesVault/pages/image.md", "EV401")
    assert binary["message"] == "file is a binary file (contains NUL bytes), not UTF-8 text"
    latin = _diagnostic(report, "EchoesVault/pages/latin1.md", "EV401")
    assert latin["message"] == "file is not valid UTF-8 (byte 92)"
    assert (latin["line"], latin["column"]) == (1, 1)
    # Every other problem of the vault is still reported.
    assert len(report["diagnostics"]) == 28


def test_a_fifo_named_like_a_page_is_reported_not_read(workspace: Path) -> None:
    """A FIFO would block any reader; it stands in for an unreadable file and works as root."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    fifo = workspace / "EchoesVault" / "pages" / "pipe.md"
    os.mkfifo(fifo)
    process = run_check("--format", "json", cwd=workspace, timeout=20)
    report = json.loads(process.stdout)
    found = _diagnostic(report, "EchoesVault/pages/pipe.md", "EV401")
    assert "not a regular file" in found["message"]
    assert process.returncode == 1


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="running as root: file permissions are not enforced, so chmod 000 cannot make a file unreadable",
)
def test_an_unreadable_page_is_ev401(workspace: Path) -> None:
    page = workspace / "EchoesVault" / "pages" / "session-tokens.md"
    page.chmod(0)
    try:
        report = json_report(cwd=workspace)
    finally:
        page.chmod(0o644)
    found = _diagnostic(report, "EchoesVault/pages/session-tokens.md", "EV401")
    assert found["message"] == "file cannot be read: Permission denied"


def test_a_directory_named_like_a_page(workspace: Path) -> None:
    odd = workspace / "EchoesVault" / "pages" / "folder.md"
    odd.mkdir()
    (odd / "inside.md").write_text("x\n", encoding="utf-8")
    report = json_report(cwd=workspace)
    assert by_path(report)["EchoesVault/pages/folder.md/inside.md"] == ["EV502"]


def test_symlink_loops_are_reported_and_do_not_hang(workspace: Path) -> None:
    pages = workspace / "EchoesVault" / "pages"
    os.symlink("loop.md", pages / "loop.md")
    os.symlink(".", pages / "again")
    os.symlink("../..", workspace / "EchoesVault" / "raw" / "up")
    process = run_check("--format", "json", cwd=workspace, timeout=20)
    report = json.loads(process.stdout)
    paths = by_path(report)
    assert paths["EchoesVault/pages/loop.md"] == ["EV503"]
    assert paths["EchoesVault/pages/again"] == ["EV503"]
    assert paths["EchoesVault/raw/up"] == ["EV503"]
    assert _diagnostic(report, "EchoesVault/pages/loop.md", "EV503")["message"] == (
        "symbolic link inside the vault (points to loop.md)"
    )
    named = run_check("--format", "concise", "EchoesVault/pages/loop.md", cwd=workspace)
    assert named.stdout.startswith("EchoesVault/pages/loop.md:1:1: EV503 [error]")


def test_missing_vault_exits_two_with_a_clear_message(tmp_path: Path) -> None:
    process = run_check(cwd=tmp_path)
    assert process.returncode == 2
    assert process.stdout == ""
    assert "no EchoesVault/ folder found at or above" in process.stderr
    assert "run `echoes-lsp init` in the project" in process.stderr


def test_missing_path_exits_two_but_the_others_are_checked(workspace: Path) -> None:
    process = run_check(
        "--format", "concise", "nope.md", "EchoesVault/pages/no-frontmatter.md", cwd=workspace
    )
    assert process.returncode == 2
    assert "nope.md: no such file or folder" in process.stderr
    assert process.stdout.startswith("EchoesVault/pages/no-frontmatter.md:1:1: EV100 [error]")


def test_vault_that_is_a_file_exits_two(tmp_path: Path) -> None:
    (tmp_path / "EchoesVault").write_text("not a folder\n", encoding="utf-8")
    process = run_check(str(tmp_path), cwd=tmp_path)
    assert process.returncode == 2
    assert "EchoesVault is not a readable folder" in process.stderr


def test_empty_vault_exits_zero_with_no_pages(tmp_path: Path) -> None:
    vault = tmp_path / "EchoesVault"
    vault.mkdir()
    shutil.copyfile(
        CHECK_VAULT / "EchoesVault" / ".echoes-vault.json", vault / ".echoes-vault.json"
    )
    process = run_check(cwd=tmp_path)
    assert process.returncode == 0
    assert "EchoesVault: no pages in pages/ (empty vault)" in process.stdout
    assert re.search(
        r"\nChecked 0 files in (?:\d+ms|<1ms|\d+\.\d\ds): no problems\.\n$", process.stdout
    )
    as_json = run_check("--format", "json", cwd=tmp_path)
    assert json.loads(as_json.stdout)["notes"] == ["EchoesVault: no pages in pages/ (empty vault)"]
    assert "no pages" in as_json.stderr


def test_vault_without_marker_is_read_only_warning(tmp_path: Path) -> None:
    vault = tmp_path / "EchoesVault"
    write_page(vault, "lonely", "Alone in a vault without a marker.")
    report = json_report(cwd=tmp_path)
    marker = _diagnostic(report, "EchoesVault/.echoes-vault.json", "EV700")
    assert marker["severity"] == "warning"
    assert marker["message"].startswith("marker `.echoes-vault.json` is missing")
    assert run_check(cwd=tmp_path).returncode == 0
    assert run_check("--fail-on", "warning", cwd=tmp_path).returncode == 1


def test_empty_and_odd_pages(workspace: Path) -> None:
    pages = workspace / "EchoesVault" / "pages"
    (pages / "empty.md").write_bytes(b"")
    (pages / "bom.md").write_bytes(
        "\ufeff---\r\ntype: note\r\nstack: []\r\nstatus: active\r\nsummary: Saved with a BOM and CRLF.\r\n---\r\n".encode()
    )
    (pages / "Session-Tokens.md").write_text(
        (pages / "session-tokens.md").read_text(encoding="utf-8"), encoding="utf-8"
    )
    report = json_report(cwd=workspace)
    paths = by_path(report)
    assert paths["EchoesVault/pages/empty.md"] == ["EV100"]
    # The runtime reads the mark as text before the fence (U+FEFF is not whitespace), so the
    # page is reported as the runtime would refuse it, with the mark named and underlined.
    assert paths["EchoesVault/pages/bom.md"] == ["EV100"]
    bom = _diagnostic(report, "EchoesVault/pages/bom.md", "EV100")
    assert "byte-order mark (U+FEFF)" in bom["message"]
    assert (bom["line"], bom["column"], bom["endLine"], bom["endColumn"]) == (1, 1, 1, 2)
    assert (
        "byte-order mark"
        not in _diagnostic(report, "EchoesVault/pages/empty.md", "EV100")["message"]
    )
    collision = _diagnostic(report, "EchoesVault/pages/Session-Tokens.md", "EV501")
    assert collision["related"][0]["path"] == "EchoesVault/pages/session-tokens.md"
    assert "EV501" in paths["EchoesVault/pages/session-tokens.md"]
    text = run_check(
        "--select", "EV501", "EchoesVault/pages/Session-Tokens.md", cwd=workspace
    ).stdout
    assert (
        "  = note: EchoesVault/pages/session-tokens.md:1:1: collides with pages/session-tokens.md"
        in text
    )


def test_paths_outside_the_vault_are_skipped_with_a_note(workspace: Path) -> None:
    (workspace / "README.md").write_text("# readme\n", encoding="utf-8")
    process = run_check("README.md", cwd=workspace)
    assert process.returncode == 0
    assert "README.md: not inside EchoesVault/, skipped" in process.stderr
    assert "nothing to check" in process.stderr
    hidden = workspace / "EchoesVault" / ".obsidian"
    hidden.mkdir()
    (hidden / "workspace.md").write_text("<<<<<<< HEAD\n", encoding="utf-8")
    assert "workspace.md" not in run_check(cwd=workspace).stdout
    named = run_check("EchoesVault/.obsidian/workspace.md", cwd=workspace)
    assert named.returncode == 0 and "excluded or not a vault file, skipped" in named.stdout


def test_exclude_globs(workspace: Path) -> None:
    report = json_report("--exclude", "pages/latin1.md,daily/*", cwd=workspace)
    paths = by_path(report)
    assert "EchoesVault/pages/latin1.md" not in paths
    assert not any(p.startswith("EchoesVault/daily/") for p in paths)
    assert codes_of(report).count("EV400") == 3


def test_file_names_that_are_not_utf8(workspace: Path) -> None:
    pages = os.fsencode(workspace / "EchoesVault" / "pages")
    try:
        with open(os.path.join(pages, b"caf\xe9.md"), "wb") as handle:
            handle.write(b"no frontmatter\n")
    except OSError:
        pytest.skip("this file system accepts only UTF-8 file names")
    for fmt in ("text", "concise", "github", "json", "sarif"):
        process = subprocess.run(
            [sys.executable, "-m", "echoes_lsp", "check", "--format", fmt],
            cwd=workspace,
            env=base_env(),
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert process.returncode == 1, fmt
        assert b"Traceback" not in process.stderr
        out = process.stdout.decode("utf-8")  # strict: valid UTF-8 whatever the file names
        assert "caf\ufffd.md" in out or "caf%E9.md" in out, fmt
    sarif = json.loads(out)
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    ]
    assert "EchoesVault/pages/caf%E9.md" in uris
