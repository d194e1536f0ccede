"""`echoes-lsp check` on a vault whose folder, or one of its layout folders, is a symbolic link:
reported as EV503 on the link, as the runtime's writers refuse it, and nothing is read through a
linked `EchoesVault/` (issue 18, item 4)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from .conftest import (
    RUNTIME,
    TIMEOUT,
    changed_files,
    json_report,
    run_check,
    snapshot_files,
    write_page,
)

LAYOUT = ("EchoesVault", "pages", "daily", "assets", "raw")
OUTSIDE_SUMMARY = "Only the folder outside the workspace says this."


def linked(tmp_path: Path, folder: str) -> Tuple[Path, Path]:
    """An initialized workspace whose `folder` (the vault, or one folder of its layout) was
    moved out of the workspace and replaced by a symbolic link; and the link."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), "init"],
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )
    vault = workspace / "EchoesVault"
    write_page(vault, "inside", "A page that lives in the workspace.")
    write_page(vault, "outside-page", OUTSIDE_SUMMARY, "\nSee [[nowhere]].\n")
    subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), "rebuild-index"],
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )
    link = vault if folder == "EchoesVault" else vault / folder
    elsewhere = tmp_path / "elsewhere" / folder
    elsewhere.parent.mkdir()
    shutil.move(str(link), str(elsewhere))
    link.symlink_to(elsewhere, target_is_directory=True)
    if folder == "EchoesVault":
        shutil.rmtree(elsewhere / "pages")  # the outside copy holds a page of its own only
        write_page(elsewhere, "outside-page", OUTSIDE_SUMMARY, "\nSee [[nowhere]].\n")
    elif folder != "pages":
        (vault / "pages" / "outside-page.md").unlink()
    return workspace, link


def runtime_error(workspace: Path, *args: str) -> Dict[str, str]:
    process = subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), *args],
        input="{}",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert process.returncode == 2, process.stdout
    return json.loads(process.stderr)  # type: ignore[no-any-return]


def ev503(report: dict) -> List[dict]:
    return [d for d in report["diagnostics"] if d["code"] == "EV503"]


@pytest.mark.parametrize("folder", LAYOUT)
def test_a_linked_layout_folder_fails_the_check_as_the_runtime_refuses_it(
    tmp_path: Path, folder: str
) -> None:
    workspace, link = linked(tmp_path, folder)
    # The runtime's installation boundary checks every folder of the layout before it writes.
    refusal = runtime_error(workspace, "upgrade")
    assert refusal["code"] == "symlink", refusal
    rel = str(link.relative_to(workspace))
    assert f"`{rel}` is a symbolic link" in refusal["error"]

    process = run_check("--format", "json", cwd=workspace)
    assert process.returncode == 1, process.stderr
    report = json.loads(process.stdout)
    (found,) = [d for d in ev503(report) if d["path"] == rel]
    assert (
        f"`{rel}` is a symbolic link; EchoesVault refuses to write through it" in found["message"]
    )
    assert "read-only" in found["message"]
    assert found["severity"] == "error"


def test_nothing_is_read_through_a_linked_vault(tmp_path: Path) -> None:
    workspace, _link = linked(tmp_path, "EchoesVault")
    for args in ((), ("EchoesVault",), ("EchoesVault/pages/outside-page.md",), (".",)):
        process = run_check(*args, cwd=workspace)
        assert process.returncode == 1, (args, process.stdout, process.stderr)
        assert "EV503" in process.stdout and "nothing in it is read" in process.stdout
        assert "outside-page" not in process.stdout.replace("EchoesVault/pages/outside-page", "")
        assert "EV300" not in process.stdout and "nowhere" not in process.stdout
    report = json_report(cwd=workspace)
    assert [d["path"] for d in report["diagnostics"]] == ["EchoesVault"]
    assert report["summary"]["filesChecked"] == 0
    stdin = run_check(
        "--stdin-filename", "EchoesVault/pages/new.md", cwd=workspace, stdin=b"no page"
    )
    assert stdin.returncode == 1 and "EV503" in stdin.stdout, stdin.stdout + stdin.stderr


def test_fix_writes_nothing_into_a_vault_with_a_linked_folder(tmp_path: Path) -> None:
    workspace, _link = linked(tmp_path, "daily")
    write_page(workspace / "EchoesVault", "late", "Written without the runtime.")
    before = snapshot_files(tmp_path)
    process = run_check("--fix", cwd=workspace)
    assert process.returncode == 1
    assert "EV403" in process.stdout  # the index is out of date, and stays so
    assert "read-only (EV503" in process.stdout + process.stderr
    assert changed_files(before, snapshot_files(tmp_path)) == []
