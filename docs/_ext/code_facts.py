"""The generated parts of the diagnostic code pages, from `echoes_lsp/engine/codes.py` and `echoes_lsp/cli/fix_command.py`.

Each page `docs/codes/EVnnn.md` starts with its title and a facts line (default severity, whether
`check --fix` applies it), and `docs/diagnostics.md` holds the table of every code, each between
`<!-- generated -->` markers. They stay plain Markdown, so GitHub shows them; this module writes
them (`python docs/_ext/code_facts.py`) and the docs build and the tests fail when they differ
from the code, so they cannot drift.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List

from echoes_lsp.cli import fix_command
from echoes_lsp.engine.codes import CODES, Code

DOCS = Path(__file__).resolve().parents[1]

START = "<!-- generated from echoes_lsp/engine/codes.py by docs/_ext/code_facts.py: do not edit -->"
END = "<!-- end of generated text -->"
BLOCK = re.compile(re.escape(START) + r"\n.*?\n" + re.escape(END), re.DOTALL)
CODES_PAGE = DOCS / "diagnostics.md"


def page_path(code: Code) -> Path:
    return DOCS / code.page


def title(code: Code) -> str:
    return f"# {code.code}: {code.title}"


def facts(code: Code) -> str:
    fix = (
        f"yes, it will {fix_command.DESCRIPTIONS[code.code]}"
        if code.code in fix_command.FIXABLE
        else "no"
    )
    return f"**Default severity:** {code.severity} · **Fixed by `check --fix`:** {fix}"


def table() -> str:
    rows = ["| code | meaning | default severity | `--fix` |", "|---|---|---|---|"]
    for code in CODES.values():
        fix = "yes" if code.code in fix_command.FIXABLE else ""
        rows.append(f"| [{code.code}]({code.page}) | {code.title} | {code.severity} | {fix} |")
    return "\n".join(rows)


def _block(text: str) -> str:
    return f"{START}\n{text}\n{END}"


def render_page(code: Code, text: str) -> str:
    """The page with its title line and facts block as the code says."""
    lines = text.split("\n")
    lines[0] = title(code)
    body = "\n".join(lines)
    if BLOCK.search(body) is None:
        raise ValueError(f"{code.page} has no generated block")
    return BLOCK.sub(lambda _m: _block(facts(code)), body, count=1)


def render_codes_page(text: str) -> str:
    if BLOCK.search(text) is None:
        raise ValueError("diagnostics.md has no generated block")
    return BLOCK.sub(lambda _m: _block(table()), text, count=1)


def stale(write: bool = False) -> List[str]:
    """The files whose generated parts differ from the code (written afresh with `write`);
    a missing page, or a page for no code, is reported too."""
    problems: List[str] = []
    for code in CODES.values():
        path = page_path(code)
        if not path.is_file():
            problems.append(f"{code.page}: missing")
            continue
        text = path.read_text(encoding="utf-8")
        wanted = render_page(code, text)
        if wanted != text:
            problems.append(f"{code.page}: generated text differs from codes.py")
            if write:
                path.write_text(wanted, encoding="utf-8")
    for path in sorted((DOCS / "codes").glob("*.md")):
        if path.stem not in CODES:
            problems.append(f"codes/{path.name}: no such code in codes.py")
    text = CODES_PAGE.read_text(encoding="utf-8")
    wanted = render_codes_page(text)
    if wanted != text:
        problems.append("diagnostics.md: generated table differs from codes.py")
        if write:
            CODES_PAGE.write_text(wanted, encoding="utf-8")
    return problems


if __name__ == "__main__":
    for problem in stale(write=True):
        print(f"updated {problem.split(':')[0]}")
