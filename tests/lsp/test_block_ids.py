"""Block references that create their own id, end to end: `[[page#^` lists the target's blocks,
and the command of a block without an id adds ` ^id` to the target through the real runtime,
hash-checked, or to an open buffer with unsaved changes through `workspace/applyEdit`; every
refusal (a page changed since, a read-only vault, a secret in the page) writes nothing."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, List, Optional

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.runtime.test_s17_secrets import SHAPES

from .conftest import (
    CLIENTS,
    RUNTIME,
    SERVER,
    WAIT,
    Session,
    capabilities,
    codes,
    copy_vault,
    internal_errors,
    poll_off,
    uri,
)
from .nav_helpers import PAGE_HEAD, after, doc, request

TARGET = PAGE_HEAD.format(summary="Blocks to link to.") + (
    "# Blocks\n"
    "\n"
    "First paragraph about deploys.\n"
    "It has a second line.\n"
    "\n"
    "- a list item\n"
    "- another item ^known\n"
    "\n"
    "> [!note] A callout title\n"
    "> with a body\n"
    "\n"
    "```\n"
    "Code is not a block.\n"
    "```\n"
    "\n"
    "Last paragraph.\n"
)
DRAFT = PAGE_HEAD.format(summary="Draft.") + "# Draft\n\nSee [[blocks#^\n"
TOKEN = SHAPES["GitHub token"]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The fixture vault with the runtime installed, without its invalid pages (the runtime
    refuses every page write while one is invalid), plus the page the links point at."""
    workspace = copy_vault("lsp-vault", tmp_path, init=True)
    pages = workspace / "EchoesVault" / "pages"
    for name in ("broken.md", "conflict.md"):
        (pages / name).unlink()
    (pages / "blocks.md").write_text(TARGET, encoding="utf-8")
    return workspace


async def blocks(
    session: Session, text: str = DRAFT, needle: str = "[[blocks#^"
) -> types.CompletionList:
    """The block completion after `needle` in the draft page (opened with `text`)."""
    document = session.open(session.page("draft.md"), text)
    result = await request(
        session.client.text_document_completion_async(
            types.CompletionParams(
                text_document=doc(document),
                position=after(session, text, needle),
                context=types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked),
            )
        )
    )
    assert isinstance(result, types.CompletionList)
    return result


def chosen(result: types.CompletionList, label: str) -> types.CompletionItem:
    return next(item for item in result.items if item.label == label)


def new_id(item: types.CompletionItem) -> str:
    assert isinstance(item.text_edit, types.TextEdit)
    return item.text_edit.new_text.removesuffix("]]")


async def run_item_command(session: Session, item: types.CompletionItem) -> Any:
    """What the client does after inserting the item: run its command."""
    assert item.command is not None
    return await session.command(item.command.command, *(item.command.arguments or []))


def link_draft(session: Session, name: str) -> str:
    """The draft as it reads once the item is inserted."""
    text = DRAFT.replace("[[blocks#^\n", f"[[blocks#^{name}]]\n")
    session.replace(session.page("draft.md").as_uri(), text)
    return text


def agent_upsert(workspace: Path, page: Path, content: str) -> None:
    """Another agent writes the page through the runtime, with the hash it read."""
    payload = {
        "filename": page.name,
        "content": content,
        "expectedSha256": sha(page.read_text(encoding="utf-8")),
    }
    done = subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), "upsert", "--payload", "-"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def shown_messages(session: Session) -> List[str]:
    return [message.message for message in session.client.messages]


async def test_blocks_are_listed_with_and_without_ids(session: Session) -> None:
    result = await blocks(session)
    assert [item.label for item in result.items] == [
        "First paragraph about deploys.",
        "a list item",
        "known",
        "A callout title",
        "Last paragraph.",
    ]
    known = chosen(result, "known")
    assert new_id(known) == "known" and known.command is None
    assert known.detail == "another item"
    first = chosen(result, "First paragraph about deploys.")
    assert first.detail is not None and first.detail.startswith(f"new id ^{new_id(first)}")
    assert first.command is not None and first.command.command == "echoes.addBlockId"
    target_uri, line, name, text_sha, line_sha = first.command.arguments or []
    # The hash of the exact text the list was built from, and the block's last line.
    assert target_uri == session.page("blocks.md").as_uri() and name == new_id(first)
    assert text_sha == sha(TARGET)
    assert line == TARGET.split("\n").index("It has a second line.")
    assert line_sha == sha("It has a second line.")
    # Fresh ids are distinct from each other and from the page's own.
    names = [new_id(item) for item in result.items]
    assert len(set(names)) == len(names)


async def test_choosing_a_block_writes_its_id_through_the_runtime(session: Session) -> None:
    page = session.page("blocks.md")
    result = await blocks(session)
    item = chosen(result, "First paragraph about deploys.")
    name = new_id(item)
    link_draft(session, name)
    answer = await run_item_command(session, item)
    assert answer["written"] == "page"
    expected = TARGET.replace("It has a second line.\n", f"It has a second line. ^{name}\n")
    assert page.read_text(encoding="utf-8") == expected
    # The model took the write in: the new link resolves.
    draft = session.page("draft.md").as_uri()
    found = await session.diagnostics(draft, lambda items: "EV303" not in codes(items))
    assert "EV303" not in codes(found)


async def test_a_concurrent_agent_write_is_refused_and_nothing_is_written(
    session: Session,
) -> None:
    page = session.page("blocks.md")
    result = await blocks(session)
    item = chosen(result, "Last paragraph.")
    # Between the completion and its command, an agent rewrites the page through the runtime.
    changed = TARGET.replace("First paragraph about deploys.", "First paragraph, rewritten.")
    agent_upsert(session.workspace, page, changed)
    link_draft(session, new_id(item))
    with pytest.raises(JsonRpcException) as refused:
        await run_item_command(session, item)
    assert "changed since" in str(refused.value)
    assert page.read_text(encoding="utf-8") == changed
    assert any("changed since" in message for message in shown_messages(session))
    # The inserted link names an id the page does not have until the person acts.
    draft = session.page("draft.md").as_uri()
    assert "EV303" in codes(await session.diagnostics(draft, lambda d: "EV303" in codes(d)))


async def test_an_open_unmodified_target_is_written_and_saves_cleanly_after(
    session: Session,
) -> None:
    page = session.page("blocks.md")
    target = session.open(page)
    result = await blocks(session)
    item = chosen(result, "a list item")
    name = new_id(item)
    await run_item_command(session, item)
    written = page.read_text(encoding="utf-8")
    assert written == TARGET.replace("- a list item\n", f"- a list item ^{name}\n")
    assert "EV701" not in codes(await session.diagnostics(target))
    # The editor reloads the unmodified buffer; its next checked save is not taken for stale.
    session.replace(target, written)
    again = written.replace("Last paragraph.", "Last paragraph, edited.")
    session.replace(target, again)
    saved = await session.command("echoes.savePage", {"uri": target})
    assert saved["sha256"] == sha(again)
    assert "EV701" not in codes(await session.diagnostics(target))


async def test_an_open_target_with_unsaved_changes_gets_the_id_in_its_buffer(
    session: Session,
) -> None:
    page = session.page("blocks.md")
    dirty = TARGET + "\nTyped but not saved.\n"
    target = session.open(page, dirty)
    edits: List[types.ApplyWorkspaceEditParams] = []

    @session.client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    result = await blocks(session)
    item = chosen(result, "Typed but not saved.")
    name = new_id(item)
    assert (item.command.arguments or [])[3] == sha(dirty)  # type: ignore[union-attr]
    answer = await run_item_command(session, item)
    assert answer["written"] == "buffer"
    assert page.read_text(encoding="utf-8") == TARGET  # the disk is left to the editor's save
    assert len(edits) == 1
    line = dirty.split("\n").index("Typed but not saved.")
    [edit] = buffer_edits(edits[0].edit, target)
    assert edit.new_text == f" ^{name}"
    assert edit.range.start == edit.range.end == types.Position(line, len("Typed but not saved."))


def buffer_edits(edit: types.WorkspaceEdit, target: str) -> List[types.TextEdit]:
    """The edits of one document: pinned to the version the server saw where the client takes
    `documentChanges` (VS Code), as a plain `changes` map where it does not (Neovim 0.11)."""
    if edit.document_changes is not None:
        [change] = edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.uri == target and change.text_document.version is not None
        return [item for item in change.edits if isinstance(item, types.TextEdit)]
    assert edit.changes is not None and list(edit.changes) == [target]
    return list(edit.changes[target])


async def test_the_page_being_edited_completes_its_own_blocks(session: Session) -> None:
    text = PAGE_HEAD.format(summary="Draft.") + "# Draft\n\nOwn paragraph.\n\nSee [[#^\n"
    edits: List[types.ApplyWorkspaceEditParams] = []

    @session.client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    result = await blocks(session, text, "[[#^")
    item = chosen(result, "Own paragraph.")
    session.replace(
        session.page("draft.md").as_uri(), text.replace("[[#^", f"[[#^{new_id(item)}]]")
    )
    answer = await run_item_command(session, item)
    # A new page, not on disk yet: its buffer gets the id.
    assert answer["written"] == "buffer"
    [edit] = buffer_edits(edits[0].edit, session.page("draft.md").as_uri())
    assert edit.new_text == f" ^{new_id(item)}"


async def test_a_secret_in_the_target_is_masked_and_refuses_the_write(session: Session) -> None:
    page = session.page("blocks.md")
    secret_page = TARGET.replace("Last paragraph.", f"Use {TOKEN} for CI.")
    page.write_text(secret_page, encoding="utf-8")
    result = await blocks(session)
    listed = json.dumps(session.client.protocol._converter.unstructure(result))
    assert TOKEN not in listed and TOKEN[-12:] not in listed
    masked = chosen(result, "Use " + "*" * len(TOKEN) + " for CI.")
    assert masked.command is not None
    item = chosen(result, "a list item")
    with pytest.raises(JsonRpcException) as refused:
        await run_item_command(session, item)
    assert "GitHub token" in str(refused.value)
    assert TOKEN not in str(refused.value)
    assert page.read_text(encoding="utf-8") == secret_page
    assert any("not added" in message for message in shown_messages(session))
    assert all(TOKEN not in message for message in shown_messages(session))


async def test_an_invalid_target_page_is_refused_with_the_runtime_reason(
    session: Session,
) -> None:
    page = session.page("blocks.md")
    invalid = TARGET.replace("status: active\n", "")
    page.write_text(invalid, encoding="utf-8")
    result = await blocks(session)
    with pytest.raises(JsonRpcException) as refused:
        await run_item_command(session, chosen(result, "Last paragraph."))
    assert "not added" in str(refused.value) and "status" in str(refused.value)
    assert page.read_text(encoding="utf-8") == invalid


async def test_a_file_that_is_no_knowledge_page_is_refused(session: Session) -> None:
    result = await blocks(session)
    item = chosen(result, "Last paragraph.")
    assert item.command is not None
    arguments = list(item.command.arguments or [])
    daily = session.workspace / "EchoesVault" / "daily"
    arguments[0] = next(path for path in daily.rglob("*.md")).as_uri()
    before = {path: path.read_bytes() for path in daily.rglob("*.md")}
    with pytest.raises(JsonRpcException) as refused:
        await session.command("echoes.addBlockId", *arguments)
    assert "not a knowledge page" in str(refused.value)
    assert {path: path.read_bytes() for path in daily.rglob("*.md")} == before


async def test_at_most_two_hundred_blocks_ranked_by_the_query(session: Session) -> None:
    page = session.page("blocks.md")
    paragraphs = "".join(f"Paragraph number {n}.\n\n" for n in range(450))
    page.write_text(PAGE_HEAD.format(summary="Many blocks.") + paragraphs, encoding="utf-8")
    result = await blocks(session)
    assert len(result.items) == 200 and result.is_incomplete
    assert result.items[0].label == "Paragraph number 0."
    text = DRAFT.replace("[[blocks#^", "[[blocks#^number 417")
    ranked = await blocks(session, text, "[[blocks#^number 417")
    assert ranked.items[0].label == "Paragraph number 417."
    assert not ranked.is_incomplete
    # A query every block matches is capped too, and the client is told to ask again.
    text = DRAFT.replace("[[blocks#^", "[[blocks#^paragraph")
    every = await blocks(session, text, "[[blocks#^paragraph")
    assert len(every.items) == 200 and every.is_incomplete


def make_read_only(workspace: Path) -> None:
    """A marker of a protocol version the runtime does not write (EV700)."""
    marker = workspace / "EchoesVault" / ".echoes-vault.json"
    data = json.loads(marker.read_text(encoding="utf-8"))
    data["protocolVersion"] = "2.0.0"
    marker.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


@pytest.fixture
def read_only(workspace: Path) -> Path:
    make_read_only(workspace)
    return workspace


async def test_a_read_only_vault_refuses_with_ev700(read_only: Path, session: Session) -> None:
    page = session.page("blocks.md")
    result = await blocks(session)
    with pytest.raises(JsonRpcException) as refused:
        await run_item_command(session, chosen(result, "Last paragraph."))
    assert "EV700" in str(refused.value)
    assert page.read_text(encoding="utf-8") == TARGET
    assert any("EV700" in message for message in shown_messages(session))


async def test_a_vault_made_read_only_after_the_listing_is_refused_by_the_runtime(
    session: Session,
) -> None:
    page = session.page("blocks.md")
    result = await blocks(session)
    make_read_only(session.workspace)
    with pytest.raises(JsonRpcException) as refused:
        await run_item_command(session, chosen(result, "Last paragraph."))
    assert "EV700" in str(refused.value) and "read-only" in str(refused.value)
    assert page.read_text(encoding="utf-8") == TARGET


# -- clients with fewer abilities ----------------------------------------------------------------


async def start_as(
    client: LanguageClient,
    workspace: Path,
    kind: str,
    info: Optional[types.ClientInfo],
    apply_edit: bool = True,
) -> Session:
    """A session whose client sends `info` (None: no `clientInfo`, as eglot 1.9 and ALE 3.3)."""
    caps = capabilities(kind)
    assert caps.workspace is not None
    caps.workspace.apply_edit = apply_edit
    await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                client_info=info,
                root_uri=uri(workspace),
                workspace_folders=[types.WorkspaceFolder(uri=uri(workspace), name="vault")],
                initialization_options=poll_off(None),
            )
        ),
        WAIT,
    )
    return Session(client, workspace, kind)


@pytest_lsp.fixture(params=CLIENTS, config=SERVER)
async def limited(request: Any, lsp_client: LanguageClient) -> Any:
    lsp_client.kind = request.param  # type: ignore[attr-defined]
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)
    assert internal_errors(lsp_client) == []


@pytest.mark.parametrize("name", [None, "Eglot"])
async def test_a_client_that_runs_no_item_command_completes_existing_ids_only(
    limited: LanguageClient, workspace: Path, name: Optional[str]
) -> None:
    info = types.ClientInfo(name=name) if name else None
    session = await start_as(limited, workspace, limited.kind, info)  # type: ignore[attr-defined]
    result = await blocks(session)
    assert [item.label for item in result.items] == ["known"]
    assert all(item.command is None for item in result.items)


async def test_unsaved_changes_without_apply_edit_are_refused(
    limited: LanguageClient, workspace: Path
) -> None:
    kind = limited.kind  # type: ignore[attr-defined]
    session = await start_as(limited, workspace, kind, types.ClientInfo(name="Neovim"), False)
    page = session.page("blocks.md")
    session.open(page, TARGET + "\nTyped but not saved.\n")
    result = await blocks(session)
    with pytest.raises(JsonRpcException) as refused:
        await run_item_command(session, chosen(result, "Last paragraph."))
    assert "unsaved changes" in str(refused.value)
    assert page.read_text(encoding="utf-8") == TARGET
