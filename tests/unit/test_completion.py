"""Completion candidates without a server: link contexts, replaced columns, frontmatter."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import pytest

from echoes_lsp.engine.catalog import catalog
from echoes_lsp.engine.completion_candidates import Candidate, Completions, complete
from echoes_lsp.engine.vault import Vault

from .helpers import make_vault, page, page_path


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return make_vault(
        tmp_path,
        {
            "auth": page(
                "Authentication boundaries.",
                "# Auth\n\n## Tokens\n\nText ^blk\n",
                type_="architecture",
                stack="[python, postgresql]",
            ),
            "auth-legacy": page(
                "Old auth.",
                "> [!warning] DEPRECATED\n> Use [[auth]].\n",
                status="deprecated",
                type_="architecture",
            ),
            "sessions": page(
                "Session storage and rotation.",
                "# Sessions\n",
                type_="architecture",
                stack="[python]",
            ),
            "café": page("Coffee notes.", "", type_="note", status="draft", stack="[go]"),
        },
        assets=["diagram.png", "sub/chart.svg", "other/chart.svg"],
    )


def run(
    vault: Vault, text: str, column: Optional[int] = None, line: int = 0, is_page: bool = False
) -> Optional[Completions]:
    lines = text.split("\n")
    return complete(vault, text, line, len(lines[line]) if column is None else column, is_page)


def labels(found: Optional[Completions]) -> List[str]:
    assert found is not None
    return [c.label for c in found.items]


def pick(found: Optional[Completions], label: str) -> Candidate:
    assert found is not None
    return next(c for c in found.items if c.label == label)


def test_pages_rank_and_replace_the_typed_text(vault: Vault) -> None:
    found = run(vault, "See [[au")
    assert labels(found)[:2] == ["auth", "auth-legacy"]
    auth = pick(found, "auth")
    assert (auth.start, auth.end, auth.new_text) == (6, 8, "auth]]")
    assert auth.detail == "Authentication boundaries."
    assert auth.documentation is not None and "architecture" in auth.documentation
    assert "postgresql" in auth.documentation
    legacy = pick(found, "auth-legacy")
    assert legacy.deprecated and legacy.sort_text is not None and auth.sort_text is not None
    assert legacy.sort_text > auth.sort_text


def test_deprecated_pages_sort_last_even_when_they_score_higher(vault: Vault) -> None:
    found = run(vault, "[[auth-l")
    assert labels(found) == ["auth-legacy"]
    found = run(vault, "[[")
    assert labels(found)[-1] == "auth-legacy"


def test_closing_brackets(vault: Vault) -> None:
    closed = pick(run(vault, "[[se]] tail", 4), "sessions")
    assert (closed.start, closed.end, closed.new_text) == (2, 4, "sessions")
    middle = pick(run(vault, "[[sexx]] tail", 3), "sessions")  # cursor inside the name
    assert (middle.start, middle.end, middle.new_text) == (2, 6, "sessions")
    before_anchor = pick(run(vault, "[[se#Sessions]]", 4), "sessions")
    assert (before_anchor.end, before_anchor.new_text) == (4, "sessions")
    open_ended = pick(run(vault, "[[se and more", 4), "sessions")
    assert (open_ended.end, open_ended.new_text) == (4, "sessions]]")


def test_unicode_names_match_in_any_normal_form(vault: Vault) -> None:
    assert labels(run(vault, "[[CAFE\u0301"))[:1] == ["café"]
    assert labels(run(vault, "[[Café"))[:1] == ["café"]


def test_summary_only_matches_survive_client_filtering(vault: Vault) -> None:
    found = run(vault, "[[rotation")
    assert labels(found) == ["sessions"]
    assert pick(found, "sessions").filter_text == "rotation sessions"


def test_cap_and_incomplete(tmp_path: Path) -> None:
    many = make_vault(tmp_path, {f"topic-{n:04d}": page(f"Topic {n}.") for n in range(300)})
    found = complete(many, "[[", 0, 2, False, limit=50)
    assert found is not None and len(found.items) == 50 and found.incomplete
    found = complete(many, "[[topic-029", 0, 11, False, limit=50)
    # Ten names start with the query; a few more hold its letters in order (topic-0029).
    assert found is not None
    assert labels(found)[:10] == [f"topic-{n:04d}" for n in range(290, 300)]
    scattered = [29, 129, 209, 219, 229, 239, 249, 259, 269, 279, 289]
    assert sorted(labels(found)[10:]) == [f"topic-{n:04d}" for n in scattered]
    assert not found.incomplete


def test_headings_blocks_and_aliases(vault: Vault) -> None:
    assert labels(run(vault, "[[auth#")) == ["Auth", "Tokens"]
    tokens = pick(run(vault, "[[auth#To"), "Tokens")
    assert (tokens.start, tokens.end, tokens.new_text) == (7, 9, "Tokens]]")
    block = pick(run(vault, "[[Auth#^b"), "blk")
    assert (block.start, block.end, block.new_text) == (8, 9, "blk]]")
    assert labels(run(vault, "[[nowhere#")) == []
    assert labels(run(vault, "[[auth|")) == ["Auth", "auth"]
    assert labels(run(vault, "[[auth#Tokens|")) == ["Auth", "auth"]


def test_assets_come_first_in_embeds(vault: Vault) -> None:
    found = run(vault, "![[")
    names = labels(found)
    assert names[:3] == ["diagram.png", "other/chart.svg", "sub/chart.svg"]  # ambiguous: with path
    assert "auth" in names  # pages can be embedded too
    assert labels(run(vault, "![[diag"))[:1] == ["diagram.png"]


def test_no_completion_in_code_or_plain_text(vault: Vault) -> None:
    assert run(vault, "`[[se") is None
    assert run(vault, "`a` `[[se") is None
    assert run(vault, "```\n[[se", line=1) is None
    assert run(vault, "plain text") is None
    assert run(vault, "[[done]] after") is None
    assert complete(vault, "x", 5, 0, False) is None
    assert complete(vault, "x", -1, 0, False) is None


FRONT = "---\ntype: \nstatus: dr\nstack: [python, \n\nsummary: S.\n---\n"


def test_frontmatter_values_by_use(vault: Vault) -> None:
    assert labels(run(vault, FRONT, line=1, is_page=True)) == ["architecture", "note"]
    status = run(vault, FRONT, line=2, is_page=True)
    assert labels(status) == ["active", "deprecated", "draft"]
    draft = pick(status, "draft")
    assert (draft.start, draft.end, draft.new_text) == (8, 10, "draft")
    no_space = pick(run(vault, "---\nstatus:\n---\n", line=1, is_page=True), "active")
    assert (no_space.start, no_space.end, no_space.new_text) == (7, 7, " active")
    stack = run(vault, FRONT, line=3, is_page=True)
    assert labels(stack) == ["go", "postgresql"]  # python is listed already
    bare = run(vault, "---\nstack: \n---\n", line=1, is_page=True)
    assert pick(bare, "python").new_text == "[python]"


def test_block_stack_items_leave_out_the_other_items_only(vault: Vault) -> None:
    text = "---\ntype: note\nstack:\n  - go\n  - python\nsummary: S.\n---\n"
    found = run(vault, text, line=4, is_page=True)
    assert labels(found) == ["python", "postgresql"]  # `go` is listed on another line
    item = pick(found, "python")
    assert (item.start, item.end, item.new_text) == (4, 10, "python")


def test_frontmatter_keys_missing_only(vault: Vault) -> None:
    keys = run(vault, FRONT, line=4, column=0, is_page=True)
    assert labels(keys) == []  # every required key is present
    partial = run(vault, "---\nty\nsummary: S.\n---\n", line=1, is_page=True)
    assert labels(partial) == ["type", "stack", "status"]
    assert pick(partial, "type").new_text == "type: "
    assert (pick(partial, "type").start, pick(partial, "type").end) == (0, 2)


def test_catalog_follows_edits(vault: Vault) -> None:
    before = catalog(vault)
    vault.open(page_path(vault, "sessions"), page("Rewritten summary.", "# Sessions\n"))
    assert pick(run(vault, "[[sess"), "sessions").detail == "Rewritten summary."
    vault.open(page_path(vault, "zeta"), page("New page."))
    assert "zeta" in labels(run(vault, "[[ze"))
    vault.remove(page_path(vault, "zeta"))
    assert "zeta" not in labels(run(vault, "[["))
    assert catalog(vault) is before
