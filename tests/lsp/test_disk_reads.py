"""The server reads vault files only through its one safe reader: a page replaced on disk by a
FIFO (which blocks whoever opens it while no one writes) leaves every request answered."""

from __future__ import annotations

import os

from lsprotocol import types

from .conftest import Session, codes


async def test_stale_page_whose_disk_file_is_a_fifo_still_gets_its_actions(
    session: Session,
) -> None:
    page = session.page("sessions.md")
    document = session.open(page)
    await session.diagnostics(document)  # the server holds the page open, its base hash taken
    # Replaced in one rename: between an unlink and a mkfifo the page would be missing, and a
    # server that read it then would see a deleted page rather than a changed one.
    fifo = page.parents[2] / "sessions.fifo"
    os.mkfifo(fifo)
    os.replace(fifo, page)
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=document, type=types.FileChangeType.Changed)]
        )
    )
    items = await session.diagnostics(document, lambda d: "EV701" in codes(d))
    stale = next(d for d in items if d.code == "EV701")
    # The EV701 actions read the disk version; a plain open() of the FIFO would never return.
    titles = [action.title for action in await session.code_actions(document, stale)]
    assert "Open the disk version beside the buffer" in titles
    assert not any(title.startswith("Reload the disk version") for title in titles)
    await session.alive()
