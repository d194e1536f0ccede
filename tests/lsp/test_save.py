"""Hash-checked saves through the project runtime, and the create-page quick fix."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from echoes_lsp.runtime import echoes_vault as rules

from .conftest import Session, codes, copy_vault


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The fixture vault without its invalid pages (they would block every index update)."""
    workspace = copy_vault("lsp-vault", tmp_path)
    for name in ("broken.md", "conflict.md"):
        (workspace / "EchoesVault" / "pages" / name).unlink()
    return copy_vault_init(workspace)


def copy_vault_init(workspace: Path) -> Path:
    import subprocess
    import sys

    from .conftest import RUNTIME

    subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), "init"],
        check=True,
        capture_output=True,
    )
    return workspace


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def test_save_writes_the_buffer_through_the_runtime(session: Session) -> None:
    page = session.page("sessions.md")
    original = page.read_text(encoding="utf-8")
    document = session.open(page)
    edited = original.replace("Session storage, token lifetime and rotation.", "Session storage.")
    session.replace(document, edited)
    result = await session.command("echoes.savePage", {"uri": document})
    assert result["action"] == "updated"
    assert result["sha256"] == sha(edited)
    assert result["uri"] == document
    assert page.read_text(encoding="utf-8") == edited
    index = (session.workspace / "EchoesVault" / "index.md").read_text(encoding="utf-8")
    assert "- [[sessions]]: Session storage.\n" in index
    # The new disk hash is the base: a second save goes through too.
    again = edited.replace("Session storage.", "Session storage and rotation.")
    session.replace(document, again)
    second = await session.command("echoes.savePage", {"uri": document})
    assert second["sha256"] == sha(again)
    assert page.read_text(encoding="utf-8") == again


async def test_save_is_refused_when_the_disk_changed(session: Session) -> None:
    page = session.page("sessions.md")
    document = session.open(page)
    behind = page.read_text(encoding="utf-8").replace("15 minutes", "10 minutes")
    page.write_text(behind, encoding="utf-8")
    session.replace(document, behind.replace("10 minutes", "30 minutes"))
    with pytest.raises(JsonRpcException) as refused:
        await session.command("echoes.savePage", {"uri": document})
    assert "EV701" in str(refused.value)
    assert page.read_text(encoding="utf-8") == behind
    items = await session.diagnostics(document, lambda d: "EV701" in codes(d))
    stale = next(d for d in items if d.code == "EV701")
    assert stale.related_information and stale.related_information[0].location.uri == document
    assert any(
        "EV701" in m.message or "changed on disk" in m.message for m in session.client.messages
    )
    # Only an explicit confirmation replaces the disk version.
    result = await session.command("echoes.savePage", {"uri": document, "confirmOverwrite": True})
    assert result["action"] == "updated"
    assert "30 minutes" in page.read_text(encoding="utf-8")
    assert "EV701" not in codes(
        await session.diagnostics(document, lambda d: "EV701" not in codes(d))
    )


async def test_overwrite_that_asks_keeps_the_disk_when_declined(session: Session) -> None:
    page = session.page("sessions.md")
    document = session.open(page)
    behind = page.read_text(encoding="utf-8") + "\nAdded by an agent.\n"
    page.write_text(behind, encoding="utf-8")
    session.replace(document, "changed in the editor")
    session.client.message_answer = "Cancel"  # type: ignore[attr-defined]
    with pytest.raises(JsonRpcException):
        await session.command("echoes.savePage", {"uri": document, "confirmOverwrite": "ask"})
    assert page.read_text(encoding="utf-8") == behind
    assert session.client.message_requests  # type: ignore[attr-defined]


async def test_saving_a_new_page_creates_it(session: Session) -> None:
    page = session.page("brand-new.md")
    text = "---\ntype: note\nstack: []\nstatus: active\nsummary: Brand new.\n---\n\n# New\n"
    document = session.open(page, text)
    result = await session.command("echoes.savePage", {"uri": document})
    assert result["action"] == "created"
    assert page.read_text(encoding="utf-8") == text


async def test_invalid_page_is_not_saved(session: Session) -> None:
    page = session.page("sessions.md")
    original = page.read_text(encoding="utf-8")
    document = session.open(page)
    session.replace(document, original.replace("status: active\n", ""))
    with pytest.raises(JsonRpcException) as refused:
        await session.command("echoes.savePage", {"uri": document})
    assert "status" in str(refused.value)
    assert page.read_text(encoding="utf-8") == original


async def test_create_page_quick_fix_clears_the_broken_link(session: Session) -> None:
    document = session.open(session.page("auth.md"))
    items = await session.diagnostics(document, lambda d: "EV300" in codes(d))
    broken = next(d for d in items if d.code == "EV300")
    actions = await session.code_actions(document, broken)
    titles = [a.title for a in actions or []]
    create = next((a for a in actions or [] if "Create page" in a.title), None)
    assert isinstance(create, types.CodeAction), titles
    assert create.command is not None
    await session.command(create.command.command, *(create.command.arguments or []))
    created = session.page("missing-page.md")
    assert rules.analyze_page(created.read_text(encoding="utf-8")).valid
    items = await session.diagnostics(document, lambda d: "EV300" not in codes(d))
    assert "EV300" not in codes(items)


async def test_end_session_requires_explicit_confirmation(session: Session) -> None:
    daily = session.workspace / "EchoesVault" / "daily"
    before = sorted(p.name for p in daily.rglob("*.md"))
    with pytest.raises(JsonRpcException) as refused:
        await session.command("echoes.endSession", {"dailySummary": "- done"})
    assert "explicit" in str(refused.value)
    assert sorted(p.name for p in daily.rglob("*.md")) == before
    result = await session.command(
        "echoes.endSession", {"dailySummary": "- done", "confirmExplicitUserEnd": True}
    )
    assert result["memorySaved"] is True
    assert len(list(daily.rglob("*.md"))) == len(before) + 1


async def test_runtime_commands_return_runtime_results(session: Session) -> None:
    card = await session.command("echoes.status", {"format": "card"})
    assert card["ok"] is True and "EchoesVault" in card["markdown"]
    found = await session.command("echoes.search", {"query": "gateway"})
    assert [r["file"] for r in found["results"]] == ["EchoesVault/pages/auth.md"]
    assert found["results"][0]["uri"].endswith("/EchoesVault/pages/auth.md")
    appended = await session.command("echoes.append", {"entry": "- Remember the gateway."})
    assert (
        Path(appended["dailyLog"]).read_text(encoding="utf-8").endswith("- Remember the gateway.\n")
    )
    with pytest.raises(JsonRpcException):
        await session.command("echoes.search", {"limit": 3})
