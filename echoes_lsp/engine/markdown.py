"""Obsidian-flavoured Markdown structure: wikilinks, headings, block ids, callouts.

Whole-text regular expressions keep a 10,000-page scan fast; code spans and fenced code are
excluded so that `[[x]]` inside code is not a link.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from functools import lru_cache
from itertools import accumulate, count
from operator import add, attrgetter
from typing import (
    Callable,
    Dict,
    Iterable,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

# Each pattern begins with a literal (`[[`, a newline, `^`) so that the regex engine can skip
# ahead with a fast search instead of trying every position: about 10x faster on large vaults.
# Every page is untrusted text, so each pattern and each loop below runs in time linear in the
# text: no repeat can read a run that holds another place where its pattern begins, and no line
# or range is searched again for each link on it.
LINK = re.compile(r"\[\[([^\[\]\n]*)\]\]")  # `!` before `[[` (an embed) is checked by hand
HEADING = re.compile(r"\n {0,3}(#{1,6})[ \t]+([^\n]*)")  # ATX heading on the line after `\n`
BACKTICKS = re.compile(r"`+")
BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*$", re.M)  # preceded by a line start or blank
FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)
CALLOUT = re.compile(r"^>[ \t]*\[!([A-Za-z-]+)\][+-]?[ \t]*(.*)$")
DEPRECATED_CALLOUT = re.compile(r"^>[ \t]*\[!warning\][+-]?[ \t]*DEPRECATED\b", re.I)
PAGE_EXTENSION = ".md"


class Link(NamedTuple):
    """One `[[...]]`. Columns are code points; `line` is 0-based. A tuple: cheap to create."""

    embed: bool
    target: str
    heading: Optional[str]
    block: Optional[str]
    alias: Optional[str]
    line: int
    start: int
    end: int
    target_start: int
    target_end: int
    anchor_start: int
    anchor_end: int

    @property
    def is_asset(self) -> bool:
        """`![[file.png]]` names an asset; `![[page]]` embeds a page."""
        if not self.embed:
            return False
        name = self.target.rsplit("/", 1)[-1]
        return "." in name and not name.lower().endswith(PAGE_EXTENSION)

    @property
    def page_stem(self) -> str:
        """Target reduced to a page stem: no folder, no `.md`."""
        return page_stem(self.target)


# Link targets whose page stem (here) and page key (`vault.key_of`) are remembered: each costs
# about 200 bytes, and the targets that recur across a vault are far fewer.
CACHED_NAMES = 1 << 12


@lru_cache(maxsize=CACHED_NAMES)
def page_stem(target: str) -> str:
    stem = target.rsplit("/", 1)[-1].strip()
    if stem.lower().endswith(PAGE_EXTENSION):
        stem = stem[: -len(PAGE_EXTENSION)]
    return stem


class Heading(NamedTuple):
    level: int
    text: str
    line: int
    start: int
    end: int


class BlockId(NamedTuple):
    name: str
    line: int
    start: int
    end: int


class Structure:
    """Links, headings and block ids of one text. A deferred structure (`Structure.deferred`)
    keeps the text, or a function that reads it, and scans it on first use: a batch check reads
    most pages' links only as candidate targets (`link_targets`) and never needs their
    positions, and a page parsed by another process of a parallel check is read again only if
    one of its anchors is needed. A closed structure (`Structure.closed`) keeps only its
    `anchors` and the path to read the rest from."""

    __slots__ = (
        "_anchors",
        "_blocks",
        "_first_line",
        "_headings",
        "_links",
        "_reader",
        "_source",
        "grouped",
    )

    def __init__(
        self,
        links: Sequence[Link],
        headings: Sequence[Heading],
        blocks: Sequence[BlockId],
        anchors: Optional[str] = None,
    ) -> None:
        self._links = links
        self._headings = headings
        self._blocks = blocks
        # The text still to scan (or what reads it), and its line to begin at.
        self._source: Union[str, Callable[[], str], None] = None
        self._first_line = 0
        # Set for a closed structure: reads the file at the path `_source` holds.
        self._reader: Optional[Callable[[str], str]] = None
        self._anchors = anchors
        # the links grouped by the page key they name, per source key: filled by navigation
        self.grouped: Optional[Dict[str, Dict[str, List[Link]]]] = None

    @classmethod
    def deferred(cls, text: Union[str, Callable[[], str]], first_line: int = 0) -> Structure:
        structure = cls((), (), ())
        structure._source = text
        structure._first_line = first_line
        return structure

    @classmethod
    def closed(
        cls, scanned: Structure, path: str, reader: Callable[[str], str], first_line: int = 0
    ) -> Structure:
        """What the server keeps of a file that is not open: the `anchors` of `scanned` (other
        files' links are checked against them) and where to read everything else again. A
        large vault's links and headings are most of its memory and are needed for a few files
        only (references, a rename, completing a heading), so they are scanned again from
        `reader(path)` when first asked for, then kept; the text read is not kept."""
        structure = cls((), (), ())
        structure._anchors = scanned.anchors
        structure._source = path
        structure._first_line = first_line
        structure._reader = reader
        return structure

    def _pending(self) -> Optional[Tuple[str, int]]:
        """The text still to scan and its first line, read now if it was deferred to a reader."""
        text = self._source
        if text is None:
            return None
        if self._reader is not None:
            return self._reader(str(text)), self._first_line
        if not isinstance(text, str):
            text = self._source = text()
        return text, self._first_line

    def _resolve(self) -> None:
        source = self._pending()
        if source is not None:
            full = scan(*source)
            self._links, self._headings, self._blocks = full.links, full.headings, full.blocks
            self._source = None
            self._reader = None

    @property
    def links(self) -> Sequence[Link]:
        self._resolve()
        return self._links

    @property
    def headings(self) -> Sequence[Heading]:
        self._resolve()
        return self._headings

    @property
    def blocks(self) -> Sequence[BlockId]:
        self._resolve()
        return self._blocks

    @property
    def anchors(self) -> str:
        """What a link can point at in this text, in one string: `#` and the key of each
        heading, `^` and the name of each block id, one per line, sorted, each line between
        newlines. Two structures with the same anchors answer every anchor check alike."""
        if self._anchors is None:
            keys = map(heading_key, map(attrgetter("text"), self.headings))
            self._anchors = anchors_of(keys, map(attrgetter("name"), self.blocks))
        return self._anchors

    def has_heading(self, key: str) -> bool:
        """Whether a heading has this `heading_key`."""
        return f"\n#{key}\n" in self.anchors

    def has_block(self, name: str) -> bool:
        """Whether a block id has this name."""
        return f"\n^{name}\n" in self.anchors

    def link_targets(self) -> Optional[List[str]]:
        """For a structure not scanned yet: the inner text of every `[[...]]` from the first
        line on, a superset of its links (code is not excluded). None once scanned."""
        source = self._pending()
        if source is None:
            return None
        text, first_line = source
        begin = _line_offset(text, first_line)
        return LINK.findall(text, begin) if begin is not None and "[" in text else []

    def links_except(
        self, skip: Callable[[str], bool], targets: Optional[List[str]] = None
    ) -> Sequence[Link]:
        """The links, leaving out (when not scanned yet) those whose inner text `skip` accepts;
        a scanned structure gives all its links. `targets` may pass on what `link_targets`
        just gave."""
        source = self._pending()
        if source is None:
            return self._links
        text, first_line = source
        begin = _line_offset(text, first_line)
        if begin is None or "[" not in text:
            return []
        if targets is None:
            targets = LINK.findall(text, begin)
        wanted = {inner for inner in targets if not skip(inner)}
        if not wanted:
            return []
        fences = fenced_ranges(text[begin:]) if begin else fenced_ranges(text)
        if begin and fences:
            fences = [(s + begin, e + begin) for s, e in fences]
        return _place_links(text, begin, _wanted_offsets(text, begin, wanted), fences)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Structure):
            return NotImplemented
        return (self.links, self.headings, self.blocks) == (
            other.links,
            other.headings,
            other.blocks,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Structure(links={self.links!r}, headings={self.headings!r}, blocks={self.blocks!r})"
        )


class LineMap:
    """Offset → (line, column) for one text, computed in C-speed steps."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: Optional[List[int]] = None

    @property
    def starts(self) -> List[int]:
        if self._starts is None:
            # Line i starts at the lengths of the lines before it plus i newlines.
            starts = list(map(add, accumulate(map(len, self.text.split("\n")), initial=0), count()))
            starts.pop()
            self._starts = starts
        return self._starts

    def locate(self, offset: int) -> Tuple[int, int]:
        starts = self.starts
        line = bisect_right(starts, offset) - 1
        return line, offset - starts[line]

    def line_text(self, line: int) -> str:
        starts = self.starts
        begin = starts[line]
        end = starts[line + 1] - 1 if line + 1 < len(starts) else len(self.text)
        return self.text[begin:end]


def may_hold_fences(text: str) -> bool:
    """Whether a code fence can occur in the text (a one-character search rules most out)."""
    return ("`" in text and "```" in text) or ("~" in text and "~~~" in text)


def fenced_ranges(text: str) -> List[Tuple[int, int]]:
    """Offset ranges of fenced code blocks (an unclosed fence runs to the end)."""
    if not may_hold_fences(text):
        return []
    ranges: List[Tuple[int, int]] = []
    opening: Optional[Tuple[int, str]] = None
    for match in FENCE_LINE.finditer(text):
        fence = match.group(1)
        if opening is None:
            if fence[0] == "`":
                rest_end = text.find("\n", match.end())
                info = text[match.end() : rest_end if rest_end != -1 else len(text)]
                if "`" in info:
                    continue
            opening = (match.start(), fence)
        elif fence[0] == opening[1][0] and len(fence) >= len(opening[1]):
            rest_end = text.find("\n", match.end())
            rest = text[match.end() : rest_end if rest_end != -1 else len(text)]
            if rest.strip():
                continue
            ranges.append((opening[0], rest_end if rest_end != -1 else len(text)))
            opening = None
    if opening is not None:
        ranges.append((opening[0], len(text)))
    return ranges


def code_span_ranges(line: str) -> List[Tuple[int, int]]:
    """Column ranges of inline code spans on one line. A run of n backticks opens a span, which
    the first later run that can close it closes: a run of n, or, as a search for n backticks
    not followed by another finds them, the last n of a run of n + k(n + 1)."""
    if "`" not in line:
        return []
    runs = [match.span() for match in BACKTICKS.finditer(line)]
    lengths = [end - start for start, end in runs]
    last_closer = _last_closers(lengths)
    spans: List[Tuple[int, int]] = []
    index = 0
    while index < len(runs):
        opener = lengths[index]
        if last_closer(opener) <= index:
            index += 1  # nothing after it closes it: a literal run
            continue
        close = index + 1
        while not _closes(lengths[close], opener):
            close += 1
        spans.append((runs[index][0], runs[close][1]))
        index = close + 1
    return spans


def _closes(length: int, opener: int) -> bool:
    """Whether a run of `length` backticks closes a span that a run of `opener` opened."""
    return length >= opener and (length - opener) % (opener + 1) == 0


def _last_closers(lengths: List[int]) -> Callable[[int], int]:
    """For an opener's length, the index of the last run that can close it (-1 if none). Known
    once per length, so that a line of many runs left open is not read to its end for each: a
    line of n characters has fewer than sqrt(2n) distinct lengths."""
    last: Dict[int, int] = {}
    for index, length in enumerate(lengths):
        last[length] = index
    known: Dict[int, int] = {}

    def last_closer(opener: int) -> int:
        if opener not in known:
            closers = [index for length, index in last.items() if _closes(length, opener)]
            known[opener] = max(closers, default=-1)
        return known[opener]

    return last_closer


class _LineCode:
    """The code spans of each line, found once per line however many links it holds, and
    where its first backtick is (a line without one before a link has no code there)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lines: Dict[int, Tuple[int, int]] = {}  # line start: first backtick, line end
        self._spans: Dict[int, List[Tuple[int, int]]] = {}

    def covers(self, line_start: int, column: int, link_end: int) -> bool:
        """Whether a link at `column` of the line beginning at `line_start` is code."""
        known = self._lines.get(line_start)
        if known is None:
            line_end = self.text.find("\n", line_start)
            line_end = len(self.text) if line_end == -1 else line_end
            known = self._lines[line_start] = (self.text.find("`", line_start, line_end), line_end)
        tick, line_end = known
        if tick == -1 or tick >= link_end:
            return False
        spans = self._spans.get(line_start)
        if spans is None:
            spans = self._spans[line_start] = code_span_ranges(self.text[line_start:line_end])
        return _inside(spans, column)


def _inside(ranges: Sequence[Tuple[int, int]], position: int) -> bool:
    """Whether a position lies in one of the ranges (in order, none overlapping another)."""
    index = bisect_right(ranges, (position, sys.maxsize)) - 1
    return index >= 0 and position < ranges[index][1]


def parse_link(inner: str, embed: bool, line: int, start: int) -> Link:
    """Split `target#heading|alias` (or `target#^block`) at columns relative to the line."""
    inner_start = start + (3 if embed else 2)
    body, _, alias = inner.partition("|")
    target, hash_sign, anchor = body.partition("#")
    heading: Optional[str] = None
    block: Optional[str] = None
    anchor_start = anchor_end = inner_start + len(body)
    if hash_sign:
        anchor_start = inner_start + len(target) + 1
        anchor_end = inner_start + len(body)
        if anchor.startswith("^"):
            block = anchor[1:].strip()
        else:
            heading = anchor.rsplit("#", 1)[-1].strip()
    stripped = target.strip()
    lead = len(target) - len(target.lstrip())
    target_start = inner_start + lead
    return Link(
        embed,
        stripped,
        heading,
        block,
        alias if "|" in inner else None,
        line,
        start,
        start + len(inner) + (5 if embed else 4),
        target_start,
        target_start + len(stripped),
        anchor_start,
        anchor_end,
    )


def _line_offset(text: str, line: int) -> Optional[int]:
    """Offset where 0-based `line` begins; None when the text has fewer lines."""
    begin = 0
    for _ in range(line):
        begin = text.find("\n", begin) + 1
        if not begin:
            return None
    return begin


def _scan_links(
    text: str, begin: int, lines: LineMap, fences: Sequence[Tuple[int, int]]
) -> List[Link]:
    """The links from offset `begin` on, outside fenced code and code spans."""
    links: List[Link] = []
    starts = lines.starts
    code = _LineCode(text) if "`" in text else None
    for match in LINK.finditer(text, begin):
        inner = match.group(1)
        offset = match.start()
        embed = offset > begin and text[offset - 1] == "!"
        if embed:
            offset -= 1
        if fences and _inside(fences, offset):
            continue
        line = bisect_right(starts, offset) - 1
        column = offset - starts[line]
        if code is not None and code.covers(starts[line], column, match.end()):
            continue
        links.append(parse_link(inner, embed, line, column))
    return links


# Up to this many wanted inner texts are found by plain searches, one pass each; more are found
# by one pass over all the links.
_FEW_WANTED = 16


def _wanted_offsets(text: str, begin: int, wanted: Set[str]) -> List[Tuple[int, str]]:
    """Where each wanted `[[inner]]` stands from `begin` on, in order. Every `[[inner]]` in the
    text is a match of LINK (an inner holds no brackets, so matches cannot overlap)."""
    if len(wanted) > _FEW_WANTED:
        matches = LINK.finditer(text, begin)
        return [(match.start(), match.group(1)) for match in matches if match.group(1) in wanted]
    found: List[Tuple[int, str]] = []
    for inner in wanted:
        needle = f"[[{inner}]]"
        at = text.find(needle, begin)
        while at != -1:
            found.append((at, inner))
            at = text.find(needle, at + len(needle))
    found.sort()
    return found


def _place_links(
    text: str, begin: int, found: List[Tuple[int, str]], fences: Sequence[Tuple[int, int]]
) -> List[Link]:
    """The links at these offsets outside code, as `_scan_links` gives them, each placed by
    counting the newlines since the one before (no line table)."""
    code = _LineCode(text) if "`" in text else None
    links: List[Link] = []
    line = line_start = counted = 0
    for offset, inner in found:
        end = offset + len(inner) + 4
        embed = offset > begin and text[offset - 1] == "!"
        if embed:
            offset -= 1
        if fences and _inside(fences, offset):
            continue
        newlines = text.count("\n", counted, offset)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", counted, offset) + 1
        counted = offset
        column = offset - line_start
        if code is not None and code.covers(line_start, column, end):
            continue
        links.append(parse_link(inner, embed, line, column))
    return links


def _without_closing_hashes(title: str) -> str:
    """A heading's text without its closing sequence: the `#`s that end it, after a blank (a
    backward search from each blank would read the `#`s again for every one of them)."""
    bare = title.rstrip("#")
    if bare != title and bare[-1:] in (" ", "\t"):
        return bare.rstrip(" \t")
    return title


def scan(text: str, first_line: int = 0) -> Structure:
    """Links, headings and block ids of a Markdown text, ignoring lines before `first_line`."""
    lines = LineMap(text)
    begin = lines.starts[first_line] if first_line < len(lines.starts) else len(text)
    fences = fenced_ranges(text[begin:]) if begin else fenced_ranges(text)
    if begin and fences:
        fences = [(s + begin, e + begin) for s, e in fences]
    links = _scan_links(text, begin, lines, fences) if "[" in text else []
    headings: List[Heading] = []
    if "#" in text:
        # Search from the newline that ends the line before `begin` (or a virtual one at 0).
        source = text if begin else "\n" + text
        shift = 0 if begin else -1
        for match in HEADING.finditer(source, begin - 1 if begin else 0):
            offset = match.start() + 1 + shift
            if fences and _inside(fences, offset):
                continue
            line, column = lines.locate(offset)
            title = match.group(2).rstrip(" \t")
            if title.endswith("#"):
                title = _without_closing_hashes(title)
            whole = match.end() - match.start() - 1
            headings.append(
                Heading(len(match.group(1)), title.strip(), line, column, column + whole)
            )
    blocks: List[BlockId] = []
    if "^" in text:
        for match in BLOCK_ID.finditer(text, begin):
            offset = match.start()
            if offset > begin and text[offset - 1] not in " \t\n":
                continue
            if fences and _inside(fences, offset):
                continue
            line, column = lines.locate(offset)
            blocks.append(BlockId(match.group(1), line, column, column + len(match.group(1)) + 1))
    return Structure(links, headings, blocks)


def anchors_of(heading_keys: Iterable[str], block_names: Iterable[str]) -> str:
    """`Structure.anchors` of the headings of these keys and the blocks of these names."""
    names = {"#" + key for key in heading_keys}
    names.update("^" + name for name in block_names)
    return "\n" + "".join(name + "\n" for name in sorted(names))


def heading_key(text: str) -> str:
    """Headings match the way Obsidian matches them: case- and spacing-insensitive."""
    return " ".join(text.replace("[", "").replace("]", "").split()).casefold()


def has_deprecated_callout(lines: Sequence[str], body_line: int) -> bool:
    """The callout opens the body: first non-blank line, or the one after a leading heading."""
    seen = 0
    for line in lines[body_line : body_line + 12]:
        stripped = line.strip()
        if not stripped:
            continue
        if DEPRECATED_CALLOUT.match(stripped):
            return True
        seen += 1
        if seen > 1 or not stripped.startswith("#"):
            return False
    return False


def link_context(line: str, column: int) -> Optional[Tuple[bool, int, str]]:
    """When `column` is inside an unfinished `[[...`, return (embed, column after `[[`, typed text)."""
    opening = line.rfind("[[", 0, column)
    if opening == -1:
        return None
    typed = line[opening + 2 : column]
    if "]]" in typed or "\n" in typed:
        return None
    embed = opening > 0 and line[opening - 1] == "!"
    return embed, opening + 2, typed
