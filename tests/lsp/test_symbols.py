"""Document symbols (a page's headings as a tree) and workspace symbols (pages by name and
summary)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Tuple

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import SERVER, WAIT, Session
from .nav_helpers import doc, request, start_with


async def document_symbols(session: Session, uri: str) -> Any:
    return await request(
        session.client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc(uri))
        )
    )


async def workspace_symbols(session: Session, query: str) -> List[Any]:
    result = await request(
        session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    )
    assert result is not None
    return list(result)


def tree(symbols: Any) -> List[Tuple[str, int, int, list]]:
    return [(s.name, s.range.start.line, s.range.end.line, tree(s.children or [])) for s in symbols]


async def test_headings_as_a_hierarchy(shared: Session) -> None:
    uri = shared.open(shared.page("tokens.md"))
    symbols = await document_symbols(shared, uri)
    assert all(isinstance(s, types.DocumentSymbol) for s in symbols)
    assert tree(symbols) == [
        (
            "Tokens",
            9,
            26,
            [
                ("Formats", 15, 22, [("JWT", 17, 20, []), ("Opaque", 21, 22, [])]),
                ("Storage", 23, 26, []),
            ],
        )
    ]
    formats = symbols[0].children[0]
    assert formats.selection_range.start.line == 15
    assert formats.kind == types.SymbolKind.String


async def test_code_blocks_hold_no_headings(shared: Session) -> None:
    uri = shared.open(shared.page("auth.md"))
    symbols = await document_symbols(shared, uri)
    assert tree(symbols) == [("Authentication", 7, 22, [("Boundaries", 19, 22, [])])]


async def test_workspace_symbols_rank_pages(shared: Session) -> None:
    everything = await workspace_symbols(shared, "")
    names = [s.name for s in everything]
    assert sorted(names) == sorted(
        ["auth", "broken", "conflict", "legacy-auth", "sessions", "tokens"]
    )
    assert names[-1] == "legacy-auth"  # deprecated pages last
    legacy = everything[-1]
    if shared.kind == "visual_studio_code":
        assert list(legacy.tags or []) == [types.SymbolTag.Deprecated]
    else:
        assert legacy.deprecated is True
    sessions = next(s for s in everything if s.name == "sessions")
    assert sessions.location.uri == shared.page("sessions.md").resolve().as_uri()
    assert sessions.location.range.start.line == 8
    assert sessions.container_name == "Session storage, token lifetime and rotation."
    assert sessions.kind == types.SymbolKind.File

    assert next(s.name for s in await workspace_symbols(shared, "ses")) == "sessions"
    assert [s.name for s in await workspace_symbols(shared, "AUTH")][:2] == [
        "auth",
        "legacy-auth",
    ]
    # No name matches: the summary does.
    assert [s.name for s in await workspace_symbols(shared, "validated")] == ["tokens"]
    assert await workspace_symbols(shared, "zzzz-nothing") == []


def flat_only(caps: types.ClientCapabilities) -> None:
    assert caps.text_document is not None
    caps.text_document.document_symbol = types.DocumentSymbolClientCapabilities(
        hierarchical_document_symbol_support=False
    )


@pytest_lsp.fixture(config=SERVER)
async def flat_client(lsp_client: LanguageClient, workspace: Path):
    await start_with(lsp_client, workspace, "neovim", flat_only)
    yield
    await request(lsp_client.shutdown_session(), WAIT)


@pytest.fixture
def flat(flat_client: LanguageClient, workspace: Path) -> Session:
    return Session(flat_client, workspace, "neovim")


async def test_symbol_information_without_hierarchy_support(flat: Session) -> None:
    uri = flat.open(flat.page("tokens.md"))
    symbols = await document_symbols(flat, uri)
    assert all(isinstance(s, types.SymbolInformation) for s in symbols)
    assert [(s.name, s.container_name) for s in symbols] == [
        ("Tokens", None),
        ("Formats", "Tokens"),
        ("JWT", "Formats"),
        ("Opaque", "Formats"),
        ("Storage", "Tokens"),
    ]
    assert all(s.location.uri == uri for s in symbols)
