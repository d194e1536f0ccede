"""Smart selection: the spans around a cursor, from the word out to the whole document.

In the body: word, link part (target, heading, block, alias), whole `[[...]]`, line, the
blocks around it (list items, quotes, tables, code: the folds of `folding`) or its paragraph,
the heading sections around it, the document. In the frontmatter: word, value, field, block,
document. Spans are engine coordinates (0-based lines, code-point columns); each one holds the
one before and is larger.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Set, Tuple

from ..runtime import echoes_vault as rules
from .folding import Fold, last_text_line
from .link_targets import link_at
from .markdown import Link, Structure

# A word is read this far either side of the cursor at most: a line of a million letters
# gives a span of this size instead of a scan of the whole line.
WORD_REACH = 1000
# A paragraph is looked for this many lines either side of the cursor at most.
PARAGRAPH_REACH = 10000


class Span(NamedTuple):
    line: int
    start: int
    end_line: int
    end: int

    def holds(self, other: Span) -> bool:
        return (self.line, self.start) <= (other.line, other.start) and (
            self.end_line,
            self.end,
        ) >= (other.end_line, other.end)


def selection_spans(
    lines: Sequence[str],
    structure: Structure,
    folds: Sequence[Fold],
    line: int,
    column: int,
    frontmatter: Optional[rules.Frontmatter] = None,
) -> List[Span]:
    """The spans around (line, column), innermost first, each strictly holding the one before."""
    text = lines[line]
    candidates: List[Span] = []
    word = word_span(text, column)
    if word is not None:
        candidates.append(Span(line, word[0], line, word[1]))
    if frontmatter is not None and _in_frontmatter(frontmatter, line, len(lines)):
        candidates.extend(_frontmatter_spans(lines, frontmatter, line, column))
    else:
        link = link_at(structure, line, column)
        if link is not None:
            candidates.extend(_link_spans(link, column))
        candidates.append(Span(line, 0, line, len(text)))
        headings = {heading.line for heading in structure.headings}
        candidates.extend(_block_spans(lines, folds, line, frontmatter, headings))
    last = len(lines) - 1
    candidates.append(Span(0, 0, last, len(lines[last])))
    return _growing(candidates)


def _growing(candidates: Sequence[Span]) -> List[Span]:
    """The candidates that each hold the one kept before and are larger than it."""
    kept: List[Span] = []
    for span in candidates:
        if not kept or (span != kept[-1] and span.holds(kept[-1])):
            kept.append(span)
    return kept


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"


def word_span(text: str, column: int) -> Optional[Tuple[int, int]]:
    """(start, end) of the word at or just before the column; None off any word."""
    if column < len(text) and _is_word(text[column]):
        at = column
    elif column > 0 and column <= len(text) and _is_word(text[column - 1]):
        at = column - 1
    else:
        return None
    start = at
    while start > 0 and at - start < WORD_REACH and _is_word(text[start - 1]):
        start -= 1
    end = at + 1
    while end < len(text) and end - at < WORD_REACH and _is_word(text[end]):
        end += 1
    return start, end


def _link_spans(link: Link, column: int) -> List[Span]:
    """The part of the link under the cursor, then the whole link."""
    line = link.line
    parts = [(link.target_start, link.target_end)]
    if link.anchor_end > link.anchor_start:
        parts.append((link.anchor_start, link.anchor_end))
    if link.alias is not None:
        parts.append((link.end - 2 - len(link.alias), link.end - 2))
    spans = [Span(line, start, line, end) for start, end in parts if start <= column <= end]
    return spans[:1] + [Span(line, link.start, line, link.end)]


def _block_spans(
    lines: Sequence[str],
    folds: Sequence[Fold],
    line: int,
    frontmatter: Optional[rules.Frontmatter],
    headings: Set[int],
) -> List[Span]:
    """The blocks around the line, innermost first: list items, quotes, tables and code, its
    paragraph, then the heading sections."""
    around = [fold for fold in folds if fold.start <= line <= fold.end]
    blocks = [fold for fold in around if fold.kind is None]
    sections = [fold for fold in around if fold.kind is not None]
    spans = [_whole_lines(lines, fold.start, fold.end) for fold in reversed(blocks)]
    if lines[line].strip() and line not in headings:
        top = frontmatter.body_line if frontmatter is not None else 0
        spans.append(_paragraph(lines, line, top, headings))
    spans.sort(key=lambda span: (span.end_line - span.line, span.end))
    spans.extend(_whole_lines(lines, fold.start, fold.end) for fold in reversed(sections))
    return spans


def _whole_lines(lines: Sequence[str], start: int, end: int) -> Span:
    return Span(start, 0, end, len(lines[end]))


def _paragraph(lines: Sequence[str], line: int, top: int, headings: Set[int]) -> Span:
    """The run of non-blank lines around the line, between blank lines and headings, not above
    `top` (the body's first line)."""
    start, top = line, max(top, line - PARAGRAPH_REACH)
    while start > top and lines[start - 1].strip() and start - 1 not in headings:
        start -= 1
    end, bottom = line, min(len(lines) - 1, line + PARAGRAPH_REACH)
    while end < bottom and lines[end + 1].strip() and end + 1 not in headings:
        end += 1
    return _whole_lines(lines, start, end)


def _in_frontmatter(frontmatter: rules.Frontmatter, line: int, count: int) -> bool:
    close = frontmatter.close_line if frontmatter.close_line is not None else count - 1
    return frontmatter.open_line <= line <= close


def _frontmatter_spans(
    lines: Sequence[str], frontmatter: rules.Frontmatter, line: int, column: int
) -> List[Span]:
    """Value, field, then the whole block."""
    spans: List[Span] = []
    for field in frontmatter.fields.values():
        last = field.continuation[-1] if field.continuation else field.line
        if not field.line <= line <= last:
            continue
        if line == field.line and field.value_start <= column <= field.value_end:
            if field.value_end > field.value_start:
                spans.append(Span(line, field.value_start, line, field.value_end))
        elif line != field.line:
            text = lines[line].rstrip()
            item = len(text) - len(text.lstrip(" \t-"))
            if item <= column:
                spans.append(Span(line, item, line, len(text)))
        spans.append(_whole_lines(lines, field.line, last))
    close = frontmatter.close_line if frontmatter.close_line is not None else len(lines) - 1
    spans.append(_whole_lines(lines, frontmatter.open_line, last_text_line(lines, 0, close)))
    return spans
