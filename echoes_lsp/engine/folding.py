"""The foldable blocks of a Markdown file: frontmatter, heading sections, block quotes and
callouts, fenced code, list items, tables and the entries of a legacy flat daily file.

Headings and fences come from `markdown.scan` and `markdown.fenced_ranges`, the frontmatter from
the runtime's `parse_frontmatter`; only what nothing else parses (quotes, lists, tables) is read
here, from the lines that can begin or end one (`event_lines`). Every range is whole lines,
0-based, and spans two lines at least.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate, repeat
from operator import itemgetter
from typing import Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from ..runtime import echoes_vault as rules
from .link_targets import outline
from .markdown import Structure, fenced_ranges

# The kinds LSP defines, as a client folds them by kind (`vim.lsp.foldclose("imports")`).
IMPORTS = "imports"  # the frontmatter: the declarations a page begins with
REGION = "region"  # a heading section, a legacy daily entry
LIST_MARKERS = frozenset("-*+0123456789")
LIST_ITEM = re.compile(r"( *)([-*+]|[0-9]{1,9}[.)])(?:[ \t]|$)")
TABLE_DELIMITER = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
# A line that can start, continue or end a list item, quote, table or code block.
EVENT_LINE = re.compile(r"\n(?=[ \t>*+\-_0-9`~|:]|$)")
THEMATIC_BREAK = re.compile(r" {0,3}([-*_])[ \t]*(\1[ \t]*){2,}$")


class Fold(NamedTuple):
    """Lines `start` to `end` (both included) fold to `start`; `kind` is an LSP kind or None."""

    start: int
    end: int
    kind: Optional[str] = None


def folds(
    text: str,
    structure: Structure,
    lines: Optional[Sequence[str]] = None,
    is_page: bool = True,
    legacy_daily: bool = False,
    around: Optional[int] = None,
) -> List[Fold]:
    """Every fold of the text, ordered by start line, outer ranges first; no two share both
    lines (the first kind found is kept). With `around`, a line, only the blocks of the
    heading section that holds it are looked for (no block crosses a heading)."""
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
    sections = _section_folds(structure, lines)
    found.extend(sections)
    fences = fence_lines(text, lines, body)
    start, stop = body, len(lines)
    if around is not None:
        start, stop = _between_headings(structure, around, start, stop)
        fences = [fence for fence in fences if start <= fence[0] < stop]
    found.extend(Fold(first, last) for first, last in fences)
    found.extend(_block_folds(text, lines, (start, stop), fences))
    if legacy_daily:
        found.extend(_entry_folds(structure, lines, fences))
    return unique(found)


def _between_headings(structure: Structure, line: int, start: int, stop: int) -> Tuple[int, int]:
    """The lines from the heading at or before `line` to the next heading (within start, stop)."""
    for heading in structure.headings:
        if heading.line <= line:
            start = max(start, heading.line)
        else:
            return start, min(stop, heading.line)
    return start, stop


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


def _section_folds(structure: Structure, lines: Sequence[str]) -> List[Fold]:
    folds_found: List[Fold] = []
    pending = outline(structure, len(lines))
    while pending:
        section = pending.pop()
        pending.extend(section.children)
        start = section.heading.line
        folds_found.append(Fold(start, last_text_line(lines, start, section.end_line), REGION))
    return folds_found


def fence_lines(text: str, lines: Sequence[str], body: int) -> List[Tuple[int, int]]:
    """(opening line, closing line) of each fenced code block from line `body` on."""
    if body >= len(lines):
        return []
    begin = line_offset(lines, body)
    found = fenced_ranges(text[begin:] if begin else text)
    if not found:
        return []
    # The line of an offset is the newlines before it; counted once, in order.
    spans: List[Tuple[int, int]] = []
    line, counted = body, begin
    for start, end in found:
        start += begin
        end += begin
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


def _block_folds(
    text: str, lines: Sequence[str], span: Tuple[int, int], fences: Sequence[Tuple[int, int]]
) -> List[Fold]:
    """Block quotes and callouts, list items and tables. Only the lines that can start,
    continue or end one are read one by one (`event_lines`); a run of plain text lines between
    them ends every open block at once."""
    body, stop = span
    blocks = _Blocks(body - 1)
    code = {start: end for start, end in fences}
    previous = body - 1
    for number in event_lines(text, lines, body, stop):
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
        end = table_end(lines, number, body, stop) if "|" in line and "-" in line else -1
        if end >= 0:
            blocks.table(number - 1, end)
            previous = end
        else:
            blocks.text(line, number)
    blocks.close_items(-1)
    blocks.end_quote()
    return blocks.found


def event_lines(text: str, lines: Sequence[str], body: int, stop: int) -> List[int]:
    """The numbers of the lines from `body` to before `stop` that begin with a blank or a block
    marker (and maybe the line before `stop`), then `stop`. Found by one
    regular expression search and counted in C-speed steps, so a page of plain text lines costs
    no Python step per line."""
    if body >= stop:
        return [stop]
    begin = line_offset(lines, body)
    end = len(text) if stop >= len(lines) else begin + line_offset(lines[body:stop], stop - body)
    source = "\n" + text  # the newline before each line stands at the line's own offset
    offsets = [match.start() for match in EVENT_LINE.finditer(source, begin, end)]
    # the newlines between one event line and the next, added up from `body`
    steps = map(text.count, repeat("\n"), [begin, *offsets], offsets)
    return [*accumulate(steps, initial=body)][1:] + [stop]


def line_offset(lines: Sequence[str], number: int) -> int:
    """Where line `number` begins in the text the lines were split from."""
    return sum(len(line) + 1 for line in lines[:number])


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
