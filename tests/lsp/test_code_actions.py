"""The code actions offered on a page: quick fixes for its findings in the range, then the
source actions (deprecate, save, rebuild the index, append the selection), filtered by `only`."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from lsprotocol import types

from echoes_lsp.runtime.echoes_vault import INDEX_HEADER

from .conftest import WAIT, Session
from .nav_helpers import request, units


async def actions(
    session: Session, document: str, span: types.Range, only: Optional[List[str]] = None
) -> List[Any]:
    result = await request(
        session.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                range=span,
                context=types.CodeActionContext(diagnostics=[], only=only),
            )
        ),
        WAIT,
    )
    return list(result or [])


def summary(found: List[Any]) -> List[Tuple[str, Optional[str]]]:
    return [(action.title, action.kind) for action in found]


def at(line: int, character: int = 0) -> types.Position:
    return types.Position(line=line, character=character)


SOURCE = [
    ("Mark this page deprecated", "refactor.rewrite.echoes.deprecate"),
    ("Save through EchoesVault (hash-checked)", "source.echoes.save"),
    ("Rebuild the EchoesVault index", "source.echoes.rebuildIndex"),
]


async def test_conflict_fixes_come_before_the_source_actions(shared: Session) -> None:
    page = shared.page("conflict.md")
    document = shared.open(page)
    await shared.diagnostics(document, lambda items: any(d.code == "EV400" for d in items))
    found = await actions(shared, document, types.Range(start=at(7), end=at(7)))
    assert summary(found) == [
        ("Resolve conflict: keep ours", "quickfix"),
        ("Resolve conflict: keep theirs", "quickfix"),
        ("Resolve conflict: keep both", "quickfix"),
        *SOURCE,
    ]
    ours = found[0].edit.changes[document][0]
    assert ours.new_text == "" or "Their version." not in ours.new_text
    # Outside the conflict block: no conflict fixes.
    assert summary(await actions(shared, document, types.Range(start=at(1), end=at(1)))) == SOURCE


async def test_a_selection_can_be_appended_and_only_filters_kinds(shared: Session) -> None:
    page = shared.page("sessions.md")
    text = page.read_text(encoding="utf-8")
    document = shared.open(page)
    line_text = text.split("\n")[10]
    assert line_text == "Used by [[auth]]."
    span = types.Range(
        start=at(10, units(shared, "Used by ")), end=at(10, units(shared, "Used by [[auth]]"))
    )
    found = await actions(shared, document, span)
    append = found[-1]
    assert (append.title, append.kind) == (
        "Append the selection to a new scratchpad entry",
        "source.echoes.append",
    )
    assert append.command.command == "echoes.append"
    assert append.command.arguments[0]["entry"] == "[[auth]]"
    assert summary(found)[:-1] == SOURCE
    assert summary(await actions(shared, document, span, only=["source"])) == [
        *SOURCE[1:],
        ("Append the selection to a new scratchpad entry", "source.echoes.append"),
    ]
    assert summary(await actions(shared, document, span, only=["refactor"])) == SOURCE[:1]


async def test_no_index_rebuild_is_offered_while_an_invalid_page_blocks_it(
    session: Session,
) -> None:
    # broken.md and conflict.md keep the runtime from writing an index; the pages that are not
    # listed are still named by EV403, without offering a rebuild the runtime would refuse.
    index = session.workspace / "EchoesVault" / "index.md"
    index.write_text(INDEX_HEADER, encoding="utf-8")  # an index that lists no page
    document = session.open(index)
    found = await session.diagnostics(document, lambda items: any(d.code for d in items))
    stale = [d for d in found if d.code in ("EV402", "EV403")]
    assert stale and "once the invalid pages are fixed (`broken`, `conflict`)" in stale[0].message
    titles = [a.title for a in await actions(session, document, stale[0].range)]
    assert "Rebuild the index through EchoesVault" not in titles
    for name in ("broken.md", "conflict.md"):
        fixed = session.open(session.page(name))
        session.replace(fixed, "---\ntype: note\nstack: []\nstatus: active\nsummary: Ok.\n---\n")
        await session.diagnostics(fixed, lambda items: not any(d.severity == 1 for d in items))
    titles = [a.title for a in await actions(session, document, stale[0].range)]
    assert "Rebuild the index through EchoesVault" in titles
