"""The server on a vault whose folder, or its `daily/`, is a symbolic link: EV503 as the runtime's
writers refuse it, the vault read-only as for EV700, and nothing from outside the workspace
served (issue 18, item 4)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any, List

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import WAIT, Session, codes, copy_vault

OUTSIDE = "Outside the workspace: never shown."


@pytest.fixture
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The fixture vault, initialized, with `request.param` (`EchoesVault` or `daily`) moved
    out of the workspace and replaced by a symbolic link to it."""
    workspace = copy_vault("lsp-vault", tmp_path, init=True)
    vault = workspace / "EchoesVault"
    folder = vault if request.param == "EchoesVault" else vault / request.param
    elsewhere = tmp_path / "elsewhere" / f"shared-{folder.name}"
    elsewhere.parent.mkdir()
    shutil.move(str(folder), str(elsewhere))
    folder.symlink_to(elsewhere, target_is_directory=True)
    if request.param == "EchoesVault":
        (elsewhere / "pages" / "outside.md").write_text(
            f"---\ntype: note\nstack: []\nstatus: active\nsummary: {OUTSIDE}\n---\n\n# Outside\n",
            encoding="utf-8",
        )
    return workspace


def through_link(session: Session, name: str) -> str:
    """The URI of a page as the workspace names it, through the link (not resolved)."""
    return (session.workspace / "EchoesVault" / "pages" / name).absolute().as_uri()


async def symbols(session: Session) -> List[str]:
    found = await asyncio.wait_for(
        session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="")), WAIT
    )
    return sorted(symbol.name for symbol in found or [])


async def hover(session: Session, document: str, line: int, character: int) -> Any:
    return await asyncio.wait_for(
        session.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                position=types.Position(line=line, character=character),
            )
        ),
        WAIT,
    )


async def refused_writes(session: Session) -> List[str]:
    """The error of each writing command (each must be refused)."""
    errors = []
    for name, argument in [
        ("echoes.append", {"entry": "- note"}),
        ("echoes.rebuildIndex", {}),
        ("echoes.createPage", {"name": "new-page"}),
    ]:
        with pytest.raises(JsonRpcException) as refused:
            await session.command(name, argument)
        errors.append(str(refused.value))
    return errors


def shown(session: Session) -> List[str]:
    return [message.message for message in session.client.messages]


@pytest.mark.parametrize("workspace", ["EchoesVault"], indirect=True)
async def test_a_linked_vault_is_reported_and_never_read(session: Session) -> None:
    assert any("`EchoesVault` is a symbolic link" in text for text in shown(session))
    assert await symbols(session) == []  # not even the pages the link leads to
    document, auth = through_link(session, "outside.md"), through_link(session, "auth.md")
    for opened in (document, auth):
        session.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=opened, language_id="markdown", version=1, text="[[sessions]] [[x]]\n"
                )
            )
        )
    assert await hover(session, auth, 0, 4) is None
    completion = await asyncio.wait_for(
        session.client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=auth),
                position=types.Position(line=0, character=2),
            )
        ),
        WAIT,
    )
    assert not completion or not getattr(completion, "items", completion)
    for error in await refused_writes(session):
        assert "`EchoesVault` is a symbolic link" in error and "read-only" in error
    if session.pull:
        report = await asyncio.wait_for(
            session.client.workspace_diagnostic_async(
                types.WorkspaceDiagnosticParams(previous_result_ids=[])
            ),
            WAIT,
        )
        by_uri = {item.uri: [d.code for d in item.items] for item in report.items}
        assert by_uri == {(session.workspace / "EchoesVault").as_uri(): ["EV503"]}
    else:
        await session.alive()
        assert document not in session.client.diagnostics
        assert auth not in session.client.diagnostics
    assert OUTSIDE not in str(session.client.diagnostics)
    assert (await ready_status(session)).integrity == "read-only"


async def ready_status(session: Session) -> Any:
    """The first `echoes/statusChanged` notification sent once the vault was loaded."""
    deadline = asyncio.get_event_loop().time() + WAIT
    while True:
        statuses = [s for s in session.client.statuses if s.ready]  # type: ignore[attr-defined]
        if statuses:
            return statuses[0]
        assert asyncio.get_event_loop().time() < deadline, "no status was sent"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("workspace", ["daily"], indirect=True)
async def test_a_linked_daily_folder_makes_the_vault_read_only(session: Session) -> None:
    assert any("`EchoesVault/daily` is a symbolic link" in text for text in shown(session))
    document = session.open(session.page("auth.md"))
    items = await session.diagnostics(document, lambda d: "EV503" in codes(d))
    (linked,) = [item for item in items if item.code == "EV503"]
    assert "`EchoesVault/daily` is a symbolic link" in linked.message
    assert "read-only" in linked.message and linked.range.start.line == 0
    assert "EV300" in codes(items)  # the pages are still checked
    sessions = await hover(session, document, 9, 30)
    assert sessions is not None and "Session storage" in str(sessions.contents)
    daily = session.workspace / "EchoesVault" / "daily"
    before = sorted(p.name for p in daily.rglob("*"))
    for error in await refused_writes(session):
        assert "`EchoesVault/daily` is a symbolic link" in error, error
    assert sorted(p.name for p in daily.rglob("*")) == before
    actions = await session.code_actions(document, linked)
    writing = [a for a in actions if isinstance(a, types.CodeAction) and a.command is not None]
    assert writing and all(a.disabled is not None for a in writing)
    assert all("symbolic link" in a.disabled.reason for a in writing if a.disabled)
