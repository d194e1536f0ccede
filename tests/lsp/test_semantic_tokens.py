"""Semantic tokens over stdio, under both clients' capabilities: the legend, the type and
modifiers of each link part and frontmatter key at its position (in the negotiated units), the
range request, an unsaved buffer, and a page of many links (range bounded, full capped)."""

from __future__ import annotations

import asyncio
from typing import List, Optional, Sequence, Set, Tuple

from lsprotocol import types

from echoes_lsp.engine.token_spans import FULL_LIMIT, TOKEN_MODIFIERS, TOKEN_TYPES

from .conftest import Session
from .nav_helpers import covered, doc, request

# (covered text, token type, modifiers)
Token = Tuple[str, str, Set[str]]


def decode(data: Sequence[int]) -> List[Tuple[int, int, int, str, Set[str]]]:
    """(line, start, length, type, modifiers) of each token of the relative encoding."""
    found = []
    line = start = 0
    for index in range(0, len(data), 5):
        delta_line, delta_start, length, kind, bits = data[index : index + 5]
        line += delta_line
        start = start + delta_start if delta_line == 0 else delta_start
        modifiers = {name for bit, name in enumerate(TOKEN_MODIFIERS) if bits & (1 << bit)}
        found.append((line, start, length, TOKEN_TYPES[kind], modifiers))
    return found


def described(session: Session, text: str, data: Sequence[int]) -> List[Token]:
    """Each token as the text it covers, its type and modifiers."""
    result = []
    for line, start, length, kind, modifiers in decode(data):
        span = types.Range(
            start=types.Position(line=line, character=start),
            end=types.Position(line=line, character=start + length),
        )
        result.append((covered(session, text, span), kind, modifiers))
    return result


async def full(session: Session, uri: str) -> Optional[types.SemanticTokens]:
    return await request(
        session.client.text_document_semantic_tokens_full_async(
            types.SemanticTokensParams(text_document=doc(uri))
        )
    )


async def in_range(
    session: Session, uri: str, first: int, last: int
) -> Optional[types.SemanticTokens]:
    return await request(
        session.client.text_document_semantic_tokens_range_async(
            types.SemanticTokensRangeParams(
                text_document=doc(uri),
                range=types.Range(
                    start=types.Position(line=first, character=0),
                    end=types.Position(line=last, character=0),
                ),
            )
        )
    )


KEYS: List[Token] = [
    ("type", "property", set()),
    ("stack", "property", set()),
    ("status", "property", set()),
    ("summary", "property", set()),
]


async def test_the_legend_is_published(shared: Session) -> None:
    provider = shared.client.init_result.capabilities.semantic_tokens_provider  # type: ignore[attr-defined]
    assert isinstance(provider, types.SemanticTokensOptions)
    assert list(provider.legend.token_types) == list(TOKEN_TYPES)
    assert list(provider.legend.token_modifiers) == list(TOKEN_MODIFIERS)
    assert provider.full and provider.range
    assert isinstance(provider.full, types.SemanticTokensFullDelta) and provider.full.delta


async def test_every_link_part_and_key_has_its_type_and_modifiers(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    tokens = await full(shared, shared.open(page))
    assert tokens is not None
    assert described(shared, text, tokens.data) == KEYS + [
        ("sessions", "namespace", set()),
        ("legacy-auth", "namespace", {"deprecated"}),
        ("sessions", "namespace", set()),
        ("Token lifetime", "function", set()),
        ("sessions", "namespace", set()),
        ("^rotation", "enumMember", set()),
        ("missing-page", "namespace", {"unresolved"}),
        ("sessions", "namespace", set()),
        ("No such heading", "function", {"unresolved"}),
        ("diagram.png", "macro", set()),
        ("missing.png", "macro", {"unresolved"}),
    ]


async def test_positions_after_non_ascii_text_are_in_the_client_units(shared: Session) -> None:
    page = shared.page("tokens.md")
    text = page.read_text(encoding="utf-8")
    tokens = await full(shared, shared.open(page))
    assert tokens is not None
    found = described(shared, text, tokens.data)
    assert found[len(KEYS) :] == [
        ("sessions", "namespace", set()),
        ("the session page", "string", set()),
        ("Sessions", "namespace", set()),
        ("token lifetime", "function", set()),
        ("sessions", "macro", set()),
        ("pages/auth.md", "namespace", set()),
        ("auth", "namespace", set()),
        ("Boundaries", "function", set()),
        ("boundary rules", "string", set()),
    ]
    line = text.split("\n").index("Naïve clients 🎫 read [[sessions|the session page]] first.")
    first = decode(tokens.data)[len(KEYS)]
    # "Naïve clients 🎫 read [[" is 23 code points: the emoji is two UTF-16 units; ï two bytes
    # and the emoji four in UTF-8
    expected = 27 if shared.kind == "neovim" else 24
    assert first[:2] == (line, expected)


async def test_a_range_holds_the_tokens_of_its_lines_only(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    line = text.split("\n").index(
        "This link is broken: [[missing-page]]. So is [[sessions#No such heading]]."
    )
    tokens = await in_range(shared, shared.open(page), line, line)
    assert tokens is not None
    assert described(shared, text, tokens.data) == [
        ("missing-page", "namespace", {"unresolved"}),
        ("sessions", "namespace", set()),
        ("No such heading", "function", {"unresolved"}),
    ]
    keys = await in_range(shared, page.resolve().as_uri(), 1, 2)
    assert keys is not None
    assert described(shared, text, keys.data) == KEYS[:2]


async def test_an_unsaved_buffer_and_an_unknown_key(shared: Session) -> None:
    page = shared.page("sessions.md")
    text = page.read_text(encoding="utf-8").replace(
        "status: active", "status: active\nowner: platform"
    )
    text += "\nNow also [[nowhere]] and [[legacy-auth#Legacy authentication]].\n"
    tokens = await full(shared, shared.open(page, text))
    assert tokens is not None
    found = described(shared, text, tokens.data)
    assert ("owner", "property", {"unknown"}) in found
    assert found[-3:] == [
        ("nowhere", "namespace", {"unresolved"}),
        ("legacy-auth", "namespace", {"deprecated"}),
        ("Legacy authentication", "function", set()),
    ]


HEAD = "---\ntype: note\nstack: []\nstatus: active\nsummary: Many links.\n---\n\n"


async def test_a_page_of_many_links_is_bounded(shared: Session) -> None:
    """A range costs its lines; a full answer stops at FULL_LIMIT tokens."""
    count = FULL_LIMIT + 10_000
    text = HEAD + "".join(f"See [[missing-{n}]].\n" for n in range(count))
    uri = shared.open(shared.page("many-links.md"), text)
    line = 7 + 40_000
    tokens = await in_range(shared, uri, line, line + 1)
    assert tokens is not None
    assert decode(tokens.data) == [
        (line, 6, len("missing-40000"), "namespace", {"unresolved"}),
        (line + 1, 6, len("missing-40001"), "namespace", {"unresolved"}),
    ]
    whole = await full(shared, uri)
    assert whole is not None
    assert len(whole.data) == FULL_LIMIT * 5
    assert decode(whole.data)[-1][0] == 7 + FULL_LIMIT - len(KEYS) - 1


async def delta(
    session: Session, uri: str, previous: str
) -> types.SemanticTokens | types.SemanticTokensDelta | None:
    return await request(
        session.client.text_document_semantic_tokens_full_delta_async(
            types.SemanticTokensDeltaParams(text_document=doc(uri), previous_result_id=previous)
        )
    )


EDITED = HEAD + "# Top\n\nSee [[sessions]], [[#Top]] and [[#^here]].\n\nA block. ^here\n"


async def test_the_rows_kept_between_requests_follow_each_edit(shared: Session) -> None:
    """After each edit, the full answer is the one the edited text earns: the edited line read
    again, a renamed heading unresolving a link on another line, a fence hiding the lines after
    it (each compared with a range over the whole page, made without kept rows)."""
    uri = shared.open(shared.page("edited-rows.md"), EDITED)
    lines = EDITED.split("\n")
    first = await full(shared, uri)
    assert first is not None
    assert described(shared, EDITED, first.data)[len(KEYS) :] == [
        ("sessions", "namespace", set()),
        ("Top", "function", set()),
        ("^here", "enumMember", set()),
    ]
    edits = [
        (9, "See [[nowhere]], [[#Top]] and [[#^here]]."),  # the line itself
        (7, "# Topper"),  # a heading another line links to
        (11, "A block."),  # a block another line links to
        (8, "```"),  # a fence: the lines after it are code
    ]
    for number, new in edits:
        shared.edit(uri, number, 0, len(lines[number]), new)
        lines[number] = new
        text = "\n".join(lines)
        again = await full(shared, uri)
        reference = await in_range(shared, uri, 0, len(lines))
        assert again is not None and reference is not None
        assert described(shared, text, again.data) == described(shared, text, reference.data)
    assert described(shared, text, again.data) == KEYS


async def test_a_frontmatter_never_closed_gives_tokens_in_line_order(shared: Session) -> None:
    """Its keys are no keys (the page is all body) and a link among them is a link: every
    answer's line deltas are non-negative (a key after a link once gave a delta of -1, written
    as 4095)."""
    text = "---\ntype: note\nSee [[sessions]] here.\nsummary: never closed\nAnd [[nowhere]].\n"
    uri = shared.open(shared.page("unclosed.md"), text)
    lines = text.split("\n")
    expected = [("sessions", "namespace", set()), ("nowhere", "namespace", {"unresolved"})]
    for _ in range(2):  # the first answer, then one made from kept rows after an edit
        tokens = await full(shared, uri)
        reference = await in_range(shared, uri, 0, len(lines))
        assert tokens is not None and reference is not None
        assert all(delta >= 0 for delta in tokens.data[0::5] + reference.data[0::5])
        assert described(shared, text, tokens.data) == expected
        assert described(shared, text, reference.data) == expected
        shared.edit(uri, 1, 0, len(lines[1]), lines[1])


async def test_a_delta_turns_the_last_answer_into_the_new_one(shared: Session) -> None:
    text = HEAD + "".join(f"Line {n} links [[sessions]] and [[page-{n}]].\n" for n in range(50))
    uri = shared.open(shared.page("delta-rows.md"), text)
    before = await full(shared, uri)
    assert before is not None and before.result_id
    shared.edit(uri, 30, 0, 0, "[[auth]] ")
    answer = await delta(shared, uri, before.result_id)
    assert isinstance(answer, types.SemanticTokensDelta)
    assert len(answer.edits) == 1
    edit = answer.edits[0]
    assert len(edit.data or []) < 20  # the edited line's tokens, not the page's
    data = list(before.data)
    data[edit.start : edit.start + edit.delete_count] = edit.data or []
    after_edit = await full(shared, uri)
    assert after_edit is not None and data == list(after_edit.data)
    unchanged = await delta(shared, uri, after_edit.result_id or "")
    assert isinstance(unchanged, types.SemanticTokensDelta) and not unchanged.edits
    stale = await delta(shared, uri, "an id never given")
    assert isinstance(stale, types.SemanticTokens) and stale.data == after_edit.data


async def test_a_page_created_on_disk_resolves_a_kept_row(session: Session) -> None:
    text = HEAD + "See [[brand-new]] here.\n"
    uri = session.open(session.page("waiting.md"), text)
    before = await full(session, uri)
    assert before is not None
    assert described(session, text, before.data)[-1] == ("brand-new", "namespace", {"unresolved"})
    created = session.page("brand-new.md")
    created.write_text(HEAD.replace("Many links.", "New."), encoding="utf-8")
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=created.resolve().as_uri(), type=types.FileChangeType.Created)
            ]
        )
    )
    for _ in range(100):
        after_change = await full(session, uri)
        assert after_change is not None
        if described(session, text, after_change.data)[-1] == ("brand-new", "namespace", set()):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the link stayed unresolved after its page was created")
