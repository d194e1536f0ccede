"""What inlay hints show after a link: the first line of the block a `[[page#^block]]` names,
and `deprecated → replacement` after a link to a deprecated page. Plain values in engine
coordinates; `server/features/inlay_hints.py` turns them into LSP hints.

A page's text is untrusted and may quote a credential: the block text is masked with the
runtime's `mask_secrets` before it is cut, so no cut can leave part of a secret unmasked.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..runtime import echoes_vault as rules
from .findings import replacement
from .markdown import BlockId, Link, Structure
from .vault import PAGE, Entry, Vault

# A block's text is cut to this many characters (an ellipsis included).
BLOCK_TEXT_LIMIT = 60
# How far up a paragraph is followed to its first line.
BLOCK_LINES = 50
# Quote markers and a list item's marker, before a block's text.
LEAD = re.compile(r"^(?:\s*>)*\s*(?:[-*+]\s+|\d{1,9}[.)]\s+)?")
BLOCK_ID_AT_END = re.compile(r"\s*\^[A-Za-z0-9-]+\s*$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s")


class Hint(NamedTuple):
    """A hint shown at `column` of `line` (code points), after a link."""

    line: int
    column: int
    label: str


def _is_block_start(line: str) -> bool:
    """Whether a line opens a block of its own: a heading, a list item, a fence."""
    stripped = line.lstrip()
    return stripped.startswith(("#", "```", "~~~")) or LIST_ITEM.match(line) is not None


def block_first_line(lines: Sequence[str], block: BlockId) -> str:
    """The first line of the block that `^id` ends: its own line when the id follows text, else
    the block above it (an id on a line of its own names the block before it)."""
    number = block.line
    if number >= len(lines):
        return ""
    if not lines[number][: block.start].strip():
        number -= 1
        while number >= 0 and not lines[number].strip():
            number -= 1
        if number < 0:
            return ""
    top = max(0, number - BLOCK_LINES)
    while number > top and not _is_block_start(lines[number]):
        above = lines[number - 1]
        if not above.strip() or above.lstrip().startswith(("#", "```", "~~~", "---")):
            break
        number -= 1
    return lines[number]


def shown_text(line: str, limit: int = BLOCK_TEXT_LIMIT) -> str:
    """A block's line as a hint shows it: no quote or list marker, no block id, secrets masked,
    cut to `limit` characters."""
    text = BLOCK_ID_AT_END.sub("", LEAD.sub("", line, count=1)).strip()
    text = rules.mask_secrets(text)
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


class HintMaker:
    """The hints of one document's links. `lines_of` reads another file's lines (the open
    buffer, else the disk), at most once per file in one request."""

    def __init__(
        self,
        vault: Vault,
        source: Optional[Entry],
        own: Structure,
        own_lines: Sequence[str],
        lines_of: Callable[[str], Optional[Sequence[str]]],
    ) -> None:
        self.vault = vault
        self.source = source
        self.own = own
        self.own_lines = own_lines
        self._lines_of = lines_of
        self._read: Dict[str, Optional[Sequence[str]]] = {}
        self._labels: Dict[str, str] = {}
        self._pages: Dict[Tuple[bool, str], Optional[Entry]] = {}
        self._texts: Dict[Tuple[str, str], Optional[str]] = {}

    def page(self, link: Link) -> Optional[Entry]:
        """The page a link names (`[[#^id]]`: this page), remembered per link target."""
        key = (link.embed, link.target)
        if key not in self._pages:
            self._pages[key] = self._page(link)
        return self._pages[key]

    def _page(self, link: Link) -> Optional[Entry]:
        if link.is_asset:
            return None
        if not link.page_stem:
            source = self.source
            return source if source is not None and source.kind == PAGE else None
        return self.vault.page(link.page_stem)

    def block_text(self, link: Link, page: Entry) -> Optional[str]:
        """The first line of the block the link names, as shown; None when there is none."""
        own = page is self.source
        structure = self.own if own else page.structure
        if structure is None or link.block is None or not structure.has_block(link.block):
            return None
        block = next((b for b in structure.blocks if b.name == link.block), None)
        lines = self.own_lines if own else self._lines(page.path)
        if block is None or lines is None:
            return None
        return shown_text(block_first_line(lines, block)) or None

    def _lines(self, path: str) -> Optional[Sequence[str]]:
        if path not in self._read:
            self._read[path] = self._lines_of(path)
        return self._read[path]

    def deprecated_label(self, page: Entry) -> str:
        """`deprecated → replacement`, or `deprecated` when the page names no replacement."""
        label = self._labels.get(page.path)
        if label is None:
            found = replacement(self.vault, page)
            label = f"deprecated → {found.stem}" if found is not None else "deprecated"
            self._labels[page.path] = label
        return label

    def hints(self, links: Sequence[Link], block_text: bool, deprecated: bool) -> List[Hint]:
        """The hints after `links`: a deprecated target's first, then a block's text."""
        found: List[Hint] = []
        for link in links:
            if link.block is None and not deprecated:
                continue  # nothing to show after it: no page to look up
            page = self.page(link)
            if page is None:
                continue
            if deprecated and page.deprecated and page is not self.source:
                found.append(Hint(link.line, link.end, self.deprecated_label(page)))
            if block_text and link.block is not None:
                key = (page.path, link.block)
                if key not in self._texts:
                    self._texts[key] = self.block_text(link, page)
                text = self._texts[key]
                if text is not None:
                    found.append(Hint(link.line, link.end, text))
        return found
