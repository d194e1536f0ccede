"""`echoes-lsp explain [CODE]`: a diagnostic code's page, offline.

The pages are the documentation's own `docs/codes/EVnnn.md`: the wheel carries them as the package
folder `echoes_lsp/codes/` (pyproject.toml maps it to docs/codes/), so the terminal and the site
show one text. Only what reads badly on a terminal changes: the generated-block comments go, and a
link shows its address after its text.
"""

from __future__ import annotations

import os
import re
import sys
from typing import List, Optional, Sequence

from ..engine.codes import CODES, docs_url

COMMENT = re.compile(r"^<!--.*-->$")
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
CODE_PAGE = re.compile(r"^(EV\d{3})\.md(#.*)?$")
USAGE = "usage: echoes-lsp explain [CODE]  (a code such as EV104; no code lists them all)\n"


def pages_folder() -> Optional[str]:
    """The code pages: `echoes_lsp/codes` installed from the wheel, `docs/codes` in a checkout."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for candidate in (
        os.path.join(package, "codes"),
        os.path.join(os.path.dirname(package), "docs", "codes"),
    ):
        if os.path.isfile(os.path.join(candidate, "EV100.md")):
            return candidate
    return None


def _link(match: re.Match[str]) -> str:
    """A Markdown link as terminal text: another code's page by its `explain` command, a docs page
    by its address, an outside address as itself."""
    text, target = match.group(1), match.group(2)
    code = CODE_PAGE.match(target)
    if code is not None:
        return text if text == code.group(1) else f"{text} ({code.group(1)})"
    if target.startswith(("http://", "https://")):
        return f"{text} <{target}>"
    page = target[3:] if target.startswith("../") else f"codes/{target}"
    url = docs_url(page)
    return f"{text} <{url}>" if url else text


def terminal_text(markdown: str, code: str) -> str:
    """A code page as `explain` prints it."""
    lines = [LINK.sub(_link, line) for line in markdown.split("\n") if not COMMENT.match(line)]
    text = "\n".join(lines).rstrip("\n") + "\n"
    url = CODES[code].url
    other = "Other codes: `echoes-lsp explain`."
    return text + (f"\nOnline: {url}\n{other}\n" if url else f"\n{other}\n")


def code_list() -> str:
    rows = [f"{code.code}  {code.severity:<11}  {code.title}" for code in CODES.values()]
    return "\n".join([*rows, "", "Run `echoes-lsp explain CODE` for a code's page."]) + "\n"


def main(argv: Sequence[str]) -> int:
    """The command; 2 for a wrong argument or an installation without the pages."""
    args: List[str] = list(argv)
    if args in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    if not args:
        sys.stdout.write(code_list())
        return 0
    if len(args) > 1:
        sys.stderr.write("echoes-lsp explain: one code at a time\n" + USAGE)
        return 2
    code = args[0].upper()
    if code not in CODES:
        sys.stderr.write(
            f"echoes-lsp explain: unknown code {args[0]!r}; `echoes-lsp explain` lists the "
            f"{len(CODES)} codes\n"
        )
        return 2
    folder = pages_folder()
    if folder is None:
        sys.stderr.write("echoes-lsp explain: this installation has no code pages\n")
        return 2
    with open(os.path.join(folder, f"{code}.md"), encoding="utf-8") as handle:
        sys.stdout.write(terminal_text(handle.read(), code))
    return 0
