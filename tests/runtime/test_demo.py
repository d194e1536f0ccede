"""The demo vault and `examples/demo.py`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict

import pytest

from .conftest import ROOT, RUNTIME, snapshot

DEMO = ROOT / "examples" / "demo.py"
DEMO_VAULT = ROOT / "examples" / "demo-vault"


def test_demo_runs_read_only_against_a_copy() -> None:
    before = snapshot(DEMO_VAULT)
    out = _demo({"NO_COLOR": "1"}).stdout
    # The demo vault carries one page per common mistake, so health needs attention.
    assert "## EchoesVault status" in out and "**Integrity:** attention" in out
    assert "**Pages:** 11 (2 deprecated)" in out
    for page in ("chargeback-handling.md", "fx-rates.md", "merchant-onboarding.md"):
        assert f"`EchoesVault/pages/{page}`" in out
    # Invalid pages block the all-or-nothing index.
    assert "code 'conflict-marker'" in out or "code 'invalid-page'" in out
    assert "EchoesVault/pages/idempotency-keys.md:" in out
    # The scripted language-server session.
    assert "13:3 EV300 [warning] no page named `currency-service`" in out
    assert "settlement-pipeline — " in out
    assert snapshot(DEMO_VAULT) == before
    _no_dangling_paths_and_no_cut_errors(out)


def test_demo_vault_is_committed_without_local_files() -> None:
    assert (DEMO_VAULT / "EchoesVault/.echoes-vault.json").is_file()
    for rel in (
        "EchoesVault/index.md",
        ".echoes-vault/state.json",
        ".echoes-vault/lock",
        ".echoes-vault/index-cache.json",
    ):
        assert not (DEMO_VAULT / rel).exists(), rel


def test_demo_vault_carries_no_runtime_and_the_demo_installs_it(tmp_path: Path) -> None:
    """The demo vault is committed without `.echoes-vault/echoes_vault.py` (4,000+ lines repeated);
    the demo installs this checkout's runtime into its copy, as `init` does in a project."""
    assert not (DEMO_VAULT / ".echoes-vault/echoes_vault.py").exists()
    tracked = subprocess.run(
        ["git", "ls-files", "--", str(DEMO_VAULT / ".echoes-vault")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if tracked.returncode == 0:  # inside a Git checkout
        assert "echoes_vault.py" not in tracked.stdout
    sys.path.insert(0, str(DEMO.parent))
    import demo

    copy = demo.copy_vault(tmp_path / "copy")
    assert (copy / ".echoes-vault/echoes_vault.py").read_bytes() == RUNTIME.read_bytes()


def _no_dangling_paths_and_no_cut_errors(out: str) -> None:
    assert "echoes-demo-" not in out and tempfile.gettempdir() + "/" not in out
    assert "`lumen-pay (a temporary copy of the demo vault)`" in out
    hydrate = out.split("hydrate: the index is all-or-nothing")[1].split("search 'idempotency'")[0]
    assert "…" not in hydrate
    for page in ("chargeback-handling.md", "fx-rates.md", "merchant-onboarding.md"):
        assert f"\n  EchoesVault/pages/{page}: EV" in hydrate
    check = out.split("=" * 72 + "\nechoes-lsp check\n")[-1]
    assert "EchoesVault/pages/fx-rates.md:13:3: EV300 no page named `currency-service`" in check
    assert "Checked 14 files in " in check
    assert "\x1b[" not in out


def test_demo_card_is_coloured_on_a_terminal() -> None:
    out = _demo({"FORCE_COLOR": "1"}).stdout
    card = out.split("hydrate: the index is all-or-nothing")[0]
    assert "\x1b[1;36mEchoesVault status\x1b[0m" in card
    assert "\x1b[1;33mattention\x1b[0m" in card
    assert "**" not in card and "## " not in card


def _demo(env: Dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    process = subprocess.run(
        [sys.executable, str(DEMO)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**base, **env},
    )
    assert process.returncode == 0, process.stderr
    return process


def _fake_venv(root: Path, exit_code: int) -> Path:
    """A `.venv` whose python prints what pip and setuptools print, then exits `exit_code`."""
    venv = root / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(
        "#!/bin/sh\n"
        "echo 'BuildBackendWarning: Editable installation.' >&2\n"
        "echo '  Please be careful with folders in your working directory'\n"
        f"exit {exit_code}\n",
        encoding="utf-8",
    )
    python.chmod(0o755)
    return venv


def make_install(venv: Path) -> subprocess.CompletedProcess[str]:
    """`make`'s install step into `venv`, as a person types it."""
    return subprocess.run(
        ["make", "-s", f"VENV={venv}", f"{venv}/.installed"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_installs_quietly_and_shows_the_whole_log_on_failure(tmp_path: Path) -> None:
    venv = _fake_venv(tmp_path / "ok", 0)
    quiet = make_install(venv)
    assert quiet.returncode == 0, quiet.stderr
    assert (
        quiet.stdout
        == f"Installing echoes-lsp and its test tools into {venv} (log: {venv}/install.log)...\n"
    )
    assert quiet.stderr == ""
    assert "BuildBackendWarning" in (venv / "install.log").read_text(encoding="utf-8")
    failing = _fake_venv(tmp_path / "bad", 1)
    loud = make_install(failing)
    assert loud.returncode != 0
    assert "BuildBackendWarning: Editable installation." in loud.stdout
    assert f"installing into {failing} failed (log above)" in loud.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo_prints_no_recipe_lines() -> None:
    """With the environment installed, `make demo` shows the demo and nothing of make's."""
    stamp = ROOT / ".venv" / ".installed"
    if not stamp.exists() or stamp.stat().st_mtime < (ROOT / "pyproject.toml").stat().st_mtime:
        pytest.skip("the project's .venv is not installed")
    process = subprocess.run(
        ["make", "demo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        # as typed at a shell: not as a sub-make of `make test`, which prints its directory
        env={
            **{
                k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")
            },
            "NO_COLOR": "1",
        },
    )
    assert process.returncode == 0, process.stderr
    assert process.stdout.startswith("\n" + "=" * 72 + "\nstatus --format card (read-only)\n")
    assert "examples/demo.py" not in process.stdout and "pip install" not in process.stdout
