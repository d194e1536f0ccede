"""Bounded work per document: a page with thousands of problems gets a capped list of
diagnostics, the most severe kept, and one summary for the rest."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, List, Optional

from lsprotocol import types
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


def big_page(links: int) -> str:
    return HEAD + "".join(f"See [[missing-{number}]].\n" for number in range(links))


async def test_requests_are_answered_while_a_huge_page_is_analysed(session: Session) -> None:
    """100,000 links (bench/large_page_bench.py measures 200,000): a hover is answered before
    the page's analysis is done (its diagnostics pushed, or a diagnostic refresh asked for), and
    again while an edit is analysed."""
    await wait_until_ready(session)
    arrived = record_messages(session)
    big = session.open(session.page("huge-links.md"), big_page(100_000))
    assert SESSIONS_SUMMARY in await hover_elsewhere(session)
    done = "workspace/diagnostic/refresh" if session.pull else f"publish {big}"
    assert done not in arrived, "the big page was analysed before the hover was answered"
    items = await session.diagnostics(big, lambda found: len(found) > 0, timeout=120)
    assert len(items) == 1001
    assert "99,000 more diagnostics" in items[-1].message
    # An edit that mends the first link is analysed again; requests are served meanwhile.
    session.edit(big, 7, 4, 17, "[[auth]]")
    await asyncio.wait_for(session.alive(), WAIT)
    items = await session.diagnostics(
        big, lambda found: len(found) == 1001 and found[0].range.start.line == 8, timeout=120
    )
    assert "98,999 more diagnostics" in items[-1].message


SESSIONS_SUMMARY = "Session storage, token lifetime and rotation."


def hover_params(session: Session) -> types.HoverParams:
    """A hover over `[[sessions]]` on line 10 of auth.md, another page than the one under load
    (not open: read from disk)."""
    return types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=session.page("auth.md").as_uri()),
        position=types.Position(line=9, character=30),
    )


def hover_text(hover: Optional[types.Hover]) -> str:
    """The Markdown of a hover over a link: it holds the target's summary."""
    assert hover is not None and isinstance(hover.contents, types.MarkupContent), hover
    return hover.contents.value


async def hover_elsewhere(session: Session) -> str:
    hover = session.client.text_document_hover_async(hover_params(session))
    return hover_text(await asyncio.wait_for(hover, WAIT))


async def wait_until_ready(session: Session) -> None:
    """Until the vault is indexed (and its first diagnostic refresh sent)."""
    statuses = session.client.statuses  # type: ignore[attr-defined]
    deadline = asyncio.get_event_loop().time() + WAIT
    while not any(
        getattr(s, "ready", None) or (isinstance(s, dict) and s.get("ready")) for s in statuses
    ):
        assert asyncio.get_event_loop().time() < deadline, "the vault was never ready"
        await asyncio.sleep(0.05)


def record_messages(session: Session) -> List[str]:
    """What the client receives from now on: requests and notifications by method (a
    diagnostics push as `publish <uri>`)."""
    arrived: List[str] = []
    protocol = session.client.protocol
    handle = protocol.handle_message

    def recording(message: Any) -> None:
        method = getattr(message, "method", None)
        if method == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            arrived.append(f"publish {message.params.uri}")
        elif method:
            arrived.append(method)
        handle(message)

    protocol.handle_message = recording  # type: ignore[method-assign]
    return arrived


async def test_requests_are_answered_while_the_workspace_report_is_made(
    bare_client: LanguageClient, workspace: Path
) -> None:
    """A workspace diagnostic report of thousands of files is made a few files at a time: a
    hover sent after it is answered before it."""
    pages = workspace / "EchoesVault" / "pages"
    for number in range(3000):
        (pages / f"generated-{number}.md").write_text(
            HEAD + f"# Generated {number}\n\nSee [[missing-{number}]].\n", encoding="utf-8"
        )
    session = await start_session(bare_client, workspace, "visual_studio_code")
    await wait_until_ready(session)
    # `send_request` writes a request before it returns (the client's coroutines write theirs
    # only once the event loop runs them): the report is asked for first and the hover right
    # after it, in every run.
    send = session.client.protocol.send_request
    params = types.WorkspaceDiagnosticParams(previous_result_ids=[])
    report = asyncio.wrap_future(send(types.WORKSPACE_DIAGNOSTIC, params))
    hover = asyncio.wrap_future(send(types.TEXT_DOCUMENT_HOVER, hover_params(session)))
    assert SESSIONS_SUMMARY in hover_text(await asyncio.wait_for(hover, WAIT))
    assert not report.done(), "the hover waited for the whole workspace report"
    done = await asyncio.wait_for(report, 120)
    generated = [
        item
        for item in done.items
        if "generated-" in item.uri
        and isinstance(item, types.WorkspaceFullDocumentDiagnosticReport)
    ]
    assert len(generated) == 3000
    assert all([d.code for d in item.items] == ["EV300"] for item in generated)


async def test_a_large_page_on_disk_is_indexed_like_any_other(
    bare_client: LanguageClient, workspace: Path
) -> None:
    """A page over the large-document size already on disk is indexed in the worker thread:
    its links count as backlinks and its own diagnostics are found, as for any page."""
    big = workspace / "EchoesVault" / "pages" / "big-on-disk.md"
    big.write_text(big_page(8000) + "Depends on [[sessions]].\n", encoding="utf-8")
    assert big.stat().st_size > 128 * 1024
    session = await start_session(bare_client, workspace, "neovim")
    await wait_until_ready(session)
    sessions = session.page("sessions.md").as_uri()
    found = await asyncio.wait_for(
        session.client.text_document_references_async(
            types.ReferenceParams(
                text_document=types.TextDocumentIdentifier(uri=sessions),
                position=types.Position(line=7, character=2),
                context=types.ReferenceContext(include_declaration=False),
            )
        ),
        WAIT,
    )
    assert big.as_uri() in {location.uri for location in found or []}
    document = session.open(big)
    items = await session.diagnostics(document, lambda found: len(found) > 0, timeout=120)
    assert len(items) == 1001 and "7,000 more diagnostics" in items[-1].message


def many_sections(count: int) -> str:
    """A page of `count` two-line heading sections: its folding takes half a second."""
    return HEAD + "".join(f"## Part {number}\nA line.\n" for number in range(count))


async def test_a_large_page_is_folded_while_other_requests_are_answered(
    session: Session,
) -> None:
    """Folding a page of 30,000 sections runs in the worker thread: a hover sent while the
    folds are made is answered before them, and the folds are those of the page, the same
    again after an edit."""
    await wait_until_ready(session)
    uri = session.open(session.page("many-sections.md"), many_sections(30_000))
    params = types.FoldingRangeParams(text_document=types.TextDocumentIdentifier(uri=uri))
    for _edit in range(2):
        folding = asyncio.ensure_future(session.client.text_document_folding_range_async(params))
        # the hover is sent once the folding has begun (on the event loop it would hold the
        # loop for half a second from then on)
        await asyncio.sleep(0.05)
        assert SESSIONS_SUMMARY in await hover_elsewhere(session)
        assert not folding.done(), "the folds were made before the hover was answered"
        found = await asyncio.wait_for(folding, 120)
        assert found is not None
        # the frontmatter, then each section (VS Code's client takes the first 5,000 only)
        assert len(found) == (5_000 if session.kind == "visual_studio_code" else 30_001)
        expected = [(0, 5)] + [(7 + 2 * number, 8 + 2 * number) for number in range(30_000)]
        assert [(fold.start_line, fold.end_line) for fold in found] == expected[: len(found)]
        session.edit(uri, 8, 0, 0, "Still ")
