"""`textDocument/semanticTokens/full`, `/full/delta` and `/range`: the parts of each wikilink and
the frontmatter keys, from `engine/token_spans.py`, encoded as the protocol's relative integers
in the client's position units.

A full request on an open document of up to 20,000 lines is made of rows kept between requests
(`token_rows.py`): after an edit only the edited lines are read, and a delta request answers
with the one stretch of integers that changed. Any other full request runs in slices of 5,000
links between which other requests are answered, and stops after `FULL_LIMIT` tokens; a range
request reads only the links of its lines (two binary searches), so its work is bounded by the
range, however large the page.
"""

from __future__ import annotations

import itertools
from typing import List, NamedTuple, Optional, Sequence, Tuple, Union

from lsprotocol import types

from ...engine.markdown import Structure
from ...engine.token_spans import (
    FULL_LIMIT,
    TOKEN_MODIFIERS,
    TOKEN_TYPES,
    Resolver,
    Span,
    all_spans,
    key_spans,
    links_between,
    span_steps,
)
from ...engine.vault import Entry, Vault
from ..echoes_server import EchoesServer, sliced
from ..lsp_convert import Columns, JsonText, json_ints
from ..token_rows import (
    MAX_LINES,
    MAX_TEXT,
    DocumentRows,
    Found,
    Placed,
    body_line,
    fenced_lines,
    segments,
    token_steps,
)
from . import Feature
from .document_context import VaultDocument, document_lines, load_analysed, locate
from .view_refresh import follow_views

LEGEND = types.SemanticTokensLegend(
    token_types=list(TOKEN_TYPES), token_modifiers=list(TOKEN_MODIFIERS)
)


def encode(spans: Sequence[Span], lines: Sequence[str], columns: Columns) -> List[int]:
    """The protocol's five integers per token, each relative to the token before, in client
    units; a span that is empty in them is left out."""
    data: List[int] = []
    previous_line = previous_start = 0
    current, text, same = -1, "", True
    for span in spans:
        if span.line != current:  # each line is looked at once, however many tokens it holds
            current = span.line
            text = lines[current] if current < len(lines) else ""
            same = columns.same_as_code_points(text)
        start, end = span.start, span.end
        if not same:
            start, end = columns.to_client(text, start), columns.to_client(text, end)
        length = end - start
        if length <= 0:
            continue
        delta_start = start - previous_start if span.line == previous_line else start
        data.extend((span.line - previous_line, delta_start, length, span.kind, span.modifiers))
        previous_line, previous_start = span.line, start
    return data


async def document_for(ls: EchoesServer, uri: str) -> Optional[VaultDocument]:
    document = await load_analysed(ls, uri)
    if document is not None:
        follow_views(ls, document.folder)
    return document


RESULT_IDS = itertools.count(1)
# Stretches compared at once when looking for where two answers differ.
COMPARED = 256


class Kept(NamedTuple):
    """An open document as a request on kept rows sees it: the rows, the vault and entry, its
    lines, the facts of each body line that holds something, and its own headings and blocks."""

    rows: DocumentRows
    vault: Vault
    entry: Optional[Entry]
    is_page: bool
    lines: List[str]
    found: Found
    own: Structure


async def kept_document(ls: EchoesServer, uri: str) -> Optional[Kept]:
    """An open document read through its kept rows; None for a document that is not open or
    too large to keep rows for (answered from its whole structure)."""
    text = ls.document_text(uri)
    located = locate(ls, uri) if text is not None and len(text) <= MAX_TEXT else None
    if located is None or text is None:
        return None
    folder, path = located
    lines = document_lines(ls, uri, path, text)
    if len(lines) > MAX_LINES:
        return None
    rows = ls.token_rows.rows(folder.vault, uri, path, ls.columns.encoding)
    if not rows.seeded:  # new: the model's analysis gives every line's facts at once
        document = await document_for(ls, uri)
        if document is None:
            return None
        text, lines = document.text, document.lines
        rows.seed(document.structure, lines)
    follow_views(ls, folder)
    vault = folder.vault
    is_page = vault.is_page(path)
    body = body_line(lines, is_page)
    found = rows.current(lines, segments(body, fenced_lines(text, lines, body), len(lines)))
    own = rows.own_structure(found)
    return Kept(rows, vault, vault.entry(path), is_page, lines, found, own)


async def kept_rows(ls: EchoesServer, uri: str) -> Optional[Tuple[DocumentRows, List[int], str]]:
    """The full answer of an open document, made of kept rows: its integers, and the same as
    JSON (the rows' texts joined, unless the answer is cut at `FULL_LIMIT` tokens)."""
    kept = await kept_document(ls, uri)
    if kept is None:
        return None
    keys = key_spans(kept.lines) if kept.is_page else []
    data = encode(keys, kept.lines, ls.columns)
    placed = Placed(data, keys[-1].line if keys else 0, [json_ints(data)] if data else [])
    resolver = Resolver(kept.vault, kept.entry, kept.own)
    await sliced(token_steps(kept.rows, kept.found, resolver, ls.columns, placed))
    if len(placed.data) > FULL_LIMIT * 5:
        cut = placed.data[: FULL_LIMIT * 5]
        return kept.rows, cut, json_ints(cut)
    return kept.rows, placed.data, ",".join(placed.json)


def answered(rows: DocumentRows, data: List[int], ints: str) -> JsonText:
    """A full answer, kept as the base of the next delta."""
    rows.answered(data, str(next(RESULT_IDS)))
    return tokens_json(ints, rows.result_id)


def tokens_json(ints: str, result_id: str = "") -> JsonText:
    """`SemanticTokens` as JSON, from its integers as JSON (`json_ints`): a dense page's answer
    holds tens of thousands of them, which `json.dumps` writes one at a time (result ids are
    numbers: nothing to escape)."""
    named = f',"resultId":"{result_id}"' if result_id else ""
    return JsonText(f'{{"data":[{ints}]{named}}}')


async def full(ls: EchoesServer, params: types.SemanticTokensParams) -> Optional[JsonText]:
    kept = await kept_rows(ls, params.text_document.uri)
    if kept is not None:
        return answered(*kept)
    return await whole(ls, params.text_document.uri)


def common_prefix(old: Sequence[int], new: Sequence[int]) -> int:
    """How many integers two answers begin with alike (compared a stretch at a time)."""
    size = min(len(old), len(new))
    at = 0
    while at + COMPARED <= size and old[at : at + COMPARED] == new[at : at + COMPARED]:
        at += COMPARED
    while at < size and old[at] == new[at]:
        at += 1
    return at


def edit_between(old: List[int], new: List[int]) -> List[types.SemanticTokensEdit]:
    """The one edit that turns `old` into `new`: what lies between their common beginning and
    their common end (none when they are equal)."""
    if old == new:
        return []
    prefix = common_prefix(old, new)
    suffix = common_prefix(old[prefix:][::-1], new[prefix:][::-1])
    return [
        types.SemanticTokensEdit(
            start=prefix,
            delete_count=len(old) - prefix - suffix,
            data=new[prefix : len(new) - suffix],
        )
    ]


async def delta(
    ls: EchoesServer, params: types.SemanticTokensDeltaParams
) -> Union[JsonText, types.SemanticTokensDelta, None]:
    """The change since the answer the client holds; a full answer when it holds another."""
    kept = await kept_rows(ls, params.text_document.uri)
    if kept is None:
        return await whole(ls, params.text_document.uri)
    rows, data, ints = kept
    result_id = str(next(RESULT_IDS))
    base_id, base = rows.answered(data, result_id)
    if not base_id or params.previous_result_id != base_id:
        return tokens_json(ints, result_id)
    return types.SemanticTokensDelta(edits=edit_between(base, data), result_id=result_id)


async def whole(ls: EchoesServer, uri: str) -> Optional[JsonText]:
    """A full answer made from the whole structure (no rows kept)."""
    document = await document_for(ls, uri)
    if document is None:
        return None
    spans = key_spans(document.lines) if document.is_page else []
    resolver = Resolver(document.vault, document.entry, document.structure)
    steps = span_steps(resolver, document.structure.links, FULL_LIMIT - len(spans))
    found, _cut = await sliced(steps)
    return tokens_json(json_ints(encode(spans + found, document.lines, ls.columns)))


async def in_range(ls: EchoesServer, params: types.SemanticTokensRangeParams) -> Optional[JsonText]:
    document = await document_for(ls, params.text_document.uri)
    if document is None:
        return None
    first, last = params.range.start.line, params.range.end.line
    spans = key_spans(document.lines, first, last) if document.is_page else []
    resolver = Resolver(document.vault, document.entry, document.structure)
    spans += all_spans(resolver, links_between(document.structure.links, first, last))
    return tokens_json(json_ints(encode(spans, document.lines, ls.columns)))


FEATURES = [
    Feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, full, LEGEND),
    Feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, delta, LEGEND),
    Feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, in_range, LEGEND),
]
