"""Credential-shaped text is refused in every text field a write accepts, with nothing written and
the value never echoed; ordinary developer strings are accepted (issue 12, item 1)."""

from __future__ import annotations

import base64
import hashlib
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest

from .conftest import Runtime, daily_files, page, snapshot
from .test_s17_secrets import MORE_SHAPES, SHAPES, detect

END = ("end", "--confirm-explicit-user-end", "--payload", "-")
UPSERT = ("upsert", "--payload", "-")
APPEND = ("append", "--payload", "-")

NO_SUMMARY = "---\ntype: note\nstack: [python]\nstatus: active\n---\n\n# Legacy\n"

# Each field as a way to put `value` into one write: (command line, payload).
Call = Tuple[Tuple[str, ...], Dict[str, Any]]
FIELDS: Dict[str, Callable[[str], Call]] = {
    "upsert content": lambda v: (UPSERT, {"filename": "p.md", "content": page(body=f"x {v}\n")}),
    "upsert summary": lambda v: (UPSERT, {"filename": "p.md", "content": page(summary=f"k {v}")}),
    "upsert filename": lambda v: (UPSERT, {"filename": f"{v}.md", "content": page()}),
    "upsert indexDescription": lambda v: (
        UPSERT,
        {"filename": "p.md", "content": NO_SUMMARY, "indexDescription": f"key {v}"},
    ),
    "upsert agent": lambda v: (UPSERT, {"filename": "p.md", "content": page(), "agent": v}),
    "upsert --agent": lambda v: (("--agent", v, *UPSERT), {"filename": "p.md", "content": page()}),
    "append entry": lambda v: (APPEND, {"entry": f"- {v}"}),
    "append agent": lambda v: (APPEND, {"entry": "- fine", "agent": v}),
    "append --agent": lambda v: (("--agent", v, *APPEND), {"entry": "- fine"}),
    "append --adapter-version": lambda v: (
        ("--adapter-version", v, *APPEND),
        {"entry": "- fine"},
    ),
    "end dailySummary": lambda v: (END, {"dailySummary": f"- {v}"}),
    "end agent": lambda v: (END, {"dailySummary": "- fine", "agent": v}),
    "end --agent": lambda v: (("--agent", v, *END), {"dailySummary": "- fine"}),
    "end page content": lambda v: (
        END,
        {"dailySummary": "- fine", "pages": [{"filename": "p.md", "content": page(body=v)}]},
    ),
    "end page filename": lambda v: (
        END,
        {"dailySummary": "- fine", "pages": [{"filename": f"{v}.md", "content": page()}]},
    ),
    "end page indexDescription": lambda v: (
        END,
        {
            "dailySummary": "- fine",
            "pages": [{"filename": "p.md", "content": NO_SUMMARY, "indexDescription": v}],
        },
    ),
}

VALUES: List[Tuple[str, str]] = [*SHAPES.items(), *MORE_SHAPES]


def _pieces(value: str) -> List[str]:
    """Parts of a value long enough to identify it: none may appear in any output."""
    words = [w for w in value.replace("=", " ").replace(":", " ").split() if len(w) >= 12]
    return [value, *words, *(w[-12:] for w in words)]


@pytest.mark.parametrize("field", list(FIELDS))
def test_each_shape_is_refused_in_each_field_with_nothing_written(
    rt: Runtime, vault: Path, field: str
) -> None:
    before = snapshot(vault, lock_ok=True)
    for kind, value in VALUES:
        args, payload = FIELDS[field](value)
        result = rt.run(*args, payload=payload)
        assert result.code == 2, (field, kind, result)
        error = result.error
        assert error["code"] == "secret", (field, kind, error)
        assert kind in error["error"], (field, kind, error)
        for piece in _pieces(value):
            assert piece not in result.stderr and piece not in result.stdout, (field, kind)
        assert snapshot(vault, lock_ok=True) == before, (field, kind)
    assert daily_files(vault) == []


def test_a_known_page_name_is_scanned_before_its_name_rules(rt: Runtime) -> None:
    """A credential with `/` in it is reported as a secret, not echoed by the name check."""
    value = SHAPES["credential URI"]
    result = rt.run(*UPSERT, payload={"filename": value, "content": page()})
    assert result.error["code"] == "secret"
    assert "s3cr3tPw" not in result.stderr


def test_a_credential_written_by_hand_is_masked_in_every_output(rt: Runtime, vault: Path) -> None:
    """Search lines, `start` and errors quote vault text; a credential in it is masked."""
    value = SHAPES["GitHub token"]
    rt.upsert("notes.md", page(body="# Notes\n\nthe deploy token lives here\n"))
    target = vault / "EchoesVault" / "pages" / "notes.md"
    target.write_text(page(body=f"# Notes\n\nthe deploy token lives here {value}\n"))
    found = rt.run("search", "deploy token")
    assert found.code == 0, found
    assert value not in found.stdout and "*" * len(value) in found.stdout
    assert value not in rt.text("start", "--recent", "3")
    missing = rt.run("hash", value)
    assert missing.code == 2 and value not in missing.stderr


# --- benign developer strings ---------------------------------------------------------------------

_SHA256 = hashlib.sha256(b"echoes").hexdigest()
_SHA1 = hashlib.sha1(b"echoes").hexdigest()
_B64 = base64.b64encode(hashlib.sha512(b"echoes").digest()).decode()
BENIGN = [
    # hashes and identifiers
    f"sha256 {_SHA256}",
    f"commit {_SHA1}",
    f"short commit {_SHA1[:12]}",
    f"md5 {hashlib.md5(b'echoes').hexdigest()}",
    f"request id {uuid.UUID(int=0x123E4567E89B12D3A456426614174000)}",
    f"trace {uuid.UUID(int=7)} and {uuid.uuid5(uuid.NAMESPACE_DNS, 'echoes.dev')}",
    "HEROKU_APP_NAME=my-service-staging",
    "HEROKU_API_KEY is set in the CI secrets store",
    "ULID 01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "docker image sha256:" + _SHA256,
    # base64 and integrity strings
    f"blob {_B64}",
    f'integrity="sha384-{base64.b64encode(hashlib.sha384(b"x").digest()).decode()}"',
    f"integrity sha512-{_B64}",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
    "Authorization: Basic dXNlcjpwYXNzd29yZA== is only an example header",
    # slugs, branch names, paths that merely start with a prefix
    "sk-1234-fix-login-redirect-loop",
    "sk-video-transcoder-2024-compat",
    "docs/adr/sk-0042-use-postgres-for-sessions.md",
    "git checkout sk-1234-fix-login-redirect-loop",
    "feature/SK-4471-billing-retry",
    "sk-learn compatibility notes",
    "sk-ant-design-system-migration-notes",
    "ghp-pages deploy branch",
    "ACME-corp onboarding checklist",
    "ACCOUNTS-2024 migration",
    "AKIA prefix means a long-term key",
    "ASIA-PACIFIC rollout schedule",
    "npm_config_registry=https://registry.npmjs.org/",
    "hf_hub_download(repo_id='org/model')",
    "gh_pages_branch = gh-pages",
    "xoxo-greeting-card-template",
    "glpat prefix tokens are rotated monthly",
    "SG.sendgrid.templates.welcome",
    "pypi-upload workflow for the wheel",
    "HRKU-style tokens are rotated by the platform team",
    "AccountKey= goes in the connection string, never in a page",
    "bot 123456789:please-ask-the-team for the token",
    "Module.method.call_chain_in_python_is_fine",
    "eyJ is how base64 JSON begins",
    # placeholders, accepted by policy
    "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_" + "x" * 36,
    "sk-" + "x" * 48,
    "github_pat_" + "X" * 22 + "_" + "X" * 59,
    "postgres://user:password@localhost/db",
    "https://admin:changeme@localhost:8080/",
    "redis://:${REDIS_PASSWORD}@cache:6379/0",
    "mongodb://app:<password>@cluster.example.net/db",
    "token: <your-token-here>",
    # ordinary prose and URLs
    "https://example.com/docs?id=42&page=2#section-3",
    "ssh://git@github.com/org/repo.git",
    "Email alice@example.com about the release",
    "The ledger uses keys rotated every 90 days.",
    "version 1.2.3+build.456 and tag v2024.11.05",
    "2026-12-01T08:31:42Z deployment window",
    "Use the `sk-` prefix convention for service keys.",
    "SK-II skincare product page copy",
]


def test_the_benign_corpus_is_large_enough() -> None:
    assert len(BENIGN) >= 50
    assert len(set(BENIGN)) == len(BENIGN)


def test_benign_developer_strings_are_not_credentials() -> None:
    found = detect(BENIGN)
    assert {text: kinds for text, kinds in zip(BENIGN, found) if kinds} == {}


def test_benign_strings_are_accepted_in_every_field(rt: Runtime, vault: Path) -> None:
    body = "# Corpus\n\n" + "".join(f"- {text}\n" for text in BENIGN)
    rt.upsert("corpus.md", page(summary="Developer strings that are not credentials.", body=body))
    rt.ok(*APPEND, payload={"entry": body, "agent": "sk-1234-fix-login-redirect-loop"})
    rt.ok(
        "--agent",
        "sk-video-transcoder-2024-compat",
        *END,
        payload={
            "dailySummary": body,
            "pages": [
                {"filename": "sk-0042-use-postgres-for-sessions.md", "content": page()},
                {
                    "filename": "sk-1234-fix-login-redirect-loop",
                    "content": NO_SUMMARY,
                    "indexDescription": "Branch notes for sk-1234-fix-login-redirect-loop",
                },
            ],
        },
    )
    pages = vault / "EchoesVault" / "pages"
    assert (pages / "sk-0042-use-postgres-for-sessions.md").is_file()
    assert (pages / "sk-1234-fix-login-redirect-loop.md").is_file()
    names = [p.name for p in daily_files(vault)]
    assert any("sk-video-transcoder-2024-compat" in n for n in names), names
    assert any("sk-1234-fix-login-redirect-loop" in n for n in names), names
