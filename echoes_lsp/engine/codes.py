"""The diagnostic code table shared by the server and `echoes-lsp check`. Codes never change."""

from __future__ import annotations

from typing import Dict, NamedTuple

# The documentation: one page per code under docs/codes/, rendered by GitHub and by the site.
DOCS_URL = "https://github.com/echoes-lsp/echoes-lsp/blob/main/docs/diagnostics.md"
CODE_PAGES_URL = "https://github.com/echoes-lsp/echoes-lsp/blob/main/docs/codes/"

ERROR = "error"
WARNING = "warning"
INFORMATION = "information"
HINT = "hint"
OFF = "off"
SEVERITIES = (ERROR, WARNING, INFORMATION, HINT, OFF)
SEVERITY_RANK = {HINT: 0, INFORMATION: 1, WARNING: 2, ERROR: 3}


class Code(NamedTuple):
    code: str
    title: str
    severity: str

    @property
    def page(self) -> str:
        """The code's documentation page, relative to docs/."""
        return f"codes/{self.code}.md"

    @property
    def url(self) -> str:
        return f"{CODE_PAGES_URL}{self.code}.md"


CODES: Dict[str, Code] = {
    entry.code: entry
    for entry in (
        Code("EV100", "page does not begin with a frontmatter block", ERROR),
        Code("EV101", "frontmatter not closed", ERROR),
        Code("EV102", "malformed frontmatter line or key", ERROR),
        Code("EV103", "duplicate frontmatter key", ERROR),
        Code("EV104", "required field missing", ERROR),
        Code("EV105", "required field empty", ERROR),
        Code("EV200", "summary longer than 160 characters", ERROR),
        Code("EV201", "summary not on one line", ERROR),
        Code("EV202", "summary is still a placeholder", WARNING),
        Code("EV300", "link to a page that does not exist", WARNING),
        Code("EV301", "link to a deprecated page", INFORMATION),
        Code("EV302", "asset missing from assets/", WARNING),
        Code("EV303", "heading or block not found in the linked page", WARNING),
        Code("EV310", "deprecated page lacks the DEPRECATED callout", INFORMATION),
        Code("EV311", "deprecated page names no replacement link", HINT),
        Code("EV400", "unresolved Git conflict marker", ERROR),
        Code("EV401", "file is not valid UTF-8 or cannot be read", ERROR),
        Code("EV402", "index.md edited by hand", WARNING),
        Code("EV403", "index.md out of date", INFORMATION),
        Code("EV500", "unsafe page filename", ERROR),
        Code("EV501", "page name collides with another after NFC and case folding", ERROR),
        Code("EV502", "nested folder or non-.md file in pages/", WARNING),
        Code("EV503", "symbolic link inside the vault, or a linked vault folder", ERROR),
        Code("EV504", "legacy shared daily file daily/YYYY-MM-DD.md", WARNING),
        Code("EV600", "credential-shaped text", ERROR),
        Code("EV700", "marker missing or protocolVersion unsupported: vault is read-only", WARNING),
        Code("EV701", "page changed on disk since it was opened", ERROR),
    )
}


def matches(code: str, selectors: tuple[str, ...] | list[str]) -> bool:
    """Whether a code is named by any selector: a full code (`EV300`) or a prefix (`EV3`, `EV`)."""
    upper = code.upper()
    return any(upper.startswith(selector.strip().upper()) for selector in selectors if selector)
