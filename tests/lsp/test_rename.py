"""Renaming a page: prepareRename, one WorkspaceEdit that updates every link and renames the
file, refusals, and link updates when the editor renames a page file itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from .conftest import SERVER, WAIT, Session
from .nav_helpers import at, covered, doc, request, start_with


async def prepare(session: Session, uri: str, where: types.Position) -> Any:
    return await request(
        session.client.text_document_prepare_rename_async(
            types.PrepareRenameParams(text_document=doc(uri), position=where)
        )
    )


async def rename(
    session: Session, uri: str, where: types.Position, name: str
) -> Optional[types.WorkspaceEdit]:
    return await request(
        session.client.text_document_rename_async(
            types.RenameParams(text_document=doc(uri), position=where, new_name=name)
        )
    )


def apply_edits(text: str, edits: List[types.TextEdit], session: Session) -> str:
    """Apply single-line edits (client units) to a text."""
    lines = text.split("\n")
    for edit in sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        line = lines[edit.range.start.line]
        if session.kind == "neovim":
            data = line.encode("utf-8")
            start, end = edit.range.start.character, edit.range.end.character
            line = (data[:start] + edit.new_text.encode("utf-8") + data[end:]).decode("utf-8")
        else:
            data16 = line.encode("utf-16-le")
            start, end = edit.range.start.character * 2, edit.range.end.character * 2
            line = (data16[:start] + edit.new_text.encode("utf-16-le") + data16[end:]).decode(
                "utf-16-le"
            )
        lines[edit.range.start.line] = line
    return "\n".join(lines)


def text_edits(edit: types.WorkspaceEdit) -> Dict[str, types.TextDocumentEdit]:
    assert edit.document_changes is not None
    return {
        change.text_document.uri.rsplit("/", 1)[-1]: change
        for change in edit.document_changes
        if isinstance(change, types.TextDocumentEdit)
    }


def updated(session: Session, edit: types.WorkspaceEdit, name: str) -> str:
    change = text_edits(edit)[name]
    path = session.page(name)
    edits = [e for e in change.edits if isinstance(e, types.TextEdit)]
    return apply_edits(path.read_text(encoding="utf-8"), edits, session)


async def test_prepare_on_a_link_and_on_a_title(shared: Session) -> None:
    page = shared.page("tokens.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    found = await prepare(shared, uri, at(shared, text, "the session page"))
    assert isinstance(found, types.PrepareRenamePlaceholder)
    assert found.placeholder == "sessions"
    assert covered(shared, text, found.range) == "sessions"
    found = await prepare(shared, uri, at(shared, text, "pages/auth.md", 3))
    assert found.placeholder == "auth"
    assert covered(shared, text, found.range) == "auth.md"
    found = await prepare(shared, uri, at(shared, text, "# Tokens", 3))
    assert found.placeholder == "tokens"
    assert covered(shared, text, found.range) == "# Tokens"


async def test_prepare_refuses_elsewhere(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    for needle in ("The gateway", "missing-page", "diagram.png", "## Boundaries"):
        with pytest.raises(JsonRpcException) as refused:
            await prepare(shared, uri, at(shared, text, needle, 2))
        assert "rename" in str(refused.value) or "no page" in str(refused.value)


async def test_rename_updates_every_link_and_renames_the_file(session: Session) -> None:
    auth = session.page("auth.md")
    auth_uri = session.open(auth)
    session.replace(auth_uri, auth.read_text(encoding="utf-8"))  # version 2
    text = auth.read_text(encoding="utf-8")
    edit = await rename(session, auth_uri, at(session, text, "[[sessions]]", 4), "session-store")
    assert edit is not None and edit.changes is None
    assert edit.document_changes is not None
    last = edit.document_changes[-1]
    assert isinstance(last, types.RenameFile)
    assert last.old_uri == session.page("sessions.md").resolve().as_uri()
    assert last.new_uri == session.page("session-store.md").resolve().as_uri()
    assert last.options is not None and last.options.overwrite is False
    changes = text_edits(edit)
    assert set(changes) == {"auth.md", "tokens.md"}
    assert changes["auth.md"].text_document.version == 2  # open: its current version
    assert changes["tokens.md"].text_document.version is None  # not open
    new_auth = updated(session, edit, "auth.md")
    assert "Sessions are described in [[session-store]] and" in new_auth
    assert "[[session-store#Token lifetime]]; rotation is [[session-store#^rotation]]" in new_auth
    assert "[[session-store#No such heading]]" in new_auth
    assert "`[[not-a-link]]`" in new_auth and "[[legacy-auth]]" in new_auth
    new_tokens = updated(session, edit, "tokens.md")
    assert "Naïve clients 🎫 read [[session-store|the session page]] first." in new_tokens
    assert "Lifetime: [[session-store#token lifetime]] and ![[session-store]]." in new_tokens


async def test_rename_from_the_title_keeps_link_style(session: Session) -> None:
    page = session.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = session.open(page)
    edit = await rename(session, uri, at(session, text, "# Authentication", 4), "gateway")
    assert edit is not None
    new_tokens = updated(session, edit, "tokens.md")
    assert "See also [[pages/gateway.md]] and [[gateway#Boundaries|boundary rules]]." in new_tokens
    assert "Used by [[gateway]]." in updated(session, edit, "sessions.md")
    assert "> Replaced by [[gateway]]." in updated(session, edit, "legacy-auth.md")
    daily = text_edits(edit)
    assert any(name.endswith("-codex-0a1b2c3d.md") for name in daily)
    rename_file = edit.document_changes[-1] if edit.document_changes else None
    assert isinstance(rename_file, types.RenameFile)
    assert rename_file.new_uri.endswith("/pages/gateway.md")


@pytest.mark.parametrize(
    "name, reason",
    [
        ("AUTH", "collides"),
        ("Tokens.md", "collides"),
        ("a/b", "invalid page name"),
        ("..", "invalid page name"),
        ("with#hash", "cannot be linked"),
        ("bar|pipe", "cannot be linked"),
        ("sessions", "already named"),
        ("  ", "invalid page name"),
    ],
)
async def test_refused_names(shared: Session, name: str, reason: str) -> None:
    page = shared.page("sessions.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    with pytest.raises(JsonRpcException) as refused:
        await rename(shared, uri, at(shared, text, "# Sessions", 2), name)
    assert reason in str(refused.value)


async def test_will_rename_files_updates_links_only(shared: Session) -> None:
    old = shared.page("sessions.md").resolve().as_uri()
    new = shared.page("store.md").resolve().as_uri()
    edit = await request(
        shared.client.workspace_will_rename_files_async(
            types.RenameFilesParams(files=[types.FileRename(old_uri=old, new_uri=new)])
        )
    )
    assert edit is not None
    assert edit.document_changes is not None
    assert all(isinstance(change, types.TextDocumentEdit) for change in edit.document_changes)
    assert "Sessions are described in [[store]] and" in updated(shared, edit, "auth.md")
    assert "![[store]]" in updated(shared, edit, "tokens.md")
    # Renames outside pages/ or to the same name change nothing.
    outside = (shared.workspace / "EchoesVault" / "raw" / "sessions.md").resolve().as_uri()
    for target in (outside, old):
        assert not await request(
            shared.client.workspace_will_rename_files_async(
                types.RenameFilesParams(files=[types.FileRename(old_uri=old, new_uri=target)])
            )
        )


async def test_own_rename_is_not_applied_twice(session: Session) -> None:
    page = session.page("sessions.md")
    text = page.read_text(encoding="utf-8")
    uri = session.open(page)
    edit = await rename(session, uri, at(session, text, "# Sessions", 2), "renamed")
    assert edit is not None and edit.document_changes
    last = edit.document_changes[-1]
    assert isinstance(last, types.RenameFile)
    # The client announces the rename it is applying: the links are already in the edit.
    again = await request(
        session.client.workspace_will_rename_files_async(
            types.RenameFilesParams(
                files=[types.FileRename(old_uri=last.old_uri, new_uri=last.new_uri)]
            )
        )
    )
    assert not again


def no_file_renames(caps: types.ClientCapabilities) -> None:
    assert caps.workspace is not None
    caps.workspace.workspace_edit = types.WorkspaceEditClientCapabilities(
        document_changes=False, resource_operations=[]
    )


@pytest_lsp.fixture(config=SERVER)
async def renameless_client(lsp_client: LanguageClient, workspace: Path):
    await start_with(lsp_client, workspace, "visual_studio_code", no_file_renames)
    yield
    await request(lsp_client.shutdown_session(), WAIT)


@pytest.fixture
def renameless(renameless_client: LanguageClient, workspace: Path) -> Session:
    return Session(renameless_client, workspace, "visual_studio_code")


async def test_clients_without_file_renames_get_the_link_edits_and_a_message(
    renameless: Session,
) -> None:
    page = renameless.page("sessions.md")
    text = page.read_text(encoding="utf-8")
    uri = renameless.open(page)
    edit = await rename(renameless, uri, at(renameless, text, "# Sessions", 2), "renamed")
    # Plain `changes` (the client declares no `documentChanges`), and no file rename.
    assert edit is not None and edit.document_changes is None and edit.changes
    auth = next(uri for uri in edit.changes if uri.endswith("/auth.md"))
    assert all(e.new_text == "renamed" for e in edit.changes[auth])
    moves = [m.message for m in renameless.client.messages if "git mv" in m.message]
    assert moves and "EchoesVault/pages/renamed.md" in moves[0]
    # Renaming the file in the editor still updates the links, as plain text edits.
    edit = await request(
        renameless.client.workspace_will_rename_files_async(
            types.RenameFilesParams(
                files=[
                    types.FileRename(
                        old_uri=uri, new_uri=renameless.page("renamed.md").resolve().as_uri()
                    )
                ]
            )
        )
    )
    assert edit is not None and edit.document_changes is None and edit.changes
    auth = next(uri for uri in edit.changes if uri.endswith("/auth.md"))
    assert all(e.new_text == "renamed" for e in edit.changes[auth])
