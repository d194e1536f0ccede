"""Every navigation request answers odd input with an empty result, never an error or a crash."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, List

import pytest
from lsprotocol import types

from .conftest import Session
from .nav_helpers import doc, request

Ask = Callable[[Session, str, types.Position], Awaitable[Any]]


def tokens(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
    return s.client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=doc(uri))
    )


def token_range(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
    return s.client.text_document_semantic_tokens_range_async(
        types.SemanticTokensRangeParams(text_document=doc(uri), range=types.Range(start=at, end=at))
    )


def hints(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
    return s.client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=doc(uri), range=types.Range(start=at, end=at))
    )


def requests() -> List[Any]:
    def completion(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
        return s.client.text_document_completion_async(
            types.CompletionParams(text_document=doc(uri), position=at)
        )

    def hover(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
        return s.client.text_document_hover_async(
            types.HoverParams(text_document=doc(uri), position=at)
        )

    def definition(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
        return s.client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(uri), position=at)
        )

    def references(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
        return s.client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc(uri),
                position=at,
                context=types.ReferenceContext(include_declaration=True),
            )
        )

    def links(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
        return s.client.text_document_document_link_async(
            types.DocumentLinkParams(text_document=doc(uri))
        )

    def symbols(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
        return s.client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc(uri))
        )

    def lenses(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
        return s.client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(uri)))

    def folding(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
        return s.client.text_document_folding_range_async(
            types.FoldingRangeParams(text_document=doc(uri))
        )

    def selection(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
        return s.client.text_document_selection_range_async(
            types.SelectionRangeParams(text_document=doc(uri), positions=[at])
        )

    def highlight(s: Session, uri: str, at: types.Position) -> Awaitable[Any]:
        return s.client.text_document_document_highlight_async(
            types.DocumentHighlightParams(text_document=doc(uri), position=at)
        )

    return [
        pytest.param(folding, id="foldingRange"),
        pytest.param(selection, id="selectionRange"),
        pytest.param(highlight, id="documentHighlight"),
        pytest.param(completion, id="completion"),
        pytest.param(hover, id="hover"),
        pytest.param(definition, id="definition"),
        pytest.param(references, id="references"),
        pytest.param(links, id="documentLink"),
        pytest.param(symbols, id="documentSymbol"),
        pytest.param(lenses, id="codeLens"),
        pytest.param(tokens, id="semanticTokens/full"),
        pytest.param(token_range, id="semanticTokens/range"),
        pytest.param(hints, id="inlayHint"),
    ]


def empty(result: Any) -> bool:
    if result is None:
        return True
    items = getattr(result, "items", getattr(result, "data", result))
    return isinstance(items, (list, tuple)) and not items


@pytest.mark.parametrize("ask", requests())
async def test_odd_documents_and_positions(shared: Session, ask: Ask) -> None:
    vault = shared.workspace / "EchoesVault"
    page = shared.open(shared.page("auth.md"))
    odd_documents = [
        "untitled:Untitled-1",
        "file:///nowhere/at/all.md",
        (vault / "pages").resolve().as_uri(),  # a folder
        (vault / "assets" / "diagram.png").resolve().as_uri(),  # binary, not open
        (vault / ".echoes-vault.json").resolve().as_uri(),
    ]
    for uri in odd_documents:
        assert empty(await request(ask(shared, uri, types.Position(line=0, character=0))))
    for position in (
        types.Position(line=10_000, character=0),
        types.Position(line=9, character=10_000),
        types.Position(line=0, character=0),
    ):
        await request(ask(shared, page, position))  # answers (an error fails the test)
    await shared.alive()


async def test_deleted_page_still_answers(session: Session) -> None:
    path = session.page("sessions.md")
    uri = session.open(path)
    path.unlink()
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri, type=types.FileChangeType.Deleted)]
        )
    )
    for ask in requests():
        await request(ask.values[0](session, uri, types.Position(line=8, character=2)))
    auth = session.page("auth.md")
    hover = await request(
        session.client.text_document_hover_async(
            types.HoverParams(
                text_document=doc(session.open(auth)), position=types.Position(line=9, character=30)
            )
        )
    )
    assert hover is not None  # the open buffer of the deleted page still resolves
    await session.alive()
