"""One story across surfaces: the status notification and the status card name what they count,
problems in open files (the diagnostics the editor shows, as `check` reports them) and vault files
that need attention (the integrity), so that `healthy` beside warnings is no contradiction."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from .conftest import RUNTIME, WAIT, Session

PAGE = """---
type: note
stack: []
status: active
summary: {summary}
---

# {title}
{body}
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A healthy vault (the runtime's own `init`) with a page that links to two missing pages."""
    root = tmp_path / "counts"
    root.mkdir()
    subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(root), "init"],
        check=True,
        capture_output=True,
    )
    pages = root / "EchoesVault" / "pages"
    (pages / "auth.md").write_text(
        PAGE.format(summary="How we sign in.", title="Auth", body="See [[nowhere]] and [[gone]]."),
        encoding="utf-8",
    )
    (pages / "plain.md").write_text(
        PAGE.format(summary="Nothing wrong.", title="Plain", body="Fine."), encoding="utf-8"
    )
    subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(root), "hydrate"],
        check=True,
        capture_output=True,
    )
    return root


async def status_where(session: Session, until: Callable[[Any], bool]) -> Any:
    """The latest ready status once `until` holds for it."""
    deadline = asyncio.get_event_loop().time() + WAIT
    while True:
        ready = [s for s in session.client.statuses if s.ready]  # type: ignore[attr-defined]
        if ready and until(ready[-1]):
            return ready[-1]
        assert asyncio.get_event_loop().time() < deadline, ready[-1:] or "no ready status"
        await asyncio.sleep(0.05)


def check_report(workspace: Path, *paths: str) -> Dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "echoes_lsp", "check", "--format", "json", *paths],
        cwd=str(workspace),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    return json.loads(done.stdout)


async def test_the_status_counts_open_problems_beside_a_healthy_vault(session: Session) -> None:
    document = session.open(session.page("auth.md"))
    shown = await session.diagnostics(document, lambda items: len(items) == 2)
    status = await status_where(session, lambda s: s.openProblemCount == len(shown))
    assert (status.integrity, status.issueCount) == ("healthy", 0)
    # The same thing `check` counts, for the same file.
    report = check_report(session.workspace, "EchoesVault/pages/auth.md")
    assert report["summary"]["total"] == status.openProblemCount == 2
    # The card says both, each by name, under the runtime's integrity line.
    card = (await session.command("echoes.status", {"format": "card"}))["markdown"]
    lines = card.split("\n")
    integrity = next(n for n, line in enumerate(lines) if "**Integrity:**" in line)
    assert "healthy · 0 issues" in lines[integrity]
    assert lines[integrity + 1] == ""
    assert lines[integrity + 2].startswith(
        "**In the editor:** 2 problems in open files · vault files healthy (invalid,"
    )
    as_json = await session.command("echoes.status", {"format": "json"})
    assert as_json["editor"] == {"issueCount": 0, "openProblemCount": 2}
    # Fixing one link, then closing the page, brings the count down with it.
    text = session.page("auth.md").read_text(encoding="utf-8").replace("[[gone]]", "[[plain]]")
    session.replace(document, text)
    await session.diagnostics(document, lambda items: len(items) == 1)
    await status_where(session, lambda s: s.openProblemCount == 1)
    session.close(document)
    await status_where(session, lambda s: s.openProblemCount == 0)


async def test_an_invalid_page_is_a_vault_issue_and_a_problem(session: Session) -> None:
    broken = session.page("plain.md")
    broken.write_text("no frontmatter\n", encoding="utf-8")
    document = session.open(broken)
    shown = await session.diagnostics(document, lambda items: bool(items))
    status = await status_where(
        session, lambda s: s.issueCount == 1 and s.openProblemCount == len(shown)
    )
    assert status.integrity == "attention"
    card = (await session.command("echoes.status", {"format": "card"}))["markdown"]
    assert f"**In the editor:** {len(shown)} problem" in card
    assert "1 vault file needs attention" in card
