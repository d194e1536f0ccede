"""`textDocument/documentSymbol` (a page's headings as a tree, or a flat list) and
`workspace/symbol` (the pages of every vault, ranked like `[[` completion)."""

from __future__ import annotations

import asyncio
from typing import List, Optional, Sequence, Union

from lsprotocol import types

from ...engine.link_targets import Section, outline, page_search
from ..echoes_server import EchoesServer, sliced
from ..lsp_convert import make_range
from . import Feature
from .document_context import file_uri, load_document

# How long a workspace symbol request waits for the vaults' indexing; then it searches what
# has been parsed so far.
SYMBOL_WAIT = 2.0


def section_symbols(
    ls: EchoesServer, lines: Sequence[str], sections: Sequence[Section]
) -> List[types.DocumentSymbol]:
    symbols = []
    for section in sections:
        heading = section.heading
        end_line = min(section.end_line, max(0, len(lines) - 1))
        symbols.append(
            types.DocumentSymbol(
                name=heading.text or "#" * heading.level,
                detail="#" * heading.level,
                kind=types.SymbolKind.String,
                range=make_range(
                    lines, ls.columns, heading.line, 0, end_line, len(lines[end_line])
                ),
                selection_range=make_range(
                    lines, ls.columns, heading.line, heading.start, heading.line, heading.end
                ),
                children=section_symbols(ls, lines, section.children),
            )
        )
    return symbols


def flat_symbols(
    ls: EchoesServer,
    uri: str,
    lines: Sequence[str],
    sections: Sequence[Section],
    parent: Optional[str],
) -> List[types.SymbolInformation]:
    found = []
    for section in sections:
        heading = section.heading
        name = heading.text or "#" * heading.level
        end_line = min(section.end_line, max(0, len(lines) - 1))
        found.append(
            types.SymbolInformation(
                name=name,
                kind=types.SymbolKind.String,
                location=types.Location(
                    uri=uri,
                    range=make_range(
                        lines, ls.columns, heading.line, 0, end_line, len(lines[end_line])
                    ),
                ),
                container_name=parent,
            )
        )
        found.extend(flat_symbols(ls, uri, lines, section.children, name))
    return found


def document_symbols(
    ls: EchoesServer, params: types.DocumentSymbolParams
) -> Optional[Union[List[types.DocumentSymbol], List[types.SymbolInformation]]]:
    document = load_document(ls, params.text_document.uri)
    if document is None:
        return None
    sections = outline(document.structure, len(document.lines))
    if ls.capability("text_document.document_symbol.hierarchical_document_symbol_support"):
        return section_symbols(ls, document.lines, sections)
    return flat_symbols(ls, document.uri, document.lines, sections, None)


async def workspace_symbols(
    ls: EchoesServer, params: types.WorkspaceSymbolParams
) -> List[types.SymbolInformation]:
    folders = ls.folders()
    for folder in folders:
        if not folder.searchable.is_set():
            try:
                await asyncio.wait_for(folder.searchable.wait(), SYMBOL_WAIT)
            except asyncio.TimeoutError:
                pass
    # Sliced: a long query over a large vault never holds other requests for long.
    cards = await sliced(page_search([folder.vault for folder in folders], params.query or ""))
    tags = bool(ls.capability("workspace.symbol.tag_support"))
    return [
        types.SymbolInformation(
            name=card.stem,
            kind=types.SymbolKind.File,
            location=types.Location(
                uri=file_uri(card.path),
                range=types.Range(
                    start=types.Position(line=card.title_line, character=0),
                    end=types.Position(line=card.title_line, character=0),
                ),
            ),
            container_name=card.summary or None,
            tags=[types.SymbolTag.Deprecated] if card.deprecated and tags else None,
            deprecated=True if card.deprecated and not tags else None,
        )
        for card in cards
    ]


FEATURES = [
    Feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, document_symbols),
    Feature(types.WORKSPACE_SYMBOL, workspace_symbols),
]
