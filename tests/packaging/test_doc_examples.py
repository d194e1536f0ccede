"""The CI examples of docs/ci-and-obsidian.md work today as written: the GitHub Actions workflow
is a valid workflow, and the local pre-commit hook runs `echoes-lsp check` as pre-commit would."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from .conftest import ROOT
from .test_wheel import BROKEN_PAGE

DOC = ROOT / "docs" / "ci-and-obsidian.md"
BIN = Path(sys.executable).parent


def yaml_block(first_line: str) -> str:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    (block,) = [b for b in blocks if b.startswith(first_line + "\n")]
    return block


def hook_fields(text: str) -> Dict[str, str]:
    """The `key: value` lines of a one-hook YAML block (enough for these flat examples)."""
    fields = {}
    for line in text.splitlines():
        found = re.match(
            r"^\s*(?:- )?(id|name|entry|language|files|require_serial):\s*(.+?)\s*$", line
        )
        if found:
            fields[found.group(1)] = found.group(2)
    return fields


def test_the_github_actions_example_is_a_valid_workflow(tmp_path: Path) -> None:
    checker = shutil.which("check-jsonschema", path=str(BIN))
    if checker is None:
        pytest.skip("check-jsonschema (dev extra) is not installed")
    workflow = tmp_path / "echoes.yml"
    workflow.write_text(yaml_block("# .github/workflows/echoes.yml"), encoding="utf-8")
    done = subprocess.run(
        [checker, "--builtin-schema", "vendor.github-workflows", str(workflow)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pip install ./tools/echoes_lsp-" in workflow.read_text(encoding="utf-8")


def test_the_local_pre_commit_hook_runs_like_the_shipped_one(tmp_path: Path) -> None:
    local = hook_fields(yaml_block("# .pre-commit-config.yaml (works today)"))
    shipped = hook_fields((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert local["language"] == "system"
    for key in ("id", "entry", "files"):
        assert local[key] == shipped[key], key
    project = tmp_path / "project"
    project.mkdir()
    exe = str(BIN / "echoes-lsp")
    assert (
        subprocess.run(
            [exe, "runtime", "--workspace", str(project), "init"], capture_output=True, timeout=120
        ).returncode
        == 0
    )
    page = project / "EchoesVault" / "pages" / "deploy.md"
    page.write_text(BROKEN_PAGE, encoding="utf-8")
    staged = ["EchoesVault/pages/deploy.md", "EchoesVault/index.md", "README.md"]
    # pre-commit passes the files that match `files`, relative to the repository root.
    matching = [name for name in staged if re.search(local["files"], name)]
    assert matching == ["EchoesVault/pages/deploy.md", "EchoesVault/index.md"]
    entry = local["entry"].split()
    command = [str(BIN / entry[0]), *entry[1:], "--fail-on", "warning", *matching]
    done = subprocess.run(
        command, cwd=project, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1 and "EV300" in done.stdout, done.stdout + done.stderr
