"""`check` reports a summary placeholder left by a quick fix or a created page (EV202)."""

from __future__ import annotations

from pathlib import Path

from echoes_lsp.engine import page_fixes

from .conftest import run_check, write_page


def test_a_placeholder_summary_is_a_warning_until_replaced(clean_workspace: Path) -> None:
    vault = clean_workspace / "EchoesVault"
    created = page_fixes.new_page_text("ledger")  # what "Create page through EchoesVault" writes
    (vault / "pages" / "ledger.md").write_text(created, encoding="utf-8")
    out = run_check("--select", "EV2", cwd=clean_workspace).stdout
    assert (
        "EchoesVault/pages/ledger.md:5:10: EV202 summary is still a placeholder (`TODO: …`): "
        "say what this page is about"
    ) in out
    assert "1 warning (EV202)" in out
    write_page(vault, "ledger", "Where the ledger tables live.")
    assert "EV202" not in run_check("--select", "EV2", cwd=clean_workspace).stdout
