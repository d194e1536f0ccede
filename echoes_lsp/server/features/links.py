"""What a link points at: `textDocument/hover`, `textDocument/definition` and
`textDocument/documentLink`, from the targets `engine/link_targets.py` resolves."""

from __future__ import annotations

from typing import List, Optional, Tuple, Union

from lsprotocol import types

from ...engine.link_targets import Target, definition, hover_markdown, link_at, resolve
from ...engine.markdown import Link
from ..echoes_server import EchoesServer
from ..lsp_convert import markup, path_to_uri
from . import Feature
from .document_context import Ranges, VaultDocument, load_at, load_document


def link_under_cursor(
    ls: EchoesServer, uri: str, position: types.Position
) -> Optional[Tuple[VaultDocument, Link]]:
    """The document and the link the cursor is on, if any."""
    at = load_at(ls, uri, position)
    if at is None:
        return None
    link = link_at(at.document.structure, at.line, at.column)
    return (at.document, link) if link is not None else None


def hover(ls: EchoesServer, params: types.HoverParams) -> Optional[types.Hover]:
    found = link_under_cursor(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    document, link = found
    target = resolve(document.vault, document.entry, link, document.structure)
    return types.Hover(
        # a page's preview may quote credential-shaped text: shown masked, never as written
        contents=markup(ls.support.hover_format, hover_markdown(document.vault, target)),
        range=document.link_range(link),
    )


def goto_definition(
    ls: EchoesServer, params: types.DefinitionParams
) -> Optional[Union[List[types.LocationLink], List[types.Location]]]:
    under = link_under_cursor(ls, params.text_document.uri, params.position)
    if under is None:
        return None
    document, link = under
    found = definition(resolve(document.vault, document.entry, link, document.structure))
    if found is None:
        return None
    whole, selection = found
    ranges = Ranges(ls)
    if document.path in (whole.path, selection.path):
        ranges.know(document)
    if ls.capability("text_document.definition.link_support"):
        return [
            types.LocationLink(
                target_uri=ranges.uri(whole.path),
                target_range=ranges.range(whole),
                target_selection_range=ranges.range(selection),
                origin_selection_range=document.link_range(link),
            )
        ]
    return [ranges.location(selection)]


def link_tooltip(document: VaultDocument, target: Target) -> Optional[str]:
    """The page's summary, or the asset's vault path."""
    if target.page is not None:
        return target.page.info.summary if target.page.info is not None else None
    if target.asset is not None:
        return document.vault.rel(target.asset)
    return None


def document_links(
    ls: EchoesServer, params: types.DocumentLinkParams
) -> Optional[List[types.DocumentLink]]:
    document = load_document(ls, params.text_document.uri)
    if document is None:
        return None
    found: List[types.DocumentLink] = []
    tooltips = bool(ls.capability("text_document.document_link.tooltip_support"))
    for link in document.structure.links:
        target = resolve(document.vault, document.entry, link, document.structure)
        place = definition(target)
        if place is None:
            continue
        uri = path_to_uri(place[1].path)
        if target.heading is not None or target.block is not None:
            uri += f"#L{place[1].line + 1}"  # opens at the heading or block line
        found.append(
            types.DocumentLink(
                range=document.link_range(link),
                target=uri,
                tooltip=link_tooltip(document, target) if tooltips else None,
            )
        )
    return found


FEATURES = [
    Feature(types.TEXT_DOCUMENT_HOVER, hover),
    Feature(types.TEXT_DOCUMENT_DEFINITION, goto_definition),
    Feature(
        types.TEXT_DOCUMENT_DOCUMENT_LINK,
        document_links,
        types.DocumentLinkOptions(resolve_provider=False),
    ),
]
