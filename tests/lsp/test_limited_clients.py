"""Clients that declare less than VS Code: the server, initialized exactly as eglot 1.9 and ALE
3.3 initialize it (tests/lsp/clients/), sends them no request they did not declare and falls
back to something that works and tells the person (issue 20, item 3)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.runtime.test_s17_secrets import SHAPES

from .conftest import RUNTIME, WAIT, Session, codes, copy_vault, start_limited
from .nav_helpers import PAGE_HEAD, at, doc, request

TOKEN = SHAPES["GitHub token"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The fixture vault with the runtime installed and without its invalid pages (they would
    block every index update)."""
    workspace = copy_vault("lsp-vault", tmp_path)
    for name in ("broken.md", "conflict.md"):
        (workspace / "EchoesVault" / "pages" / name).unlink()
    subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), "init"],
        check=True,
        capture_output=True,
    )
    return workspace


def shown(session: Session) -> List[str]:
    return [message.message for message in session.client.messages]


async def stale(session: Session, name: str) -> tuple:
    """An open page whose disk changed behind its edited buffer, refused once (EV701)."""
    page = session.page(name)
    document = session.open(page)
    behind = page.read_text(encoding="utf-8").replace("15 minutes", "10 minutes")
    page.write_text(behind, encoding="utf-8")
    session.replace(document, behind.replace("10 minutes", "30 minutes"))
    with pytest.raises(JsonRpcException):
        await session.command("echoes.savePage", {"uri": document})
    items = await session.diagnostics(document, lambda d: "EV701" in codes(d))
    return page, document, behind, next(d for d in items if d.code == "EV701")


async def test_overwrite_that_asks_is_refused_with_the_fix_when_the_client_cannot_ask(
    limited: Session,
) -> None:
    page, document, behind, ev701 = await stale(limited, "sessions.md")
    with pytest.raises(JsonRpcException) as refused:
        await request(
            limited.command("echoes.savePage", {"uri": document, "confirmOverwrite": "ask"})
        )
    message = str(refused.value)
    assert "confirmOverwrite: true" in message and "Overwrite the disk version" in message
    assert limited.client.message_requests == []  # type: ignore[attr-defined]
    assert page.read_text(encoding="utf-8") == behind  # nothing written
    assert any("confirmOverwrite: true" in text for text in shown(limited))
    # The code action is the confirmation: choosing it overwrites without a question.
    actions = await limited.code_actions(document, ev701)
    overwrite = next(a for a in actions if a.title.startswith("Overwrite the disk version"))
    assert isinstance(overwrite, types.CodeAction) and overwrite.command is not None
    assert "asks" not in overwrite.title
    await limited.command(overwrite.command.command, *(overwrite.command.arguments or []))
    assert "30 minutes" in page.read_text(encoding="utf-8")
    assert limited.client.message_requests == []  # type: ignore[attr-defined]


async def test_the_disk_version_is_named_in_a_message_without_show_document(
    limited: Session,
) -> None:
    _page, document, behind, ev701 = await stale(limited, "sessions.md")
    actions = await limited.code_actions(document, ev701)
    copy = next(a for a in actions if "disk version" in a.title and "file" in a.title)
    assert isinstance(copy, types.CodeAction) and copy.command is not None
    result = await limited.command(copy.command.command, *(copy.command.arguments or []))
    assert limited.client.shown_documents == []
    assert result["shown"] is False
    with open(result["path"], encoding="utf-8") as handle:
        assert handle.read() == behind
    assert any(result["path"] in text for text in shown(limited))


def plain(result: Optional[types.Hover]) -> str:
    assert result is not None and isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.PlainText
    return result.contents.value


async def hover(session: Session, uri: str, where: types.Position) -> Optional[types.Hover]:
    return await request(
        session.client.text_document_hover_async(
            types.HoverParams(text_document=doc(uri), position=where)
        )
    )


async def test_hover_is_plain_text_with_secrets_masked(limited: Session) -> None:
    keys = limited.page("keys.md")
    keys.write_text(
        PAGE_HEAD.format(summary="Deploy keys.")
        + f"# Keys\n\nUse **{TOKEN}** with `ci` and [[sessions|the sessions]].\n",
        encoding="utf-8",
    )
    limited.open(keys)  # the poll is off: the server learns of the page as it opens
    text = PAGE_HEAD.format(summary="Uses.") + "# Uses\n\nSee [[keys]] and [[legacy-auth]].\n"
    uri = limited.open(limited.page("uses.md"), text)
    value = plain(await hover(limited, uri, at(limited, text, "[[keys]]", 3)))
    assert "Keys" in value and "with ci and the sessions." in value
    assert "*" * len(TOKEN) in value and TOKEN not in value
    for syntax in ("**Keys", "`", "[[", "# Keys", "\n---"):
        assert syntax not in value, (syntax, value)
    deprecated = plain(await hover(limited, uri, at(limited, text, "[[legacy-auth]]", 3)))
    assert "Deprecated. Use auth instead." in deprecated and ">" not in deprecated


# pytest-lsp warns of any documentation format eglot does not list (it lists none).
@pytest.mark.filterwarnings("ignore:Client does not support documentation format")
async def test_completion_documentation_follows_the_declared_format(limited: Session) -> None:
    text = PAGE_HEAD.format(summary="Uses.") + "# Uses\n\nSee [[sess\n"
    uri = limited.open(limited.page("uses.md"), text)
    found = await request(
        limited.client.text_document_completion_async(
            types.CompletionParams(
                text_document=doc(uri), position=at(limited, text, "[[sess", len("[[sess"))
            )
        )
    )
    items = found.items if isinstance(found, types.CompletionList) else found or []
    item = next(i for i in items if i.label == "sessions")
    # ALE lists plaintext; eglot lists no format, and renders documentation as its hovers.
    assert isinstance(item.documentation, types.MarkupContent)
    assert item.documentation.kind == types.MarkupKind.PlainText
    assert "active" in item.documentation.value
    assert "**" not in item.documentation.value and "`" not in item.documentation.value


async def test_rename_without_file_renames_edits_the_links_and_says_how_to_move_the_file(
    limited: Session,
) -> None:
    page = limited.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = limited.open(page)
    edit = await request(
        limited.client.text_document_rename_async(
            types.RenameParams(
                text_document=doc(uri),
                position=at(limited, text, "[[sessions]]", 3),
                new_name="login-sessions",
            )
        )
    )
    assert edit is not None
    if limited.kind == "eglot_1.9":  # it declares documentChanges, without resource operations
        assert edit.changes is None and edit.document_changes
        assert all(isinstance(c, types.TextDocumentEdit) for c in edit.document_changes)
        edited = {c.text_document.uri for c in edit.document_changes}  # type: ignore[union-attr]
    else:
        assert edit.document_changes is None and edit.changes
        edited = set(edit.changes)
    assert uri in edited
    told = [m for m in shown(limited) if "git mv" in m]
    assert told and "EchoesVault/pages/sessions.md EchoesVault/pages/login-sessions.md" in told[0]
    assert limited.page("sessions.md").exists()  # the server renames nothing itself


async def polling_notice(client: LanguageClient) -> str:
    """The log line in which the server says how often it polls (sent once `initialized`)."""
    deadline = asyncio.get_event_loop().time() + WAIT
    while asyncio.get_event_loop().time() < deadline:
        found = [m.message for m in client.log_messages if "polling the vault" in m.message]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError("the server never said how it polls the vault")


async def test_a_replace_by_rename_is_polled_for_at_the_fast_interval(
    limited_client: LanguageClient, workspace: Path
) -> None:
    """eglot 1.9 accepts the watcher registration but never reports a file replaced by rename;
    ALE registers none. Both are polled at `pollInterval`, not at the 10 s of a trusted watcher."""
    session = await start_limited(limited_client, workspace, {"watch": {"pollInterval": 0.2}})
    notice = await polling_notice(limited_client)
    assert "every 0.2 s" in notice, notice
    why = "misses a file replaced by rename" if session.kind == "eglot_1.9" else "watches no files"
    assert why in notice, notice
    page = session.page("auth.md")
    document = session.open(page)
    await session.diagnostics(document, lambda d: "EV300" in codes(d))
    # The runtime's way: write a temporary file, then rename it over the page it links to.
    target = session.page("missing-page.md")
    temporary = session.page(".missing-page.tmp")
    temporary.write_text(PAGE_HEAD.format(summary="Now here.") + "# Here\n", encoding="utf-8")
    os.replace(temporary, target)
    items = await session.diagnostics(document, lambda d: "EV300" not in codes(d), timeout=WAIT)
    assert "EV300" not in codes(items)
