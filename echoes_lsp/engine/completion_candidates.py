"""Completion candidates for a position in a vault file, before they meet the protocol.

Inside `[[`: page names ranked by the fuzzy scorer (then `#` headings, `#^` block ids, `|` the
target's title); inside `![[`: assets, then pages; inside a page's frontmatter: missing keys and
the values the vault already uses. Every candidate carries the code-point columns it replaces on
the cursor line, so the handler can turn it into a `textEdit`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from ..runtime import echoes_vault as rules
from .block_refs import Block, blocks_of
from .catalog import Card, catalog
from .fuzzy import SUBSEQUENCE, Matcher, fold
from .markdown import Structure, code_span_ranges, fenced_ranges, link_context, may_hold_fences
from .vault import Vault

LIMIT = 100
# At most this many blocks are offered after `#^`.
BLOCK_LIMIT = 200
PAGE = "page"
ASSET_KIND = "asset"
HEADING = "heading"
BLOCK = "block"
ALIAS = "alias"
KEY = "key"
VALUE = "value"

KEY_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
KEY_VALUE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*):([ \t]*)(.*)$")
LIST_ITEM = re.compile(r"^([ \t]+)-([ \t]*)(.*)$")
SCALAR_VALUES = ("type", "status")
# The frontmatter values and keys the vault uses, most used first (`Catalog.vocabulary`).
Vocabulary = Dict[str, List[Tuple[str, int]]]


class Snapshot(NamedTuple):
    """The text of a target page as the candidates are built from it (its open buffer, else the
    disk), with the runtime's hash of those exact bytes."""

    text: str
    sha256: str


class NewBlockId(NamedTuple):
    """What choosing a block without an id asks of the server: add ` ^name` at the end of line
    `line` of the page at `path`, if that page still hashes to `sha256` (and the line still
    hashes to `line_sha256`, for an open buffer)."""

    path: str
    line: int
    name: str
    sha256: str
    line_sha256: str


# The target page's text for block completion, by path; None when it cannot be read.
SnapshotOf = Callable[[str], Optional[Snapshot]]


@dataclass(frozen=True)
class Candidate:
    """One completion: `new_text` replaces columns `start`..`end` of the cursor line."""

    label: str
    new_text: str
    start: int
    end: int
    kind: str
    detail: Optional[str] = None
    documentation: Optional[str] = None
    deprecated: bool = False
    sort_text: Optional[str] = None
    filter_text: Optional[str] = None
    new_block: Optional[NewBlockId] = None


@dataclass(frozen=True)
class Completions:
    items: List[Candidate]
    incomplete: bool = False


def page_documentation(card: Card) -> str:
    """Markdown shown next to a page candidate (and reused by hover)."""
    parts = []
    if card.type:
        parts.append(f"**type** `{card.type}`")
    if card.status:
        parts.append(f"**status** `{card.status}`")
    if card.stack:
        parts.append("**stack** " + ", ".join(f"`{item}`" for item in card.stack))
    text = " · ".join(parts)
    if card.deprecated:
        text = "⚠️ **Deprecated**" + ("\n\n" + text if text else "")
    return text


def _segment_end(line: str, column: int, stops: str) -> Tuple[int, bool]:
    """How far a completion at `column` replaces, and whether the link is already closed.

    When the text after the cursor runs into `]]` (or into the link's next part), the rest of the
    current segment is replaced and nothing is appended; otherwise only the typed text is
    replaced and `]]` is added.
    """
    index = column
    length = len(line)
    while index < length and line[index] not in stops and line[index] != "[":
        index += 1
    rest = line[index:]
    if rest.startswith("]]") or (rest[:1] and rest[0] in stops and rest[0] != "]"):
        return index, True
    return column, False


def _in_code(text: str, lines: Sequence[str], line: int, column: int) -> bool:
    """Inside a code span (closed, or opened before the cursor and not yet closed) or a fence."""
    current = lines[line]
    if "`" in current:
        if any(start <= column < end for start, end in code_span_ranges(current)):
            return True
        before = current[:column]
        closed = code_span_ranges(before)
        if any(
            ch == "`" and not any(start <= index < end for start, end in closed)
            for index, ch in enumerate(before)
        ):
            return True
    if not may_hold_fences(text):
        return False
    offset = sum(len(item) + 1 for item in lines[:line]) + column
    return any(start <= offset <= end for start, end in fenced_ranges(text))


def complete(
    vault: Vault,
    text: str,
    line: int,
    column: int,
    is_page: bool,
    own: Optional[Structure] = None,
    lines_of: Optional[Callable[[str], List[str]]] = None,
    limit: int = LIMIT,
    blocks: Optional[BlockOptions] = None,
) -> Optional[Completions]:
    """Candidates at (`line`, `column`) of `text`; None when nothing is completed there.

    `own` is the structure of `text` itself (for `[[#heading` links to the same page); `blocks`
    says how `#^` lists a page's blocks (without it, only the ids the model knows).
    """
    lines = text.split("\n")
    if line < 0 or line >= len(lines):
        return None
    current = lines[line]
    column = max(0, min(column, len(current)))
    frontmatter = rules.parse_frontmatter(lines) if is_page else None
    in_frontmatter = (
        frontmatter is not None
        and frontmatter.open_line < line
        and (frontmatter.close_line is None or line < frontmatter.close_line)
    )
    if in_frontmatter and frontmatter is not None and frontmatter.close_line is not None:
        return _frontmatter(vault, frontmatter, lines, line, column)
    context = link_context(current, column)
    if context is not None and not _in_code(text, lines, line, column):
        embed, start, typed = context
        where = (current, column, embed, start, typed)
        return _link(vault, where, own, lines_of, limit, blocks)
    if in_frontmatter and frontmatter is not None:
        return _frontmatter(vault, frontmatter, lines, line, column)
    return None


# -- links ---------------------------------------------------------------------------------------


def _link(
    vault: Vault,
    where: Tuple[str, int, bool, int, str],
    own: Optional[Structure],
    lines_of: Optional[Callable[[str], List[str]]],
    limit: int,
    blocks: Optional[BlockOptions],
) -> Completions:
    """`where` is the cursor line, the column, whether it is an embed, the column after `[[`
    and the text typed since."""
    line, column, embed, start, typed = where
    if "|" in typed:
        bar = typed.index("|")
        return _aliases(vault, line, column, typed[:bar], start + bar + 1)
    if "#" in typed:
        hash_at = typed.index("#")
        page = typed[:hash_at]
        anchor = typed[hash_at + 1 :]
        if anchor.startswith("^"):
            at = start + hash_at + 2
            return _blocks(vault, line, column, page, at, own, lines_of, blocks)
        last = typed.rindex("#")
        return _headings(vault, line, column, page, start + last + 1, own)
    return _pages(vault, line, column, start, typed, embed, limit)


def _target_structure(
    vault: Vault, page: str, own: Optional[Structure]
) -> Tuple[Optional[str], Optional[Structure]]:
    stem = page.strip()
    if not stem:
        return None, own
    if "/" in stem:
        stem = stem.rsplit("/", 1)[-1].strip()
    if stem.lower().endswith(".md"):
        stem = stem[:-3]
    entry = vault.page(stem)
    if entry is None:
        return None, None
    return entry.path, entry.structure


def _pages(
    vault: Vault, line: str, column: int, start: int, typed: str, embed: bool, limit: int
) -> Completions:
    end, closed = _segment_end(line, column, "]|#")
    suffix = "" if closed else "]]"
    items: List[Candidate] = []
    if embed:
        matcher = Matcher(typed)
        for name, path in catalog(vault).assets(vault):
            if matcher and not matcher.name(fold(name)):
                continue
            items.append(
                Candidate(
                    label=name,
                    new_text=name + suffix,
                    start=start,
                    end=end,
                    kind=ASSET_KIND,
                    detail=vault.rel(path),
                    sort_text=f"0{len(items):05d}",
                )
            )
    room = max(0, limit - len(items))
    query = typed.strip()
    chosen, more = catalog(vault).search(query, room)
    # Deprecated pages go last whatever their score.
    chosen.sort(key=lambda pair: pair[1].deprecated)
    for position, (score, card) in enumerate(chosen):
        items.append(
            Candidate(
                label=card.stem,
                new_text=card.stem + suffix,
                start=start,
                end=end,
                kind=PAGE,
                detail=card.summary or None,
                documentation=page_documentation(card) or None,
                deprecated=card.deprecated,
                sort_text=f"{2 if card.deprecated else 1}{position:05d}",
                # Matched on the summary only: keep clients from filtering it out again.
                filter_text=typed + " " + card.stem if query and score < SUBSEQUENCE else None,
            )
        )
    return Completions(items, incomplete=more)


def _headings(
    vault: Vault, line: str, column: int, page: str, start: int, own: Optional[Structure]
) -> Completions:
    _path, structure = _target_structure(vault, page, own)
    if structure is None:
        return Completions([])
    end, closed = _segment_end(line, column, "]|")
    suffix = "" if closed else "]]"
    items = []
    seen = set()
    for index, heading in enumerate(structure.headings):
        if heading.text in seen or not heading.text:
            continue
        seen.add(heading.text)
        items.append(
            Candidate(
                label=heading.text,
                new_text=heading.text + suffix,
                start=start,
                end=end,
                kind=HEADING,
                detail="#" * heading.level + " " + heading.text,
                sort_text=f"{index:05d}",
            )
        )
    return Completions(items)


class BlockOptions(NamedTuple):
    """How `#^` is completed: `snapshot_of` reads the target page (its open buffer, else the
    disk); `own_path` is the page being edited, the target of `[[#^`; with `create_ids`, blocks
    without an id are offered too (the client runs the item's command that adds it)."""

    snapshot_of: SnapshotOf
    own_path: Optional[str] = None
    create_ids: bool = False


def _blocks(
    vault: Vault,
    line: str,
    column: int,
    page: str,
    start: int,
    own: Optional[Structure],
    lines_of: Optional[Callable[[str], List[str]]],
    options: Optional[BlockOptions],
) -> Completions:
    path, structure = _target_structure(vault, page, own)
    if structure is None:
        return Completions([])
    end, closed = _segment_end(line, column, "]|")
    suffix = "" if closed else "]]"
    if options is not None:
        path = path or options.own_path
        snapshot = options.snapshot_of(path) if path is not None else None
        if path is not None and snapshot is not None:
            typed = line[start:column]
            place = (start, end, suffix)
            return _page_blocks(snapshot, path, typed, place, options.create_ids)
    source = lines_of(path) if (lines_of is not None and path is not None) else None
    items = []
    for index, block in enumerate(structure.blocks):
        detail = None
        if source is not None and 0 <= block.line < len(source):
            detail = source[block.line][: block.start].strip() or None
        items.append(
            Candidate(
                label=block.name,
                new_text=block.name + suffix,
                start=start,
                end=end,
                kind=BLOCK,
                detail=detail,
                sort_text=f"{index:05d}",
            )
        )
    return Completions(items)


def _rank_blocks(blocks: Sequence[Block], typed: str) -> Tuple[List[Block], bool]:
    """The blocks to offer, best first, and whether more matched than are offered. Without a
    query, in page order; with one, by the fuzzy score of the id and the block's text."""
    matcher = Matcher(typed)
    if not matcher:
        return list(blocks[:BLOCK_LIMIT]), len(blocks) > BLOCK_LIMIT
    scored: List[Tuple[int, int]] = []
    for order, block in enumerate(blocks):
        score = matcher.name(block.key)
        if score:
            scored.append((-score, order))
    scored.sort()
    chosen = [blocks[order] for _score, order in scored[:BLOCK_LIMIT]]
    return chosen, len(scored) > BLOCK_LIMIT


def _page_blocks(
    snapshot: Snapshot, path: str, typed: str, place: Tuple[int, int, str], create_ids: bool
) -> Completions:
    """The target's blocks: those with an id insert it; the others (with `create_ids`) insert a
    fresh id and carry the `NewBlockId` that adds it to the page."""
    start, end, suffix = place
    page = blocks_of(snapshot.text, snapshot.sha256)
    chosen, more = _rank_blocks(page.blocks if create_ids else page.with_ids, typed)
    query = typed.strip()
    items: List[Candidate] = []
    for position, block in enumerate(chosen):
        offer = page.offer(block)
        new_block = None
        if offer.line_sha256 is None:
            label, detail = offer.name, offer.label or None
        else:
            label, detail = offer.label or block.kind, f"new id ^{offer.name} · {block.kind}"
            new_block = NewBlockId(path, block.last, offer.name, snapshot.sha256, offer.line_sha256)
        items.append(
            Candidate(
                label=label,
                new_text=offer.name + suffix,
                start=start,
                end=end,
                kind=BLOCK,
                detail=detail,
                sort_text=f"{position:05d}",
                # Matched on the text too: keep clients from filtering it out again.
                filter_text=typed + " " + label if query else None,
                new_block=new_block,
            )
        )
    return Completions(items, incomplete=more)


def _aliases(vault: Vault, line: str, column: int, page: str, start: int) -> Completions:
    target = page.split("#", 1)[0].strip()
    entry = vault.page(target) if target else None
    if entry is None:
        return Completions([])
    end, closed = _segment_end(line, column, "]")
    suffix = "" if closed else "]]"
    labels: List[str] = []
    title = vault.title(entry)
    for option in (title, entry.stem):
        if option and option not in labels:
            labels.append(option)
    return Completions(
        [
            Candidate(
                label=label,
                new_text=label + suffix,
                start=start,
                end=end,
                kind=ALIAS,
                detail="title" if label == title else "page name",
                sort_text=f"{index:05d}",
            )
            for index, label in enumerate(labels)
        ]
    )


# -- frontmatter ---------------------------------------------------------------------------------


def _owner(lines: Sequence[str], line: int, open_line: int) -> Optional[str]:
    """The key an indented line continues."""
    for number in range(line - 1, open_line, -1):
        text = lines[number]
        if not text.strip() or text[0] in " \t" or text.lstrip().startswith("- "):
            continue
        match = KEY_VALUE.match(text.rstrip())
        return match.group(1) if match else None
    return None


def key_candidate(key: str, has_colon: bool, end: int, detail: str, sort_text: str) -> Candidate:
    """A frontmatter key completion that replaces the typed key (and adds `: ` when missing)."""
    return Candidate(
        label=key,
        new_text=key if has_colon else key + ": ",
        start=0,
        end=end,
        kind=KEY,
        detail=detail,
        sort_text=sort_text,
    )


def _frontmatter(
    vault: Vault, frontmatter: rules.Frontmatter, lines: Sequence[str], line: int, column: int
) -> Optional[Completions]:
    """A key being typed, the value of a `key:`, or an item of the `stack` list."""
    text = lines[line]
    before = text[:column]
    vocabulary = catalog(vault).vocabulary()
    if not before or KEY_PREFIX.match(before):
        return _key_completions(frontmatter, vocabulary["keys"], text, line, column)
    match = KEY_VALUE.match(before)
    if match is not None:
        return _value_completions(vocabulary, text, column, match)
    item = LIST_ITEM.match(before)
    if item is not None and _owner(lines, line, frontmatter.open_line) == "stack":
        return _stack_item_completions(vocabulary["stack"], frontmatter, lines, line, column, item)
    return None


def _key_completions(
    frontmatter: rules.Frontmatter,
    used_keys: Sequence[Tuple[str, int]],
    text: str,
    line: int,
    column: int,
) -> Optional[Completions]:
    """The required keys, then the keys other pages use, leaving out those already present."""
    end = column
    while end < len(text) and (text[end].isalnum() or text[end] in "_-"):
        end += 1
    rest = text[end:].lstrip()
    if rest and not rest.startswith(":"):
        return None
    has_colon = rest.startswith(":")
    present = {key for key, found in frontmatter.fields.items() if found.line != line}
    items: List[Candidate] = []
    for index, key in enumerate(rules.REQUIRED_FIELDS):
        if key in present:
            continue
        items.append(key_candidate(key, has_colon, end, "required", f"0{index:04d}"))
    for index, (key, count) in enumerate(used_keys):
        if key in present or key in rules.REQUIRED_FIELDS:
            continue
        items.append(key_candidate(key, has_colon, end, _used_on(count), f"1{index:04d}"))
    return Completions(items)


def _value_completions(
    vocabulary: Vocabulary, text: str, column: int, match: re.Match[str]
) -> Optional[Completions]:
    """The values the vault uses for `type` and `status`, and the items of an inline `stack`."""
    key, space, value = match.groups()
    if key in SCALAR_VALUES:
        start = column - len(value)
        end = len(text.rstrip())
        lead = "" if space else " "
        return Completions(
            _values(vocabulary[key], lead, start if space else column, max(end, column))
        )
    if key == "stack":
        return _stack_inline(vocabulary["stack"], text, column, space, value)
    return None


def _stack_item_completions(
    counted: Sequence[Tuple[str, int]],
    frontmatter: rules.Frontmatter,
    lines: Sequence[str],
    line: int,
    column: int,
    item: re.Match[str],
) -> Completions:
    """A `- item` of a block `stack` list: the vault's stack values not listed yet."""
    _indent, space, value = item.groups()
    siblings: Set[str] = set()
    for number in range(frontmatter.open_line + 1, frontmatter.close_line or len(lines)):
        if number == line:
            continue
        other = LIST_ITEM.match(lines[number])
        if other is not None:
            siblings.add(other.group(3).strip())
    text = lines[line]
    end = len(text.rstrip())
    start = column - len(value) if space else column
    lead = "" if space else " "
    return Completions(
        [
            candidate
            for candidate in _values(counted, lead, start, max(end, column))
            if candidate.label not in siblings
        ]
    )


def _used_on(count: int) -> str:
    return f"used on {count} page{'s' if count != 1 else ''}"


def _values(counted: Sequence[Tuple[str, int]], lead: str, start: int, end: int) -> List[Candidate]:
    return [
        Candidate(
            label=value,
            new_text=lead + rules.render_scalar(value),
            start=start,
            end=end,
            kind=VALUE,
            detail=_used_on(count),
            sort_text=f"{index:05d}",
            filter_text=value,
        )
        for index, (value, count) in enumerate(counted)
    ]


def _inline_item(value: str) -> str:
    rendered = rules.render_scalar(value)
    if rendered == value and ("," in value or "]" in value or "[" in value):
        return '"' + value.replace('"', '\\"') + '"'
    return rendered


def _stack_inline(
    counted: Sequence[Tuple[str, int]], text: str, column: int, space: str, value: str
) -> Completions:
    """`stack: [a, b|` completes one item; a bare `stack:` completes `[item]`."""
    if not value.strip():
        lead = "" if space else " "
        end = len(text.rstrip())
        return Completions(
            [
                Candidate(
                    label=item,
                    new_text=f"{lead}[{_inline_item(item)}]",
                    start=column,
                    end=max(end, column),
                    kind=VALUE,
                    detail=_used_on(count),
                    sort_text=f"{index:05d}",
                    filter_text=item,
                )
                for index, (item, count) in enumerate(counted)
            ]
        )
    if not value.lstrip().startswith("[") or "]" in value:
        return Completions([])
    cut = max(value.rfind(","), value.find("["))
    partial = value[cut + 1 :]
    stripped = partial.lstrip()
    start = column - len(stripped)
    end = column
    while end < len(text) and text[end] not in ",]":
        end += 1
    end = len(text[:end].rstrip()) if end > column else column
    listed = text[text.find("[") + 1 :]
    listed = listed.split("]", 1)[0]
    present = {piece.strip().strip("\"'") for piece in listed.split(",")}
    present.discard(stripped.strip())
    return Completions(
        [
            Candidate(
                label=item,
                new_text=_inline_item(item),
                start=start,
                end=max(end, column),
                kind=VALUE,
                detail=_used_on(count),
                sort_text=f"{index:05d}",
            )
            for index, (item, count) in enumerate(counted)
            if item not in present
        ]
    )
