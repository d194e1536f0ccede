"""Completion over stdio: page names after `[[`, headings after `#`, block ids after `#^`, assets
after `![[`, and frontmatter keys and values from the vault's own vocabulary."""

from __future__ import annotations

from typing import Optional, Sequence

from lsprotocol import types

from .conftest import Session
from .nav_helpers import PAGE_HEAD, after, covered, doc, labels, request


async def complete(
    session: Session, uri: str, where: types.Position, trigger: Optional[str] = None
) -> Optional[types.CompletionList]:
    context = (
        types.CompletionContext(
            trigger_kind=types.CompletionTriggerKind.TriggerCharacter, trigger_character=trigger
        )
        if trigger
        else types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked)
    )
    result = await request(
        session.client.text_document_completion_async(
            types.CompletionParams(text_document=doc(uri), position=where, context=context)
        )
    )
    assert result is None or isinstance(result, types.CompletionList)
    return result


def item(items: Sequence[types.CompletionItem], label: str) -> types.CompletionItem:
    return next(i for i in items if i.label == label)


def edit_of(entry: types.CompletionItem) -> types.TextEdit:
    assert isinstance(entry.text_edit, types.TextEdit)
    return entry.text_edit


async def test_page_names_after_double_bracket(shared: Session) -> None:
    text = PAGE_HEAD.format(summary="Draft.") + "Naïve 🎫 see [[ses"
    uri = shared.open(shared.page("draft.md"), text)
    where = after(shared, text, "[[ses")
    result = await complete(shared, uri, where, "[")
    assert result is not None
    assert labels(result.items)[0] == "sessions"
    sessions = item(result.items, "sessions")
    edit = edit_of(sessions)
    # Replaces what was typed after `[[` (in client units, past the emoji) and closes the link.
    assert covered(shared, text, edit.range) == "ses"
    assert edit.range.end == where
    assert edit.new_text == "sessions]]"
    assert sessions.detail == "Session storage, token lifetime and rotation."
    assert isinstance(sessions.documentation, types.MarkupContent)
    assert sessions.documentation.kind == types.MarkupKind.Markdown
    assert "architecture" in sessions.documentation.value
    assert "active" in sessions.documentation.value
    assert "python" in sessions.documentation.value


async def test_existing_closing_brackets_are_kept(shared: Session) -> None:
    text = PAGE_HEAD.format(summary="Draft.") + "See [[]] and [[au|Auth]]."
    uri = shared.open(shared.page("draft.md"), text)
    result = await complete(shared, uri, after(shared, text, "See [["), "[")
    assert result is not None
    edit = edit_of(item(result.items, "auth"))
    assert edit.new_text == "auth"  # the editor already closed the link
    # Completing inside an existing target replaces the whole name, keeping the alias.
    result = await complete(shared, uri, after(shared, text, "[[a"))
    assert result is not None
    edit = edit_of(item(result.items, "auth"))
    assert covered(shared, text, edit.range) == "au"
    assert edit.new_text == "auth"


async def test_deprecated_pages_are_tagged_and_sorted_last(shared: Session) -> None:
    text = PAGE_HEAD.format(summary="Draft.") + "[[auth"
    uri = shared.open(shared.page("draft.md"), text)
    result = await complete(shared, uri, after(shared, text, "[[auth"))
    assert result is not None
    names = labels(result.items)
    assert "auth" in names and "legacy-auth" in names
    legacy = item(result.items, "legacy-auth")
    current = item(result.items, "auth")
    assert list(legacy.tags or []) == [types.CompletionItemTag.Deprecated]
    assert legacy.deprecated is True
    assert current.tags is None
    assert (legacy.sort_text or "") > (current.sort_text or "")
    assert isinstance(legacy.documentation, types.MarkupContent)
    assert "Deprecated" in legacy.documentation.value


async def test_summary_matches_rank_after_name_matches(shared: Session) -> None:
    text = PAGE_HEAD.format(summary="Draft.") + "[[rotation"
    uri = shared.open(shared.page("draft.md"), text)
    result = await complete(shared, uri, after(shared, text, "[[rotation"))
    assert result is not None
    # No page is named like it, but the sessions summary mentions rotation.
    assert labels(result.items) == ["sessions"]


async def test_headings_and_block_ids(shared: Session) -> None:
    text = PAGE_HEAD.format(summary="Draft.") + "[[sessions#\n[[sessions#^\n[[#"
    uri = shared.open(shared.page("draft.md"), text)
    result = await complete(shared, uri, after(shared, text, "[[sessions#", 7), "#")
    assert result is not None
    assert labels(result.items) == ["Sessions", "Token lifetime"]
    edit = edit_of(item(result.items, "Token lifetime"))
    assert edit.new_text == "Token lifetime]]"
    assert edit.range.start == edit.range.end == after(shared, text, "[[sessions#", 7)
    result = await complete(shared, uri, after(shared, text, "[[sessions#^", 8), "^")
    assert result is not None
    # Every paragraph is offered: the one with an id inserts it, the other a fresh id that the
    # item's command adds to the page (tests/lsp/test_block_ids.py).
    assert labels(result.items) == ["Used by [[auth]].", "rotation"]
    rotation = item(result.items, "rotation")
    assert edit_of(rotation).new_text == "rotation]]"
    assert rotation.detail == "Access tokens live 15 minutes."
    assert rotation.command is None
    fresh = item(result.items, "Used by [[auth]].")
    assert fresh.command is not None and fresh.command.command == "echoes.addBlockId"


async def test_headings_of_the_page_being_edited(shared: Session) -> None:
    text = PAGE_HEAD.format(summary="Draft.") + "# Draft\n\n## Fresh heading\n\n[[#"
    uri = shared.open(shared.page("draft.md"), text)
    result = await complete(shared, uri, after(shared, text, "[[#"), "#")
    assert result is not None
    assert labels(result.items) == ["Draft", "Fresh heading"]


async def test_alias_suggests_the_title(shared: Session) -> None:
    text = PAGE_HEAD.format(summary="Draft.") + "[[sessions|"
    uri = shared.open(shared.page("draft.md"), text)
    result = await complete(shared, uri, after(shared, text, "[[sessions|"), "|")
    assert result is not None
    assert labels(result.items) == ["Sessions", "sessions"]


async def test_assets_after_embed(shared: Session) -> None:
    text = PAGE_HEAD.format(summary="Draft.") + "![[dia"
    uri = shared.open(shared.page("draft.md"), text)
    result = await complete(shared, uri, after(shared, text, "![[dia"))
    assert result is not None
    assert labels(result.items)[0] == "diagram.png"
    diagram = item(result.items, "diagram.png")
    assert edit_of(diagram).new_text == "diagram.png]]"
    assert diagram.kind == types.CompletionItemKind.File


async def test_nothing_inside_code_or_outside_links(shared: Session) -> None:
    text = PAGE_HEAD.format(summary="Draft.") + "`[[ses\n```\n[[ses\n```\nplain words "
    uri = shared.open(shared.page("draft.md"), text)
    for needle, line in (("`[[ses", 7), ("[[ses", 9), ("plain words ", 11)):
        result = await complete(shared, uri, after(shared, text, needle, line), " ")
        assert result is None or result.items == []


async def test_frontmatter_values_come_from_the_vault(shared: Session) -> None:
    text = "---\ntype: \nstatus: \nstack: [python, \n\n---\n\n# Draft\n"
    uri = shared.open(shared.page("draft.md"), text)
    types_ = await complete(shared, uri, after(shared, text, "type: ", 1), " ")
    assert types_ is not None
    # Most used first: three architecture pages.
    assert labels(types_.items)[0] == "architecture"
    assert {"decision", "note", "reference"} <= set(labels(types_.items))
    status = await complete(shared, uri, after(shared, text, "status: ", 2), " ")
    assert status is not None
    assert labels(status.items)[0] == "active"
    assert "deprecated" in labels(status.items)
    stack = await complete(shared, uri, after(shared, text, "[python, ", 3))
    assert stack is not None
    assert "postgresql" in labels(stack.items) and "redis" in labels(stack.items)
    assert "python" not in labels(stack.items)  # already listed
    keys = await complete(shared, uri, types.Position(line=4, character=0))
    assert keys is not None
    assert labels(keys.items)[0] == "summary"  # the only required key still missing
    assert not {"type", "status", "stack"} & set(labels(keys.items))
    assert edit_of(keys.items[0]).new_text == "summary: "


async def test_indented_stack_items(shared: Session) -> None:
    text = "---\ntype: note\nstack:\n  - \nstatus: active\nsummary: S.\n---\n"
    uri = shared.open(shared.page("draft.md"), text)
    result = await complete(shared, uri, after(shared, text, "  - ", 3), " ")
    assert result is not None
    assert labels(result.items)[:1] == ["python"]  # used by three pages


async def test_out_of_range_and_unknown_documents(shared: Session) -> None:
    uri = shared.open(shared.page("auth.md"))
    assert await complete(shared, uri, types.Position(line=500, character=3)) is None
    far = await complete(shared, uri, types.Position(line=9, character=900))
    assert far is None or isinstance(far, types.CompletionList)
    missing = shared.page("never-opened.md").resolve().as_uri()
    assert await complete(shared, missing, types.Position(line=0, character=0)) is None
    await shared.alive()
