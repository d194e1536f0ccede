"""The secret detector's pre-check is only a speed device: it never changes what is found."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import echoes_vault as rules
from tests.runtime.test_s17_secrets import SHAPES

# Pieces that assemble into credential shapes, near-misses and prose.
PIECES = [
    "ghp_",
    "gho_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "xoxb-",
    "xox",
    "sk-",
    "sk-ant-",
    "sk_live_",
    "rk_test_",
    "npm_",
    "hf_",
    "AKIA",
    "ASIA",
    "AIza",
    "eyJ",
    ".eyJ",
    "PRIVATE KEY",
    "-----BEGIN ",
    "-----",
    "://",
    "postgres://",
    "https://hooks.slack.com/services/T",
    "/B",
    "user:",
    "pa55w0rd",
    "@db.internal",
    "A1b2C3d4E5f6G7h8I9j0",
    "abcdefghijklmnopqrstuvwxyz0123456789",
    "Z" * 16,
    "1234567890123-",
    " ",
    "\n",
    "_",
    "-",
    ".",
    "/",
    ":",
    "@",
    "J",
    "K",
    "A",
    "x",
    "The ledger",
    " uses keys",
    "example",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_the_pre_check_never_changes_the_hits(parts: list) -> None:
    text = "".join(parts)
    every_kind = {kind for kind, _pattern in rules.SECRET_PATTERNS}
    assert rules.find_secrets(text) == rules._match_secrets(text, every_kind)


def test_every_kind_has_a_gate_and_every_gate_needs_its_character() -> None:
    gated = {kind for _sign, _search, kinds in rules._SECRET_GATES for kind in kinds}
    assert gated == {kind for kind, _pattern in rules.SECRET_PATTERNS}
    for sign, search, kinds in rules._SECRET_GATES:
        assert not search("no such character " * 50) or sign in "no such character", kinds


@pytest.mark.parametrize("value", list(SHAPES.values()), ids=list(SHAPES))
def test_each_required_shape_opens_its_gate(value: str) -> None:
    found = rules.find_secrets(f"key = {value}")
    assert [hit.kind for hit in found] == [kind for kind, shape in SHAPES.items() if shape == value]
