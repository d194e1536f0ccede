"""Hash-checked saves of a page whose file begins with a UTF-8 byte-order mark.

The runtime's `hash` digests the decoded text with its U+FEFF; editors drop the mark from the
buffer. The server's base hash must still be the runtime's, or every checked save of such a page
is refused as stale although nobody changed it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import RUNTIME, Session, codes, copy_vault

BOM = b"\xef\xbb\xbf"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The fixture vault without its invalid pages, initialized, with `sessions.md` saved with a
    byte-order mark."""
    workspace = copy_vault("lsp-vault", tmp_path)
    for name in ("broken.md", "conflict.md"):
        (workspace / "EchoesVault" / "pages" / name).unlink()
    subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), "init"],
        check=True,
        capture_output=True,
    )
    page = workspace / "EchoesVault" / "pages" / "sessions.md"
    page.write_bytes(BOM + page.read_bytes())
    return workspace


def runtime_hash(workspace: Path, name: str) -> str:
    """What the project runtime's own `hash` command answers for the page."""
    process = subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), "hash", name],
        check=True,
        capture_output=True,
        text=True,
    )
    return str(json.loads(process.stdout)["sha256"])


def buffer_of(page: Path) -> str:
    """The page's text as an editor holds it: without the byte-order mark."""
    data = page.read_bytes()
    assert data.startswith(BOM)
    return data[len(BOM) :].decode("utf-8")


def watched(session: Session, document: str) -> None:
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=document, type=types.FileChangeType.Changed)]
        )
    )


async def test_checked_save_of_an_unchanged_bom_page_succeeds(session: Session) -> None:
    page = session.page("sessions.md")
    original = buffer_of(page)
    document = session.open(page, original)
    edited = original.replace("Session storage, token lifetime and rotation.", "Session storage.")
    session.replace(document, edited)
    result = await session.command("echoes.savePage", {"uri": document})
    assert result["action"] == "updated"
    # Written as the buffer holds it, without the mark (the runtime would read a kept mark as
    # text before the frontmatter fence).
    assert page.read_bytes() == edited.encode("utf-8")
    assert result["sha256"] == runtime_hash(session.workspace, "sessions.md")
    again = edited.replace("Session storage.", "Session storage and rotation.")
    session.replace(document, again)
    await session.command("echoes.savePage", {"uri": document})
    assert page.read_bytes() == again.encode("utf-8")


async def test_the_hidden_mark_is_reported_until_a_checked_save_drops_it(session: Session) -> None:
    """The buffer has no mark, so it looks valid; the file still has one, which the runtime
    refuses (EV100). The page says so until the checked save writes it without the mark."""
    page = session.page("sessions.md")
    document = session.open(page, buffer_of(page))
    items = await session.diagnostics(document, lambda d: "EV100" in codes(d))
    hidden = next(d for d in items if d.code == "EV100")
    assert "byte-order mark (U+FEFF)" in hidden.message
    assert hidden.range.start == hidden.range.end == types.Position(line=0, character=0)
    await session.command("echoes.savePage", {"uri": document})
    assert "EV100" not in codes(
        await session.diagnostics(document, lambda d: "EV100" not in codes(d))
    )


async def test_bom_page_changed_on_disk_is_still_refused(session: Session) -> None:
    page = session.page("sessions.md")
    original = buffer_of(page)
    document = session.open(page, original)
    behind = BOM + original.replace("15 minutes", "10 minutes").encode("utf-8")
    page.write_bytes(behind)
    session.replace(document, original.replace("15 minutes", "30 minutes"))
    with pytest.raises(JsonRpcException) as refused:
        await session.command("echoes.savePage", {"uri": document})
    assert "EV701" in str(refused.value)
    assert page.read_bytes() == behind
    await session.diagnostics(document, lambda d: "EV701" in codes(d))


async def test_stale_warning_does_not_misfire_on_a_bom_page(session: Session) -> None:
    page = session.page("sessions.md")
    original = buffer_of(page)
    document = session.open(page, original)
    await session.diagnostics(document)
    # A change event for the untouched file, then a willSave: neither may call the page stale.
    watched(session, document)
    session.client.text_document_will_save(
        types.WillSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            reason=types.TextDocumentSaveReason.Manual,
        )
    )
    await session.alive()
    assert "EV701" not in codes(await session.diagnostics(document))
    assert not any("changed on disk" in m.message for m in session.client.messages)
    # A plain editor save keeps the mark (VS Code does). Its file event may arrive before the
    # didSave: the disk then holds the buffer, which is no stale page either.
    edited = original.replace("15 minutes", "20 minutes")
    session.replace(document, edited)
    page.write_bytes(BOM + edited.encode("utf-8"))
    watched(session, document)
    await session.alive()
    assert "EV701" not in codes(await session.diagnostics(document))
    session.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    # ... and the next checked save still goes through.
    again = edited.replace("20 minutes", "25 minutes")
    session.replace(document, again)
    await session.command("echoes.savePage", {"uri": document})
    assert page.read_bytes() == again.encode("utf-8")


async def test_buffer_that_keeps_the_mark_is_saved_without_it(session: Session) -> None:
    """A client that sends the U+FEFF in the buffer: the base hash is the same, and the page is
    still written without the mark."""
    page = session.page("sessions.md")
    document = session.open(page, page.read_bytes().decode("utf-8"))
    text = "\ufeff" + buffer_of(page).replace("15 minutes", "5 minutes")
    session.replace(document, text)
    await session.command("echoes.savePage", {"uri": document})
    assert page.read_bytes() == text[1:].encode("utf-8")
