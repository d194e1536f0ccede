"""Diagnostics over stdio: codes, exact ranges, documentation links, live updates."""

from __future__ import annotations

from lsprotocol import types

from echoes_lsp.engine.codes import docs_base

from .conftest import Session, codes


async def test_page_diagnostics_have_codes_ranges_and_links(shared: Session) -> None:
    document = shared.open(shared.page("auth.md"))
    items = await shared.diagnostics(document, lambda d: len(d) >= 4)
    assert codes(items) == ["EV300", "EV301", "EV302", "EV303"]
    missing = next(d for d in items if d.code == "EV300")
    # `[[missing-page]]` on line 11: the range covers exactly the target text.
    assert missing.range.start.line == 11
    line = shared.page("auth.md").read_text().split("\n")[11]
    assert line[missing.range.start.character : missing.range.end.character] == "missing-page"
    assert missing.code_description is not None
    # the one address pyproject.toml declares (`Documentation`), as every surface uses it
    assert missing.code_description.href == docs_base() + "codes/EV300.md"
    assert docs_base().startswith("https://")
    assert missing.severity == types.DiagnosticSeverity.Warning
    heading = next(d for d in items if d.code == "EV303")
    assert line[heading.range.start.character : heading.range.end.character] == "No such heading"


async def test_frontmatter_and_summary_errors(shared: Session) -> None:
    document = shared.open(shared.page("broken.md"))
    items = await shared.diagnostics(document, lambda d: len(d) >= 2)
    assert codes(items) == ["EV104", "EV200"]
    too_long = next(d for d in items if d.code == "EV200")
    assert too_long.range.start.line == 3
    assert too_long.range.start.character == len("summary: ")


async def test_conflict_markers_are_errors(shared: Session) -> None:
    document = shared.open(shared.page("conflict.md"))
    items = await shared.diagnostics(document, lambda d: len(d) >= 3)
    assert codes(items) == ["EV400", "EV400", "EV400"]
    assert [d.range.start.line for d in items] == [7, 9, 11]


async def test_typing_updates_diagnostics(shared: Session) -> None:
    document = shared.open(shared.page("sessions.md"))
    assert await shared.diagnostics(document) == []
    # Break the summary: drop the closing quote of the double-quoted scalar.
    line = shared.page("sessions.md").read_text().split("\n")[5]
    shared.edit(document, 5, len(line) - 1, len(line), "")
    items = await shared.diagnostics(document, lambda d: bool(d))
    assert codes(items) == ["EV102"]
    shared.edit(document, 5, len(line) - 1, len(line) - 1, '"')
    assert await shared.diagnostics(document, lambda d: not d) == []


async def test_creating_a_page_clears_broken_links_in_open_pages(session: Session) -> None:
    document = session.open(session.page("auth.md"))
    await session.diagnostics(document, lambda d: "EV300" in codes(d))
    new_page = session.page("missing-page.md")
    new_page.write_text(
        "---\ntype: note\nstack: []\nstatus: active\nsummary: Now it exists.\n---\n",
        encoding="utf-8",
    )
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=new_page.as_uri(), type=types.FileChangeType.Created)]
        )
    )
    items = await session.diagnostics(document, lambda d: "EV300" not in codes(d))
    assert "EV300" not in codes(items)


async def test_pull_is_offered_only_when_the_client_can_be_asked_to_refresh(
    shared: Session,
) -> None:
    result = shared.client.init_result  # type: ignore[attr-defined]
    provider = result.capabilities.diagnostic_provider
    assert (provider is not None) == shared.pull


async def test_file_names_that_need_quoting_in_uris(session: Session) -> None:
    page = session.page("token rotation (v2).md")
    page.write_text(
        "---\ntype: note\nstack: []\nstatus: active\nsummary: Rotation.\n---\n\n[[nowhere]]\n",
        encoding="utf-8",
    )
    document = session.open(page)
    assert "%20" in document
    items = await session.diagnostics(document, lambda d: "EV300" in codes(d))
    assert codes(items) == ["EV300"]
    # The open buffer is what counts: fixing the link there clears the diagnostic.
    session.replace(document, page.read_text(encoding="utf-8").replace("nowhere", "auth"))
    assert await session.diagnostics(document, lambda d: not d) == []


async def test_an_edit_lands_on_the_line_the_client_counts(shared: Session) -> None:
    # U+2028 is no line break for LSP clients (only \n, \r\n and \r are); an edit on the line
    # after it must land there, and the link it adds be reported where the client sees it.
    head = "---\ntype: note\nstack: []\nstatus: active\nsummary: Separators.\n---\n\n"
    text = head + "one\u2028two\nthree\n"
    document = shared.open(shared.page("separators.md"), text)
    assert await shared.diagnostics(document) == []
    shared.edit(document, 8, 0, 0, "[[nowhere]] ")
    items = await shared.diagnostics(document, lambda d: "EV300" in codes(d))
    missing = next(d for d in items if d.code == "EV300")
    assert (missing.range.start.line, missing.range.start.character) == (8, 2)
