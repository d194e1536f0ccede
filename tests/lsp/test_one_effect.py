"""The server shows what the runtime's results and `check` show: the `warnings` of a command
that took effect (one message to the user, one log line, and the result keeps them), EV702 on a
page whose interrupted `end`'s version was kept aside, and a vault whose marker cannot be read
served read-only, with a message, instead of a failed `initialize`."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from ..runtime.pending_end import PAGE, end_killed_after_its_journal, new_project
from .conftest import Session, codes


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = new_project(tmp_path / "project")
    end_killed_after_its_journal(root, tmp_path, "notes.md", PAGE.format("Notes.", "From the end."))
    # a person edits the page before any writer finishes that `end`
    (root / "EchoesVault/pages/notes.md").write_text(PAGE.format("Notes.", "Edited by hand."))
    return root


async def test_warnings_of_a_command_are_shown_and_the_kept_version_is_ev702(
    session: Session,
) -> None:
    page = session.page("notes.md")
    document = session.open(page)
    await session.diagnostics(document)
    result = await session.command("echoes.append", {"entry": "- the next writer"})
    kinds = [(w["kind"], w["path"]) for w in result["warnings"]]
    assert kinds == [("kept-version", "EchoesVault/pages/notes.md")], result
    shown = [m for m in session.client.messages if "took effect, with warnings" in m.message]
    assert len(shown) == 1 and shown[0].type == types.MessageType.Warning
    assert ".echoes-vault/kept/" in shown[0].message
    items = await session.diagnostics(document, lambda d: "EV702" in codes(d))
    kept = next(d for d in items if d.code == "EV702")
    assert ".echoes-vault/kept/" in kept.message and kept.range.start.line == 0
    assert "Edited by hand." in page.read_text(), "the person's edit stays"
    stored = list((session.workspace / ".echoes-vault/kept").rglob("notes.md"))
    assert len(stored) == 1 and "From the end." in stored[0].read_text()
