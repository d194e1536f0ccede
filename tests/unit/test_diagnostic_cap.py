"""The per-document cap keeps the most severe findings and sums up the rest."""

from __future__ import annotations

from echoes_lsp.engine.findings import Finding, cap
from echoes_lsp.server.client_settings import parse_settings


def finding(code: str, line: int) -> Finding:
    return Finding(code, f"{code} at {line}", line, 0, line, 1)


def test_under_the_limit_nothing_changes() -> None:
    decided = [(finding("EV300", n), "warning") for n in range(5)]
    assert cap(decided, 5) == decided
    assert cap(decided, 0) == decided


def test_errors_are_kept_before_warnings_and_the_rest_summed_up() -> None:
    decided = [(finding("EV300", n), "warning") for n in range(10)]
    decided.append((finding("EV600", 50), "error"))
    decided.append((finding("EV311", 0), "hint"))
    kept = cap(decided, 3)
    assert [(f.code, f.line) for f, _ in kept[:3]] == [
        ("EV300", 0),
        ("EV300", 1),
        ("EV600", 50),
    ]
    summary, level = kept[3]
    assert len(kept) == 4
    assert summary.message.startswith("9 more diagnostics")
    assert "EV300 ×8, EV311 ×1" in summary.message
    assert (summary.code, summary.line, level) == ("EV300", 0, "warning")


def test_the_limit_setting_is_checked() -> None:
    assert parse_settings({"diagnostics": {"maxPerDocument": 25}}).max_per_document == 25
    bad = parse_settings({"diagnostics": {"maxPerDocument": -1}})
    assert bad.max_per_document == 1000
    assert any("maxPerDocument" in error for error in bad.errors)
