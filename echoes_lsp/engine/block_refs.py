"""The blocks of a page that a `[[page#^id]]` link can name: paragraphs, list items, callouts
and block quotes, each with the `^id` it carries or the fresh one it would get.

Obsidian names a block by a `^id` at the end of its last line. A block without one can still be
offered: it gets an id derived from its text, unique in the page, which the server adds to the
page through the runtime when the person picks it. One pass over the lines, no regex that can
backtrack, so a 5,000-line page is read in a few milliseconds.
"""

from __future__ import annotations

import hashlib
import re
from typing import Dict, List, NamedTuple, Optional, Sequence, Set

from ..runtime import echoes_vault as rules
from .fuzzy import fold
from .markdown import BLOCK_ID

PARAGRAPH = "paragraph"
LIST_ITEM = "list item"
CALLOUT = "callout"
QUOTE = "quote"
LINE = "line"  # a heading or table row that carries an id
# How much of a block's first line its label shows.
LABEL_CHARS = 80

LIST_MARKER = re.compile(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+|$)")
HEADING_LINE = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
CALLOUT_HEAD = re.compile(r">[ \t]*\[![A-Za-z-]+\][+-]?[ \t]*")


class Block(NamedTuple):
    """One block: lines `first`..`last` (0-based, inclusive), the text its label shows, the id
    on its lines (None when it has none), and the folded id and text a query is matched on."""

    kind: str
    first: int
    last: int
    text: str
    name: Optional[str]
    key: str


def line_id(line: str) -> Optional[str]:
    """The `^id` that ends a line, as the parser reads it (after a blank or at the start)."""
    if "^" not in line:
        return None
    match = BLOCK_ID.search(line)
    if match is None:
        return None
    start = match.start()
    if start > 0 and line[start - 1] not in " \t":
        return None
    return match.group(1)


def _body_start(lines: Sequence[str]) -> int:
    """The first line after a closed frontmatter block (0 when there is none)."""
    frontmatter = rules.parse_frontmatter(lines)
    if frontmatter is None or frontmatter.close_line is None:
        return 0
    return frontmatter.close_line + 1


# A line whose first character is none of these is a paragraph line (the common case, told
# without a regex).
MARKS = frozenset("-*+0123456789>#|`~")
FENCE = "fence"


def _kind_of(line: str) -> str:
    """What a non-blank line starts: a block kind, `fence`, or `line` (no block of its own)."""
    stripped = line.lstrip(" \t")
    if stripped[:1] not in MARKS:
        return PARAGRAPH
    if stripped.startswith(">"):
        return CALLOUT if CALLOUT_HEAD.match(stripped) else QUOTE
    if LIST_MARKER.match(line):
        return LIST_ITEM
    if FENCE_OPEN.match(line):
        return FENCE
    if stripped.startswith("#") and HEADING_LINE.match(line):
        return LINE
    if stripped.startswith("|"):
        return LINE
    return PARAGRAPH


def _continues(kind: str, line: str) -> bool:
    """Whether a non-blank line belongs to the block of `kind` above it."""
    next_kind = _kind_of(line)
    if kind in (CALLOUT, QUOTE):
        return next_kind in (CALLOUT, QUOTE) and not CALLOUT_HEAD.match(line.lstrip(" \t"))
    return next_kind == PARAGRAPH and kind in (PARAGRAPH, LIST_ITEM)


def _label(kind: str, line: str) -> str:
    """The text a block's first line shows, without its marker and its id."""
    text = line.strip()
    if kind == LIST_ITEM:
        marker = LIST_MARKER.match(line)
        text = line[marker.end() :].strip() if marker else text
    elif kind in (CALLOUT, QUOTE):
        head = CALLOUT_HEAD.match(text)
        text = text[head.end() :] if head else text.lstrip(">").strip()
    name = line_id(text)
    if name is not None:
        text = text[: len(text.rstrip()) - len(name) - 1].rstrip()
    return text


def _fence_end(lines: Sequence[str], start: int, fence: str) -> int:
    """The line that closes a fence opened at `start` (the last line when none does)."""
    for number in range(start + 1, len(lines)):
        stripped = lines[number].lstrip(" ")
        if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]).strip():
            return number
    return len(lines) - 1


def _block_end(lines: Sequence[str], start: int, kind: str) -> int:
    """The last line of the block that begins at `start`: it runs to a blank line or to a line
    that begins another block."""
    last = start
    if kind == LINE:
        return last
    total = len(lines)
    while last + 1 < total:
        following = lines[last + 1]
        if not following or following.isspace() or not _continues(kind, following):
            break
        last += 1
    return last


def _name_of(lines: Sequence[str], first: int, last: int) -> Optional[str]:
    """The id of a block: the last one on its lines."""
    name = None
    for number in range(first, last + 1):
        if "^" in lines[number]:
            name = line_id(lines[number]) or name
    return name


def find_blocks(lines: Sequence[str]) -> List[Block]:
    """The blocks of a page's lines, in order, outside its frontmatter and fenced code.
    Headings and table rows count only when they carry an id (a link may already name it)."""
    blocks: List[Block] = []
    number = _body_start(lines)
    total = len(lines)
    while number < total:
        line = lines[number]
        if not line or line.isspace():
            number += 1
            continue
        kind = _kind_of(line)
        if kind == FENCE:
            fence = FENCE_OPEN.match(line)
            assert fence is not None
            number = _fence_end(lines, number, fence.group(1)) + 1
            continue
        last = _block_end(lines, number, kind)
        name = _name_of(lines, number, last)
        if kind != LINE or name is not None:
            text = _label(kind, line)
            key = fold(f"{name} {text}" if name else text)
            blocks.append(Block(kind, number, last, text, name, key))
        number = last + 1
    return blocks


class Offer(NamedTuple):
    """What a block is offered as: its label (masked, shortened), the id a link to it names (its
    own, or the fresh one it gets) and, for a fresh one, the hash of the line that gets it."""

    label: str
    name: str
    line_sha256: Optional[str]


class PageBlocks:
    """The blocks of one text, and what each is offered as, worked out once per block: the
    fresh ids of a text stay the same from one completion to the next."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.blocks = find_blocks(self.lines)
        self.with_ids = [block for block in self.blocks if block.name]
        self._taken = {block.name.casefold() for block in self.with_ids if block.name}
        self._offers: Dict[int, Offer] = {}  # by the block's first line

    def offer(self, block: Block) -> Offer:
        known = self._offers.get(block.first)
        if known is None:
            label = label_text(block.text)
            if block.name:
                known = Offer(label, block.name, None)
            else:
                name = fresh_id(block.text, self._taken)
                known = Offer(label, name, rules.text_sha256(self.lines[block.last]))
            self._offers[block.first] = known
        return known


# The blocks of the last few texts, by the runtime's hash of the text: completing `[[page#^`
# while typing asks for the same unchanged page again and again.
_KNOWN: Dict[str, PageBlocks] = {}
KNOWN_TEXTS = 8


def blocks_of(text: str, sha256: str) -> PageBlocks:
    """The blocks of a text whose hash is `sha256`, remembered for the last few texts."""
    found = _KNOWN.get(sha256)
    if found is None:
        found = PageBlocks(text)
        if len(_KNOWN) >= KNOWN_TEXTS:
            del _KNOWN[next(iter(_KNOWN))]
        _KNOWN[sha256] = found
    return found


def fresh_id(text: str, taken: Set[str]) -> str:
    """An id for a block of this text that no other block of the page has (compared without
    case, as Obsidian compares them): six hexadecimal digits of the text's hash, so the same
    paragraph is offered the same id each time, then `-2`, `-3`... on a clash."""
    base = hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]
    name = base
    suffix = 1
    while name.casefold() in taken:
        suffix += 1
        name = f"{base}-{suffix}"
    taken.add(name.casefold())
    return name


def label_text(line: str) -> str:
    """A block's label: its first line with credential-shaped text masked, then shortened (masked
    first, so that a cut never leaves part of a secret unrecognised)."""
    masked = rules.mask_secrets(line) if line else line
    if len(masked) > LABEL_CHARS:
        return masked[: LABEL_CHARS - 1].rstrip() + "…"
    return masked
