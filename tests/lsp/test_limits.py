"""Bounded work per document: a page with thousands of problems gets a capped list of
diagnostics, the most severe kept, and one summary for the rest."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytest_lsp import LanguageClient

from .conftest import WAIT, Session, start_session

HEAD = "---\ntype: architecture\nstack: []\nstatus: active\nsummary: Many links.\n---\n\n"
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z0A"


def broken_links(count: int) -> str:
    return "".join(f"See [[missing-{number}]] here.\n" for number in range(count))


async def test_diagnostics_are_capped_with_one_summary(session: Session) -> None:
    # The credential comes last: it is an error, so it is kept ahead of 1,500 warnings.
    text = HEAD + broken_links(1500) + f"token {TOKEN}\n"
    document = session.open(session.page("many-links.md"), text)
    items = await session.diagnostics(document, lambda found: len(found) > 0)
    assert len(items) == 1001
    assert [d.code for d in items].count("EV600") == 1
    summary = items[-1]
    assert "501 more diagnostics" in summary.message
    assert "EV300 ×501" in summary.message
    assert summary.code == "EV300"
    assert TOKEN not in summary.message


async def test_the_cap_is_a_setting(bare_client: LanguageClient, workspace: Path) -> None:
    session = await start_session(
        bare_client, workspace, "neovim", {"diagnostics": {"maxPerDocument": 10}}
    )
    document = session.open(session.page("many-links.md"), HEAD + broken_links(25))
    items = await session.diagnostics(document, lambda found: len(found) > 0)
    assert len(items) == 11
    assert "15 more diagnostics" in items[-1].message
    await asyncio.wait_for(session.alive(), WAIT)
