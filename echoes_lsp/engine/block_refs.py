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
from typing import List, NamedTuple, Optional, Sequence, Set

from ..runtime import echoes_vault as rules
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
    """One block: lines `first`..`last` (0-based, inclusive), the text its label shows, and the
    id on its lines (None when it has none)."""

    kind: str
    first: int
    last: int
    text: str
    name: Optional[str]


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


def _kind_of(line: str) -> Optional[str]:
    """What a line that starts a block starts; None for a line that is no block of its own."""
    stripped = line.lstrip(" \t")
    if stripped.startswith(">"):
        return CALLOUT if CALLOUT_HEAD.match(stripped) else QUOTE
    if LIST_MARKER.match(line):
        return LIST_ITEM
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
    if kind == LIST_ITEM:
        return next_kind == PARAGRAPH
    return kind == PARAGRAPH and next_kind == PARAGRAPH


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


def _block_at(lines: Sequence[str], start: int, kind: str) -> Block:
    """The block that begins at line `start`: its lines run to a blank line or a new block."""
    last = start
    if kind != LINE:
        while last + 1 < len(lines) and lines[last + 1].strip():
            if not _continues(kind, lines[last + 1]):
                break
            last += 1
    name = None
    for number in range(start, last + 1):
        name = line_id(lines[number]) or name
    return Block(kind, start, last, _label(kind, lines[start]), name)


def find_blocks(lines: Sequence[str]) -> List[Block]:
    """The blocks of a page's lines, in order, outside its frontmatter and fenced code.
    Headings and table rows count only when they carry an id (a link may already name it)."""
    blocks: List[Block] = []
    number = _body_start(lines)
    while number < len(lines):
        line = lines[number]
        if not line.strip():
            number += 1
            continue
        fence = FENCE_OPEN.match(line)
        if fence is not None:
            number = _fence_end(lines, number, fence.group(1)) + 1
            continue
        kind = _kind_of(line)
        assert kind is not None
        block = _block_at(lines, number, kind)
        if kind != LINE or block.name is not None:
            blocks.append(block)
        number = block.last + 1
    return blocks


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
