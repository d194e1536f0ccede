"""A deferred structure finds the same links as a full scan, wherever it takes its shortcuts."""

from __future__ import annotations

from typing import List

from hypothesis import given, settings
from hypothesis import strategies as st

from echoes_lsp.engine.markdown import Link, Structure, scan

PIECES = [
    "[[a]]",
    "[[b#Head]]",
    "[[c|alias]]",
    "![[d]]",
    "![[img.png]]",
    "[[a]]]]",
    "[[[[b]]",
    "[[",
    "]]",
    "[",
    "]",
    "!",
    "`",
    "``",
    "`[[a]]`",
    "```\n",
    "~~~\n",
    "```py\n",
    "\n",
    "\n\n",
    " ",
    "text ",
    "# Title\n",
    "[[e#^blk]]",
    "[[ a ]]",
    "[[a]]x[[a]]",
    "\t",
    "[[]]",
    "[[f\n]]",
    "- [[g]]\n",
    "> [[h]]\n",
]


def inner_of(text: str, link: Link) -> str:
    line = text.split("\n")[link.line]
    return line[link.start : link.end].lstrip("!")[2:-2]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=40),
    st.integers(min_value=0, max_value=4),
    st.sampled_from([(), ("a",), ("a", "b#Head", "img.png"), ("c|alias", " a ", "g", "h")]),
)
def test_links_except_matches_a_full_scan(parts: List[str], first: int, skipped: tuple) -> None:
    text = "".join(parts)

    def skip(inner: str) -> bool:
        return inner in skipped

    expected = [link for link in scan(text, first).links if not skip(inner_of(text, link))]
    deferred = Structure.deferred(text, first)
    targets = deferred.link_targets()
    assert deferred.links_except(skip) == expected
    assert Structure.deferred(text, first).links_except(skip, targets) == expected
    assert Structure.deferred(lambda: text, first).links == scan(text, first).links


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.integers(min_value=0, max_value=4))
def test_link_targets_cover_every_link(parts: List[str], first: int) -> None:
    text = "".join(parts)
    targets = Structure.deferred(text, first).link_targets() or []
    for link in scan(text, first).links:
        assert inner_of(text, link) in targets
