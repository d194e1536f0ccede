"""The clean-up that lets read-only tests share a server: what a test opened is closed (so an
unsaved page leaves the vault), and a change on disk is seen (so a test that writes fails)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import List

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import WAIT, Session, disk_state
from .nav_helpers import PAGE_HEAD, request


async def page_symbols(session: Session, query: str) -> List[str]:
    found = await request(
        session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    )
    return [symbol.name for symbol in found or []]


async def symbols_until(session: Session, query: str, wanted: List[str]) -> List[str]:
    """The pages whose name or summary match `query`, once they are `wanted` (edits are
    debounced)."""
    deadline = asyncio.get_event_loop().time() + WAIT
    found = await page_symbols(session, query)
    while found != wanted and asyncio.get_event_loop().time() < deadline:
        await asyncio.sleep(0.05)
        found = await page_symbols(session, query)
    return found


async def test_closing_a_tests_documents_undoes_its_buffers(shared: Session) -> None:
    shared.open(shared.page("draft.md"), PAGE_HEAD.format(summary="Unsaved zebra draft."))
    auth = shared.page("auth.md")
    document = shared.open(auth)
    text = auth.read_text(encoding="utf-8")
    shared.replace(document, text.replace("summary: ", "summary: Zebra crossing. ", 1))
    assert await symbols_until(shared, "zebra", ["auth", "draft"]) == ["auth", "draft"]
    await shared.close_all()
    assert shared.opened == set()
    # The unsaved page is gone, and the page's disk text counts again.
    assert await page_symbols(shared, "zebra") == []
    # Something for the next test's client to forget: a message (and, pushed, diagnostics).
    with pytest.raises(JsonRpcException):
        await shared.command("echoes.status", {"format": "xml"})
    await shared.alive()
    assert shared.client.messages


async def test_each_test_starts_with_a_client_that_saw_nothing(shared: Session) -> None:
    """Run after the test above: what it received is forgotten."""
    assert shared.client.diagnostics == {}
    assert shared.client.messages == []
    assert shared.client.statuses == []  # type: ignore[attr-defined]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_the_disk_state_sees_content_new_files_and_kinds(tmp_path: Path) -> None:
    page = tmp_path / "pages" / "a.md"
    page.parent.mkdir()
    page.write_text("one\n", encoding="utf-8")
    before = disk_state(tmp_path)
    page.write_text("two\n", encoding="utf-8")  # same size, other bytes
    assert disk_state(tmp_path) != before
    page.write_text("one\n", encoding="utf-8")
    assert disk_state(tmp_path) == before
    (tmp_path / "pages" / "b.md").write_text("", encoding="utf-8")
    assert set(disk_state(tmp_path)) - set(before) == {os.path.join("pages", "b.md")}
    (tmp_path / "pages" / "b.md").unlink()
    page.unlink()
    os.mkfifo(page)  # never opened: reading it would block
    assert (
        disk_state(tmp_path)[os.path.join("pages", "a.md")] != before[os.path.join("pages", "a.md")]
    )
