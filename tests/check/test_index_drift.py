"""A page written by hand leaves index.md out of date: EV403 (information) on a real line, fixable."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .conftest import VALID_PAGE, base_env, run_check, runtime


def _fresh_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=base_env())
    runtime(project, "init")
    return project


def test_a_hand_written_page_makes_the_index_stale_not_hand_edited(tmp_path: Path) -> None:
    project = _fresh_project(tmp_path)
    page = project / "EchoesVault" / "pages" / "hand.md"
    page.write_text(VALID_PAGE.format(summary="Written in an editor.", title="Hand", body=""))
    process = run_check(cwd=project)
    assert process.returncode == 0, process.stdout  # information does not fail the check
    assert "EchoesVault/index.md:7:1: EV403 [*] index.md is out of date (not listed: `hand`)" in (
        process.stdout
    )
    assert "7 | ## Pages" in process.stdout and "EV402" not in process.stdout
    assert "= fix: rebuild index.md with the runtime's `rebuild-index` (`--fix`)" in process.stdout
    fixed = run_check("--fix", cwd=project)
    assert "EchoesVault/index.md: fixed EV403" in fixed.stdout, fixed.stdout
    assert "- [[hand]]: Written in an editor." in (project / "EchoesVault" / "index.md").read_text()


def test_a_hand_edited_index_is_a_warning(tmp_path: Path) -> None:
    project = _fresh_project(tmp_path)
    index = project / "EchoesVault" / "index.md"
    index.write_text(index.read_text() + "\nRemember to rotate the keys.\n")
    process = run_check(cwd=project)
    assert "EchoesVault/index.md:9:1: EV402 [*] index.md was edited by hand" in process.stdout
    assert "9 | Remember to rotate the keys." in process.stdout
