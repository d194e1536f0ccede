"""`echoes-lsp explain`: a code's page offline, the same text as the docs' code page."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from echoes_lsp.cli import explain
from echoes_lsp.engine.codes import CODES

from .conftest import ROOT, TIMEOUT, base_env

PAGES = ROOT / "docs" / "codes"


def run_explain(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "echoes_lsp", "explain", *args],
        cwd=str(cwd),
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_explain_prints_the_code_page(tmp_path: Path) -> None:
    process = run_explain("EV104", cwd=tmp_path)
    assert (process.returncode, process.stderr) == (0, "")
    out = process.stdout
    assert out.startswith("# EV104: required field missing\n")
    assert "## How to fix it" in out and "`stack: []`" in out
    assert "<!--" not in out  # the generated block's markers are the docs' business
    assert f"Online: {CODES['EV104'].url}\n" in out
    # a lower-case code is the same code
    assert run_explain("ev104", cwd=tmp_path).stdout == out


@pytest.mark.parametrize("code", sorted(CODES))
def test_explain_and_the_docs_page_say_the_same(code: str, capsys: pytest.CaptureFixture) -> None:
    assert explain.main([code]) == 0
    printed = capsys.readouterr().out.split("\n")
    source = (PAGES / f"{code}.md").read_text(encoding="utf-8").split("\n")
    prose = [line for line in source if not line.startswith("<!--")]
    # every line of the page, in order, with links shown by their text
    position = 0
    for line in prose:
        for text in re.findall(r"\[([^\]]+)\]\(", line) or [line]:
            found = next((n for n in range(position, len(printed)) if text in printed[n]), None)
            assert found is not None, (code, line)
            position = found
    assert "](" not in "\n".join(printed)


def test_no_code_lists_every_code(tmp_path: Path) -> None:
    process = run_explain(cwd=tmp_path)
    assert process.returncode == 0
    listed = [line.split()[0] for line in process.stdout.splitlines() if line.startswith("EV")]
    assert listed == list(CODES)


def test_an_unknown_code_is_a_clear_error(tmp_path: Path) -> None:
    process = run_explain("EV999", cwd=tmp_path)
    assert process.returncode == 2 and process.stdout == ""
    assert process.stderr == (
        f"echoes-lsp explain: unknown code 'EV999'; `echoes-lsp explain` lists the {len(CODES)} "
        "codes\n"
    )
    two = run_explain("EV100", "EV101", cwd=tmp_path)
    assert two.returncode == 2 and "one code at a time" in two.stderr
