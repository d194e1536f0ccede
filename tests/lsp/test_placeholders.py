"""A placeholder a quick fix inserts (`summary: "TODO: …"`) is valid to the runtime, so it is
reported (EV202) until it is replaced, in the editor and by `check`."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import List

from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import WAIT, Session, capabilities, codes, uri


def apply(text: str, edit: types.TextEdit) -> str:
    """Apply one edit to an ASCII text (positions are the same in every encoding)."""
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        return sum(len(line) + 1 for line in lines[: position.line]) + position.character

    start, end = offset(edit.range.start), offset(edit.range.end)
    return text[:start] + edit.new_text + text[end:]


def edits_of(action: types.CodeAction, document: str) -> List[types.TextEdit]:
    assert action.edit is not None and action.edit.changes is not None
    return list(action.edit.changes[document])


async def insert_fields_action(session: Session, document: str) -> types.CodeAction:
    """The quick fix of the document's EV104 (missing fields), once it is reported."""
    items = await session.diagnostics(document, lambda d: "EV104" in codes(d))
    missing = next(d for d in items if d.code == "EV104")
    actions = await session.code_actions(document, missing)
    return next(
        a
        for a in actions
        if isinstance(a, types.CodeAction) and a.title == "Insert the missing frontmatter fields"
    )


async def test_the_inserted_summary_placeholder_is_reported_until_replaced(
    shared: Session,
) -> None:
    page = shared.page("broken.md")
    text = page.read_text(encoding="utf-8").replace(
        "summary: This summary is far too long for the index because it keeps going and going, "
        "well past the one hundred and sixty character limit that the protocol sets for every "
        "page summary.\n",
        "",
    )
    document = shared.open(page, text)
    items = await shared.diagnostics(document, lambda d: "EV104" in codes(d))
    missing = [d for d in items if d.code == "EV104"]
    actions = await shared.code_actions(document, missing[0])
    insert = next(
        a
        for a in actions
        if isinstance(a, types.CodeAction) and a.title == "Insert the missing frontmatter fields"
    )
    (edit,) = edits_of(insert, document)
    fixed = apply(text, edit)
    assert 'summary: "TODO: summary of broken."' in fixed
    shared.replace(document, fixed)
    after = await shared.diagnostics(document, lambda d: "EV104" not in codes(d))
    placeholder = [d for d in after if d.code == "EV202"]
    assert len(placeholder) == 1, codes(after)
    line = fixed.split("\n")[placeholder[0].range.start.line]
    start, end = placeholder[0].range.start.character, placeholder[0].range.end.character
    assert line[start:end] == '"TODO: summary of broken."'
    assert placeholder[0].severity == types.DiagnosticSeverity.Warning
    written = fixed.replace('"TODO: summary of broken."', "A page with its summary written.")
    shared.replace(document, written)
    done = await shared.diagnostics(document, lambda d: "EV202" not in codes(d))
    assert "EV202" not in codes(done)


def broken_without_summary(page: Path) -> str:
    return "\n".join(
        line
        for line in page.read_text(encoding="utf-8").split("\n")
        if not line.startswith("summary:")
    )


async def test_where_the_client_takes_snippets_the_cursor_lands_on_the_placeholder(
    bare_client: LanguageClient, workspace: Path
) -> None:
    """VS Code's language client declares `workspaceEdit.snippetEditSupport`: the quick fix is a
    snippet edit whose first tab stop selects the summary placeholder."""
    caps = capabilities("visual_studio_code")
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.snippet_edit_support = True
    await asyncio.wait_for(
        bare_client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=uri(workspace),
                workspace_folders=[types.WorkspaceFolder(uri=uri(workspace), name="vault")],
            )
        ),
        WAIT,
    )
    session = Session(bare_client, workspace, "visual_studio_code")
    page = session.page("broken.md")
    text = broken_without_summary(page)
    document = session.open(page, text)
    insert = await insert_fields_action(session, document)
    assert insert.edit is not None and insert.edit.changes is None
    (change,) = insert.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.uri == document and change.text_document.version == 1
    (edit,) = change.edits
    assert isinstance(edit, types.SnippetTextEdit)
    assert '"${1:TODO: summary of broken.}"' in edit.snippet.value
    # Without the snippet syntax it is exactly the plain edit's text.
    plain = re.sub(r"\$\{1:([^}]*)\}", r"\1", edit.snippet.value).replace("$0", "")
    fixed = apply(text, types.TextEdit(range=edit.range, new_text=plain))
    assert 'status: active\nsummary: "TODO: summary of broken."\n---' in fixed


async def test_without_snippet_support_the_fix_is_a_plain_edit(shared: Session) -> None:
    page = shared.page("broken.md")
    text = broken_without_summary(page)
    document = shared.open(page, text)
    insert = await insert_fields_action(shared, document)
    (edit,) = edits_of(insert, document)
    assert "${" not in edit.new_text and '"TODO: summary of broken."' in edit.new_text
