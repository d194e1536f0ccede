"""--stdin-filename: an unsaved buffer checked in the context of its vault."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import by_path, codes_of, run_check


def _json(process) -> dict:  # type: ignore[no-untyped-def]
    return json.loads(process.stdout)


def test_buffer_replaces_the_file_on_disk(workspace: Path) -> None:
    page = workspace / "EchoesVault" / "pages" / "session-tokens.md"
    on_disk = page.read_bytes()
    buffer = page.read_text(encoding="utf-8") + "\nSee [[nowhere]] and [[legacy-login]].\n"
    process = run_check(
        "--format", "json", "--stdin-filename", "EchoesVault/pages/session-tokens.md",
        cwd=workspace, stdin=buffer.encode("utf-8"),
    )  # fmt: skip
    report = _json(process)
    assert set(by_path(report)) == {"EchoesVault/pages/session-tokens.md"}
    assert codes_of(report) == ["EV300", "EV301"]
    first = report["diagnostics"][0]
    assert (first["line"], first["column"], first["endColumn"]) == (14, 7, 14)
    assert report["summary"]["filesChecked"] == 1
    assert page.read_bytes() == on_disk
    text = run_check(
        "--stdin-filename",
        "EchoesVault/pages/session-tokens.md",
        cwd=workspace,
        stdin=buffer.encode(),
    ).stdout
    assert "14 | See [[nowhere]] and [[legacy-login]]." in text  # the frame shows the buffer


def test_buffer_for_a_new_file(workspace: Path) -> None:
    buffer = "---\ntype: note\nstack: []\nstatus: active\nsummary: Draft.\n---\n\n[[session-tokens#Rotation]] [[ghost]]\n"
    process = run_check(
        "--format", "concise", "--stdin-filename", "EchoesVault/pages/not-saved-yet.md",
        cwd=workspace, stdin=buffer.encode(),
    )  # fmt: skip
    assert process.returncode == 0
    assert process.stdout == (
        "EchoesVault/pages/not-saved-yet.md:8:31: EV300 [warning] no page named `ghost` in pages/\n"
    )
    assert not (workspace / "EchoesVault" / "pages" / "not-saved-yet.md").exists()


def test_buffer_that_is_not_utf8(workspace: Path) -> None:
    process = run_check(
        "--format", "json", "--stdin-filename", "EchoesVault/pages/session-tokens.md",
        cwd=workspace, stdin=b"---\ntype: caf\xe9\n",
    )  # fmt: skip
    report = _json(process)
    assert codes_of(report) == ["EV401"]
    assert report["diagnostics"][0]["message"] == "file is not valid UTF-8 (byte 13)"
    assert process.returncode == 1


def test_buffer_outside_any_vault(tmp_path: Path) -> None:
    process = run_check("--stdin-filename", "notes/page.md", cwd=tmp_path, stdin=b"# hi\n")
    assert process.returncode == 2
    assert "no EchoesVault/ folder found" in process.stderr


def test_buffer_from_another_directory(workspace: Path) -> None:
    buffer = b"no frontmatter here\n"
    process = run_check(
        "--format", "concise", "--stdin-filename", str(workspace / "EchoesVault" / "pages" / "x.md"),
        cwd=workspace.parent, stdin=buffer,
    )  # fmt: skip
    assert process.stdout == (
        "check-vault/EchoesVault/pages/x.md:1:1: EV100 [error] page does not begin with a `---` "
        "frontmatter block: start the file with a `---` line, the fields (type, stack, status, "
        "summary), and a closing `---`\n"
    )
