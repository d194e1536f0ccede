"""The page contract on long pages, whose frontmatter is found by splitting only the head."""

from __future__ import annotations

from echoes_lsp.runtime import echoes_vault as rules

BODY = "\n".join(f"Line {n} of a long body [[link-{n}]]." for n in range(400)) + "\n"


def page_with(extra_keys: int, tail: str = "") -> str:
    extra = "".join(f"key{n}: value {n}\n" for n in range(extra_keys))
    return f"---\ntype: note\nstack: []\nstatus: active\n{extra}summary: S.\n{tail}---\n\n{BODY}"


def test_a_long_frontmatter_on_a_long_page_is_read_whole() -> None:
    for extra in (0, 10, 11, 12, 40):
        info = rules.analyze_page(page_with(extra))
        assert info.valid, (extra, info.problems)
        assert info.summary == "S." and info.frontmatter is not None
        assert info.frontmatter.close_line == 5 + extra
        assert info.body_line == 6 + extra


def test_problems_deep_in_a_long_frontmatter_keep_their_lines() -> None:
    info = rules.analyze_page(page_with(30, tail="type: again\nnot a key line\n"))
    found = {(p.code, p.line) for p in info.problems}
    assert ("EV103", 35) in found and ("EV102", 36) in found


def test_an_unclosed_block_is_reported_after_reading_the_whole_page() -> None:
    text = "---\ntype: note\nstack: []\nstatus: active\nsummary: S.\n\n" + BODY
    codes = [p.code for p in rules.analyze_page(text).problems]
    assert "EV101" in codes
