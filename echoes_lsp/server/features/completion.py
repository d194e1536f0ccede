"""`textDocument/completion`: page names, headings, block ids, aliases, assets and frontmatter
keys and values, from `engine/completion_candidates.py`."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from lsprotocol import types

from ...engine import completion_candidates
from ...engine.completion_candidates import NewBlockId
from ...runtime import echoes_vault as rules
from ..echoes_server import EchoesServer
from ..lsp_convert import markup, path_to_uri
from . import Feature
from .block_ids import command_for, snapshot
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


class ItemMaker:
    """Turns the candidates of one list into LSP items. They mostly replace the same columns (a
    block list all of them): each range is converted once, and each target page's URI made
    once, however many items share it."""

    def __init__(self, ls: EchoesServer, line_text: str, line: int, tags: bool) -> None:
        self.ls = ls
        self.line_text = line_text
        self.line = line
        self.tags = tags
        self._ranges: Dict[Tuple[int, int], types.Range] = {}
        self._uris: Dict[str, str] = {}

    def range(self, start: int, end: int) -> types.Range:
        known = self._ranges.get((start, end))
        if known is None:
            to_client = self.ls.columns.to_client
            known = types.Range(
                start=types.Position(line=self.line, character=to_client(self.line_text, start)),
                end=types.Position(line=self.line, character=to_client(self.line_text, end)),
            )
            self._ranges[(start, end)] = known
        return known

    def command(self, new_block: Optional[NewBlockId]) -> Optional[types.Command]:
        if new_block is None:
            return None
        uri = self._uris.get(new_block.path)
        if uri is None:
            uri = self._uris[new_block.path] = path_to_uri(new_block.path)
        return command_for(new_block, uri)

    def item(self, candidate: completion_candidates.Candidate) -> types.CompletionItem:
        return types.CompletionItem(
            label=candidate.label,
            kind=KINDS.get(candidate.kind, types.CompletionItemKind.Text),
            detail=rules.mask_secrets(candidate.detail) if candidate.detail else candidate.detail,
            documentation=(
                markup(self.ls.support.documentation_format, candidate.documentation)
                if candidate.documentation
                else None
            ),
            sort_text=candidate.sort_text,
            filter_text=candidate.filter_text,
            text_edit=types.TextEdit(
                range=self.range(candidate.start, candidate.end), new_text=candidate.new_text
            ),
            tags=[types.CompletionItemTag.Deprecated]
            if candidate.deprecated and self.tags
            else None,
            deprecated=True if candidate.deprecated else None,
            command=self.command(candidate.new_block),
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
        blocks=completion_candidates.BlockOptions(
            snapshot_of=lambda path: snapshot(ls, path),
            own_path=document.path if document.is_page else None,
            # A client that does not run an item's command can only complete existing ids.
            create_ids=ls.support.completion_commands,
        ),
    )
    if found is None:
        return None
    tags = bool(ls.capability("text_document.completion.completion_item.tag_support"))
    maker = ItemMaker(ls, document.lines[line], line, tags)
    return types.CompletionList(
        is_incomplete=found.incomplete, items=[maker.item(item) for item in found.items]
    )


FEATURES = [
    Feature(
        types.TEXT_DOCUMENT_COMPLETION,
        complete,
        types.CompletionOptions(trigger_characters=TRIGGERS, resolve_provider=False),
    ),
]
