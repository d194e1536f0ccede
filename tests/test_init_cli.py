"""`echoes-lsp init [--dry-run]`: the runtime's own init, told for people."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

from echoes_lsp.cli.init_command import FIRST_PAGE
from echoes_lsp.engine.codes import docs_base

ROOT = Path(__file__).resolve().parents[1]


def echoes(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR",)}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "echoes_lsp", *args],
        cwd=str(cwd),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def tree(root: Path) -> Dict[str, str]:
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".git/") or rel == ".git":
            continue
        found[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def listed(out: str, verb: str) -> List[str]:
    return re.findall(rf"^  {verb} +(\S+)", out, flags=re.M)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "AGENTS.md").write_text("# Our agents\n\nRun the tests first.\n", encoding="utf-8")
    return root


def test_dry_run_writes_nothing_and_lists_what_init_writes(tmp_path: Path) -> None:
    root = project(tmp_path)
    before = tree(root)
    dry = echoes("init", "--dry-run", cwd=root)
    assert dry.returncode == 0, dry.stderr
    assert tree(root) == before
    assert dry.stdout.startswith("echoes-lsp init --dry-run: nothing written; init in this project")
    assert listed(dry.stdout, "would change") == ["AGENTS.md"]
    would = listed(dry.stdout, "would create")
    assert {"CLAUDE.md", ".echoes-vault/echoes_vault.py", "EchoesVault/.echoes-vault.json"} <= set(
        would
    )
    assert "EchoesVault/pages/" in would
    assert "EchoesVault/index.md" in would and "(local to this checkout, Git-ignored)" in dry.stdout

    real = echoes("init", cwd=root)
    assert real.returncode == 0, real.stderr
    assert listed(real.stdout, "created") == would
    assert listed(real.stdout, "changed") == ["AGENTS.md"]
    assert "Run the tests first." in (root / "AGENTS.md").read_text(encoding="utf-8")
    after = tree(root)
    for path in would:
        assert path.rstrip("/") in after, path
    again = echoes("init", "--dry-run", cwd=root)
    assert "nothing to do: the project is already set up" in again.stdout
    assert "Run `echoes-lsp init`" not in again.stdout


def test_init_gives_next_steps_that_work(tmp_path: Path) -> None:
    root = project(tmp_path)
    out = echoes("init", cwd=root).stdout
    assert "Next steps:" in out and "echoes-lsp check" in out
    assert re.search(r"git add .*EchoesVault", out)
    assert "EchoesVault/index.md" not in out.split("git add", 1)[1]  # local files are not shared
    (root / "EchoesVault" / "pages" / "ledger-database.md").write_text(FIRST_PAGE, encoding="utf-8")
    check = echoes("check", cwd=root)
    assert check.returncode == 0, check.stdout  # the sample page is valid
    assert "error" not in check.stdout and "warning" not in check.stdout
    assert "EV403" in check.stdout  # a page written by hand: the index is only out of date


def test_init_points_at_the_editor_guides_by_the_documentation_address(tmp_path: Path) -> None:
    """The editor step names every shipped editor, the guides by the one declared documentation
    address (never a path of the echoes-lsp repository, meaningless in the user's project), and an
    `editor-dir` command whose every name the command accepts."""
    out = echoes("init", cwd=project(tmp_path)).stdout
    step = out.split("  3. Open it in your editor:", 1)[1].split("\n  4.", 1)[0]
    editors = step.split("\n", 1)[0]
    for name in ("VS Code", "Neovim", "Vim", "Emacs", "Helix", "Zed", "Obsidian"):
        assert re.search(rf"\b{name}\b", editors), (name, step)
    assert docs_base().startswith("https://"), docs_base()
    assert f"Editor guides:            {docs_base()}editors/index.md\n" in step
    assert (ROOT / "docs" / "editors" / "index.md").is_file()
    assert "(docs/editors/)" not in out
    names = re.search(r"echoes-lsp editor-dir (\S+)$", step, re.M)
    assert names, step
    for name in names.group(1).split("|"):
        answer = echoes("editor-dir", name, cwd=tmp_path)
        assert answer.returncode != 2, (name, answer.stderr)  # a name it knows
        if name in ("nvim", "vim"):  # shipped in this checkout
            assert answer.returncode == 0 and Path(answer.stdout.strip()).is_dir(), answer
    assert set(names.group(1).split("|")) >= {"nvim", "vim", "emacs"}


def test_init_refuses_a_path_that_is_not_a_folder(tmp_path: Path) -> None:
    process = echoes("init", "nowhere", cwd=tmp_path)
    assert process.returncode == 2
    assert process.stderr == "echoes-lsp init: error: nowhere: not a folder\n"


def test_init_says_when_invalid_pages_block_the_index(tmp_path: Path) -> None:
    root = project(tmp_path)
    pages = root / "EchoesVault" / "pages"
    pages.mkdir(parents=True)
    (pages / "bad.md").write_text("# no frontmatter\n", encoding="utf-8")
    dry = echoes("init", "--dry-run", cwd=root)
    assert (
        "The index would not be built: 1 page is invalid (EchoesVault/pages/bad.md); "
        "`echoes-lsp check` shows what to fix."
    ) in dry.stdout
    real = echoes("init", cwd=root)
    assert real.returncode == 0, real.stderr
    assert "The index was not built: 1 page is invalid (EchoesVault/pages/bad.md)" in real.stdout
    (pages / "bad.md").unlink()
    assert "The index" not in echoes("init", "--dry-run", cwd=root).stdout


def test_init_again_on_a_vault_with_pages_offers_no_sample_page(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert "Write a first page" in echoes("init", cwd=root).stdout
    (root / "EchoesVault" / "pages" / "ledger-database.md").write_text(FIRST_PAGE, encoding="utf-8")
    (root / "EchoesVault" / "pages" / "drafts.md").mkdir()  # a folder is not a page
    again = echoes("init", cwd=root).stdout
    assert "Write a first page" not in again and FIRST_PAGE.splitlines()[1] not in again
    assert "The vault has 1 page (EchoesVault/pages/)" in again
