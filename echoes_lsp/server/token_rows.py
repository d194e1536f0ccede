"""Semantic tokens and inlay hints of a document kept line by line between requests: an editor
asks for the whole page again after every edit, and all but the edited lines are as they were.

A line's tokens depend on its text, on whether it lies in the frontmatter or in fenced code
(known per request from the whole text), and on what its links resolve to. So a row (one line's
tokens in client units) is kept per line text, with the page keys its links name; when the
vault changes a page, the rows naming it are dropped, and a change the model does not name (a
reload) drops them all. Rows of links to this page's own headings and blocks are kept while the
page's anchors stay the same (hint rows of such links are made for every request: a block's
text may have changed on any line). A line is parsed on its own (`scan` of one line finds what the
whole text's scan finds on it outside fenced code), so an edited page is never parsed whole.

The last whole answer of each kind is kept too (`TokenAnswer`, `HintAnswer`): after an edit that
adds or removes no line, drops no kept row and moves no line into or out of fenced code, the
next answer is the last one with the changed lines made again, so a keystroke costs its line.
"""

from __future__ import annotations

import os
import weakref
from bisect import bisect_left
from collections import OrderedDict
from itertools import chain, compress, count, groupby, repeat
from operator import add, attrgetter, is_not, itemgetter, ne, sub
from typing import (
    Any,
    Callable,
    Dict,
    FrozenSet,
    Generic,
    Iterable,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    TypeVar,
    cast,
)

from ..engine.folding import fence_lines
from ..engine.fuzzy import Steps
from ..engine.hint_texts import HintMaker
from ..engine.markdown import BlockId, Heading, Link, Structure, anchors_of, heading_key, scan
from ..engine.token_spans import Resolver, link_spans
from ..engine.vault import Vault, key_of
from ..runtime import echoes_vault as rules
from .lsp_convert import Columns, hint_pieces, int_texts, json_ints

# The key of a row that depends on this page's own headings and blocks, and of one that depends
# on an asset (any asset change drops it).
OWN = "\0own"
ASSETS = "\0assets"
# The key of a row that depends on any page of the vault (a deprecated page's replacement).
ANY_PAGE = "\0pages"
# Documents of more lines are answered without keeping rows (their full answer is capped).
MAX_LINES = 20_000
MAX_TEXT = 2 * 1024 * 1024
# More changed files than this between two requests drop every row (a reload, a checkout).
HEARD_LIMIT = 1_000
# Rows are kept for this many documents, the most recently asked first.
KEPT_DOCUMENTS = 8
R = TypeVar("R")
# More lines changed than this since the last request: all the lines are read again.
EDITED_LINES = 64
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


def has_marks(facts: LineFacts) -> bool:
    """Whether a line holds a heading or a block id (this page's own structure)."""
    return bool(facts.headings or facts.blocks)


def facts_by_line(structure: Structure) -> Dict[int, LineFacts]:
    """The facts of each line a whole-text structure has something on (each list of the
    structure is in line order)."""
    by_line = attrgetter("line")
    links = {line: tuple(group) for line, group in groupby(structure.links, by_line)}
    headings = {line: tuple(group) for line, group in groupby(structure.headings, by_line)}
    blocks = {line: tuple(group) for line, group in groupby(structure.blocks, by_line)}
    return {
        line: LineFacts(links.get(line, ()), headings.get(line, ()), blocks.get(line, ()))
        for line in links.keys() | headings.keys() | blocks.keys()
    }


def missing(items: Sequence[Optional[object]]) -> Iterator[int]:
    """The indexes of the None items, each found by a C-speed search from the one before (the
    items may be filled in meanwhile)."""
    at = 0
    while True:
        try:
            at = items.index(None, at)
        except ValueError:
            return
        yield at
        at += 1


class Row(NamedTuple):
    """One line's tokens: the protocol's five integers per token, less the first token's line
    delta (set when the row is placed), the keys whose change makes it stale, and the
    integers as JSON, each after a comma (an answer is written from the rows' texts)."""

    data: Tuple[int, ...]
    keys: FrozenSet[str]
    json: str


EMPTY_ROW = Row((), frozenset(), "")


def fenced_lines(text: str, lines: Sequence[str], body: int = 0) -> List[Tuple[int, int]]:
    """The first and last line of each fenced code block from line `body` on (whole lines, as
    `scan` skips them): a fence opened in the frontmatter is no fence, as the scan of the whole
    text reads the body alone."""
    begin = sum(len(line) + 1 for line in lines[:body])
    return fence_lines(text[begin:] if begin else text, body)


def body_line(lines: Sequence[str], is_page: bool) -> int:
    """The first line whose links count: after a page's frontmatter."""
    if is_page:
        frontmatter = rules.parse_frontmatter(lines)
        if frontmatter is not None:
            return int(frontmatter.body_line)
    return 0


def page_key_of(path: str) -> str:
    """The key a page at `path` is linked by."""
    return key_of(rules.nfc(os.path.basename(path)[:-3]))


class Rows(Generic[R]):
    """Rows of one kind kept per line text, the texts of the rows that name each key (so that a
    change drops its rows without a pass over all of them: an edit of a heading changes this
    page's key, and a page has thousands of rows), and the keys changed since."""

    def __init__(self, keys_of: Callable[[R], FrozenSet[str]]) -> None:
        self._keys_of = keys_of
        self._rows: Dict[str, R] = {}
        self._naming: Dict[str, Set[str]] = {}
        self._stale: Set[str] = set()
        # counts the times rows were dropped: an answer made of rows is still right while the
        # count is what it was when it was made
        self.generation = 0

    def mark(self, keys: Iterable[str]) -> None:
        """These keys changed: the rows that name them are dropped before the next use."""
        self._stale.update(keys)

    def clear(self) -> None:
        self._rows.clear()
        self._naming.clear()
        self._stale.clear()
        self.generation += 1

    def fresh(self) -> Mapping[str, R]:
        """The rows that name no changed key. A row is added with `put`, never to this."""
        if self._stale:
            dropped = [self._rows.pop(text, None) for text in self._named(self._stale)]
            if dropped.count(None) < len(dropped):
                self.generation += 1
            self._stale = set()
        return self._rows

    def _named(self, keys: Set[str]) -> Set[str]:
        """The texts of the rows that named `keys` (a row since replaced may be among them:
        dropping it too is safe), forgotten."""
        texts: Set[str] = set()
        for key in keys:
            texts.update(self._naming.pop(key, ()))
        return texts

    def put(self, text: str, row: R) -> None:
        self._rows[text] = row
        for key in self._keys_of(row):
            self._naming.setdefault(key, set()).add(text)

    def prune(self, current: Set[str]) -> None:
        """Keep the rows of the texts `current` only."""
        rows = {text: row for text, row in self._rows.items() if text in current}
        if len(rows) != len(self._rows):
            self.generation += 1
        self._rows = {}
        self._naming = {}
        for text, row in rows.items():
            self.put(text, row)


class DocumentRows:
    """The line facts of one document, its kept token and hint rows, and its last full token
    answer (the base of a delta)."""

    def __init__(self, vault: Vault, path: str, encoding: str) -> None:
        self.vault = vault
        self.path = path
        self.encoding = encoding
        self._facts: Dict[str, LineFacts] = {}
        self.tokens: Rows[Row] = Rows(attrgetter("keys"))
        self.hints: Rows[HintRow] = Rows(attrgetter("keys"))
        self.hint_settings: Tuple[bool, bool] = (True, True)
        # this page's headings and blocks, and the lines that hold them, when last read
        self.own = Structure([], [], [])
        self.own_anchors: Optional[str] = None
        self._keys: Dict[str, str] = {}  # the key of each heading text of this page
        # the lines, code-free stretches and found lines of the last request
        self._last: Optional[Tuple[Sequence[str], Tuple[Tuple[int, int], ...], Found]] = None
        # the found lines `own` was made from, and those the last found lines have the same
        # headings and block ids as (None: not known)
        self._own_of: Optional[Found] = None
        self._marks_as: Optional[Found] = None
        # two lists of lines the last request compared, and the numbers of those that differ
        self._compared: Optional[Tuple[Sequence[str], Sequence[str], List[int]]] = None
        self.result_id = ""
        self._data: List[int] = []
        # the whole document's tokens and hints as last answered
        self.token_answer: Optional[TokenAnswer] = None
        self.hint_answer: Optional[HintAnswer] = None
        # the files the vault changed since the last request (all of them: `_heard_all`)
        self._heard: Set[str] = set()
        self._heard_all = False

    @property
    def seeded(self) -> bool:
        return bool(self._facts)

    def heard(self, path: Optional[str]) -> None:
        """A file of the vault changed (None: possibly every file). Only noted: a reload or a
        burst of disk changes tells of many files, and they are read at the next request."""
        if path is None or len(self._heard) >= HEARD_LIMIT:
            self._heard_all = True
            self._heard.clear()
        elif not self._heard_all:
            self._heard.add(path)

    def settle(self) -> None:
        """Mark the keys of the files changed since the last request."""
        if self._heard_all:
            self.tokens.clear()
            self.hints.clear()
        keys = {self.key_of(path) for path in self._heard}
        if keys - {OWN, ASSETS}:
            keys.add(ANY_PAGE)
        self.tokens.mark(keys)
        self.hints.mark(keys)
        self._heard_all = False
        self._heard.clear()

    def key_of(self, path: str) -> str:
        """The key of the rows a change of the file at `path` makes stale."""
        if path == self.path:
            return OWN
        if path.lower().endswith(".md"):
            return page_key_of(path)
        return ASSETS

    def answered(self, data: List[int], result_id: str) -> Tuple[str, List[int]]:
        """Keep a full answer as the base of the next delta; the one it replaces."""
        before = (self.result_id, self._data)
        self.result_id, self._data = result_id, data
        return before

    def seed(self, structure: Structure, lines: Sequence[str]) -> None:
        """Take the facts of a whole-text structure (the model's), rather than reading each
        line again."""
        by_line = facts_by_line(structure)
        for number, text in enumerate(lines):
            self._facts.setdefault(text, by_line.get(number, NOTHING))

    @property
    def lines(self) -> Sequence[str]:
        """The lines of the last request."""
        return self._last[0] if self._last is not None else ()

    @property
    def segments(self) -> Tuple[Tuple[int, int], ...]:
        """The code-free stretches of the lines of the last request."""
        return self._last[1] if self._last is not None else ()

    def made_from(self, kept: Rows[R]) -> MadeFrom:
        """What an answer made now from `kept` (this document's token or hint rows) is made
        from."""
        return MadeFrom(self.lines, self.segments, kept.generation)

    def edited_since(self, before: MadeFrom, kept: Rows[R]) -> Optional[List[int]]:
        """The lines of the last request that differ from those an answer made from `kept` was
        made from, when every other line's part of it is still right (no kept row dropped
        since, no line added, removed or moved into or out of fenced code) and only a few
        differ; else None."""
        lines = self.lines
        if (
            before.generation != kept.generation
            or before.segments != self.segments
            or len(before.lines) != len(lines)
        ):
            return None
        compared = self._compared
        if compared is not None and compared[0] is before.lines and compared[1] is lines:
            changed = compared[2]  # the last request compared the same two lists
        else:
            changed = list(compress(count(), map(ne, before.lines, lines)))
        return changed if len(changed) <= EDITED_LINES else None

    def current(self, lines: Sequence[str], segments: Sequence[Tuple[int, int]]) -> Found:
        """The lines of `segments` that hold something: the last request's, with the lines
        that changed since read again, when only a few did and no line was added, removed or
        moved into or out of fenced code; else read from all the lines."""
        self.settle()
        self._marks_as = None
        found = self._edited(lines, segments)
        if found is None:
            found = self._read_all(lines, segments)
        self._last = (lines, tuple(segments), found)
        if len(self._facts) > 2 * len(lines) + 1_000:  # edits left many behind
            self.forget_others(set(found.texts))
        return found

    def _edited(self, lines: Sequence[str], segments: Sequence[Tuple[int, int]]) -> Optional[Found]:
        """The last request's lines with the few that differ now read again (each line's facts
        depend on its text alone). Finding them is one C-speed comparison of the two lists."""
        last = self._last
        if last is None or len(last[0]) != len(lines) or last[1] != tuple(segments):
            return None
        changed = list(compress(count(), map(ne, last[0], lines)))
        self._compared = (last[0], lines, changed)
        if len(changed) > EDITED_LINES:
            return None
        before = last[2]
        found = Found(list(before.numbers), list(before.texts), list(before.facts))
        marked = False
        for number in changed:
            facts = self.facts_of(lines[number])
            replaced = found.place(number, lines[number], facts, segments)
            marked = marked or has_marks(replaced) or has_marks(facts)
        # no heading or block id came or went: this page's own structure is as before
        self._marks_as = None if marked else before
        return found

    def facts_of(self, text: str) -> LineFacts:
        facts = self._facts.get(text)
        if facts is None:
            facts = self._facts[text] = scan_line(text)
        return facts

    def _read_all(self, lines: Sequence[str], segments: Sequence[Tuple[int, int]]) -> Found:
        """Every step runs over all the lines of a page, so each is a C-speed map or filter
        rather than a loop of Python steps."""
        facts: List[Optional[LineFacts]] = list(map(self._facts.get, lines))
        for at in missing(facts):  # lines never seen: the edited ones
            facts[at] = self._facts[lines[at]] = scan_line(lines[at])
        found = Found([], [], [])
        for start, stop in segments:
            part = facts[start:stop]
            holds = list(map(is_not, part, repeat(NOTHING)))
            found.numbers.extend(compress(range(start, stop), holds))
            found.texts.extend(compress(lines[start:stop], holds))
            found.facts.extend(compress(part, holds))  # type: ignore[arg-type]
        return found

    def forget_others(self, current: Set[str]) -> None:
        self._facts = {text: f for text, f in self._facts.items() if text in current}
        self.tokens.prune(current)
        self.hints.prune(current)

    def own_structure(self, found: Found) -> Structure:
        """This page's headings and blocks as the text now has them (blocks on their lines);
        rows that depend on them are dropped when they differ from the last request's."""
        if self._marks_as is not None and self._marks_as is self._own_of:
            self._own_of = found
            return self.own
        self._own_of = found
        headings = list(chain.from_iterable(map(itemgetter(1), found.facts)))
        blocks_of = list(map(bool, map(itemgetter(2), found.facts)))
        blocks = [
            BlockId(block.name, number, block.start, block.end)
            for number, facts in compress(zip(found.numbers, found.facts), blocks_of)
            for block in facts.blocks
        ]
        keys = self._heading_keys(list(map(attrgetter("text"), headings)))
        anchors = anchors_of(keys, map(attrgetter("name"), blocks))
        self.own = Structure([], headings, blocks, anchors)
        if anchors != self.own_anchors:
            self.own_anchors = anchors
            self.tokens.mark([OWN])
        return self.own

    def _heading_keys(self, texts: List[str]) -> List[str]:
        """The `heading_key` of each heading text, remembered for this page: after an edit of
        a heading its thousand others are the same."""
        known = self._keys
        if len(known) > 2 * len(texts) + 1_000:
            known.clear()
        keys: List[Optional[str]] = list(map(known.get, texts))
        for at in missing(keys):
            keys[at] = known[texts[at]] = heading_key(texts[at])
        return cast(List[str], keys)  # every heading has its key now


class Found(NamedTuple):
    """The lines of a page that hold something: their numbers, texts and facts, in order."""

    numbers: List[int]
    texts: List[str]
    facts: List[LineFacts]

    def place(
        self, number: int, text: str, facts: LineFacts, segments: Sequence[Tuple[int, int]]
    ) -> LineFacts:
        """Put line `number` as it now reads: in, replaced or out (a line holds something when
        its facts are not `NOTHING` and it lies in one of `segments`); the facts it had."""
        at = bisect_left(self.numbers, number)
        present = at < len(self.numbers) and self.numbers[at] == number
        replaced = self.facts[at] if present else NOTHING
        holds = facts is not NOTHING and any(start <= number < stop for start, stop in segments)
        if present and holds:
            self.texts[at], self.facts[at] = text, facts
        elif present:
            del self.numbers[at], self.texts[at], self.facts[at]
        elif holds:
            self.numbers.insert(at, number)
            self.texts.insert(at, text)
            self.facts.insert(at, facts)
        return replaced

    def only(self, numbers: Iterable[int]) -> Found:
        """The lines among `numbers` (in order) that hold something."""
        found = Found([], [], [])
        for number in numbers:
            at = bisect_left(self.numbers, number)
            if at < len(self.numbers) and self.numbers[at] == number:
                found.numbers.append(number)
                found.texts.append(self.texts[at])
                found.facts.append(self.facts[at])
        return found


def make_row(
    text: str,
    facts: LineFacts,
    resolver: Resolver,
    columns: Columns,
    memo: Dict[Tuple[bool, str], Tuple[str, ...]],
) -> Row:
    """A line's tokens in client units, relative to each other, and the keys they depend on
    (`memo`: the keys of each link target, known once per request)."""
    if not facts.links:
        return EMPTY_ROW
    keys: Set[str] = set()
    data: List[int] = []
    same = columns.same_as_code_points(text)
    previous = 0
    for link in facts.links:
        depends = memo.get((link.embed, link.target))
        if depends is None:
            depends = memo[(link.embed, link.target)] = dependencies(link, resolver)
        keys.update(depends)
        for span in link_spans(link, resolver.marks(link)):
            start, end = span.start, span.end
            if not same:
                start, end = columns.to_client(text, start), columns.to_client(text, end)
            if end <= start:
                continue
            data.extend((0, start - previous, end - start, span.kind, span.modifiers))
            previous = start
    return Row(tuple(data[1:]), frozenset(keys), "," + json_ints(data[1:]))


def dependencies(link: Link, resolver: Resolver) -> Tuple[str, ...]:
    """The keys whose change can change a link's tokens."""
    if link.is_asset:
        return (ASSETS,)
    if not link.page_stem:
        return (OWN,)
    key = key_of(link.page_stem)
    return (OWN, key) if resolver.state(link).anchors is resolver.own else (key,)


def token_steps(
    rows: DocumentRows,
    found: Found,
    resolver: Resolver,
    columns: Columns,
    placed: Placed,
) -> Steps[None]:
    """Add the tokens of the lines `found` (those of the last request that hold something) to
    `placed`, yielding after every `ROW_SLICE` rows made. After an edit the last answer is
    kept but for the lines that changed, and the lines after them whose line delta did."""
    rows.tokens.fresh()  # the rows the vault's changes made stale are dropped, and counted
    made_from = rows.made_from(rows.tokens)
    last = rows.token_answer
    changed = None
    if last is not None and last.previous == placed.previous:
        changed = rows.edited_since(last.made_from, rows.tokens)
    if last is None or changed is None:
        numbers, shown = yield from shown_rows(rows.tokens, found, resolver, columns)
        pieces = list(map(add, int_texts(deltas(numbers, placed.previous)), jsons(shown)))
        answer = TokenAnswer(made_from, placed.previous, numbers, shown, pieces)
    else:
        answer = last.edited(changed, made_from, rows.tokens, found, resolver, columns)
    rows.token_answer = answer
    data = placed.data
    for delta, row in zip(deltas(answer.numbers, placed.previous), answer.shown):
        data.append(delta)  # a row's integers are copied at once, not one by one
        data.extend(row.data)
    placed.json.extend(answer.pieces)


def shown_rows(
    tokens: Rows[Row], found: Found, resolver: Resolver, columns: Columns
) -> Steps[Tuple[List[int], List[Row]]]:
    """The lines of `found` that show tokens, and their rows, yielding after every `ROW_SLICE`
    rows made. Kept rows are looked up and the lines chosen by C-speed maps (a page has
    thousands)."""
    kept = tokens.fresh()
    lines: List[Optional[Row]] = list(map(kept.get, found.texts))
    made = 0
    memo: Dict[Tuple[bool, str], Tuple[str, ...]] = {}
    for at in missing(lines):  # rows not kept: made now
        text = found.texts[at]
        row = kept.get(text) or make_row(text, found.facts[at], resolver, columns, memo)
        lines[at] = row
        tokens.put(text, row)
        made += 1
        if made % ROW_SLICE == 0:
            yield
    datas = list(map(itemgetter(0), cast(List[Row], lines)))  # every line has its row now
    return list(compress(found.numbers, datas)), list(compress(cast(List[Row], lines), datas))


def deltas(numbers: List[int], previous: int) -> List[int]:
    """The line delta of each of the lines `numbers`, the first from line `previous`."""
    return list(map(sub, numbers, [previous] + numbers[:-1]))


def jsons(shown: Iterable[Row]) -> Iterator[str]:
    return map(attrgetter("json"), shown)


class MadeFrom(NamedTuple):
    """What a whole document's answer was made from: its lines, their code-free stretches, and
    the generation of the kept rows then."""

    lines: Sequence[str]
    segments: Tuple[Tuple[int, int], ...]
    generation: int


class TokenAnswer(NamedTuple):
    """A document's tokens as last answered for all its lines: what they were made from, the
    line the first row's delta counts from, and each line that shows tokens: its number, its
    row, and its delta and row as JSON."""

    made_from: MadeFrom
    previous: int
    numbers: List[int]
    shown: List[Row]
    pieces: List[str]

    def edited(
        self,
        changed: List[int],
        made_from: MadeFrom,
        tokens: Rows[Row],
        found: Found,
        resolver: Resolver,
        columns: Columns,
    ) -> TokenAnswer:
        """This answer with the lines `changed` made again, and the JSON of the line after each
        (its delta may have changed)."""
        numbers, shown, pieces = list(self.numbers), list(self.shown), list(self.pieces)
        drop_lines(changed, numbers, shown, pieces)
        memo: Dict[Tuple[bool, str], Tuple[str, ...]] = {}
        kept = tokens.fresh()
        part = found.only(changed)
        for number, text, facts in zip(part.numbers, part.texts, part.facts):
            row = kept.get(text) or make_row(text, facts, resolver, columns, memo)
            tokens.put(text, row)
            if row.data:
                at = bisect_left(numbers, number)
                numbers.insert(at, number)
                shown.insert(at, row)
                pieces.insert(at, "")
        for number in changed:
            first = bisect_left(numbers, number)
            for at in range(first, min(first + 2, len(numbers))):
                before = numbers[at - 1] if at else self.previous
                pieces[at] = str(numbers[at] - before) + shown[at].json
        return TokenAnswer(made_from, self.previous, numbers, shown, pieces)


class Placed(NamedTuple):
    """The protocol's integers of an answer so far, the line of its last token, and the same
    integers as JSON, in pieces."""

    data: List[int]
    previous: int
    json: List[str]


class HintRow(NamedTuple):
    """One line's hints: (code-point column, label) each, the keys they depend on, and their
    JSON in the pieces the line's number joins (`lsp_convert.hint_pieces`)."""

    hints: Tuple[Tuple[int, str], ...]
    keys: FrozenSet[str]
    pieces: Tuple[str, ...]


def hint_row(
    text: str, facts: LineFacts, maker: HintMaker, settings: Tuple[bool, bool], columns: Columns
) -> HintRow:
    """A line's hints, and what they depend on: the pages named (and, for a deprecated page's
    label, any page: its replacement is the first page it links to that exists)."""
    found = maker.hints(facts.links, *settings)
    keys: Set[str] = set()
    for link in facts.links:
        page = maker.page(link)
        own = not link.page_stem or (page is not None and page is maker.source)
        keys.add(OWN if own else key_of(link.page_stem))
        if page is not None and page.deprecated:
            keys.add(ANY_PAGE)
    hints = tuple((hint.column, hint.label) for hint in found)
    pieces = hint_pieces((columns.to_client(text, column), label) for column, label in hints)
    return HintRow(hints, frozenset(keys), pieces)


class HintLines(NamedTuple):
    """The lines of a page that show hints: their numbers, texts and rows, in order, and
    whether a row made for them names this page (such rows are never kept)."""

    numbers: List[int]
    texts: List[str]
    rows: List[HintRow]
    own: bool


def fresh_hints(rows: DocumentRows, settings: Tuple[bool, bool]) -> Mapping[str, HintRow]:
    """The kept hint rows still right: none when the settings changed since they were made."""
    if settings != rows.hint_settings:
        rows.hint_settings = settings
        rows.hints.clear()
    return rows.hints.fresh()


def line_hints(
    rows: DocumentRows,
    found: Found,
    maker: HintMaker,
    settings: Tuple[bool, bool],
    columns: Columns,
) -> HintLines:
    """The lines of `found` that show hints. Kept rows are looked up and the lines chosen by
    C-speed maps (a page has thousands); rows that name this page are made again for every
    request, never kept: a block's text may have changed on any line."""
    kept = fresh_hints(rows, settings)
    linked = list(map(bool, map(itemgetter(0), found.facts)))  # each line's links
    texts = list(compress(found.texts, linked))
    made: List[Optional[HintRow]] = list(map(kept.get, texts))
    facts = list(compress(found.facts, linked)) if None in made else []
    own = False
    for at in missing(made):  # a line of the same text may have been made just before
        text = texts[at]
        row = kept.get(text) or hint_row(text, facts[at], maker, settings, columns)
        if OWN in row.keys:
            own = True
        else:
            rows.hints.put(text, row)
        made[at] = row
    shows = list(map(bool, map(itemgetter(0), cast(List[HintRow], made))))
    return HintLines(
        list(compress(compress(found.numbers, linked), shows)),
        list(compress(texts, shows)),
        list(compress(cast(List[HintRow], made), shows)),
        own,
    )


def hints_json(shown: HintLines) -> List[str]:
    """The JSON of the hints of each line of `shown`: each row's pieces joined by its line's
    number, by a C-speed map."""
    return list(map(str.join, int_texts(shown.numbers), map(attrgetter("pieces"), shown.rows)))


class HintAnswer(NamedTuple):
    """A document's hints as last answered for all its lines: what they were made from, the
    number and JSON of each line that shows hints, and whether a row names this page (made
    for every request, never kept)."""

    made_from: MadeFrom
    numbers: List[int]
    json: List[str]
    own: bool

    def edited(self, changed: List[int], made_from: MadeFrom, shown: HintLines) -> HintAnswer:
        """This answer with the lines `changed` as `shown` has them now."""
        numbers, json = list(self.numbers), list(self.json)
        drop_lines(changed, numbers, json)
        for number, text in zip(shown.numbers, hints_json(shown)):
            at = bisect_left(numbers, number)
            numbers.insert(at, number)
            json.insert(at, text)
        return HintAnswer(made_from, numbers, json, shown.own)


def page_hints(
    rows: DocumentRows,
    found: Found,
    maker: HintMaker,
    settings: Tuple[bool, bool],
    columns: Columns,
) -> HintAnswer:
    """The hints of all the lines of `found` (those of the last request that hold something).
    After an edit only the lines that changed are made again, and the last answer's others are
    kept: each line's hints depend on its text and its kept row alone, unless a row names this
    page (a block's text may have changed on any line) or a line moved."""
    fresh_hints(rows, settings)  # the stale rows are dropped, and counted
    made_from = rows.made_from(rows.hints)
    last = rows.hint_answer
    changed = None if last is None or last.own else rows.edited_since(last.made_from, rows.hints)
    if last is None or changed is None:
        shown = line_hints(rows, found, maker, settings, columns)
        answer = HintAnswer(made_from, shown.numbers, hints_json(shown), shown.own)
    else:
        shown = line_hints(rows, found.only(changed), maker, settings, columns)
        answer = last.edited(changed, made_from, shown)
    rows.hint_answer = answer
    return answer


def drop_lines(changed: Iterable[int], numbers: List[int], *aligned: List[Any]) -> None:
    """Remove the lines `changed` from the line numbers `numbers` and the lists aligned with
    them."""
    for number in changed:
        at = bisect_left(numbers, number)
        if at < len(numbers) and numbers[at] == number:
            del numbers[at]
            for items in aligned:
                del items[at]


def segments(body: int, fences: Sequence[Tuple[int, int]], count: int) -> List[Tuple[int, int]]:
    """The stretches of lines (start, stop) from `body` on that lie outside fenced code."""
    found = []
    start = body
    for first, last in fences:
        if first > start:
            found.append((start, first))
        start = max(start, last + 1)
    if start < count:
        found.append((start, count))
    return found


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

    def _heard(self, vault: Vault, path: Optional[str]) -> None:
        for rows in self._documents.values():
            if rows.vault is vault:
                rows.heard(path)
