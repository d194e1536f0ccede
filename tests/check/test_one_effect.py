"""`check` shows what the runtime kept aside and what it cannot read: EV702 on a page whose
interrupted `end`'s version was kept (on the page's path when the page was deleted, on the marker
for a journal that could not be read), EV700 for a marker that cannot be read (never a
traceback), a clear error for a settings file nested too deep, and the `warnings` of a fix that
took effect."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

from ..runtime.needs import is_root, unavailable
from ..runtime.pending_end import PAGE, end_killed_after_its_journal, new_project, runtime_json
from .conftest import json_report, run_check


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return new_project(tmp_path / "project")


def ev702(report: dict) -> Dict[str, List[str]]:
    found: Dict[str, List[str]] = {}
    for item in report["diagnostics"]:
        if item["code"] == "EV702":
            found.setdefault(item["path"], []).append(item["message"])
    return found


@pytest.mark.parametrize("meanwhile", ["edited", "deleted"])
def test_a_kept_version_is_ev702_on_its_page(project: Path, tmp_path: Path, meanwhile: str) -> None:
    page = project / "EchoesVault/pages/notes.md"
    end_killed_after_its_journal(project, tmp_path, "notes.md", PAGE.format("Notes.", "End."))
    assert ev702(json_report(cwd=project)) == {}, "nothing is kept before the next writer"
    if meanwhile == "edited":
        page.write_text(PAGE.format("Notes.", "Edited by hand."))
    else:
        page.unlink()
    runtime_json(project, "append", "--payload", "-", payload={"entry": "- the next writer"})
    kept = next((project / ".echoes-vault/kept").rglob("notes.md")).relative_to(project)
    report = json_report(cwd=project)
    found = ev702(report)
    assert list(found) == ["EchoesVault/pages/notes.md"], report["diagnostics"]
    (message,) = found["EchoesVault/pages/notes.md"]
    assert f"`{kept.as_posix()}`" in message
    assert ("deleted" in message) is (meanwhile == "deleted")
    single = json_report("EchoesVault/pages/notes.md", cwd=project) if page.exists() else report
    assert "EchoesVault/pages/notes.md" in ev702(single)
    (project / kept).unlink()
    assert ev702(json_report(cwd=project)) == {}


def test_a_journal_moved_aside_is_ev702_on_the_marker(project: Path) -> None:
    (project / ".echoes-vault/end-journal.json").write_text("[" * 100_000)
    runtime_json(project, "append", "--payload", "-", payload={"entry": "- the next writer"})
    found = ev702(json_report(cwd=project))
    assert list(found) == ["EchoesVault/.echoes-vault.json"]
    assert "end-journal.json" in found["EchoesVault/.echoes-vault.json"][0]


@pytest.mark.parametrize(
    "content", [b"[" * 100_000, b"[" * 1000 + b"]" * 1000, b'{"protocolVersion": "\xff"}', b"[]"]
)
def test_a_marker_that_cannot_be_read_is_ev700_never_a_traceback(
    project: Path, content: bytes
) -> None:
    (project / "EchoesVault/.echoes-vault.json").write_bytes(content)
    process = run_check("--format", "json", cwd=project)
    assert "Traceback" not in process.stderr and process.returncode in (0, 1), process.stderr
    report = json.loads(process.stdout)
    marker = [d for d in report["diagnostics"] if d["code"] == "EV700"]
    assert [d["path"] for d in marker] == ["EchoesVault/.echoes-vault.json"]
    assert "read-only" in marker[0]["message"]


@pytest.mark.parametrize("name", ["pyproject.toml", ".echoes-lsp.toml"])
def test_a_settings_file_nested_too_deep_is_a_clear_error(project: Path, name: str) -> None:
    table = "[tool.echoes-lsp]\n" if name == "pyproject.toml" else ""
    (project / name).write_text(table + "select = " + "[" * 100_000 + "]" * 100_000 + "\n")
    process = run_check(cwd=project)
    assert process.returncode == 2 and "Traceback" not in process.stderr, process.stderr
    assert f"{name}: not read: it nests deeper than 64 levels" in process.stderr


def test_a_fix_that_took_effect_shows_the_runtime_s_warnings(project: Path) -> None:
    """The page is fixed; the local state the runtime could not write after it is named."""
    tool = shutil.which("chattr")
    if tool is None or not is_root():
        unavailable("making a file immutable needs chattr and root")
    page = project / "EchoesVault/pages/notes.md"
    page.write_text(PAGE.format("Notes.", "First.").replace("status: active", "status: deprecated"))
    state = project / ".echoes-vault/state.json"
    subprocess.run([tool, "+i", str(state)], check=True)
    try:
        process = run_check("--fix", "--select", "EV310", cwd=project)
    finally:
        subprocess.run([tool, "-i", str(state)], check=True)
    assert process.returncode == 0, process.stdout + process.stderr
    line = next(x for x in process.stdout.splitlines() if "notes.md: fixed EV310" in x)
    assert "with warnings: local state `.echoes-vault/state.json` could not be written" in line
    assert "> [!warning] DEPRECATED" in page.read_text()
