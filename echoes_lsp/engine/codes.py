"""The diagnostic code table shared by the server and `echoes-lsp check`. Codes never change."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Dict, Iterable, NamedTuple, Optional

from ..runtime import echoes_vault as rules

# The documentation's address is declared once, as `Documentation` in pyproject.toml's
# `[project.urls]`; it is read from the installed package's metadata (or, run from a checkout
# that was never installed, from pyproject.toml itself). One page per code lives under codes/.
DISTRIBUTION = "echoes-lsp"
URL_KEY = "Documentation"
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYPROJECT = os.path.join(os.path.dirname(PACKAGE), "pyproject.toml")


def _documentation(project_urls: Iterable[str]) -> Optional[str]:
    """The address labelled `Documentation` among `Project-URL` values (`LABEL, ADDRESS`)."""
    for value in project_urls:
        label, _, url = value.partition(",")
        if label.strip() == URL_KEY and url.strip():
            return url.strip()
    return None


def _from_dist_info() -> Optional[str]:
    """The metadata of an installed wheel, read where the wheel puts it (beside the package):
    the quick way, as a check that reports addresses should not pay for a search of sys.path."""
    site = os.path.dirname(PACKAGE)
    try:
        found = [name for name in os.listdir(site) if name.startswith("echoes_lsp-")]
    except OSError:
        return None
    for name in sorted(found):
        if name.endswith(".dist-info"):
            try:
                with open(os.path.join(site, name, "METADATA"), encoding="utf-8") as handle:
                    head = handle.read().split("\n\n", 1)[0].split("\n")
            except OSError:
                continue
            values = [line.partition(":")[2] for line in head if line.startswith("Project-URL:")]
            return _documentation(values)
    return None


def _from_metadata() -> Optional[str]:
    """The metadata as importlib finds it (any other installation layout)."""
    from importlib import metadata  # here: most runs never need an address

    try:
        return _documentation(metadata.metadata(DISTRIBUTION).get_all("Project-URL") or [])
    except metadata.PackageNotFoundError:
        return None


def _from_pyproject() -> Optional[str]:
    """The address in a checkout's pyproject.toml (a plain line under `[project.urls]`)."""
    try:
        with open(PYPROJECT, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    section = re.search(r"^\[project\.urls\]\n(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
    if section is None:
        return None
    found = re.search(rf'^{URL_KEY}\s*=\s*"([^"]+)"', section.group(1), re.MULTILINE)
    return found.group(1) if found else None


@lru_cache(maxsize=1)
def docs_base() -> str:
    """The documentation's base address, ending in `/`: from the installed wheel's metadata, a
    checkout's pyproject.toml (what its metadata is made from, never stale), or the metadata
    importlib finds; empty when none declares one (links are then left out, never invented)."""
    url = _from_dist_info() or _from_pyproject() or _from_metadata() or ""
    return url if not url or url.endswith("/") else url + "/"


def docs_url(page: str = "diagnostics.md") -> str:
    """The address of a docs page (relative to docs/), or "" without a declared base."""
    base = docs_base()
    return base + page if base else ""


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
        """The code's page online ("" when no documentation address is declared)."""
        return docs_url(self.page)


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
        Code("EV702", "version of a page kept aside by an interrupted end", WARNING),
    )
}


def matches(code: str, selectors: tuple[str, ...] | list[str]) -> bool:
    """Whether a code is named by any selector: a full code (`EV300`) or a prefix (`EV3`, `EV`)."""
    upper = code.upper()
    return any(upper.startswith(selector.strip().upper()) for selector in selectors if selector)


# -- what to do -----------------------------------------------------------------------------------
# The runtime's messages say what is wrong, in bytes its JSON output keeps; the editor and `check`
# add what to do, here, after a colon. The protocol prescribes no vocabulary for `type`, `stack`
# or `status` (spec 7.2), so the advice names the accepted forms and the one word with a meaning.

FIELD_EXAMPLE: Dict[str, str] = {
    "type": "`type: process` (one word your team uses for the page's kind)",
    "stack": "`stack: [python]`, or `stack: []` when no technology applies",
    "status": "`status: active` (any word is accepted; `deprecated` marks an obsolete page)",
    "summary": f"`summary: ...`, one line of at most {rules.SUMMARY_LIMIT} characters saying what "
    "the page holds",
}
FIELD_VERB = {"EV104": "add", "EV105": "fill it in, e.g."}

CODE_ADVICE: Dict[str, str] = {
    "EV100": "start the file with a `---` line, the fields (type, stack, status, summary), "
    "and a closing `---`",
    "EV101": "add a `---` line after the last field",
    "EV103": "keep one of the lines and delete the other",
    "EV200": "shorten it; details belong in the page body",
    "EV201": "join its lines into one (the index shows one line per page)",
    "EV400": "keep one side (or merge both) and delete the marker lines "
    "(`<<<<<<<`, `=======`, `>>>>>>>`)",
}

FIELD_NAME = re.compile(r"`([A-Za-z][A-Za-z0-9_-]*)`")


def advise(code: str, message: str) -> str:
    """The runtime's message with what to do appended, for the codes that have advice."""
    if code in ("EV104", "EV105"):
        field = FIELD_NAME.search(message)
        example = FIELD_EXAMPLE.get(field.group(1)) if field else None
        advice = f"{FIELD_VERB[code]} {example}" if example else None
    else:
        advice = CODE_ADVICE.get(code)
    if not advice or "U+FEFF" in message:  # the byte-order-mark message says what to do already
        return message
    separator = "; " if ":" in message else ": "
    return f"{message}{separator}{advice}"
