"""Markdown as plain text, for clients that ask for `plaintext` hovers and completion
documentation (eglot without markdown-mode, ALE): what the Markdown would show, without its
syntax. Headings lose their `#`, quotes their `>` (a callout's `[!kind]` reads `Kind:`), code fences their fence lines, emphasis its
marks; a `[[link|alias]]` reads as its alias (else its target), a `[text](url)` as
`text (url)`. The text inside code (spans and fenced blocks) is kept as written."""

from __future__ import annotations

import re
from typing import List, Optional

FENCE = re.compile(r"^\s*(```|~~~)")
# The longest line rendered: the inline expressions below can take time that grows with the
# square of a line's length on hostile text, so a longer line is cut first (a hover is read by a
# person; a line this long is not read to its end).
MAX_LINE = 1000
HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s+|$)(.*?)(?:\s+#+)?\s*$")
QUOTES = re.compile(r"(?:[ \t]{0,3}>[ \t]?)+")
CALLOUT = re.compile(r"^\[!([\w-]+)\][+-]?\s*")
RULE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
WIKILINK = re.compile(r"!?\[\[([^\]|]*)(?:\|([^\]]*))?\]\]")
LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)\)")
# The text between the marks neither starts nor ends with a space or a mark, so that a run of
# `*` (a masked secret) is left as it is.
STRONG = re.compile(r"(\*\*|__)(?=[^\s*_])(.+?)(?<=[^\s*_])\1")
EMPHASIS = re.compile(r"(?<![\w*])([*_])(?=[^\s*_])(.+?)(?<=[^\s*_])\1(?![\w*])")


def markdown_to_plain(markdown: str) -> str:
    """The text a reader of the rendered Markdown sees, line by line."""
    lines: List[str] = []
    fence: Optional[str] = None
    for line in markdown.split("\n"):
        opened = FENCE.match(line)
        if opened is not None and (fence is None or opened.group(1) == fence):
            fence = opened.group(1) if fence is None else None
            continue
        if fence is not None:
            lines.append(line)
            continue
        plain = plain_line(line)
        if plain.strip() or not lines or lines[-1].strip():
            lines.append(plain)  # one blank line where a rule stood between blank lines
    return "\n".join(lines)


def plain_line(line: str) -> str:
    """One line outside code blocks: its block marks dropped, its inline syntax rendered."""
    if len(line) > MAX_LINE:
        line = line[:MAX_LINE] + "…"
    if RULE.match(line):
        return ""
    quotes = QUOTES.match(line)
    quoted = quotes is not None
    if quotes is not None:
        line = line[quotes.end() :]
    callout = CALLOUT.match(line) if quoted else None
    if callout is not None:  # `> [!warning] Title` reads "Warning: Title"
        rest = line[callout.end() :]
        line = callout.group(1).capitalize() + (": " + rest if rest else "")
    heading = HEADING.match(line)
    if heading is not None:
        line = heading.group(1)
    return plain_inline(line)


def plain_inline(text: str) -> str:
    """Links and emphasis rendered; the text of code spans kept as written."""
    parts: List[str] = []
    position = 0
    for span in CODE_SPAN.finditer(text):
        parts.append(plain_words(text[position : span.start()]))
        parts.append(span.group(2))
        position = span.end()
    parts.append(plain_words(text[position:]))
    return "".join(parts)


def plain_words(text: str) -> str:
    text = WIKILINK.sub(lambda link: (link.group(2) or link.group(1)).strip(), text)
    text = LINK.sub(lambda link: f"{link.group(1)} ({link.group(2)})", text)
    text = STRONG.sub(r"\2", text)
    return EMPHASIS.sub(r"\2", text)
