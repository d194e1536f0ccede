"""The docs document every diagnostic code at the anchor its `codeDescription` links to."""

from __future__ import annotations

from pathlib import Path

from echoes_lsp.codes import CODES, DOCS_URL

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CODES_PAGE = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")


def test_every_code_has_its_anchor_and_heading() -> None:
    for code in CODES.values():
        assert code.url == f"{DOCS_URL}#{code.anchor}"
        assert f'<a id="{code.anchor}"></a>' in CODES_PAGE, code.code
        assert f"## {code.code} — " in CODES_PAGE, code.code


def test_the_two_commands_are_documented() -> None:
    assert "make demo" in README and "make test" in README
