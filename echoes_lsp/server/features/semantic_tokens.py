"""`textDocument/semanticTokens/full` and `/range`: the parts of each wikilink and the frontmatter
keys, from `engine/token_spans.py`, encoded as the protocol's relative integers in the client's
position units.

A full request runs in slices of 5,000 links between which other requests are answered, and
stops after `FULL_LIMIT` tokens; a range request reads only the links of its lines (two binary
searches), so its work is bounded by the range, however large the page.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

from lsprotocol import types

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
from ..echoes_server import EchoesServer, sliced
from ..lsp_convert import Columns
from . import Feature
from .document_context import VaultDocument, load_analysed
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


async def full(
    ls: EchoesServer, params: types.SemanticTokensParams
) -> Optional[types.SemanticTokens]:
    document = await document_for(ls, params.text_document.uri)
    if document is None:
        return None
    spans = key_spans(document.lines) if document.is_page else []
    resolver = Resolver(document.vault, document.entry, document.structure)
    steps = span_steps(resolver, document.structure.links, FULL_LIMIT - len(spans))
    found, _cut = await sliced(steps)
    return types.SemanticTokens(data=encode(spans + found, document.lines, ls.columns))


async def in_range(
    ls: EchoesServer, params: types.SemanticTokensRangeParams
) -> Optional[types.SemanticTokens]:
    document = await document_for(ls, params.text_document.uri)
    if document is None:
        return None
    first, last = params.range.start.line, params.range.end.line
    spans = key_spans(document.lines, first, last) if document.is_page else []
    resolver = Resolver(document.vault, document.entry, document.structure)
    spans += all_spans(resolver, links_between(document.structure.links, first, last))
    return types.SemanticTokens(data=encode(spans, document.lines, ls.columns))


FEATURES = [
    Feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, full, LEGEND),
    Feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, in_range, LEGEND),
]
