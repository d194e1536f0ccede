"""Find references: backlinks of a page, of a heading and of a block, from the reverse index."""

from __future__ import annotations

import asyncio
from typing import List, Optional, Sequence, Tuple

from lsprotocol import types

from .conftest import WAIT, Session
from .nav_helpers import PAGE_HEAD, at, covered, doc, request

# Links to sessions.md in the fixture vault: (file, line, link text).
SESSIONS_LINKS = [
    ("auth.md", 9, "[[sessions]]"),
    ("auth.md", 10, "[[sessions#Token lifetime]]"),
    ("auth.md", 10, "[[sessions#^rotation]]"),
    ("auth.md", 11, "[[sessions#No such heading]]"),
    ("tokens.md", 11, "[[sessions|the session page]]"),
    ("tokens.md", 12, "[[Sessions#token lifetime]]"),
    ("tokens.md", 12, "![[sessions]]"),
]


async def references(
    session: Session, uri: str, where: types.Position, declaration: bool = False
) -> Optional[Sequence[types.Location]]:
    return await request(
        session.client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc(uri),
                position=where,
                context=types.ReferenceContext(include_declaration=declaration),
            )
        )
    )


def described(
    session: Session, found: Optional[Sequence[types.Location]]
) -> List[Tuple[str, int, str]]:
    """(file name, line, covered text) of each location, in the order returned."""
    assert found is not None
    result = []
    for location in found:
        name = location.uri.rsplit("/", 1)[-1]
        path = session.workspace / "EchoesVault" / location.uri.split("/EchoesVault/", 1)[1]
        text = path.read_text(encoding="utf-8")
        result.append((name, location.range.start.line, covered(session, text, location.range)))
    return result


async def test_references_of_a_link_target(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    found = await references(shared, uri, at(shared, text, "[[sessions]]", 4))
    assert described(shared, found) == SESSIONS_LINKS


async def test_references_anywhere_in_a_page_and_its_declaration(shared: Session) -> None:
    page = shared.page("sessions.md")
    uri = shared.open(page)
    found = await references(shared, uri, types.Position(line=14, character=3), True)
    assert found is not None
    assert found[0].uri == uri and found[0].range.start.line == 8  # the title
    assert described(shared, found[1:]) == SESSIONS_LINKS
    found = await references(shared, uri, types.Position(line=14, character=3), False)
    assert described(shared, found) == SESSIONS_LINKS


async def test_references_of_a_heading_and_of_a_block(shared: Session) -> None:
    page = shared.page("sessions.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    found = await references(shared, uri, at(shared, text, "## Token lifetime", 5))
    assert described(shared, found) == [
        ("auth.md", 10, "[[sessions#Token lifetime]]"),
        ("tokens.md", 12, "[[Sessions#token lifetime]]"),
    ]
    found = await references(shared, uri, at(shared, text, "^rotation", 3))
    assert described(shared, found) == [("auth.md", 10, "[[sessions#^rotation]]")]
    # On the `#Heading` part of a link: links to that heading.
    auth = shared.page("auth.md")
    auth_text = auth.read_text(encoding="utf-8")
    auth_uri = shared.open(auth)
    found = await references(shared, auth_uri, at(shared, auth_text, "Token lifetime", 3), True)
    assert described(shared, found)[0] == ("sessions.md", 12, "## Token lifetime")
    assert len(found or []) == 3


async def test_unsaved_links_count(shared: Session) -> None:
    draft = shared.page("draft.md")
    text = PAGE_HEAD.format(summary="Draft.") + "Naïve 🎫 [[sessions]]\n"
    draft_uri = shared.open(draft, text)
    uri = shared.open(shared.page("sessions.md"))

    async def until_draft() -> List[Tuple[str, int, int]]:
        while True:
            found = await references(shared, uri, types.Position(line=14, character=0))
            names = [location.uri for location in found or []]
            if draft_uri in names:
                return [
                    (loc.uri, loc.range.start.line, loc.range.start.character)
                    for loc in found or []
                    if loc.uri == draft_uri
                ]
            await asyncio.sleep(0.05)

    found = await asyncio.wait_for(until_draft(), WAIT)
    prefix = "Naïve 🎫 "
    expected = len(prefix.encode("utf-8")) if shared.kind == "neovim" else len(prefix) + 1
    assert found == [(draft_uri, 7, expected)]


async def test_no_references_outside_pages_and_links(shared: Session) -> None:
    daily = next((shared.workspace / "EchoesVault" / "daily").rglob("*.md"))
    uri = shared.open(daily)
    assert not await references(shared, uri, types.Position(line=0, character=2))
    found = await references(shared, uri, types.Position(line=4, character=14))  # on [[auth]]
    assert found and all(loc.uri.endswith(".md") for loc in found)
    assert not await references(shared, uri, types.Position(line=90, character=0))
    gone = shared.page("nowhere.md").resolve().as_uri()
    assert not await references(shared, gone, types.Position(line=0, character=0))
