"""The pre-commit hook (`.pre-commit-hooks.yaml`) and the plain Git hook from the README."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from .conftest import ROOT, base_env, copy_check_vault, git, write_page

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _hook() -> Dict[str, str]:
    """The `echoes-check` hook's scalar keys (the file is flat YAML: `key: value` lines)."""
    text = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    hook: Dict[str, str] = {}
    for line in text.splitlines():
        match = re.match(r"^(?:- |  )(\w+): (.*)$", line)
        if match:
            hook[match.group(1)] = match.group(2).strip()
    return hook


def _entry() -> List[str]:
    command = _hook()["entry"].split()
    assert command[0] == "echoes-lsp"
    script = Path(sys.executable).with_name("echoes-lsp")
    launcher = [str(script)] if script.exists() else [sys.executable, "-m", "echoes_lsp"]
    return launcher + command[1:]


def _repo(tmp_path: Path) -> Path:
    repo = copy_check_vault(tmp_path / "repo")
    git(repo, "init", "-q")
    # Start from a clean commit of the valid pages only.
    bad = ["no-frontmatter.md", "conflicted.md", "latin1.md", "a..b.md", "missing-fields.md"]
    for name in bad:
        (repo / "EchoesVault" / "pages" / name).unlink()
    shutil.rmtree(repo / "EchoesVault" / "pages" / "drafts")
    git(repo, "add", "EchoesVault/.echoes-vault.json", "EchoesVault/pages/session-tokens.md")
    git(repo, "commit", "-q", "-m", "start")
    return repo


def _staged(repo: Path) -> List[str]:
    pattern = re.compile(_hook()["files"])
    out = git(repo, "diff", "--cached", "--name-only", "--diff-filter=ACMR").stdout.split()
    return [name for name in out if pattern.search(name)]


def test_hook_definition() -> None:
    hook = _hook()
    assert hook["id"] == "echoes-check"
    assert hook["language"] == "python"
    assert hook["entry"] == "echoes-lsp check"
    assert hook["files"] == "^EchoesVault/"
    assert hook["pass_filenames"] == "true"


def test_hook_entry_on_staged_files(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    vault = repo / "EchoesVault"
    write_page(vault, "good", "A fine page.", "\nSee [[session-tokens]].\n")
    (vault / "pages" / "bad.md").write_text("# forgot the frontmatter\n", encoding="utf-8")
    (repo / "README.md").write_text("not in the vault\n", encoding="utf-8")
    git(repo, "add", "EchoesVault/pages/good.md", "README.md")
    staged = _staged(repo)
    assert staged == ["EchoesVault/pages/good.md"]
    clean = subprocess.run(
        _entry() + staged, cwd=repo, env=base_env(), capture_output=True, text=True, timeout=60
    )
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Checked 1 file in" in clean.stdout
    git(repo, "add", "EchoesVault/pages/bad.md")
    staged = _staged(repo)
    failing = subprocess.run(
        _entry() + staged, cwd=repo, env=base_env(), capture_output=True, text=True, timeout=60
    )
    assert failing.returncode == 1
    assert "EchoesVault/pages/bad.md:1:1: EV100" in failing.stdout
    # Only the staged files are reported, even though the working tree has other broken pages.
    assert "multiline-summary.md" not in failing.stdout and "Checked 2 files in" in failing.stdout


def test_plain_git_hook_blocks_a_bad_commit(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    docs = (ROOT / "docs" / "ci-and-obsidian.md").read_text(encoding="utf-8")
    snippet = re.search(r"```sh\n(#!/bin/sh\n# \.git/hooks/pre-commit.*?)```", docs, re.S)
    assert snippet, "the README has the plain Git hook snippet"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(snippet.group(1), encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    env_path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    if shutil.which("echoes-lsp", path=env_path) is None:
        pytest.skip("the echoes-lsp console script is not installed")
    vault = repo / "EchoesVault"
    (vault / "pages" / "bad.md").write_text("# no frontmatter\n", encoding="utf-8")
    git(repo, "add", "EchoesVault/pages/bad.md")
    env = base_env(
        PATH=env_path,
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.com",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    blocked = subprocess.run(
        ["git", "commit", "-q", "-m", "bad"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert blocked.returncode != 0
    assert "EV100" in blocked.stdout + blocked.stderr
    write_page(vault, "bad", "Now it has frontmatter.")
    git(repo, "add", "EchoesVault/pages/bad.md")
    allowed = subprocess.run(
        ["git", "commit", "-q", "-m", "good"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
