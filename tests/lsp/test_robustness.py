"""The server never crashes or hangs: each bad input is sent, then the server must still answer."""

from __future__ import annotations

import asyncio
from typing import Callable, List

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import WAIT, Session, codes, uri

NASTY_FRONTMATTER = [
    "",
    "---",
    "---\n",
    "---\n---",
    "---\ntype\n---\n",
    "---\n: value\n---\n",
    "---\n\ttype: tab\n---\n",
    "---\ntype:no-space\nstack: [\n---\n",
    '---\nsummary: "\\ud800"\n---\n',
    "---\nsummary: 'unterminated\n---\n",
    "---\nsummary: >\n  folded\n  text\n---\n",
    "\ufeff---\ntype: bom\n---\n",
    "---\r\ntype: crlf\r\nstack: []\r\n---\r\n",
    "---\rtype: cr-only\r---\r",
    "---\n" + "k: " + "x" * 200_000 + "\n---\n",
    "---\n" + "\n".join(f"key{i}: v" for i in range(5000)) + "\n---\n",
    "---\ntype: a\x00b\n---\n",
    "---\n- list\n- at top\n---\n",
    "[[" * 10_000,
    "[[a|b|c#d#^e]] ![[]] [[#]] [[^]] [[ ]]",
    "```\n[[unclosed fence",
    "<<<<<<< a\n=======\n",
]


async def probe(session: Session, document: str) -> None:
    """A handful of requests at hostile positions; each may fail, none may kill the server."""
    far = types.Position(line=10_000, character=10_000)
    identifier = types.TextDocumentIdentifier(uri=document)
    requests = [
        session.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=identifier,
                range=types.Range(start=far, end=far),
                context=types.CodeActionContext(diagnostics=[]),
            )
        ),
        session.client.text_document_completion_async(
            types.CompletionParams(text_document=identifier, position=far)
        ),
        session.client.text_document_hover_async(
            types.HoverParams(text_document=identifier, position=far)
        ),
        session.client.text_document_definition_async(
            types.DefinitionParams(text_document=identifier, position=far)
        ),
    ]
    for request in requests:
        try:
            await asyncio.wait_for(request, WAIT)
        except JsonRpcException:
            pass
    await session.alive()


async def test_malformed_frontmatter_in_many_forms(shared: Session) -> None:
    document = shared.open(shared.page("sessions.md"))
    await shared.diagnostics(document)
    for text in NASTY_FRONTMATTER:
        shared.replace(document, text)
        await probe(shared, document)
    shared.replace(document, "---\ntype: a\nstack: []\nstatus: active\nsummary: Fine.\n---\n")
    assert await shared.diagnostics(document, lambda d: not d) == []


async def test_ten_megabyte_page(session: Session) -> None:
    line = "Plain text with a [[sessions]] link and nothing else of note here.\n"
    text = "---\ntype: a\nstack: []\nstatus: active\nsummary: Big.\n---\n" + line * (
        10 * 1024 * 1024 // len(line)
    )
    document = session.open(session.page("huge.md"), text)
    items = await session.diagnostics(document, timeout=60)
    assert "EV300" not in codes(items)
    await probe(session, document)


def issue_counts(session: Session) -> List[int]:
    """The `issueCount` of each `echoes/statusChanged` notification so far."""
    statuses = session.client.statuses  # type: ignore[attr-defined]
    return [status.issueCount for status in statuses if status.ready]


async def issue_count(session: Session, until: Callable[[int], bool]) -> int:
    """The latest issue count once `until` holds for it."""
    deadline = asyncio.get_event_loop().time() + WAIT
    while not (issue_counts(session) and until(issue_counts(session)[-1])):
        assert asyncio.get_event_loop().time() < deadline, issue_counts(session)
        await asyncio.sleep(0.05)
    return issue_counts(session)[-1]


async def test_binary_and_non_utf8_files(session: Session) -> None:
    before = await issue_count(session, lambda count: True)
    binary = session.page("binary.md")
    binary.write_bytes(b"\x00\x01\x02PNG\xff\xfe" * 100)
    latin1 = session.page("latin1.md")
    latin1.write_bytes("---\ntype: caf\xe9\n---\n".encode("latin-1"))
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=binary.as_uri(), type=types.FileChangeType.Created),
                types.FileEvent(uri=latin1.as_uri(), type=types.FileChangeType.Created),
            ]
        )
    )
    # What an editor shows for undecodable bytes: replacement characters.
    document = session.open(latin1, "---\ntype: caf\ufffd\n---\n")
    await session.diagnostics(document, lambda d: bool(d))
    await probe(session, document)
    # The vault now counts both new files among its issues (the status every client gets).
    assert await issue_count(session, lambda count: count != before) == before + 2
    if session.pull:
        # A pulling client sees the unreadable page itself in the workspace report.
        report = await asyncio.wait_for(
            session.client.workspace_diagnostic_async(
                types.WorkspaceDiagnosticParams(previous_result_ids=[])
            ),
            WAIT,
        )
        by_uri = {item.uri: [d.code for d in item.items] for item in report.items}
        assert by_uri[binary.as_uri()] == ["EV401"]


@pytest.mark.parametrize(
    "uri",
    ["untitled:Untitled-1", "file:///nonexistent/dir/page.md", "not a uri", "file://%zz"],
)
async def test_unknown_uris(shared: Session, uri: str) -> None:
    await probe(shared, uri)


async def test_requests_for_a_document_that_is_not_open(shared: Session) -> None:
    await probe(shared, shared.page("auth.md").as_uri())


async def test_page_deleted_while_open(session: Session) -> None:
    page = session.page("sessions.md")
    document = session.open(page)
    await session.diagnostics(document)
    other = session.open(session.page("auth.md"))
    await session.diagnostics(other)
    page.unlink()
    legacy = session.page("legacy-auth.md")
    legacy.unlink()
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=document, type=types.FileChangeType.Deleted),
                types.FileEvent(uri=uri(legacy), type=types.FileChangeType.Deleted),
            ]
        )
    )
    # Only the event tells the server (its poll is off): `[[legacy-auth]]` breaks. The open
    # buffer still counts as the page, so links to sessions stay valid while it is open.
    items = await session.diagnostics(other, lambda d: codes(d).count("EV300") >= 2)
    assert codes(items).count("EV300") == 2
    await probe(session, document)
    session.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    # Once closed, the four links to the deleted page are broken too.
    items = await session.diagnostics(other, lambda d: codes(d).count("EV300") == 6)
    assert codes(items).count("EV300") == 6
    await session.alive()


async def test_bad_command_arguments(shared: Session) -> None:
    for name, argument in [
        ("echoes.savePage", {}),
        ("echoes.savePage", {"uri": 5}),
        ("echoes.search", {"query": ""}),
        ("echoes.start", {"recent": "three"}),
        ("echoes.status", {"format": "xml"}),
        ("echoes.nope", {}),
        ("echoes.append", [1, 2]),
    ]:
        shown = len(shared.client.messages)
        with pytest.raises(JsonRpcException):
            await shared.command(name, argument)
        if name != "echoes.nope":
            # Every failure is also shown to the user, once: wait for the message, then make sure
            # a later round trip brings no second one.
            deadline = asyncio.get_event_loop().time() + WAIT
            while len(shared.client.messages) == shown:
                assert asyncio.get_event_loop().time() < deadline, f"{name}: nothing shown"
                await asyncio.sleep(0.02)
            await shared.alive()
            assert len(shared.client.messages) == shown + 1, name
    await shared.alive()
