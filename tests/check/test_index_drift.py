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


def test_an_index_behind_while_a_page_is_invalid_says_what_blocks_its_refresh(
    tmp_path: Path,
) -> None:
    project = _fresh_project(tmp_path)
    pages = project / "EchoesVault" / "pages"
    (pages / "hand.md").write_text(VALID_PAGE.format(summary="Hand.", title="Hand", body=""))
    (pages / "broken.md").write_text("---\ntype: note\nstack: x\nsummary: No status.\n---\n# B\n")
    index = project / "EchoesVault" / "index.md"
    before = index.read_bytes()
    process = run_check(cwd=project)
    assert (
        "EchoesVault/index.md:7:1: EV403 index.md is out of date (not listed: `hand`): pages were "
        "written without the runtime; it can be refreshed once the invalid page is fixed "
        "(`broken`)" in process.stdout
    ), process.stdout
    assert "`hand`, `broken`" not in process.stdout  # the invalid page is not counted as behind
    fixed = run_check("--fix", cwd=project)  # EV104 cannot be fixed, so neither can the index
    assert "fixed EV403" not in fixed.stdout and index.read_bytes() == before
    # Once the page is valid, the index is simply out of date, and --fix refreshes it.
    (pages / "broken.md").write_text(VALID_PAGE.format(summary="Fixed.", title="B", body=""))
    assert "EV403 [*] index.md is out of date (not listed: `broken`, `hand`)" in (
        run_check(cwd=project).stdout
    )


def test_a_listed_page_that_became_invalid_is_not_reported_as_gone(tmp_path: Path) -> None:
    project = _fresh_project(tmp_path)
    page = project / "EchoesVault" / "pages" / "listed.md"
    page.write_text(VALID_PAGE.format(summary="Listed.", title="Listed", body=""))
    runtime(project, "rebuild-index")
    page.write_text("no frontmatter any more\n")
    process = run_check(cwd=project)
    assert "EV100" in process.stdout and "EV403" not in process.stdout, process.stdout
