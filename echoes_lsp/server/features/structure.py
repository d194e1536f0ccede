"""A page's structure in the editor: `textDocument/foldingRange`, `textDocument/selectionRange`
and `textDocument/documentHighlight`, from the pure functions of `engine/folding.py`,
`engine/selection.py` and `engine/highlights.py`."""

from __future__ import annotations

from typing import List, Optional, Tuple

from lsprotocol import types

from ...engine.folding import Fold, FoldMemory, folds, within_limit
from ...engine.highlights import highlights
from ...engine.selection import selection_spans
from ...engine.vault import LEGACY_DAILY
from ...runtime import echoes_vault as rules
from ..echoes_server import EchoesServer
from ..lsp_convert import JsonText, json_list
from . import Feature
from .document_context import VaultDocument, load_analysed, load_document


def markdown_document(ls: EchoesServer, uri: str) -> Optional[VaultDocument]:
    """The vault file at `uri` when it is Markdown (a page, a daily entry, the index, a raw
    source); None for the vault's other files, which have no such structure."""
    return markdown_only(load_document(ls, uri))


def markdown_only(document: Optional[VaultDocument]) -> Optional[VaultDocument]:
    if document is None or not document.path.lower().endswith(".md"):
        return None
    return document


def document_folds(
    document: VaultDocument, around: Optional[int] = None, memory: Optional[FoldMemory] = None
) -> List[Fold]:
    legacy = document.entry is not None and document.entry.kind == LEGACY_DAILY
    return folds(
        document.text, document.structure, document.lines, document.is_page, legacy, around, memory
    )


# An open document with more heading sections than this is folded in the large-document
# worker: each section costs a few Python steps (about 7 µs), so this many hold the event loop
# about 35 ms, and a pasted page of 65,000 half a second.
MANY_SECTIONS = 5_000


def many_sections(ls: EchoesServer, uri: str) -> bool:
    """Whether an open document may hold more than `MANY_SECTIONS` sections (a C-speed count
    of the lines that begin with `#`: a heading is among them)."""
    text = ls.document_text(uri)
    return text is not None and text.count("\n#") > MANY_SECTIONS


async def document_and_folds(
    ls: EchoesServer, uri: str
) -> Optional[Tuple[VaultDocument, List[Fold]]]:
    """A Markdown document and its folds. An open document of very many sections is read from
    its analysis (when it is large) and folded in the large-document worker, never on the event
    loop. Its sections are not kept (the worker and the event loop would share the memory)."""
    if many_sections(ls, uri):
        document = markdown_only(await load_analysed(ls, uri))
        if document is None:
            return None
        return document, await ls.large_documents.computed(document_folds, document)
    document = markdown_document(ls, uri)
    if document is None:
        return None
    return document, document_folds(document, memory=ls.fold_memories.memory(uri))


async def folding_ranges(ls: EchoesServer, params: types.FoldingRangeParams) -> Optional[JsonText]:
    """A page's `FoldingRange`s, written as JSON: a dense page has more than a thousand."""
    uri = params.text_document.uri
    folded = await document_and_folds(ls, uri)
    if folded is None:
        return None
    document, found = folded[0], within_limit(folded[1], ls.support.folding_limit)
    if ls.support.folding_lines_only:
        return JsonText(ls.fold_memories.answer(uri, found, lines_json))
    # With columns, each range starts and ends at the end of its line, so the first line stays
    # in view whole.
    units, lines = document.columns.units, document.lines
    return json_list(
        fold_json(
            fold,
            f',"startCharacter":{units(lines[fold.start])},"endCharacter":{units(lines[fold.end])}',
        )
        for fold in found
    )


def lines_json(found: List[Fold]) -> str:
    """Folding ranges of whole lines, as JSON."""
    return json_list(map(fold_json, found))


def fold_json(fold: Fold, columns: str = "") -> str:
    """A `FoldingRange` as JSON (`FoldingRangeKind`'s values are the engine's kind names)."""
    kind = f',"kind":"{fold.kind}"' if fold.kind else ""
    return f'{{"startLine":{fold.start},"endLine":{fold.end}{columns}{kind}}}'


def _frontmatter(document: VaultDocument) -> Optional[rules.Frontmatter]:
    return rules.parse_frontmatter(document.lines) if document.is_page else None


def selection_ranges(
    ls: EchoesServer, params: types.SelectionRangeParams
) -> Optional[List[types.SelectionRange]]:
    document = markdown_document(ls, params.text_document.uri)
    if document is None:
        return None
    frontmatter = _frontmatter(document)
    answers: List[types.SelectionRange] = []
    for position in params.positions:
        where = document.cursor(position)
        if where is None:  # past the text: the position itself, as the client asked
            answers.append(types.SelectionRange(range=types.Range(start=position, end=position)))
            continue
        around = document_folds(document, where[0])
        spans = selection_spans(
            document.lines, document.structure, around, where[0], where[1], frontmatter
        )
        parent: Optional[types.SelectionRange] = None
        for span in reversed(spans):
            parent = types.SelectionRange(range=document.range(*span), parent=parent)
        assert parent is not None
        answers.append(parent)
    return answers


def document_highlights(
    ls: EchoesServer, params: types.DocumentHighlightParams
) -> Optional[List[types.DocumentHighlight]]:
    document = markdown_document(ls, params.text_document.uri)
    if document is None:
        return None
    where = document.cursor(params.position)
    if where is None:
        return None
    return [
        types.DocumentHighlight(
            range=document.range(found.line, found.start, found.line, found.end),
            kind=types.DocumentHighlightKind.Write
            if found.declaration
            else types.DocumentHighlightKind.Read,
        )
        for found in highlights(document.entry, document.structure, *where)
    ]


FEATURES = [
    Feature(types.TEXT_DOCUMENT_FOLDING_RANGE, folding_ranges),
    Feature(types.TEXT_DOCUMENT_SELECTION_RANGE, selection_ranges),
    Feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, document_highlights),
]
