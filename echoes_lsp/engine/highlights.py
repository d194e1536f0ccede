"""Document highlights: on a link, every link in the same file to the same page (and the same
heading or block when the link names one); on a heading or a `^block` of a page, the links in
this file that point at it, and the heading or block itself."""

from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from .link_targets import Subject, block_at, heading_at, link_at, link_key, names_subject
from .markdown import Link, Structure, heading_key
from .vault import PAGE, Entry

# At most this many highlights are given: a page of 200,000 links to one page would otherwise
# send megabytes for one cursor move.
HIGHLIGHT_LIMIT = 1000
# On a page of more links, only this many around the cursor are looked at (half before it).
LINK_WINDOW = 20000


class Highlight(NamedTuple):
    """A span on one line; `declaration` for the heading or block itself, else a link to it."""

    line: int
    start: int
    end: int
    declaration: bool = False


def _subject_of_link(link: Link, entry: Optional[Entry]) -> Optional[Subject]:
    key = link_key(link, entry)
    if key is None:
        return None
    return Subject(key, heading=link.heading or None, block=link.block)


def highlights(
    entry: Optional[Entry], structure: Structure, line: int, column: int
) -> List[Highlight]:
    """The highlights for a cursor, in document order; empty off links, headings and blocks."""
    link = link_at(structure, line, column)
    declared: List[Highlight] = []
    subject: Optional[Subject] = None
    if link is not None:
        if link.is_asset:
            return _same_asset(structure, link)
        subject = _subject_of_link(link, entry)
    elif entry is not None and entry.kind == PAGE:
        subject, declared = _declared_at(entry, structure, line, column)
    if subject is None:
        return []
    found = declared + _links_to(entry, structure, subject, line, column)
    if link is not None and entry is not None and subject.key == entry.key:
        found += _declarations(structure, subject)
    return sorted(set(found))[:HIGHLIGHT_LIMIT]


def _declared_at(
    entry: Entry, structure: Structure, line: int, column: int
) -> Tuple[Optional[Subject], List[Highlight]]:
    """The heading or block at the cursor of a page, and its highlight."""
    heading = heading_at(structure, line)
    if heading is not None:
        return Subject(entry.key, heading=heading.text), [
            Highlight(line, heading.start, heading.end, True)
        ]
    block = block_at(structure, line)
    if block is not None and column >= block.start:
        return Subject(entry.key, block=block.name), [Highlight(line, block.start, block.end, True)]
    return None, []


def _links_to(
    entry: Optional[Entry], structure: Structure, subject: Subject, line: int, column: int
) -> List[Highlight]:
    """The links to the subject among the `LINK_WINDOW` links around the cursor."""
    links = structure.links
    first = max(0, nearest_link(links, line, column) - LINK_WINDOW // 2)
    keys: Dict[Tuple[bool, str], Optional[str]] = {}  # one key per way of writing a target
    found: List[Highlight] = []
    for link in links[first : first + LINK_WINDOW]:
        written = (link.embed, link.target)
        key = keys.get(written, "")
        if key == "":
            key = keys[written] = link_key(link, entry)
        if key == subject.key and names_subject(link, subject):
            found.append(Highlight(link.line, link.start, link.end))
            if len(found) == HIGHLIGHT_LIMIT:
                break
    return found


def nearest_link(links: Sequence[Link], line: int, column: int) -> int:
    """The index of the first link at or after (line, column); links are in text order."""
    low, high = 0, len(links)
    while low < high:
        middle = (low + high) // 2
        if (links[middle].line, links[middle].start) < (line, column):
            low = middle + 1
        else:
            high = middle
    return low


def _declarations(structure: Structure, subject: Subject) -> List[Highlight]:
    """The heading or block of this page that a link on it names."""
    found: List[Highlight] = []
    if subject.heading is not None:
        wanted = heading_key(subject.heading)
        found = [
            Highlight(h.line, h.start, h.end, True)
            for h in structure.headings
            if heading_key(h.text) == wanted
        ]
    elif subject.block is not None:
        found = [
            Highlight(b.line, b.start, b.end, True)
            for b in structure.blocks
            if b.name == subject.block
        ]
    return found[:1]


def _same_asset(structure: Structure, link: Link) -> List[Highlight]:
    wanted = link.target.casefold()
    return [
        Highlight(other.line, other.start, other.end)
        for other in structure.links
        if other.is_asset and other.target.casefold() == wanted
    ][:HIGHLIGHT_LIMIT]
