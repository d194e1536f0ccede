"""The demo vault and `examples/demo.py`."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT, RUNTIME, snapshot

DEMO = ROOT / "examples" / "demo.py"
DEMO_VAULT = ROOT / "examples" / "demo-vault"


def test_demo_runs_read_only_against_a_copy() -> None:
    before = snapshot(DEMO_VAULT)
    process = subprocess.run(
        [sys.executable, str(DEMO)], capture_output=True, text=True, timeout=120, check=False
    )
    assert process.returncode == 0, process.stderr
    out = process.stdout
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


def test_demo_vault_is_committed_without_local_files() -> None:
    assert (DEMO_VAULT / "EchoesVault/.echoes-vault.json").is_file()
    for rel in (
        "EchoesVault/index.md",
        ".echoes-vault/state.json",
        ".echoes-vault/lock",
        ".echoes-vault/index-cache.json",
    ):
        assert not (DEMO_VAULT / rel).exists(), rel


def test_demo_vault_runtime_is_the_bundled_runtime_byte_for_byte() -> None:
    """The committed project runtime must be the bundled one, not just carry its version
    (refresh it with `cp runtime/echoes_vault.py examples/demo-vault/.echoes-vault/`)."""
    committed = (DEMO_VAULT / ".echoes-vault/echoes_vault.py").read_bytes()
    assert committed == RUNTIME.read_bytes()
