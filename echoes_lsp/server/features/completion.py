"""`textDocument/completion`: page names, headings, block ids, aliases, assets and frontmatter
keys and values, from `engine/completion_candidates.py`."""

from __future__ import annotations

from typing import Optional

from lsprotocol import types

from ...engine import completion_candidates
from ...runtime import echoes_vault as rules
from ..echoes_server import EchoesServer
from . import Feature
from .document_context import load_document, wait_for_search

TRIGGERS = ["[", "#", "^", "|", ":", " "]
KINDS = {
    completion_candidates.PAGE: types.CompletionItemKind.File,
    completion_candidates.ASSET_KIND: types.CompletionItemKind.File,
    completion_candidates.HEADING: types.CompletionItemKind.Reference,
    completion_candidates.BLOCK: types.CompletionItemKind.Reference,
    completion_candidates.ALIAS: types.CompletionItemKind.Text,
    completion_candidates.KEY: types.CompletionItemKind.Property,
    completion_candidates.VALUE: types.CompletionItemKind.Value,
}


def completion_item(
    ls: EchoesServer,
    line_text: str,
    line: int,
    candidate: completion_candidates.Candidate,
    tags: bool,
) -> types.CompletionItem:
    start = ls.columns.to_client(line_text, candidate.start)
    end = ls.columns.to_client(line_text, candidate.end)
    return types.CompletionItem(
        label=candidate.label,
        kind=KINDS.get(candidate.kind, types.CompletionItemKind.Text),
        detail=rules.mask_secrets(candidate.detail) if candidate.detail else candidate.detail,
        documentation=(
            types.MarkupContent(
                kind=types.MarkupKind.Markdown, value=rules.mask_secrets(candidate.documentation)
            )
            if candidate.documentation
            else None
        ),
        sort_text=candidate.sort_text,
        filter_text=candidate.filter_text,
        text_edit=types.TextEdit(
            range=types.Range(
                start=types.Position(line=line, character=start),
                end=types.Position(line=line, character=end),
            ),
            new_text=candidate.new_text,
        ),
        tags=[types.CompletionItemTag.Deprecated] if candidate.deprecated and tags else None,
        deprecated=True if candidate.deprecated else None,
    )


async def complete(
    ls: EchoesServer, params: types.CompletionParams
) -> Optional[types.CompletionList]:
    document = load_document(ls, params.text_document.uri)
    if document is not None and not document.folder.searchable.is_set():
        # Names and summaries come from the whole vault: right after start-up, wait for its
        # parse and page catalog, then read the buffer again, as it may have changed meanwhile.
        await wait_for_search(document.folder)
        document = load_document(ls, params.text_document.uri)
    where = document.cursor(params.position) if document is not None else None
    if document is None or where is None:
        return None
    line, column = where
    found = completion_candidates.complete(
        document.vault,
        document.text,
        line,
        column,
        document.is_page,
        own=document.structure,
        lines_of=ls.lines_of,
    )
    if found is None:
        return None
    tags = bool(ls.capability("text_document.completion.completion_item.tag_support"))
    line_text = document.lines[line]
    return types.CompletionList(
        is_incomplete=found.incomplete,
        items=[completion_item(ls, line_text, line, item, tags) for item in found.items],
    )


FEATURES = [
    Feature(
        types.TEXT_DOCUMENT_COMPLETION,
        complete,
        types.CompletionOptions(trigger_characters=TRIGGERS, resolve_provider=False),
    ),
]
