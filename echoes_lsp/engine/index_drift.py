"""How `index.md` differs from the index the runtime would generate: out of date, or edited by hand.

`index.md` is a local, generated view (spec §8): any page written without the runtime (an editor
save, a `git pull`) leaves it out of date, which is normal and fixed by `hydrate` or
`rebuild-index` (EV403, information). An index whose text the runtime could never have produced
(a changed header, a hand-written line, rows out of order) was edited by hand, against the spec's
"MUST NOT edit" (EV402, warning). Either way the finding points at a line with text on it, never at
the empty end of the file.
"""

from __future__ import annotations

import re
from typing import Collection, Dict, List, NamedTuple, Optional, Tuple

from ..runtime import echoes_vault as rules

EDITED = "EV402"
STALE = "EV403"
ROW = re.compile(r"- \[\[(.+?)\]\]: (.*)")
NAMES_SHOWN = 3


Row = Tuple[int, str, str]  # (line, stem, row text)


class Drift(NamedTuple):
    code: str
    line: int  # 0-based, always a line with text
    message: str


def generated_rows(text: str) -> Optional[List[Row]]:
    """The `(line, stem, row)` rows of an index that has exactly the runtime's shape (its header,
    a blank line, then `- [[stem]]: summary` rows), or None when it has any other text."""
    if not text.startswith(rules.INDEX_HEADER):
        return None
    rest = text[len(rules.INDEX_HEADER) :]
    if not rest:
        return []
    if not rest.startswith("\n") or not rest.endswith("\n"):
        return None
    first = rules.INDEX_HEADER.count("\n") + 1
    rows: List[Row] = []
    for offset, line in enumerate(rest[1:-1].split("\n")):
        match = ROW.fullmatch(line)
        if match is None or rules.index_line(match.group(1), match.group(2)) != line:
            return None
        rows.append((first + offset, match.group(1), line))
    return rows


def _names(stems: List[str]) -> str:
    shown = ", ".join(f"`{stem}`" for stem in stems[:NAMES_SHOWN])
    more = len(stems) - NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _text_line(lines: List[str], line: int) -> int:
    """The nearest line at or above `line` that has text (the file's last line ends with `\\n`,
    so the final split element is empty and is not a line)."""
    line = max(0, min(line, len(lines) - 1))
    while line > 0 and not lines[line].strip():
        line -= 1
    return line


def compare(actual: str, expected: str, unknown: Collection[str] = ()) -> Optional[Drift]:
    """How `actual` (index.md as it is) differs from `expected` (the generated index), or None.
    Rows of the `unknown` pages (invalid ones, which the expected index could not list) are
    neither missing nor extra."""
    if actual == expected:
        return None
    lines = actual.split("\n")
    have = generated_rows(actual)
    want = generated_rows(expected)
    if have is None or want is None:
        expected_lines = expected.split("\n")
        first = next(
            (i for i, (a, b) in enumerate(zip(lines, expected_lines)) if a != b),
            min(len(lines), len(expected_lines)),
        )
        line = _text_line(lines, first)
        return Drift(
            EDITED,
            line,
            f"index.md was edited by hand (line {line + 1} is not what the runtime generates); "
            "it is regenerated on every write, so hand edits are lost: put the text in a page "
            "and rebuild the index with `rebuild-index`",
        )
    have = [row for row in have if row[1] not in unknown]
    if [row for _l, _s, row in have] == [row for _l, _s, row in want]:
        return None
    return _stale(lines, have, want)


def _stale(lines: List[str], have: List[Row], want: List[Row]) -> Drift:
    """EV403 on the first row that differs, naming what differs."""
    listed: Dict[str, Tuple[int, str]] = {stem: (line, row) for line, stem, row in have}
    wanted = {stem: row for _line, stem, row in want}
    missing = [stem for _line, stem, _row in want if stem not in listed]
    gone = [stem for _line, stem, _row in have if stem not in wanted]
    changed = [stem for _line, stem, row in have if stem in wanted and wanted[stem] != row]
    parts = []
    if missing:
        parts.append(f"not listed: {_names(missing)}")
    if gone:
        parts.append(f"listed but no longer a page: {_names(gone)}")
    if changed:
        parts.append(f"summary changed: {_names(changed)}")
    if not parts:
        parts.append("rows out of order")
    return Drift(
        STALE,
        _text_line(lines, _stale_line(listed, have, want, missing, gone + changed)),
        "index.md is out of date ("
        + "; ".join(parts)
        + "): pages were written without the runtime; "
        + REFRESH,
    )


def _stale_line(
    listed: Dict[str, Tuple[int, str]],
    have: List[Row],
    want: List[Row],
    missing: List[str],
    differing: List[str],
) -> int:
    """The first listed row that differs; else where the first missing row belongs."""
    spots = [listed[stem][0] for stem in differing]
    if spots:
        return min(spots)
    if missing and have:
        order = [stem for _line, stem, _row in want]
        before = [s for s in order[: order.index(missing[0])] if s in listed]
        return listed[before[-1]][0] if before else have[0][0]
    if have:
        return have[0][0]
    return rules.INDEX_HEADER.count("\n") - 1  # the `## Pages` heading


REFRESH = "refresh it with `hydrate` or `rebuild-index` (or `echoes-lsp check --fix`)"


def blocked_message(message: str, blockers: List[str]) -> str:
    """An out-of-date message while invalid pages keep the runtime from writing any index (spec
    §8: the previous index remains): the refresh waits for those pages."""
    count = len(blockers)
    pages = "page is" if count == 1 else "pages are"
    return message.replace(
        REFRESH,
        f"it can be refreshed once the invalid {pages} fixed ({_names(blockers)}); the runtime "
        "writes no index while a page is invalid",
    )
