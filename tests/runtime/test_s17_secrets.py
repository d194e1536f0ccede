"""Spec 17: credential-shaped text is refused by every authoring command; the value is never echoed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .conftest import PYTHON, ROOT, Runtime, daily_files, page, snapshot

# Synthetic shapes, assembled at run time so that no credential-looking literal sits in the source.
A36 = "a1B2c3D4e5" * 3 + "F6g7H8"
AWS_SECRET = "wJalrXUtnF" + "EMI/K7MDENG/bPxRfiCY" + "zQ3kT9aB1x"
SHAPES = {
    "private key": "-----BEGIN " + "RSA PRIVATE KEY-----",
    "AWS access key ID": "AKIA" + "Q3J7ZT2LMX4PRW8B",
    "AWS secret access key": "aws_secret_access_key = " + AWS_SECRET,
    "Azure storage account key": "AccountName=app;AccountKey=" + ("Ab3+/" * 18)[:86] + "==",
    "GitHub token": "ghp" + "_" + A36,
    "GitHub fine-grained token": "github" + "_pat_" + "1" * 22 + "_" + "a" * 59,
    "GitLab token": "glpat" + "-" + "x1y2z3" * 4,
    "Slack token": "xoxb" + "-123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
    "Stripe key": "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "npm token": "npm" + "_" + A36,
    "PyPI token": "pypi"
    + "-AgEIcHlwaS5vcmc"
    + "CJGQ2ZTNjNjE4LTk5YjAtNDE1ZS1hZjA2LWE1NTQ3MjQ5NzFlOAACKlsz",
    "Hugging Face token": "hf" + "_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
    "Google API key": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6q",
    "SendGrid API key": "SG"
    + ".ngeVfQFYQlKU0ufo8x5d1A."
    + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
    "Discord bot token": "MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "Telegram bot token": "123456789" + ":AA" + "HdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
    "Twilio key": "SK" + "0123456789abcdef" * 2,
    "Heroku API key": "HRKU" + "-AAbCdEf0123456789_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdefgh",
    "Anthropic API key": "sk" + "-ant-" + "api03-" + "Zx9" * 10,
    "API key (sk-)": "sk" + "-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2",
    "JSON Web Token": "eyJ"
    + "hbGciOiJIUzI1NiJ9.eyJ"
    + "zdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "credential URI": "postgres" + "://app:" + "s3cr3tPw" + "@db.internal:5432/app",
}
# Other spellings of some kinds, each found as exactly that kind.
MORE_SHAPES = [
    ("AWS secret access key", "AKIA" + "Q3J7ZT2LMX4PRW8B " + AWS_SECRET),
    ("Twilio key", "AC" + "fedcba9876543210" * 2),
    ("Heroku API key", "HEROKU_API_KEY=" + "12345678-1234-1234-1234-123456789abc"),
    ("API key (sk-)", "sk" + "-" + "T3BlbkFJ" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
]

BENIGN = [
    "The sha256 is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.",
    "Request id 123e4567-e89b-12d3-a456-426614174000 was retried.",
    "We use scikit-learn and the risk-assessment-framework-2024-edition for scoring.",
    "Connect with postgres://user:password@localhost/db in the example configuration.",
    "Commit 3f2c9a1b7e4d and tag v1.2.3 shipped; see https://example.com/docs?id=42.",
    "Ask the desk about the sk- prefix convention.",
    "Email alice@example.com about ASIA-PACIFIC rollout.",
]


def detect(texts: list) -> list:
    script = (
        "import json, sys\nsys.path.insert(0, sys.argv[1])\nimport echoes_vault as ev\n"
        "print(json.dumps([[h.kind for h in ev.find_secrets(t)] for t in json.loads(sys.stdin.read())]))\n"
    )
    import json

    process = subprocess.run(
        [PYTHON, "-c", script, str(ROOT / "runtime")],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(process.stdout)


def test_s17_detector_finds_every_required_kind() -> None:
    kinds = detect([f"key = {value}" for value in SHAPES.values()])
    for (expected, _value), found in zip(SHAPES.items(), kinds):
        assert found == [expected], (expected, found)


def test_s17_detector_ignores_ordinary_text() -> None:
    assert detect(BENIGN) == [[] for _ in BENIGN]


@pytest.mark.parametrize("kind", ["GitHub token", "credential URI", "private key"])
def test_s17_upsert_refuses_secrets_without_echoing_them(
    rt: Runtime, vault: Path, kind: str
) -> None:
    value = SHAPES[kind]
    before = snapshot(vault)
    error = rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "creds.md", "content": page(body=f"# Creds\n\ntoken: {value}\n")},
        code="secret",
    )
    assert kind in error["error"] and "line 10" in error["error"]
    assert value not in error["error"] and value[-12:] not in error["error"]
    assert snapshot(vault) == before


def test_s17_append_and_end_refuse_secrets(rt: Runtime, vault: Path) -> None:
    value = SHAPES["Stripe key"]
    before = snapshot(vault)
    error = rt.fail("append", "--payload", "-", payload={"entry": f"- key {value}"}, code="secret")
    assert value not in error["error"]
    rt.fail(
        "end",
        "--confirm-explicit-user-end",
        "--payload",
        "-",
        payload={"dailySummary": f"- {value}"},
        code="secret",
    )
    rt.fail(
        "end",
        "--confirm-explicit-user-end",
        "--payload",
        "-",
        payload={
            "dailySummary": "- fine",
            "pages": [{"filename": "p.md", "content": page(body=SHAPES["npm token"])}],
        },
        code="secret",
    )
    assert snapshot(vault) == before
    assert daily_files(vault) == []


def test_s17_fast_gate_covers_every_kind() -> None:
    """Every kind of credential has a gate in front of its pattern (the gates only save time:
    the unit tests show they never change what is found)."""
    process = subprocess.run(
        [
            PYTHON,
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); import echoes_vault as ev; "
            "print({k for _s, _f, ks in ev._SECRET_GATES for k in ks} "
            "== {shape.kind for shape in ev.SECRET_SHAPES})",
            str(ROOT / "runtime"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert process.stdout.strip() == "True"
