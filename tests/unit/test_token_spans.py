"""The pure parts of semantic tokens and inlay hints: which spans a page's links and keys get,
with which modifiers, how a range picks its links, and what a hint after a link says."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest

from echoes_lsp.engine.hint_texts import (
    BLOCK_TEXT_LIMIT,
    HintMaker,
    block_first_line,
    shown_text,
)
from echoes_lsp.engine.markdown import BlockId, scan
from echoes_lsp.engine.token_spans import (
    ALIAS,
    BLOCK,
    DEPRECATED,
    EMBED,
    HEADING,
    KEY,
    TARGET,
    TOKEN_MODIFIERS,
    TOKEN_TYPES,
    UNKNOWN,
    UNRESOLVED,
    Resolver,
    all_spans,
    key_spans,
    links_between,
    span_steps,
)
from echoes_lsp.engine.vault import Vault

from .helpers import make_vault, page, page_path

BODY = (
    "# Home\n\n"
    "See [[target#Part|the part]] and [[target#^blk]], [[gone]], [[old]].\n"
    "Missing: [[target#Nope]] [[target#^nope]] ![[pic.png]] ![[lost.png]] ![[target]].\n"
    "Own: [[#Home]] and [[#Away]].\n"
)
TARGET_BODY = "# Target\n\n## Part\n\nFirst line of it\nsecond line. ^blk\n"
OLD_BODY = "> [!warning] DEPRECATED\n> Use [[target]].\n\n# Old\n"


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return make_vault(
        tmp_path,
        {
            "home": page(body=BODY),
            "target": page(body=TARGET_BODY),
            "old": page(body=OLD_BODY, status="deprecated"),
        },
        assets=["pic.png"],
    )


def spans_of(vault: Vault, stem: str) -> List[Tuple[str, str, int]]:
    """(text, type, modifiers) of every link span of a page."""
    path = page_path(vault, stem)
    entry = vault.entry(path)
    assert entry is not None and entry.structure is not None
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    resolver = Resolver(vault, entry, entry.structure)
    return [
        (lines[s.line][s.start : s.end], TOKEN_TYPES[s.kind], s.modifiers)
        for s in all_spans(resolver, entry.structure.links)
    ]


def test_every_link_part_gets_its_type_and_modifiers(vault: Vault) -> None:
    assert spans_of(vault, "home") == [
        ("target", TOKEN_TYPES[TARGET], 0),
        ("Part", TOKEN_TYPES[HEADING], 0),
        ("the part", TOKEN_TYPES[ALIAS], 0),
        ("target", TOKEN_TYPES[TARGET], 0),
        ("^blk", TOKEN_TYPES[BLOCK], 0),
        ("gone", TOKEN_TYPES[TARGET], UNRESOLVED),
        ("old", TOKEN_TYPES[TARGET], DEPRECATED),
        ("target", TOKEN_TYPES[TARGET], 0),
        ("Nope", TOKEN_TYPES[HEADING], UNRESOLVED),
        ("target", TOKEN_TYPES[TARGET], 0),
        ("^nope", TOKEN_TYPES[BLOCK], UNRESOLVED),
        ("pic.png", TOKEN_TYPES[EMBED], 0),
        ("lost.png", TOKEN_TYPES[EMBED], UNRESOLVED),
        ("target", TOKEN_TYPES[EMBED], 0),
        ("Home", TOKEN_TYPES[HEADING], 0),
        ("Away", TOKEN_TYPES[HEADING], UNRESOLVED),
    ]


def test_the_legend_uses_standard_types_and_the_standard_deprecated_modifier() -> None:
    standard = {
        "namespace", "type", "class", "enum", "interface", "struct", "typeParameter",
        "parameter", "variable", "property", "enumMember", "event", "function", "method",
        "macro", "keyword", "modifier", "comment", "string", "number", "regexp", "operator",
        "decorator",
    }  # fmt: skip
    assert set(TOKEN_TYPES) <= standard
    assert len(set(TOKEN_TYPES)) == len(TOKEN_TYPES)
    assert TOKEN_MODIFIERS[0] == "deprecated" and DEPRECATED == 1


def test_frontmatter_keys_mark_the_ones_the_protocol_does_not_name() -> None:
    lines = (
        "---\ntype: note\nowner: me\nstack: []\nstatus: active\nsummary: s\n---\nowner: x".split(
            "\n"
        )
    )
    found = [(lines[s.line][s.start : s.end], s.kind, s.modifiers) for s in key_spans(lines)]
    assert found == [
        ("type", KEY, 0),
        ("owner", KEY, UNKNOWN),
        ("stack", KEY, 0),
        ("status", KEY, 0),
        ("summary", KEY, 0),
    ]
    assert [s.line for s in key_spans(lines, 2, 3)] == [2, 3]
    assert key_spans(["# no frontmatter"]) == []


def test_a_range_reads_only_the_links_of_its_lines() -> None:
    text = "".join(f"line {n} [[a{n}]] [[b{n}]]\n" for n in range(1000))
    links = scan(text).links
    chosen = links_between(links, 500, 501)
    assert [link.target for link in chosen] == ["a500", "b500", "a501", "b501"]
    assert links_between(links, 2000, 3000) == []
    assert [link.target for link in links_between(links, 0, 0)] == ["a0", "b0"]


def test_a_full_request_yields_between_slices_and_stops_at_its_limit(vault: Vault) -> None:
    text = "".join(f"[[p{n}]]\n" for n in range(100))
    links = scan(text).links
    resolver = Resolver(vault, None, scan(""))
    steps = span_steps(resolver, links, None, step=30)
    yields = 0
    while True:
        try:
            next(steps)
            yields += 1
        except StopIteration as done:
            spans, cut = done.value
            break
    assert yields == 4 and len(spans) == 100 and not cut
    steps = span_steps(resolver, links, 45, step=30)
    with pytest.raises(StopIteration) as done:
        while True:
            next(steps)
    assert len(done.value.value[0]) == 45 and done.value.value[1]


def test_the_first_line_of_a_block() -> None:
    lines = [
        "# Head",
        "First line",
        "second line ^p",
        "",
        "- item one ^li",
        "- item two",
        "",
        "> quoted text",
        "> more",
        "",
        "^q",
    ]
    assert block_first_line(lines, BlockId("p", 2, 12, 14)) == "First line"
    assert block_first_line(lines, BlockId("li", 4, 11, 14)) == "- item one ^li"
    assert block_first_line(lines, BlockId("q", 10, 0, 2)) == "> quoted text"


def test_the_shown_text_is_masked_before_it_is_cut() -> None:
    secret = "AKIA" + "ABCDEFGHIJKLMNOP"
    shown = shown_text(f"> - the key is {secret} ^id")
    assert secret not in shown and shown.startswith("the key is ")
    long = shown_text("word " * 40)
    assert len(long) <= BLOCK_TEXT_LIMIT and long.endswith("…")
    cut_in_secret = shown_text("x" * (BLOCK_TEXT_LIMIT - 8) + " " + secret)
    assert "AKIA" not in cut_in_secret


def test_hints_after_block_links_and_deprecated_links(vault: Vault) -> None:
    path = page_path(vault, "home")
    entry = vault.entry(path)
    assert entry is not None and entry.structure is not None
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    reads: List[str] = []

    def lines_of(other: str) -> List[str]:
        reads.append(other)
        return Path(other).read_text(encoding="utf-8").split("\n")

    maker = HintMaker(vault, entry, entry.structure, lines, lines_of)
    hints = maker.hints(entry.structure.links, True, True)
    labels = [(lines[h.line][: h.column].rsplit(" ", 1)[-1], h.label) for h in hints]
    assert labels == [("[[target#^blk]]", "First line of it"), ("[[old]]", "deprecated → target")]
    assert reads == [page_path(vault, "target")]  # one read for the page, whatever the links
    assert maker.hints(entry.structure.links, False, True)[0].label == "deprecated → target"
    assert maker.hints(entry.structure.links, True, False)[0].label == "First line of it"
    assert maker.hints(entry.structure.links, False, False) == []


def test_a_long_text_is_split_once_per_version() -> None:
    """Every range request on a page of 200,000 lines would split it again (30 ms)."""
    from echoes_lsp.server.features.document_context import SPLIT_ONCE, split_lines

    text = "x\n" * SPLIT_ONCE
    first = split_lines("/v/page.md", text)
    assert split_lines("/v/page.md", text) is first
    edited = text + "y"
    assert split_lines("/v/page.md", edited) == edited.split("\n")
    assert split_lines("/v/page.md", edited) is not first
    short = "a\nb"
    assert split_lines("/v/short.md", short) == ["a", "b"]
