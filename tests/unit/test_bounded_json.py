"""The runtime's one bounded JSON reader: sizes, depth (checked before parsing, without
recursion), strings whose brackets do not count, and the errors it gives."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from echoes_lsp.runtime import echoes_vault as rules

LIMIT = 1 << 20


def nested(depth: int, opening: str = "[", closing: str = "]") -> str:
    return opening * depth + closing * depth


def test_exactly_the_depth_limit_is_read_and_one_more_is_refused() -> None:
    assert rules.load_json(nested(64), LIMIT) is not None
    with pytest.raises(rules.BadJson, match="nests deeper than 64 levels"):
        rules.load_json(nested(65), LIMIT)


@pytest.mark.parametrize("depth", [1000, 100_000, 1_000_000])
def test_deep_nesting_is_refused_before_parsing(depth: int) -> None:
    """The scan, not the parser's RecursionError (whose depth depends on the caller's stack),
    gives the answer: its message names the limit."""
    with pytest.raises(rules.BadJson, match="nests deeper than 64 levels"):
        rules.load_json(nested(depth), 64 * LIMIT)
    with pytest.raises(rules.BadJson, match="nests deeper than 64 levels"):
        rules.load_json('{"a": ' * depth + "1" + "}" * depth, 64 * LIMIT)
    with pytest.raises(rules.BadJson, match="nests deeper than 64 levels"):
        rules.load_json("[" * depth, 64 * LIMIT)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"text": "[" * 5000 + '\\" [[[ "' + "{" * 5000, "list": [["x"]]})
    assert rules.load_json(text, LIMIT)["list"] == [["x"]]
    escaped = json.dumps(["\\", "[" * 200, '\\\\"' * 50, nested(100)])
    assert rules.load_json(escaped, LIMIT)[1] == "[" * 200


def test_wide_but_shallow_json_is_read() -> None:
    wide = json.dumps([[{"a": [1]}] for _ in range(20_000)])
    assert len(rules.load_json(wide, LIMIT)) == 20_000


@pytest.mark.parametrize(
    "data, words",
    [
        (b"x" * (LIMIT + 1), "larger than 1 MiB"),
        (b'{"a": "\xff"}', "not valid UTF-8 (byte 7)"),
        (b'{"a": }', "not valid JSON (Expecting value)"),
        (b'{"a": "\\ud800"}', "half of a surrogate pair"),
    ],
)
def test_each_refusal_says_why(data: bytes, words: str) -> None:
    with pytest.raises(rules.BadJson, match=words.replace("(", r"\(").replace(")", r"\)")):
        rules.load_json(data, LIMIT)


def test_the_kind_and_surrogates_are_checked_only_when_asked() -> None:
    with pytest.raises(rules.BadJson, match="not a JSON object"):
        rules.load_json("[1]", LIMIT, kind=dict)
    assert rules.load_json('["\\ud83d\\ude00"]', LIMIT) == ["\U0001f600"]  # a whole pair
    assert rules.load_json('["\\ud800"]', LIMIT, whole_text=False) == ["\ud800"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab'),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(alphabet='[]{}"\\a'), children, max_size=4)
    ),
    max_leaves=40,
)


def depth_of(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    return 0


@given(json_values, st.integers(min_value=1, max_value=6))
def test_the_scan_agrees_with_the_true_depth(value: object, limit: int) -> None:
    text = json.dumps(value)
    if depth_of(value) <= limit:
        assert rules.load_json(text, LIMIT, depth=limit) == value
    else:
        with pytest.raises(rules.BadJson, match=f"nests deeper than {limit} levels"):
            rules.load_json(text, LIMIT, depth=limit)


# --- settings files: TOML's strings and comments left out of the depth scan --------------------


def toml_structure(text: str) -> str:
    """A plain reference: TOML text without its strings and comments, one character at a time."""
    out, at = [], 0
    while at < len(text):
        char = text[at]
        if text.startswith(('"""', "'''"), at):
            end = text.find(text[at : at + 3], at + 3)
            at = len(text) if end < 0 else end + 3
        elif char == '"':
            at += 1
            while at < len(text) and text[at] not in '"\n':
                at += 2 if text[at] == "\\" and text[at + 1 : at + 2] not in ("", "\n") else 1
            at += 1 if text[at : at + 1] == '"' else 0
        elif char == "'":
            end = text.find("'", at + 1)
            line = text.find("\n", at + 1)
            stop = min(e for e in (end, line, len(text)) if e >= 0)
            at = stop + 1 if stop == end else stop
        elif char == "#":
            line = text.find("\n", at)
            at = len(text) if line < 0 else line
        else:
            out.append(char)
            at += 1
    return "".join(out)


@given(st.text(alphabet="\"'#\\\n[]{}a= ", max_size=60))
def test_toml_strings_and_comments_are_left_out_as_toml_reads_them(text: str) -> None:
    from echoes_lsp.cli.project_config import TOML_TEXT

    assert TOML_TEXT.sub("", text) == toml_structure(text)


@pytest.mark.parametrize(
    "text",
    ['"\\' * 100_000, '"' + "\\" * 200_000, "'\n" * 100_000, '"""x' * 50_000, "#" * 200_000],
    ids=["escaped-quotes", "backslashes", "unclosed-literals", "triple-quotes", "comment"],
)
def test_a_toml_scan_of_hostile_text_ends(text: str) -> None:
    """Every match the scan begins succeeds (an unclosed string runs to the end of its line), so
    no position is read again: these 200 KB texts took minutes with the first expression."""
    from echoes_lsp.cli.project_config import TOML_TEXT

    assert len(TOML_TEXT.sub("", text)) < len(text)
