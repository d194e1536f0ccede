"""Code lens "N backlinks" on a page's title, and the `echoes.references` command behind it."""

from __future__ import annotations

import asyncio
from typing import Any, List, Optional, Sequence

from lsprotocol import types

from .conftest import WAIT, Session
from .nav_helpers import PAGE_HEAD, doc, request


async def lenses(session: Session, uri: str) -> Optional[Sequence[types.CodeLens]]:
    return await request(
        session.client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(uri)))
    )


def titles(found: Optional[Sequence[types.CodeLens]]) -> List[Any]:
    return [
        (lens.range.start.line, lens.command.title if lens.command else None)
        for lens in found or []
    ]


async def test_backlink_counts_on_titles(shared: Session) -> None:
    sessions = shared.open(shared.page("sessions.md"))
    assert titles(await lenses(shared, sessions)) == [(8, "2 backlinks")]  # auth.md, tokens.md
    auth = shared.open(shared.page("auth.md"))
    # sessions.md, legacy-auth.md, tokens.md and the daily entry.
    assert titles(await lenses(shared, auth)) == [(7, "4 backlinks")]
    broken = shared.open(shared.page("broken.md"))
    assert titles(await lenses(shared, broken)) == [(6, "0 backlinks")]
    legacy = shared.open(shared.page("legacy-auth.md"))
    assert titles(await lenses(shared, legacy)) == [(10, "1 backlink")]


async def test_lens_command_returns_the_references(shared: Session) -> None:
    uri = shared.open(shared.page("sessions.md"))
    found = await lenses(shared, uri)
    assert found and found[0].command is not None
    command = found[0].command
    assert command.command == "echoes.references"
    assert list(command.arguments or []) == [{"uri": uri, "position": {"line": 8, "character": 0}}]
    locations = await shared.command(command.command, *(command.arguments or []))
    assert len(locations) == 7
    assert {location["uri"].rsplit("/", 1)[-1] for location in locations} == {
        "auth.md",
        "tokens.md",
    }
    assert all(set(location["range"]) == {"start", "end"} for location in locations)


async def test_counts_follow_new_links(shared: Session) -> None:
    refreshes: List[Any] = []

    @shared.client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refreshed(params: Any) -> None:
        refreshes.append(params)

    uri = shared.open(shared.page("conflict.md"))
    assert titles(await lenses(shared, uri)) == [(0, "0 backlinks")]  # no title: first line
    text = PAGE_HEAD.format(summary="Draft.") + "Links to [[conflict]].\n"
    shared.open(shared.page("draft.md"), text)

    async def until_counted() -> None:
        while titles(await lenses(shared, uri)) != [(0, "1 backlink")]:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(until_counted(), WAIT)
    if shared.kind == "visual_studio_code":  # it can be asked to refresh its lenses
        await asyncio.wait_for(_until(lambda: bool(refreshes)), WAIT)


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.05)


async def test_no_lenses_outside_pages(shared: Session) -> None:
    daily = next((shared.workspace / "EchoesVault" / "daily").rglob("*.md"))
    assert not await lenses(shared, shared.open(daily))
    assert not await lenses(shared, shared.page("nowhere.md").resolve().as_uri())
    try:
        await shared.command("echoes.references", {"uri": 3})
    except Exception as error:
        assert "echoes.references" in str(error)
    else:
        raise AssertionError("a malformed argument must be refused")
