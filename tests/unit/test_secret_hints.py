"""The secret detector's pre-check is only a speed device: it never changes what is found."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from echoes_lsp.runtime import echoes_vault as rules
from tests.runtime.test_s17_secrets import MORE_SHAPES, SHAPES

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
    "AccountKey=",
    "aws_secret_access_key = ",
    "HEROKU_API_KEY=",
    "12345678-1234-1234-1234-123456789abc",
    ":AA",
    "123456789",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3kT9aB1x",
    "Ab3+/" * 18,
    "==",
    "SG.",
    "pypi-AgE",
    "HRKU-",
    "SK",
    "AC",
    "0123456789abcdef",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_the_pre_check_never_changes_the_hits(parts: list) -> None:
    text = "".join(parts)
    every_kind = {shape.kind for shape in rules.SECRET_SHAPES}
    assert rules.find_secrets(text) == rules._match_secrets(text, every_kind)


# Whole shapes of every kind, their halves, and the glue around labelled values: random texts
# built from these hold real credentials of each kind, near-misses and ordinary `key: value` lines.
WHOLE_PIECES = [
    *SHAPES.values(),
    *(value for _kind, value in MORE_SHAPES),
    *(value[: len(value) // 2] for value in SHAPES.values()),
    *(value[len(value) // 2 :] for value in SHAPES.values()),
    "123456789:AAHdq-cvCH1vGWJxfSeofSAs0K5PALDsawq",
    "aws_secret_access_key",
    "AWS_SECRET_ACCESS_KEY",
    "Aws-Secret",
    "heroku_token",
    "HerokuKey",
    "type: note\n",
    ": ",
    ":",
    "=",
    " = ",
    "\t",
    '"',
    "'",
    " ",
    "\n",
    ".",
    "-",
    "x",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(WHOLE_PIECES), max_size=12))
def test_the_pre_check_never_changes_the_hits_for_any_shape(parts: list) -> None:
    text = "".join(parts)
    every_kind = {shape.kind for shape in rules.SECRET_SHAPES}
    assert rules.find_secrets(text) == rules._match_secrets(text, every_kind)


@pytest.mark.parametrize("piece", WHOLE_PIECES)
def test_the_pre_check_never_changes_the_hits_around_each_piece(piece: str) -> None:
    every_kind = {shape.kind for shape in rules.SECRET_SHAPES}
    for text in (piece, f"key: {piece}\n", f"key={piece} ", f"a.{piece}.b", f"\t'{piece}'"):
        assert rules.find_secrets(text) == rules._match_secrets(text, every_kind), text


def test_every_kind_has_a_gate_and_every_gate_needs_its_character() -> None:
    gated = {kind for _sign, _search, kinds in rules._SECRET_GATES for kind in kinds}
    assert gated == {shape.kind for shape in rules.SECRET_SHAPES}
    for sign, search, kinds in rules._SECRET_GATES:
        assert not search("no such character " * 50) or sign in "no such character", kinds


@pytest.mark.parametrize("value", list(SHAPES.values()), ids=list(SHAPES))
def test_each_required_shape_opens_its_gate(value: str) -> None:
    found = rules.find_secrets(f"key = {value}")
    assert [hit.kind for hit in found] == [kind for kind, shape in SHAPES.items() if shape == value]


# The patterns as first written, with `\b` in front: the oracle for the faster forms and for
# the shapes that read runs with parts.
PLAIN_PATTERNS = {
    "private key": r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    "AWS access key ID": r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
    "GitHub token": r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b",
    "GitHub fine-grained token": r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b",
    "GitLab token": r"\bgl(?:pat|dt|ptt|rt|cbt|oas)-[A-Za-z0-9_-]{20,}\b",
    "Slack token": r"\bxox[abposr]-[0-9]+-(?:[0-9A-Za-z]+-){0,3}[0-9A-Za-z]{6,}\b",
    "Slack webhook": r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}",
    "Stripe key": r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b",
    "npm token": r"\bnpm_[A-Za-z0-9]{36}\b",
    "Hugging Face token": r"\bhf_[A-Za-z]{34}\b",
    "Google API key": r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])",
    "Anthropic API key": r"\bsk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{20,}",
    "API key (sk-)": (
        r"\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9]{32,}(?![\w-]))"
    ),
    "PyPI token": r"\bpypi-AgE[A-Za-z0-9_-]{50,}",
    "SendGrid API key": r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![\w-])",
    "Discord bot token": (
        r"(?<![\w-])[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![\w-])"
    ),
    "Twilio key": r"\b(?:SK[0-9a-fA-F]{32}|AC[0-9a-f]{32})(?![0-9A-Za-z_])",
    "JSON Web Token": r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}",
    "credential URI": (
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@'\"<>]{1,64}:[^\s/@'\"<>]{1,128}@[^\s/@'\"<>]+"
    ),
}

SHAPE_PIECES = [
    *PIECES,
    "xsk-ant-",
    "_sk-ant-",
    "é",
    "ghp_",
    "Zhf_",
    "http",
    "s3://",
    "://",
    "a:b@c",
    "u:p@h ",
    "x" * 21,
    "postgres",
    "ab",
    "1" * 22,
    "a" * 36,
    "A1b2" * 9,
    "sk_live_",
    "rk_test_",
    "proj-",
    "sk-ant-api03-",
    "pypi-AgE",
    "SG.",
    "HRKU-",
    "SK",
    "AC",
    "0123456789abcdef",
    "M",
    "MTk4NjIyNDgzNDcxOTI1MjQ4",
    ".Cl2FMQ.",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(SHAPE_PIECES), max_size=30))
def test_fast_patterns_match_exactly_where_the_plain_ones_do(parts: list) -> None:
    import re

    text = "".join(parts)
    fast: dict = {}
    for shape in rules.SECRET_SHAPES:  # a kind may have more than one shape
        reader = rules._Reader(text)
        fast.setdefault(shape.kind, []).extend(rules._shape_matches(shape, reader))
    for kind, plain in PLAIN_PATTERNS.items():
        assert sorted(fast[kind]) == [m.span() for m in re.finditer(plain, text)], kind
