"""Inlay hints over stdio, under both clients' capabilities: the first line of a referenced
block and `deprecated → replacement` after the links that earn them, at positions in the
negotiated units; credential-shaped text masked; each kind behind its setting; and a refresh
asked for when a target changes on disk."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import CLIENTS, WAIT, Session, start_session
from .nav_helpers import after, doc, request

SECRET = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z0A"


async def hints(
    session: Session, uri: str, lines: int = 1000, first: int = 0
) -> List[types.InlayHint]:
    found: Optional[List[types.InlayHint]] = await request(
        session.client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=doc(uri),
                range=types.Range(
                    start=types.Position(line=first, character=0),
                    end=types.Position(line=lines, character=0),
                ),
            )
        )
    )
    assert found is not None
    return list(found)


def placed(found: List[types.InlayHint]) -> List[Tuple[types.Position, str]]:
    return [(hint.position, str(hint.label)) for hint in found]


async def test_block_text_and_deprecated_replacement(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    found = await hints(shared, shared.open(page))
    assert placed(found) == [
        (after(shared, text, "[[legacy-auth]]"), "deprecated → auth"),
        (after(shared, text, "[[sessions#^rotation]]"), "Access tokens live 15 minutes."),
    ]
    assert all(hint.padding_left for hint in found)


async def test_positions_after_non_ascii_text_and_a_masked_secret(shared: Session) -> None:
    page = shared.page("tokens.md")
    text = page.read_text(encoding="utf-8") + (
        f"\nKey: {SECRET} ^key\n\nNaïve 🎫 [[#^key]] and [[legacy-auth]]\n"
    )
    found = await hints(shared, shared.open(page, text))
    assert placed(found) == [
        (after(shared, text, "🎫 [[#^key]]"), "Key: " + "*" * 40),
        (after(shared, text, "and [[legacy-auth]]"), "deprecated → auth"),
    ]
    assert SECRET[:8] not in str(found)


async def test_labels_with_quotes_backslashes_and_controls_arrive_as_written(
    shared: Session,
) -> None:
    """The server writes each hint's JSON itself: every character a label can hold must be
    escaped as JSON requires."""
    page = shared.page("tokens.md")
    said = 'Say "hi" to C:\\temp\\new é\t\u2028then 🎫 ^said'
    text = page.read_text(encoding="utf-8") + f"\n{said}\n\nSee [[#^said]]\n"
    found = await hints(shared, shared.open(page, text))
    assert placed(found) == [(after(shared, text, "See [[#^said]]"), said[: -len(" ^said")])]


async def test_only_the_lines_asked_for(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    line = after(shared, text, "[[legacy-auth]]").line
    uri = shared.open(page)
    assert await hints(shared, uri, lines=line - 1) == []
    assert [str(h.label) for h in await hints(shared, uri, line, line)] == ["deprecated → auth"]


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize("block_text, deprecated", [(False, False), (True, False), (False, True)])
async def test_each_kind_of_hint_is_behind_its_setting(
    bare_client: LanguageClient, workspace: Path, kind: str, block_text: bool, deprecated: bool
) -> None:
    options = {"echoes": {"inlayHints": {"blockText": block_text, "deprecated": deprecated}}}
    session = await start_session(bare_client, workspace, kind, options)
    labels = [
        str(hint.label) for hint in await hints(session, session.open(session.page("auth.md")))
    ]
    expected = ["deprecated → auth"] if deprecated else []
    expected += ["Access tokens live 15 minutes."] if block_text else []
    assert labels == expected


async def test_a_changed_target_asks_for_a_refresh(session: Session) -> None:
    uri = session.open(session.page("auth.md"))
    assert "Access tokens live 15 minutes." in [str(h.label) for h in await hints(session, uri)]
    await session.diagnostics(uri)
    await asyncio.sleep(1.0)  # past the refresh that follows the opening (one per burst)
    sessions = session.page("sessions.md")
    sessions.write_text(
        sessions.read_text(encoding="utf-8").replace("Access tokens live 15", "Tokens last 5"),
        encoding="utf-8",
    )
    session.client.refreshes.clear()  # type: ignore[attr-defined]
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=sessions.resolve().as_uri(), type=types.FileChangeType.Changed)
            ]
        )
    )
    refreshes = session.client.refreshes  # type: ignore[attr-defined]
    deadline = asyncio.get_event_loop().time() + WAIT
    wanted = {types.WORKSPACE_INLAY_HINT_REFRESH, types.WORKSPACE_SEMANTIC_TOKENS_REFRESH}
    while not wanted <= set(refreshes):  # two requests: they arrive one after the other
        assert asyncio.get_event_loop().time() < deadline, f"refreshes asked: {refreshes}"
        await asyncio.sleep(0.05)
    # On a loaded machine the refresh seen may still be the opening's, sent before the server
    # read the change: the hints the client asks for then show the new text soon after.
    labels = [str(h.label) for h in await hints(session, uri)]
    while "Tokens last 5 minutes." not in labels:
        assert asyncio.get_event_loop().time() < deadline, f"hints still {labels}"
        await asyncio.sleep(0.05)
        labels = [str(h.label) for h in await hints(session, uri)]


async def test_turning_a_hint_off_asks_for_a_refresh(
    bare_client: LanguageClient, workspace: Path
) -> None:
    bare_client.set_configuration({"inlayHints": {"deprecated": True}}, section="echoes")
    session = await start_session(bare_client, workspace, "neovim")
    uri = session.open(session.page("auth.md"))
    assert "deprecated → auth" in [str(h.label) for h in await hints(session, uri)]
    await session.diagnostics(uri)
    await asyncio.sleep(1.0)  # past the refresh that follows the opening (one per burst)
    bare_client.refreshes.clear()  # type: ignore[attr-defined]
    bare_client.set_configuration({"inlayHints": {"deprecated": False}}, section="echoes")
    bare_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )
    deadline = asyncio.get_event_loop().time() + WAIT
    while types.WORKSPACE_INLAY_HINT_REFRESH not in bare_client.refreshes:  # type: ignore[attr-defined]
        assert asyncio.get_event_loop().time() < deadline, "no inlay hint refresh"
        await asyncio.sleep(0.05)
    # Under load the refresh seen may be the opening's, before the new settings were read.
    labels = [str(h.label) for h in await hints(session, uri)]
    while labels != ["Access tokens live 15 minutes."]:
        assert asyncio.get_event_loop().time() < deadline, f"hints still {labels}"
        await asyncio.sleep(0.05)
        labels = [str(h.label) for h in await hints(session, uri)]


async def test_hints_kept_between_requests_follow_each_edit(shared: Session) -> None:
    """A block's text edited on its own line changes the hint of a link on another line, and a
    hint appears after a link typed on a line seen before."""
    text = (
        "---\ntype: note\nstack: []\nstatus: active\nsummary: Edited.\n---\n\n"
        "See [[#^here]].\n\nThe first words. ^here\n\nLater [[sessions]].\n"
    )
    uri = shared.open(shared.page("edited-hints.md"), text)
    assert [str(h.label) for h in await hints(shared, uri)] == ["The first words."]
    shared.edit(uri, 9, 0, len("The first words."), "Other words")
    assert [str(h.label) for h in await hints(shared, uri)] == ["Other words"]
    shared.edit(uri, 11, len("Later "), len("Later [[sessions]]"), "[[legacy-auth]]")
    assert [str(h.label) for h in await hints(shared, uri)] == [
        "Other words",
        "deprecated → auth",
    ]
