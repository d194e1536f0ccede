"""The summary line's run time: milliseconds below a second, so a fast check is not `0.00s`."""

from __future__ import annotations

from echoes_lsp.cli.report import Report, summary_line


def _summary(seconds: float) -> str:
    return summary_line(Report([], 6, seconds, "error"))


def test_fast_checks_show_milliseconds() -> None:
    assert _summary(0.0042) == "Checked 6 files in 4ms: no problems."
    assert _summary(0.0001) == "Checked 6 files in <1ms: no problems."
    assert _summary(0.9994) == "Checked 6 files in 999ms: no problems."


def test_slow_checks_show_seconds() -> None:
    assert _summary(1.0) == "Checked 6 files in 1.00s: no problems."
    assert _summary(12.345) == "Checked 6 files in 12.35s: no problems."
