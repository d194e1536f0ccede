"""What semantic tokens colour: the parts of each wikilink (target, heading, block, alias, embed)
and the frontmatter keys of a page, each with modifiers for an unresolved or deprecated target
and an unknown key. Plain values in engine coordinates; `server/features/semantic_tokens.py`
encodes them for the protocol.

The token types are standard LSP types, chosen so that editors' default themes colour them
without configuration; `docs/server.md` lists the mapping.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from ..runtime import echoes_vault as rules
from .fuzzy import Steps
from .markdown import Link, Structure, heading_key
from .vault import PAGE, Entry, Vault

# The legend: a span's `kind` indexes TOKEN_TYPES; `modifiers` is a bit set over TOKEN_MODIFIERS.
TOKEN_TYPES = ("namespace", "macro", "function", "enumMember", "string", "property")
TARGET, EMBED, HEADING, BLOCK, ALIAS, KEY = range(len(TOKEN_TYPES))
TOKEN_MODIFIERS = ("deprecated", "unresolved", "unknown")
DEPRECATED, UNRESOLVED, UNKNOWN = (1 << index for index in range(len(TOKEN_MODIFIERS)))
# A full request on a huge page stops after this many spans (a range request is never cut).
FULL_LIMIT = 50_000
# A full request gives way to other requests after this many links: about 10 ms of work on a
# quiet machine, so a page of a few thousand links is answered in one piece.
LINK_SLICE = 5_000


class Span(NamedTuple):
    """One token: 0-based line, code-point columns, a TOKEN_TYPES index and a modifier set."""

    line: int
    start: int
    end: int
    kind: int
    modifiers: int


class LinkState(NamedTuple):
    """What a link's page name resolves to: the modifiers of its target, and the structure its
    anchors are looked up in (None when the page does not exist)."""

    modifiers: int
    anchors: Optional[Structure]


class Resolver:
    """Resolves the links of one document, remembering each target text: a page names the same
    few pages again and again."""

    def __init__(self, vault: Vault, source: Optional[Entry], own: Structure) -> None:
        self.vault = vault
        self.source = source
        self.own = own
        self._known: Dict[Tuple[bool, str], LinkState] = {}
        self._marks: Dict[Tuple[bool, str, Optional[str], Optional[str]], Tuple[int, int]] = {}

    def marks(self, link: Link) -> Tuple[int, int]:
        """The modifiers of a link's target and of its anchor, remembered per link text."""
        key = (link.embed, link.target, link.heading, link.block)
        found = self._marks.get(key)
        if found is None:
            state = self.state(link)
            found = self._marks[key] = (state.modifiers, anchor_modifiers(link, state.anchors))
        return found

    def state(self, link: Link) -> LinkState:
        key = (link.embed, link.target)  # the two decide `is_asset`
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = self._resolve(link)
        return found

    def _resolve(self, link: Link) -> LinkState:
        if link.is_asset:
            exists = self.vault.asset_exists(link.target)
            return LinkState(0 if exists else UNRESOLVED, None)
        if not link.page_stem:  # `[[#heading]]`: this page
            own_page = self.source is not None and self.source.kind == PAGE
            return LinkState(0, self.own) if own_page else LinkState(UNRESOLVED, None)
        page = self.vault.page(link.page_stem)
        if page is None:
            return LinkState(UNRESOLVED, None)
        if page is self.source:
            return LinkState(0, self.own)
        return LinkState(DEPRECATED if page.deprecated else 0, page.structure)


def anchor_modifiers(link: Link, anchors: Optional[Structure]) -> int:
    """UNRESOLVED when the heading or block a link names is not in its page."""
    if anchors is None:
        return UNRESOLVED
    if link.heading:
        return 0 if anchors.has_heading(heading_key(link.heading)) else UNRESOLVED
    if link.block is not None:
        return 0 if anchors.has_block(link.block) else UNRESOLVED
    return 0


def link_spans(link: Link, marks: Tuple[int, int]) -> List[Span]:
    """The spans of one link, in column order, given the modifiers of its target and anchor
    (`Resolver.marks`); empty parts (`[[#h]]` has no target) are left out."""
    line = link.line
    spans = []
    if link.target_end > link.target_start:
        kind = EMBED if link.embed else TARGET
        spans.append(Span(line, link.target_start, link.target_end, kind, marks[0]))
    if link.anchor_end > link.anchor_start:  # a `#heading` or `#^block` that names something
        part = HEADING if link.block is None else BLOCK
        spans.append(Span(line, link.anchor_start, link.anchor_end, part, marks[1]))
    if link.alias:
        spans.append(Span(line, link.anchor_end + 1, link.end - 2, ALIAS, 0))
    return spans


def key_spans(lines: Sequence[str], first: int = 0, last: Optional[int] = None) -> List[Span]:
    """The frontmatter keys of a page on lines `first`..`last`; a key the protocol does not
    require (additional keys are allowed and kept) is UNKNOWN. A frontmatter never closed has
    no keys: its lines are body (their links are read), and tokens must come in line order."""
    frontmatter = rules.parse_frontmatter(lines)
    if frontmatter is None:
        return []
    spans = []
    for field in frontmatter.fields.values():
        outside = field.line < first or (last is not None and field.line > last)
        if outside or field.line >= frontmatter.body_line:
            continue
        modifiers = 0 if field.key in rules.REQUIRED_FIELDS else UNKNOWN
        start = field.key_start
        spans.append(Span(field.line, start, start + len(field.key), KEY, modifiers))
    spans.sort()
    return spans


def first_link_on(links: Sequence[Link], line: int) -> int:
    """The index of the first link on or after `line` (the links are in document order)."""
    low, high = 0, len(links)
    while low < high:
        middle = (low + high) // 2
        if links[middle].line < line:
            low = middle + 1
        else:
            high = middle
    return low


def links_between(links: Sequence[Link], first: int, last: int) -> Sequence[Link]:
    """The links on lines `first`..`last`, found by two binary searches."""
    return links[first_link_on(links, first) : first_link_on(links, last + 1)]


def span_steps(
    resolver: Resolver, links: Sequence[Link], limit: Optional[int] = None, step: int = LINK_SLICE
) -> Steps[Tuple[List[Span], bool]]:
    """The spans of `links`, yielding after every `step` links; then whether `limit` cut them."""
    spans: List[Span] = []
    for begin in range(0, len(links), step):
        for link in links[begin : begin + step]:
            spans.extend(link_spans(link, resolver.marks(link)))
            if limit is not None and len(spans) >= limit:
                return spans[:limit], True
        yield
    return spans, False


def all_spans(resolver: Resolver, links: Iterable[Link]) -> List[Span]:
    """Every span of `links`, at once."""
    spans: List[Span] = []
    for link in links:
        spans.extend(link_spans(link, resolver.marks(link)))
    return spans
