"""Semantic tokens over stdio, under both clients' capabilities: the legend, the type and
modifiers of each link part and frontmatter key at its position (in the negotiated units), the
range request, an unsaved buffer, and a page of many links (range bounded, full capped)."""

from __future__ import annotations

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
