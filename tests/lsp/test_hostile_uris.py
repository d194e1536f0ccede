"""Hostile URIs and text over real stdio: each is ignored with one log line (a URI) or analysed
with replacement characters (text), never an internal error, and never kept where later work
trips over it. File operations are checked against the disk before pages are forgotten."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any, Callable, Dict, List

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import WAIT, Session, codes, uri

PAGE = "---\ntype: note\nstack: []\nstatus: active\nsummary: Hostile.\n---\n\n# Hostile\n"
INTERNAL = -32603


def vault_uri(session: Session, tail: str) -> str:
    """A URI inside the vault's `pages/` folder whose last part is `tail`, as written."""
    return (session.workspace / "EchoesVault" / "pages").resolve().as_uri() + "/" + tail


def outside(session: Session) -> str:
    elsewhere = session.workspace.parent / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    (elsewhere / "secret.md").write_text(PAGE.replace("Hostile.", "Outside."), encoding="utf-8")
    return uri(elsewhere / "secret.md")


def through_a_link(session: Session) -> str:
    outside(session)
    link = session.workspace / "EchoesVault" / "pages" / "linked"
    link.symlink_to(session.workspace.parent / "elsewhere", target_is_directory=True)
    return vault_uri(session, "linked/secret.md")


HOSTILE: Dict[str, Callable[[Session], str]] = {
    "nul": lambda s: vault_uri(s, "a%00b.md"),
    "undecodable escape": lambda s: vault_uri(s, "a%FFb.md"),
    "escaped surrogate": lambda s: vault_uri(s, "a%ED%A0%80b.md"),
    "lone surrogate": lambda s: vault_uri(s, "a\ud800b.md"),
    "other scheme": lambda s: "https://example.com/EchoesVault/pages/a.md",
    "untitled": lambda s: "untitled:Untitled-1",
    "outside the workspace": outside,
    "dot-dot": lambda s: vault_uri(s, "../../../elsewhere/secret.md"),
    "through a symbolic link": through_a_link,
}


def ignored_lines(session: Session, hostile: str) -> List[str]:
    return [m.message for m in session.client.log_messages if repr(hostile) in m.message]


async def answered(request: Any) -> Any:
    """The result of a request; an LSP error is fine unless it reports a bug of the server."""
    try:
        return await asyncio.wait_for(request, WAIT)
    except JsonRpcException as error:
        assert error.code != INTERNAL, error
        return None


async def every_request(session: Session, document: str) -> List[Any]:
    client = session.client
    identifier = types.TextDocumentIdentifier(uri=document)
    here = types.Position(line=1, character=1)
    span = types.Range(start=here, end=here)
    requests = [
        client.text_document_hover_async(
            types.HoverParams(text_document=identifier, position=here)
        ),
        client.text_document_definition_async(
            types.DefinitionParams(text_document=identifier, position=here)
        ),
        client.text_document_completion_async(
            types.CompletionParams(text_document=identifier, position=here)
        ),
        client.text_document_references_async(
            types.ReferenceParams(
                text_document=identifier,
                position=here,
                context=types.ReferenceContext(include_declaration=True),
            )
        ),
        client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=identifier)
        ),
        client.text_document_document_link_async(
            types.DocumentLinkParams(text_document=identifier)
        ),
        client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier)),
        client.text_document_semantic_tokens_full_async(
            types.SemanticTokensParams(text_document=identifier)
        ),
        client.text_document_semantic_tokens_range_async(
            types.SemanticTokensRangeParams(text_document=identifier, range=span)
        ),
        client.text_document_inlay_hint_async(
            types.InlayHintParams(text_document=identifier, range=span)
        ),
        client.text_document_folding_range_async(
            types.FoldingRangeParams(text_document=identifier)
        ),
        client.text_document_selection_range_async(
            types.SelectionRangeParams(text_document=identifier, positions=[here])
        ),
        client.text_document_document_highlight_async(
            types.DocumentHighlightParams(text_document=identifier, position=here)
        ),
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=identifier,
                range=span,
                context=types.CodeActionContext(diagnostics=[]),
            )
        ),
        client.text_document_prepare_rename_async(
            types.PrepareRenameParams(text_document=identifier, position=here)
        ),
        client.text_document_rename_async(
            types.RenameParams(text_document=identifier, position=here, new_name="other")
        ),
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="echoes.savePage", arguments=[{"uri": document}])
        ),
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="echoes.showDiskVersion", arguments=[{"uri": document}]
            )
        ),
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="echoes.references",
                arguments=[{"uri": document, "position": {"line": 0, "character": 0}}],
            )
        ),
    ]
    if session.pull:
        requests.append(
            client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=identifier)
            )
        )
    return [await answered(request) for request in requests]


@pytest.mark.parametrize("kind", list(HOSTILE))
async def test_a_hostile_uri_is_ignored_with_one_log_line(session: Session, kind: str) -> None:
    hostile = HOSTILE[kind](session)
    client = session.client
    identifier = types.TextDocumentIdentifier(uri=hostile)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=hostile,
                language_id="markdown",
                version=1,
                text=PAGE + "[[auth]] [[nowhere]]\n",
            )
        )
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=hostile, version=2),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(text=PAGE + "[[gone]]\n")
            ],
        )
    )
    client.text_document_will_save(
        types.WillSaveTextDocumentParams(
            text_document=identifier, reason=types.TextDocumentSaveReason.Manual
        )
    )
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=identifier))
    # Opened after the hostile document, so it is re-checked after it below.
    auth = session.open(session.page("auth.md"))
    await session.diagnostics(auth, lambda items: "EV300" in codes(items))
    results = await every_request(session, hostile)
    # Work that runs over every open document later: a settings change re-checks them all (in
    # the order they were opened), an edit of a page re-checks the pages that link to it.
    settings = {"diagnostics": {"severity": {"EV300": "off"}}}
    client.set_configuration(settings, section="echoes")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"echoes": settings})
    )
    await session.diagnostics(auth, lambda items: "EV300" not in codes(items))
    session.replace(auth, session.page("auth.md").read_text(encoding="utf-8") + "\nMore.\n")
    await session.diagnostics(auth)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=identifier))
    await session.alive()

    # Nothing of the hostile document was kept or analysed.
    assert all(not result for result in results[:10]), results
    assert hostile not in client.diagnostics
    if session.pull:
        report = await asyncio.wait_for(
            client.workspace_diagnostic_async(
                types.WorkspaceDiagnosticParams(previous_result_ids=[])
            ),
            WAIT,
        )
        assert hostile not in {item.uri for item in report.items}
    symbols = await asyncio.wait_for(
        client.workspace_symbol_async(types.WorkspaceSymbolParams(query="")), WAIT
    )
    assert "secret" not in {symbol.name for symbol in symbols or []}  # nothing from outside
    assert len(ignored_lines(session, hostile)) == 1, [m.message for m in client.log_messages]


@pytest.mark.parametrize("kind", list(HOSTILE))
async def test_file_events_naming_a_hostile_uri_are_ignored(session: Session, kind: str) -> None:
    hostile = HOSTILE[kind](session)
    client = session.client
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=hostile, type=change)
                for change in (
                    types.FileChangeType.Created,
                    types.FileChangeType.Changed,
                    types.FileChangeType.Deleted,
                )
            ]
        )
    )
    client.workspace_did_create_files(
        types.CreateFilesParams(files=[types.FileCreate(uri=hostile)])
    )
    client.workspace_did_delete_files(
        types.DeleteFilesParams(files=[types.FileDelete(uri=hostile)])
    )
    auth = uri(session.page("auth.md"))
    client.workspace_did_rename_files(
        types.RenameFilesParams(
            files=[
                types.FileRename(old_uri=hostile, new_uri=auth),
                types.FileRename(old_uri=auth, new_uri=hostile),
            ]
        )
    )
    await session.alive()
    names = await page_names(session)
    assert names == {"auth", "broken", "conflict", "legacy-auth", "sessions", "tokens"}
    assert len(ignored_lines(session, hostile)) == 1, [m.message for m in client.log_messages]


async def page_names(session: Session) -> set:
    symbols = await asyncio.wait_for(
        session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="")), WAIT
    )
    return {symbol.name for symbol in symbols or []}


async def test_text_with_lone_surrogates_is_analysed(session: Session) -> None:
    text = PAGE.replace("Hostile.", "Broken \ud800 text.") + "See [[missing\udc00page]].\n"
    document = session.open(session.page("surrogates.md"), text)
    items = await session.diagnostics(document, lambda items: "EV300" in codes(items))
    (broken,) = [item for item in items if item.code == "EV300"]
    assert "missing\ufffdpage" in broken.message
    session.edit(document, 7, 0, 0, "[[sessions]] \ud83d and [[nowhere]] ")
    items = await session.diagnostics(document, lambda items: codes(items).count("EV300") == 2)
    hover = await asyncio.wait_for(
        session.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                position=types.Position(line=7, character=4),
            )
        ),
        WAIT,
    )
    assert hover is not None and "Session storage" in str(hover.contents)
    symbols = await asyncio.wait_for(
        session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="\udc00surr")),
        WAIT,
    )
    assert symbols is not None
    await session.alive()


async def test_a_rename_naming_pages_forgets_no_page_still_on_disk(session: Session) -> None:
    client = session.client
    auth = session.open(session.page("auth.md"))
    assert "EV300" in codes(await session.diagnostics(auth))  # [[missing-page]] only
    pages = session.workspace / "EchoesVault" / "pages"
    moved = session.workspace / "EchoesVault" / "moved"
    client.workspace_did_rename_files(
        types.RenameFilesParams(files=[types.FileRename(old_uri=uri(pages), new_uri=uri(moved))])
    )
    client.workspace_did_delete_files(
        types.DeleteFilesParams(files=[types.FileDelete(uri=uri(pages))])
    )
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=uri(pages), type=types.FileChangeType.Deleted),
                types.FileEvent(
                    uri=uri(session.page("sessions.md")), type=types.FileChangeType.Deleted
                ),
            ]
        )
    )
    await session.alive()
    assert await page_names(session) == {
        "auth",
        "broken",
        "conflict",
        "legacy-auth",
        "sessions",
        "tokens",
    }
    session.replace(auth, session.page("auth.md").read_text(encoding="utf-8") + "\nMore.\n")
    items = await session.diagnostics(auth, lambda items: True)
    assert missing_pages(items) == ["missing-page"]


def missing_pages(items: List[types.Diagnostic]) -> List[str]:
    """The page names of a document's EV300 diagnostics."""
    return sorted({d.message.split("`")[1] for d in items if d.code == "EV300"})


async def test_renames_and_deletions_that_happened_on_disk_are_followed(
    session: Session,
) -> None:
    client = session.client
    auth = session.open(session.page("auth.md"))
    await session.diagnostics(auth)
    old, new = session.page("sessions.md"), session.page("sessions-v2.md")
    old.rename(new)
    client.workspace_did_rename_files(
        types.RenameFilesParams(files=[types.FileRename(old_uri=uri(old), new_uri=uri(new))])
    )
    session.page("legacy-auth.md").unlink()
    client.workspace_did_delete_files(
        types.DeleteFilesParams(files=[types.FileDelete(uri=uri(session.page("legacy-auth.md")))])
    )
    pages = session.workspace / "EchoesVault" / "pages"
    shutil.move(str(pages), str(pages.parent / "moved"))
    pages.mkdir()
    shutil.move(str(pages.parent / "moved" / "tokens.md"), str(pages / "tokens.md"))
    client.workspace_did_rename_files(
        types.RenameFilesParams(
            files=[types.FileRename(old_uri=uri(pages), new_uri=uri(pages.parent / "moved"))]
        )
    )
    items = await session.diagnostics(auth, lambda items: "sessions" in missing_pages(items))
    assert missing_pages(items) == ["legacy-auth", "missing-page", "sessions"]
    # auth.md left the disk too, but it is open: its buffer counts as the page until closed
    assert await page_names(session) == {"auth", "tokens"}
