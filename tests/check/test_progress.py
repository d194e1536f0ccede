"""A progress indicator on stderr for vaults over 1,000 pages, only when stderr is a terminal."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CHECK_VAULT, base_env, run_check

pty = pytest.importorskip("pty")


def _big_vault(root: Path, pages: int) -> Path:
    vault = root / "EchoesVault"
    (vault / "pages").mkdir(parents=True)
    shutil.copyfile(
        CHECK_VAULT / "EchoesVault" / ".echoes-vault.json", vault / ".echoes-vault.json"
    )
    for number in range(pages):
        (vault / "pages" / f"p{number:04d}.md").write_text(
            f"---\ntype: note\nstack: []\nstatus: active\nsummary: Page {number}.\n---\n\n[[p{(number + 1) % pages:04d}]]\n",
            encoding="utf-8",
        )
    return root


def _run_with_tty_stderr(cwd: Path) -> tuple[int, str, str]:
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "echoes_lsp", "check"],
            cwd=str(cwd),
            env=base_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        out, _ = process.communicate(timeout=60)
    finally:
        os.close(master)
    return process.returncode, out.decode("utf-8"), b"".join(chunks).decode("utf-8", "replace")


def test_progress_on_a_terminal_for_a_large_vault(tmp_path: Path) -> None:
    workspace = _big_vault(tmp_path, 1001)
    code, out, err = _run_with_tty_stderr(workspace)
    assert code == 0, out
    assert "echoes-lsp: checked 1001/1001 files" in err
    assert err.endswith("\r\x1b[K")  # the indicator erases itself
    assert "checked" not in out and out.startswith("Checked 1001 files in ")
    quiet = run_check(cwd=workspace)
    assert quiet.stderr == ""  # not a terminal: nothing


def test_no_progress_for_a_small_vault_on_a_terminal(tmp_path: Path) -> None:
    workspace = _big_vault(tmp_path, 1000)
    code, _out, err = _run_with_tty_stderr(workspace)
    assert code == 0
    assert err == ""
