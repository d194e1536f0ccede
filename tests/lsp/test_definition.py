"""Go to definition: pages, headings, block ids and assets; LocationLink or Location."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import SERVER, WAIT, Session
from .nav_helpers import at, covered, doc, request, start_with


async def definition(session: Session, uri: str, where: types.Position) -> Any:
    return await request(
        session.client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(uri), position=where)
        )
    )


def single_link(result: Any) -> types.LocationLink:
    assert isinstance(result, list) and len(result) == 1
    assert isinstance(result[0], types.LocationLink)
    return result[0]


async def test_page_heading_block_and_asset_targets(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    sessions = shared.page("sessions.md").resolve().as_uri()

    found = single_link(await definition(shared, uri, at(shared, text, "[[sessions]]", 3)))
    assert found.target_uri == sessions
    assert found.target_selection_range.start.line == 8  # `# Sessions`
    assert found.origin_selection_range is not None
    assert covered(shared, text, found.origin_selection_range) == "[[sessions]]"

    found = single_link(await definition(shared, uri, at(shared, text, "Token lifetime")))
    assert found.target_uri == sessions
    assert found.target_selection_range.start.line == 12  # `## Token lifetime`

    found = single_link(await definition(shared, uri, at(shared, text, "^rotation", 2)))
    assert found.target_uri == sessions
    assert found.target_selection_range.start.line == 14
    assert found.target_selection_range.start.character == len("Access tokens live 15 minutes. ")

    found = single_link(await definition(shared, uri, at(shared, text, "diagram.png")))
    assert (
        found.target_uri
        == (shared.workspace / "EchoesVault" / "assets" / "diagram.png").resolve().as_uri()
    )


async def test_links_with_folder_case_and_alias(shared: Session) -> None:
    page = shared.page("tokens.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    auth = shared.page("auth.md").resolve().as_uri()
    found = single_link(await definition(shared, uri, at(shared, text, "pages/auth.md")))
    assert found.target_uri == auth
    found = single_link(await definition(shared, uri, at(shared, text, "boundary rules")))
    assert found.target_uri == auth
    assert found.target_selection_range.start.line == 19  # `## Boundaries`
    found = single_link(await definition(shared, uri, at(shared, text, "Sessions#token")))
    assert found.target_selection_range.start.line == 12  # matched without case


async def test_missing_targets_and_plain_text_have_no_definition(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    for needle in ("missing-page", "missing.png", "The gateway", "not-a-link"):
        assert not await definition(shared, uri, at(shared, text, needle))
    assert not await definition(shared, uri, types.Position(line=999, character=1))
    gone = shared.page("nowhere.md").resolve().as_uri()
    assert not await definition(shared, gone, types.Position(line=0, character=0))


def without_link_support(caps: types.ClientCapabilities) -> None:
    assert caps.text_document is not None
    caps.text_document.definition = types.DefinitionClientCapabilities(link_support=False)


@pytest_lsp.fixture(config=SERVER)
async def plain_client(lsp_client: LanguageClient, workspace: Path):
    await start_with(lsp_client, workspace, "visual_studio_code", without_link_support)
    yield
    await request(lsp_client.shutdown_session(), WAIT)


@pytest.fixture
def plain(plain_client: LanguageClient, workspace: Path) -> Session:
    return Session(plain_client, workspace, "visual_studio_code")


async def test_locations_for_clients_without_link_support(plain: Session) -> None:
    session = plain
    page = session.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = session.open(page)
    result: List[Any] = await definition(session, uri, at(session, text, "[[sessions]]", 3))
    assert len(result) == 1 and isinstance(result[0], types.Location)
    assert result[0].uri == session.page("sessions.md").resolve().as_uri()
    assert result[0].range.start.line == 8
