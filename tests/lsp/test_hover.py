"""Hover over links: the target's summary and metadata, deprecation, assets, missing targets."""

from __future__ import annotations

from typing import Optional

from lsprotocol import types

from .conftest import Session
from .nav_helpers import at, covered, doc, request


async def hover(session: Session, uri: str, where: types.Position) -> Optional[types.Hover]:
    return await request(
        session.client.text_document_hover_async(
            types.HoverParams(text_document=doc(uri), position=where)
        )
    )


def markdown(result: Optional[types.Hover]) -> str:
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    return result.contents.value


async def test_hover_shows_summary_metadata_and_preview(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    result = await hover(shared, uri, at(shared, text, "[[sessions]]", 4))
    value = markdown(result)
    assert "Session storage, token lifetime and rotation." in value
    assert "architecture" in value and "active" in value and "python" in value
    assert "# Sessions" in value and "Used by [[auth]]." in value  # first body lines
    assert result is not None and result.range is not None
    assert covered(shared, text, result.range) == "[[sessions]]"


async def test_hover_on_a_deprecated_page_names_its_replacement(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    value = markdown(await hover(shared, uri, at(shared, text, "[[legacy-auth]]", 3)))
    assert "Deprecated" in value
    assert "[[auth]]" in value
    assert "Old cookie-based authentication." in value


async def test_hover_on_missing_targets_and_assets(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    assert "No such page" in markdown(await hover(shared, uri, at(shared, text, "missing-page")))
    heading = markdown(await hover(shared, uri, at(shared, text, "No such heading")))
    assert "not found" in heading and "Session storage" in heading
    asset = markdown(await hover(shared, uri, at(shared, text, "diagram.png")))
    assert "EchoesVault/assets/diagram.png" in asset
    assert "No such asset" in markdown(await hover(shared, uri, at(shared, text, "missing.png")))


async def test_hover_after_non_ascii_text(shared: Session) -> None:
    page = shared.page("tokens.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    result = await hover(shared, uri, at(shared, text, "the session page"))
    assert "Session storage" in markdown(result)
    assert result is not None and result.range is not None
    assert covered(shared, text, result.range) == "[[sessions|the session page]]"


async def test_no_hover_off_links_in_code_or_out_of_range(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    assert await hover(shared, uri, at(shared, text, "The gateway")) is None
    assert await hover(shared, uri, at(shared, text, "not-a-link")) is None
    assert await hover(shared, uri, at(shared, text, "also-not-a-link")) is None
    assert await hover(shared, uri, types.Position(line=400, character=0)) is None
    closed = shared.page("sessions.md").resolve().as_uri()  # not open: read from disk
    value = markdown(await hover(shared, closed, types.Position(line=10, character=10)))
    assert "Authentication boundaries" in value
