"""The foldable blocks of a Markdown file: frontmatter, heading sections, block quotes and
callouts, fenced code, list items, tables and the entries of a legacy flat daily file.

Headings and fences come from `markdown.scan` and `markdown.fenced_ranges`, the frontmatter from
the runtime's `parse_frontmatter`; only what nothing else parses (quotes, lists, tables) is read
here, from the lines that can begin or end one (`event_lines`), in each heading section as if
it stood alone: a heading ends every block, so a section's blocks depend on its text alone and
can be kept by it between calls (`FoldMemory`). Every range is whole lines, 0-based, and spans
two lines at least.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from itertools import accumulate, chain, repeat
from operator import itemgetter
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

from ..runtime import echoes_vault as rules
from .markdown import Heading, Structure, fenced_ranges

# The kinds LSP defines, as a client folds them by kind (`vim.lsp.foldclose("imports")`).
IMPORTS = "imports"  # the frontmatter: the declarations a page begins with
REGION = "region"  # a heading section, a legacy daily entry
LIST_MARKERS = frozenset("-*+0123456789")
LIST_ITEM = re.compile(r"( *)([-*+]|[0-9]{1,9}[.)])(?:[ \t]|$)")
TABLE_DELIMITER = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
# A line that can start, continue or end a list item, quote, table or code block.
EVENT_LINE = re.compile(r"\n(?=[ \t>*+\-_0-9`~|:]|$)")
THEMATIC_BREAK = re.compile(r" {0,3}([-*_])[ \t]*(\1[ \t]*){2,}$")
# A page with a heading section longer than this is read whole every time (see `folds`).
KEPT_SECTION_LINES = 20_000


class Fold(NamedTuple):
    """Lines `start` to `end` (both included) fold to `start`; `kind` is an LSP kind or None."""

    start: int
    end: int
    kind: Optional[str] = None


Span = Tuple[int, int]  # the first line of a heading section and the line after its last


class SectionFolds(NamedTuple):
    """The fenced code and blocks of one heading section, as `folds` keeps them between calls
    under the section's text: its lines as they were numbered when it began on line `origin`."""

    origin: int
    fences: Tuple[Tuple[int, int], ...]
    blocks: Tuple[Fold, ...]  # fenced code, quotes and callouts, list items, tables; in order
    reach: int = -1  # the last line of its longest-reaching block (-1: it has none)

    def moved_to(self, line: int) -> SectionFolds:
        """The same folds for the section beginning on `line` (lines were added or removed
        above it); a section that did not move, the common case, costs nothing."""
        if line == self.origin:
            return self
        shift = line - self.origin
        return SectionFolds(
            line,
            tuple((first + shift, last + shift) for first, last in self.fences),
            tuple(Fold(fold.start + shift, fold.end + shift) for fold in self.blocks),
            self.reach + shift if self.blocks else -1,
        )


# The folds of each section of the text last folded, by the section's text; owned by the
# caller (one per document), which passes it to `folds` again after an edit.
FoldMemory = Dict[str, SectionFolds]


def folds(
    text: str,
    structure: Structure,
    lines: Optional[Sequence[str]] = None,
    is_page: bool = True,
    legacy_daily: bool = False,
    around: Optional[int] = None,
    memory: Optional[FoldMemory] = None,
) -> List[Fold]:
    """Every fold of the text, ordered by start line, outer ranges first; no two share both
    lines (the first kind found is kept). Blocks are looked for in each heading section as if
    it stood alone (no block crosses a heading), so an edit changes the blocks of its section
    only: given the `memory` of the previous call, the other sections are not read again. With
    `around`, a line, only the section that holds it is read (and `memory` is left alone)."""
    if lines is None:
        lines = text.split("\n")
    body = 0
    found: List[Fold] = []
    if is_page:
        frontmatter = rules.parse_frontmatter(lines)
        if frontmatter is not None:
            body = frontmatter.body_line
            if frontmatter.close_line is not None:
                found.append(Fold(frontmatter.open_line, frontmatter.close_line, IMPORTS))
    headings = heading_folds(structure, lines)
    spans = section_spans(structure, body, len(lines))
    if around is not None:  # the section that holds the line (the first, before the body)
        spans = [span for span in spans if span[0] <= around][-1:] or spans[:1]
    sections = _sections(text, lines, spans, None if around is not None else memory)
    starts = {start for start, _stop in spans}
    if around is None and not legacy_daily and all(line in starts for line in headings):
        return _in_order(found, headings, spans, sections)
    fences: List[Tuple[int, int]] = []
    found.extend(headings.values())
    for section in sections:
        found.extend(section.blocks)
        fences.extend(section.fences)
    if legacy_daily:
        found.extend(_entry_folds(structure, lines, fences))
    return unique(found)


def _sections(
    text: str, lines: Sequence[str], spans: Sequence[Span], memory: Optional[FoldMemory]
) -> List[SectionFolds]:
    """The folds of each section: from `memory` where it holds them, else read."""
    if memory is not None and _worth_keeping(spans, memory):
        return _remembered(text, lines, spans, memory)
    return _read_sections(text, lines, spans, _offset(lines, spans[0][0]) if spans else 0)


def _in_order(
    found: List[Fold],
    headings: Dict[int, Fold],
    spans: Sequence[Span],
    sections: Sequence[SectionFolds],
) -> List[Fold]:
    """What `unique` would make of `found`, each heading's section and the blocks of each
    section, without sorting them all again (a dense page has thousands): the sections are in
    line order, each heading's section encloses the blocks of the sections it holds, and each
    section's blocks are already in order, nested and unique. Only the blocks of a section that
    reach past its heading's section (fenced code left open at the end of the page, which runs
    to the last, blank line) are cut at its end, as `unique` cuts them."""
    for (start, _stop), section in zip(spans, sections):
        blocks: Sequence[Fold] = section.blocks
        heading = headings.get(start)
        if heading is not None:
            if section.reach > heading.end:
                blocks = unique(fold._replace(end=min(fold.end, heading.end)) for fold in blocks)
            if heading.end > heading.start:
                found.append(heading)
                if blocks and blocks[0][:2] == heading[:2]:  # a table whose header is the heading
                    blocks = blocks[1:]
        found.extend(blocks)
    return found


def section_spans(structure: Structure, body: int, count: int) -> List[Span]:
    """The lines of each heading section: from `body` to the first heading, from each heading
    to the next, from the last to the end (`count` lines). No fence is open where one begins
    (`scan` finds no heading in fenced code, and an unclosed fence runs to the end), so the
    blocks of a section depend on its own text alone."""
    cuts = [body, *(h.line for h in structure.headings if body < h.line < count), count]
    return [(start, stop) for start, stop in zip(cuts, cuts[1:]) if start < stop]


def _worth_keeping(spans: Sequence[Span], memory: FoldMemory) -> bool:
    """Whether the sections are short enough to be kept by their text; else `memory` is
    emptied. A section of more lines than `KEPT_SECTION_LINES` would cost a copy of its text
    (as long as reading a page of plain lines) and is read again after any edit in it."""
    if any(stop - start > KEPT_SECTION_LINES for start, stop in spans):
        memory.clear()
        return False
    return True


def _offset(lines: Sequence[str], number: int) -> int:
    """Where line `number` begins in the text the lines were split from (in C-speed steps)."""
    return sum(map(len, lines[:number])) + number


def _remembered(
    text: str, lines: Sequence[str], spans: Sequence[Span], memory: FoldMemory
) -> List[SectionFolds]:
    """The folds of each section, from `memory` when the section's text is there, else read
    (sections next to each other in one pass); `memory` then holds the sections of this text
    only, so it never grows beyond one page."""
    keys = ["\n".join(lines[start:stop]) for start, stop in spans]
    kept: FoldMemory = {}
    begin = _offset(lines, spans[0][0]) if spans else 0
    for run, run_begin in _missing_runs(keys, memory, begin):
        read = _read_sections(text, lines, [spans[index] for index in run], run_begin)
        kept.update(zip([keys[index] for index in run], read))
    sections: List[SectionFolds] = []
    for (start, _stop), key in zip(spans, keys):
        section = kept.get(key)
        section = (memory[key] if section is None else section).moved_to(start)
        kept[key] = section
        sections.append(section)
    memory.clear()
    memory.update(kept)
    return sections


def _missing_runs(
    keys: Sequence[str], memory: FoldMemory, begin: int
) -> Iterator[Tuple[List[int], int]]:
    """The indexes of the sections not in `memory`, in runs of sections next to each other,
    each with the offset where it begins (the first section begins at `begin`)."""
    run: List[int] = []
    run_begin = begin
    for index, key in enumerate(keys):
        if key in memory:
            if run:
                yield run, run_begin
                run = []
        else:
            if not run:
                run_begin = begin
            run.append(index)
        begin += len(key) + 1
    if run:
        yield run, run_begin


def _read_sections(
    text: str, lines: Sequence[str], spans: Sequence[Span], begin: int
) -> List[SectionFolds]:
    """The folds of sections next to each other, the first beginning at offset `begin`, in
    one pass: fences and the lines that can start or end a block are found in the whole run
    at once (C-speed searches), then each section's blocks are read as if it stood alone."""
    if not spans:
        return []
    first, last = spans[0][0], spans[-1][1]
    end = len(text) if last >= len(lines) else begin + _offset(lines[first:last], last - first) - 1
    fences = fence_lines(text[begin:end], first)
    code = dict(fences)
    events = event_lines(text, begin, end, first)
    found: List[Fold] = [Fold(opening, closing) for opening, closing in fences]
    fenced = event = 0
    for start, stop in spans:
        events_end = bisect_left(events, stop, event)
        found.extend(_section_blocks(lines, (start, stop), events[event:events_end], code))
        event = events_end
    # no block crosses a section's edge, so putting them all in order at once puts each
    # section's in order
    ordered = unique(found)
    starts = list(map(itemgetter(0), ordered))
    sections: List[SectionFolds] = []
    placed = 0
    for start, stop in spans:
        fences_end = bisect_left(fences, (stop, -1), fenced)
        placed_end = bisect_left(starts, stop, placed)
        blocks = tuple(ordered[placed:placed_end])
        reach = max(map(itemgetter(1), blocks), default=-1)
        sections.append(SectionFolds(start, tuple(fences[fenced:fences_end]), blocks, reach))
        fenced, placed = fences_end, placed_end
    return sections


def unique(found: Iterable[Fold]) -> List[Fold]:
    """Ranges of two lines or more, each pair of lines once, outer ranges first, nested: a range
    that begins inside another and ends after it (a section that runs past the end of a legacy
    daily entry) is cut at the end of the other, so that editors, which drop crossing ranges,
    keep them all."""
    seen: Set[Tuple[int, int]] = set()
    kept: List[Fold] = []
    around: List[Fold] = []
    ordered = sorted(found, key=itemgetter(1), reverse=True)  # two stable sorts: start,
    ordered.sort(key=itemgetter(0))  # then the longest first, with no key function per fold
    for fold in ordered:
        while around and around[-1].end < fold.start:
            around.pop()
        if around and fold.end > around[-1].end:
            fold = fold._replace(end=around[-1].end)
        if fold.end > fold.start and (fold.start, fold.end) not in seen:
            seen.add((fold.start, fold.end))
            kept.append(fold)
            around.append(fold)
    return kept


def last_text_line(lines: Sequence[str], start: int, end: int) -> int:
    """The last line from `end` back to `start` that is not blank (trailing blanks excluded)."""
    while end > start and not lines[end].strip():
        end -= 1
    return end


def heading_folds(structure: Structure, lines: Sequence[str]) -> Dict[int, Fold]:
    """The fold of each heading, by its line, in line order: until the last line that is not
    blank before the next heading of the same or a higher rank."""
    ends: Dict[int, int] = {}
    open_headings: List[Heading] = []
    for heading in structure.headings:
        while open_headings and open_headings[-1].level >= heading.level:
            closed = open_headings.pop()
            ends[closed.line] = max(closed.line, heading.line - 1)
        ends[heading.line] = len(lines) - 1  # until a heading closes it
        open_headings.append(heading)
    return {
        line: Fold(line, last_text_line(lines, line, max(line, end)), REGION)
        for line, end in ends.items()
    }


def fence_lines(text: str, first: int = 0) -> List[Tuple[int, int]]:
    """(opening line, closing line) of each fenced code block of the text, whose first line
    is line `first`."""
    found = fenced_ranges(text)
    # The line of an offset is the newlines before it; counted once, in order.
    spans: List[Tuple[int, int]] = []
    line, counted = first, 0
    for start, end in found:
        line += text.count("\n", counted, start)
        end_line = line + text.count("\n", start, end)
        spans.append((line, end_line))
        line, counted = end_line, end
    return spans


class _Blocks:
    """The list items and the quote open while the lines are read, and the blocks closed."""

    def __init__(self, last: int) -> None:
        self.items: List[Tuple[int, int]] = []  # (content indent, first line) of open items
        self.quote = -1  # the first line of the open quote; -1 when none is open
        self.last = last  # the last line read that is not blank
        self.found: List[Fold] = []

    def close_items(self, indent: int) -> None:
        """Close every item that a line indented by `indent` does not continue."""
        items = self.items
        while items and indent < items[-1][0]:
            self.found.append(Fold(items.pop()[1], self.last))

    def end_quote(self) -> None:
        if self.quote >= 0:
            self.found.append(Fold(self.quote, self.last))
            self.quote = -1

    def table(self, header: int, end: int) -> None:
        """A table from its header row to line `end`: it ends the quote before it."""
        self.end_quote()
        self.found.append(Fold(header, end))
        self.last = end

    def skipped(self, lines: Sequence[str], first: int, stop: int) -> None:
        """Lines `first` to before `stop`, which are blank or plain text. Blank lines alone
        end nothing (a list item can hold paragraphs; a quote line after them begins a new
        quote, see `text`); a plain text line ends every item and the quote."""
        last = last_text_line(lines, first - 1, stop - 1)
        if last >= first:
            self.close_items(0)
            self.end_quote()
            self.last = last

    def code(self, line: str, end: int) -> None:
        """Fenced code up to line `end`: it ends the quote or table before it, and the items
        it is not indented into."""
        self.close_items(len(line) - len(line.lstrip(" ")))
        self.end_quote()
        self.last = end

    def text(self, line: str, number: int) -> None:
        """A line that is not blank and may start or continue a block."""
        indent = len(line) - len(line.lstrip(" "))
        if self.items and indent < self.items[-1][0]:
            self.close_items(indent)
        first = line[indent : indent + 1]
        if first == ">" and indent < 4:
            if self.quote >= 0 and number > self.last + 1:  # blank lines came between
                self.end_quote()
            if self.quote < 0:
                self.quote = number
        elif self.quote >= 0:
            self.end_quote()
        if first in LIST_MARKERS:
            item = LIST_ITEM.match(line)
            if item is not None and not (first in "-*" and THEMATIC_BREAK.match(line)):
                self.items.append((item.end(2) + 1, number))
        self.last = number


def table_end(lines: Sequence[str], number: int, body: int, stop: int) -> int:
    """When line `number` is the delimiter row of a table (`|---|---|` under a header row that
    holds a `|`), the table's last row: rows go on while they hold a `|` and start no quote or
    heading. Else -1. Only the delimiter row, which begins with a blank, `|`, `:` or `-`, needs
    to be found among the lines: the header is the line above it."""
    line = lines[number]
    if number <= body or "-" not in line or TABLE_DELIMITER.match(line) is None:
        return -1
    if "|" not in line or "|" not in lines[number - 1]:
        return -1
    end = number
    while end + 1 < stop and "|" in lines[end + 1]:
        first = lines[end + 1].lstrip(" ")[:1]
        if first in (">", "#"):
            break
        end += 1
    return end


def _section_blocks(
    lines: Sequence[str], span: Span, events: Iterable[int], code: Dict[int, int]
) -> List[Fold]:
    """Block quotes and callouts, list items and tables of one heading section, read as if it
    stood alone. Only the lines that can start, continue or end one (`events`, those of
    `event_lines` in the section) are read one by one; a run of plain text lines between them
    ends every open block at once. `code` maps each opening fence to its closing line."""
    start, stop = span
    blocks = _Blocks(start - 1)
    previous = start - 1
    for number in chain(events, (stop,)):
        if number <= previous:  # inside fenced code
            continue
        if number > previous + 1:
            blocks.skipped(lines, previous + 1, number)
        if number >= stop:
            break
        line = lines[number]
        if number in code:
            blocks.code(line, code[number])
            previous = code[number]
            continue
        previous = number
        if not line or line.isspace():
            blocks.end_quote()
            continue
        end = table_end(lines, number, start, stop) if "|" in line and "-" in line else -1
        if end >= 0:
            blocks.table(number - 1, end)
            previous = end
        else:
            blocks.text(line, number)
    blocks.close_items(-1)
    blocks.end_quote()
    return blocks.found


def event_lines(text: str, begin: int, end: int, first: int) -> List[int]:
    """The numbers of the lines that begin with a blank or a block marker among the lines of
    `text[begin:end]`, the first numbered `first` (an empty last line may be left out: a
    blank line ends nothing the end does not). Found by one regular expression search and
    counted in C-speed steps, so a page of plain text lines costs no Python step per line."""
    source = "\n" + text  # the newline before each line stands at the line's own offset
    offsets = [match.start() for match in EVENT_LINE.finditer(source, begin, end)]
    # the newlines between one event line and the next, added up from line `first`
    steps = map(text.count, repeat("\n"), [begin, *offsets], offsets)
    return [*accumulate(steps, initial=first)][1:]


def _fenced_interior(fences: Sequence[Tuple[int, int]]) -> Set[int]:
    """The lines of fenced code, fences included (no block starts or ends in them)."""
    inside: Set[int] = set()
    for start, end in fences:
        inside.update(range(start, end + 1))
    return inside


def _entry_folds(
    structure: Structure, lines: Sequence[str], fences: Sequence[Tuple[int, int]]
) -> List[Fold]:
    """The entries of a legacy flat daily file, which agents appended one after another: each
    begins at a heading of the entry level (the highest but a lone title's), after a thematic
    break or after the title, and runs until the next one begins."""
    inside = _fenced_interior(fences)
    title, level = _title_and_entry_level(structure)
    headings = [h.line for h in structure.headings if h.level == level]
    breaks = {
        n
        for n, line in enumerate(lines)
        if n not in inside and THEMATIC_BREAK.match(line) and _after_blank(lines, n)
    }
    cuts = sorted(set(headings) | breaks | ({title} if title is not None else set()))
    starts = set(headings) | {_next_text(lines, n + 1) for n in breaks}
    if title is not None:
        starts.add(_next_text(lines, title + 1))
    found: List[Fold] = []
    for start in sorted(starts - breaks):
        following = bisect_right(cuts, start)
        end = cuts[following] - 1 if following < len(cuts) else len(lines) - 1
        if start < len(lines):
            found.append(Fold(start, last_text_line(lines, start, end), REGION))
    return found


def _next_text(lines: Sequence[str], number: int) -> int:
    while number < len(lines) and not lines[number].strip():
        number += 1
    return number


def _title_and_entry_level(structure: Structure) -> Tuple[Optional[int], int]:
    """The line of a lone level-1 heading (the file's title), and the level of the headings
    that begin entries (0: none do)."""
    levels = [h.level for h in structure.headings]
    if levels.count(1) == 1:
        title = next(h.line for h in structure.headings if h.level == 1)
        rest = [level for level in levels if level > 1]
        return title, min(rest, default=0)
    return None, min(levels, default=0)


def _after_blank(lines: Sequence[str], number: int) -> bool:
    """A `---` after a paragraph line underlines a heading; after a blank, it is a break."""
    return number == 0 or not lines[number - 1].strip()


def within_limit(found: Sequence[Fold], limit: Optional[int]) -> List[Fold]:
    """At most `limit` folds: the outermost first (a client's `rangeLimit`), in line order."""
    if limit is None or len(found) <= limit:
        return list(found)
    depth: List[int] = []
    stack: List[Fold] = []
    for fold in found:
        while stack and stack[-1].end < fold.start:
            stack.pop()
        depth.append(len(stack))
        stack.append(fold)
    order = sorted(range(len(found)), key=lambda i: (depth[i], i))[: max(0, limit)]
    return [found[i] for i in sorted(order)]
