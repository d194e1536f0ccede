"""Semantic tokens of a document kept line by line between requests: an editor asks for the
whole page again after every edit, and all but the edited lines are as they were.

A line's tokens depend on its text, on whether it lies in the frontmatter or in fenced code
(known per request from the whole text), and on what its links resolve to. So a row (one line's
tokens in client units) is kept per line text, with the page keys its links name; when the
vault changes a page, the rows naming it are dropped, and a change the model does not name (a
reload) drops them all. Rows of links to this page's own headings and blocks are kept while the
page's anchors stay the same. A line is parsed on its own (`scan` of one line finds what the
whole text's scan finds on it outside fenced code), so an edited page is never parsed whole.
"""

from __future__ import annotations

import os
import weakref
from collections import OrderedDict
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Set, Tuple

from ..engine.fuzzy import Steps
from ..engine.markdown import BlockId, Heading, Link, Structure, fenced_ranges, scan
from ..engine.token_spans import Resolver, link_spans
from ..engine.vault import Entry, Vault, key_of
from ..runtime import echoes_vault as rules
from .lsp_convert import Columns

# The key of a row that depends on this page's own headings and blocks, and of one that depends
# on an asset (any asset change drops it).
OWN = "\0own"
ASSETS = "\0assets"
# Documents of more lines are answered without keeping rows (their full answer is capped).
MAX_LINES = 20_000
MAX_TEXT = 2 * 1024 * 1024
# Rows are kept for this many documents, the most recently asked first.
KEPT_DOCUMENTS = 8
# A request gives way to other requests after making this many rows.
ROW_SLICE = 2_000


class LineFacts(NamedTuple):
    """What one line holds outside fenced code: its links, headings and block ids."""

    links: Tuple[Link, ...]
    headings: Tuple[Heading, ...]
    blocks: Tuple[BlockId, ...]


NOTHING = LineFacts((), (), ())


def scan_line(text: str) -> LineFacts:
    """A line's facts, read from the line alone."""
    if "[" not in text and "#" not in text and "^" not in text:
        return NOTHING
    found = scan(text)
    return LineFacts(tuple(found.links), tuple(found.headings), tuple(found.blocks))


def facts_by_line(structure: Structure) -> Dict[int, LineFacts]:
    """The facts of each line a whole-text structure has something on."""
    grouped: Dict[int, Tuple[List[Link], List[Heading], List[BlockId]]] = {}
    for link in structure.links:
        grouped.setdefault(link.line, ([], [], []))[0].append(link)
    for heading in structure.headings:
        grouped.setdefault(heading.line, ([], [], []))[1].append(heading)
    for block in structure.blocks:
        grouped.setdefault(block.line, ([], [], []))[2].append(block)
    return {
        line: LineFacts(tuple(links), tuple(headings), tuple(blocks))
        for line, (links, headings, blocks) in grouped.items()
    }


class Row(NamedTuple):
    """One line's tokens: the protocol's five integers per token, less the first token's line
    delta (set when the row is placed), and the keys whose change makes it stale."""

    data: Tuple[int, ...]
    keys: FrozenSet[str]


EMPTY_ROW = Row((), frozenset())


def fenced_lines(text: str, lines: Sequence[str]) -> List[Tuple[int, int]]:
    """The first and last line of each fenced code block (whole lines, as `scan` skips them)."""
    ranges = fenced_ranges(text)
    if not ranges:
        return []
    found = []
    line = offset = 0
    for start, end in ranges:
        while offset + len(lines[line]) < start:
            offset += len(lines[line]) + 1
            line += 1
        first = line
        while line + 1 < len(lines) and offset + len(lines[line]) < end:
            offset += len(lines[line]) + 1
            line += 1
        found.append((first, line))
    return found


def body_lines(lines: Sequence[str], is_page: bool) -> List[int]:
    """The numbers of the lines whose links count: after a page's frontmatter, outside fences."""
    body = 0
    if is_page:
        frontmatter = rules.parse_frontmatter(lines)
        if frontmatter is not None:
            body = frontmatter.body_line
    return list(range(body, len(lines)))


def page_key_of(path: str) -> str:
    """The key a page at `path` is linked by."""
    return key_of(rules.nfc(os.path.basename(path)[:-3]))


class DocumentRows:
    """The kept rows and line facts of one document, and its last full answer (for deltas)."""

    def __init__(self, vault: Vault, path: str, encoding: str) -> None:
        self.vault = vault
        self.path = path
        self.encoding = encoding
        self.facts: Dict[str, LineFacts] = {}
        self.rows: Dict[str, Row] = {}
        self.stale: Set[str] = set()
        self.own_anchors: Optional[str] = None
        self.result_id = ""
        self.data: List[int] = []

    def heard(self, path: Optional[str]) -> None:
        """A file of the vault changed (None: possibly every file)."""
        if path is None:
            self.rows.clear()
        elif path == self.path:
            self.stale.add(OWN)
        elif path.lower().endswith(".md"):
            self.stale.add(page_key_of(path))
        else:
            self.stale.add(ASSETS)

    def seed(self, structure: Structure, lines: Sequence[str], numbers: Sequence[int]) -> None:
        """Take the facts of a whole-text structure (the model's), rather than reading each
        line again."""
        by_line = facts_by_line(structure)
        for number in numbers:
            self.facts.setdefault(lines[number], by_line.get(number, NOTHING))

    def prune(self, lines: Sequence[str], numbers: Sequence[int]) -> None:
        """Keep only the current lines' facts and rows once edits have left many behind."""
        if len(self.facts) + len(self.rows) > 4 * len(numbers) + 1_000:
            current = {lines[number] for number in numbers}
            self.facts = {text: f for text, f in self.facts.items() if text in current}
            self.rows = {text: row for text, row in self.rows.items() if text in current}

    def line_facts(self, text: str) -> LineFacts:
        found = self.facts.get(text)
        if found is None:
            found = self.facts[text] = scan_line(text)
        return found

    def own_structure(self, facts: Sequence[LineFacts]) -> Structure:
        """This page's headings and blocks as the text now has them; rows that depend on them
        are dropped when they differ from the last request's."""
        headings = [heading for line in facts for heading in line.headings]
        blocks = [block for line in facts for block in line.blocks]
        own = Structure([], headings, blocks)
        if own.anchors != self.own_anchors:
            self.own_anchors = own.anchors
            self.stale.add(OWN)
        return own

    def drop_stale(self) -> None:
        """Drop the rows that name a changed page (at most one pass over the rows)."""
        if self.stale:
            stale = self.stale
            self.rows = {text: row for text, row in self.rows.items() if not row.keys & stale}
            self.stale = set()

    def row(self, text: str, facts: LineFacts, resolver: Resolver, columns: Columns) -> Row:
        found = self.rows.get(text)
        if found is None:
            found = self.rows[text] = make_row(text, facts, resolver, columns)
        return found


def make_row(text: str, facts: LineFacts, resolver: Resolver, columns: Columns) -> Row:
    """A line's tokens in client units, relative to each other, and the keys they depend on."""
    if not facts.links:
        return EMPTY_ROW
    keys: Set[str] = set()
    data: List[int] = []
    same = columns.same_as_code_points(text)
    previous = 0
    for link in facts.links:
        keys.update(dependencies(link, resolver))
        for span in link_spans(link, resolver.marks(link)):
            start, end = span.start, span.end
            if not same:
                start, end = columns.to_client(text, start), columns.to_client(text, end)
            if end <= start:
                continue
            data.extend((0, start - previous, end - start, span.kind, span.modifiers))
            previous = start
    return Row(tuple(data[1:]), frozenset(keys))


def dependencies(link: Link, resolver: Resolver) -> Tuple[str, ...]:
    """The keys whose change can change a link's tokens."""
    if link.is_asset:
        return (ASSETS,)
    if not link.page_stem:
        return (OWN,)
    key = key_of(link.page_stem)
    return (OWN, key) if resolver.state(link).anchors is resolver.own else (key,)


def row_steps(
    rows: DocumentRows,
    lines: Sequence[str],
    numbers: Sequence[int],
    resolver_of: ResolverOf,
    columns: Columns,
    placed: Placed,
) -> Steps[None]:
    """Add the tokens of the lines `numbers` to `placed`, yielding after every `ROW_SLICE` rows
    made."""
    facts = [rows.line_facts(lines[number]) for number in numbers]
    resolver = resolver_of(rows.own_structure(facts))
    rows.drop_stale()
    rows.prune(lines, numbers)
    made = 0
    for number, line_facts in zip(numbers, facts):
        if not line_facts.links:
            continue
        text = lines[number]
        if text not in rows.rows:
            made += 1
            if made % ROW_SLICE == 0:
                yield
        placed.add(number, rows.row(text, line_facts, resolver, columns).data)


class Placed:
    """The protocol's integers of a whole answer, row after row."""

    def __init__(self, data: List[int], previous: int) -> None:
        self.data = data
        self.previous = previous

    def add(self, number: int, row: Tuple[int, ...]) -> None:
        if row:
            self.data.append(number - self.previous)
            self.data.extend(row)
            self.previous = number


class ResolverOf:
    """Makes the resolver of a request once this page's own structure is known."""

    def __init__(self, vault: Vault, source: Optional[Entry]) -> None:
        self.vault = vault
        self.source = source

    def __call__(self, own: Structure) -> Resolver:
        return Resolver(self.vault, self.source, own)


def unfenced(numbers: List[int], fences: Sequence[Tuple[int, int]]) -> List[int]:
    """`numbers` without the lines of fenced code."""
    if not fences:
        return numbers
    inside: Set[int] = set()
    for first, last in fences:
        inside.update(range(first, last + 1))
    return [number for number in numbers if number not in inside]


class RowMemory:
    """The rows of the last few documents asked for, each told of every change of its vault."""

    def __init__(self) -> None:
        self._documents: OrderedDict[str, DocumentRows] = OrderedDict()
        self._followed: weakref.WeakSet[Vault] = weakref.WeakSet()

    def rows(self, vault: Vault, uri: str, path: str, encoding: str) -> DocumentRows:
        """The kept rows of a document, new ones when it is new (or its vault or units
        changed)."""
        found = self._documents.get(uri)
        if found is None or found.vault is not vault or found.encoding != encoding:
            found = DocumentRows(vault, path, encoding)
            self._documents[uri] = found
            if len(self._documents) > KEPT_DOCUMENTS:
                self._documents.popitem(last=False)
        self._documents.move_to_end(uri)
        if vault not in self._followed:
            self._followed.add(vault)
            vault.listeners.append(lambda path: self._heard(vault, path))
        return found

    def forget(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def _heard(self, vault: Vault, path: Optional[str]) -> None:
        for rows in self._documents.values():
            if rows.vault is vault:
                rows.heard(path)
