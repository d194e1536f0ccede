"""Spec 1, 4.1 and 6: the marker and exact-version write gating."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import RUNTIME, Runtime, page, snapshot

EXACT_MARKER = (
    b'{\n  "schemaVersion": 3,\n  "protocolVersion": "1.0.0",\n  "generatedIndex": true,\n'
    b'  "dailyLayout": "unique-files-v1",\n  "runtime": ".echoes-vault/echoes_vault.py",\n'
    b'  "requiredFrontmatter": [\n    "type",\n    "stack",\n    "status",\n    "summary"\n  ]\n}\n'
)

WRITES = [
    ("init",),
    ("migrate",),
    ("upgrade",),
    ("configure-agents",),
    ("hydrate",),
    ("rebuild-index",),
    ("start",),
    ("append", "--payload", "-"),
    ("upsert", "--payload", "-"),
    ("end", "--confirm-explicit-user-end", "--payload", "-"),
]
PAYLOADS = {
    "append": {"entry": "- fact"},
    "upsert": {"filename": "new.md", "content": page()},
    "end": {"dailySummary": "- done"},
}


def test_s6_marker_bytes_are_exact(vault: Path) -> None:
    assert (vault / "EchoesVault/.echoes-vault.json").read_bytes() == EXACT_MARKER


def test_s6_init_rewrites_a_reformatted_but_supported_marker(rt: Runtime, vault: Path) -> None:
    marker = vault / "EchoesVault/.echoes-vault.json"
    marker.write_text(json.dumps(json.loads(marker.read_text())))
    assert rt.ok("status")["marker"]["exact"] is False
    rt.ok("init")
    assert marker.read_bytes() == EXACT_MARKER


@pytest.fixture
def unsupported(rt: Runtime, vault: Path) -> Runtime:
    rt.upsert("kept.md", page("Kept page about the JWT boundary."))
    marker = vault / "EchoesVault/.echoes-vault.json"
    data = json.loads(marker.read_text())
    data["protocolVersion"] = "2.0.0"
    marker.write_text(json.dumps(data, indent=2) + "\n")
    return rt


def test_s1_s6_unsupported_protocol_refuses_every_write(unsupported: Runtime, vault: Path) -> None:
    before = snapshot(vault)
    for command in WRITES:
        payload = PAYLOADS.get(command[0])
        error = unsupported.fail(*command, payload=payload, code="unsupported-protocol")
        assert "2.0.0" in error["error"], command
    assert snapshot(vault) == before


def test_s4_1_unsupported_protocol_reads_still_work(unsupported: Runtime, vault: Path) -> None:
    before = snapshot(vault, lock_ok=True)
    assert unsupported.ok("search", "jwt")["results"][0]["file"] == "EchoesVault/pages/kept.md"
    assert len(unsupported.ok("hash", "kept")["sha256"]) == 64
    assert unsupported.ok("protocol")["markerProtocolVersion"] == "2.0.0"
    health = unsupported.ok("status")
    assert health["vaultState"] == "unsupported" and health["readOnly"] is True
    card = unsupported.text("status", "--format", "card")
    assert "Read-only" in card and "2.0.0" in card
    assert snapshot(vault, lock_ok=True) == before


def test_s6_missing_marker_blocks_writes_until_init(bare: Runtime, repo: Path) -> None:
    for command in [c for c in WRITES if c[0] not in ("init", "migrate", "upgrade")]:
        bare.fail(
            *command, payload=PAYLOADS.get(command[0]), code="not-initialized", script=RUNTIME
        )
    assert sorted(p.name for p in repo.iterdir()) == [".git"]


def test_s6_invalid_marker_json_refuses_init(rt: Runtime, vault: Path) -> None:
    (vault / "EchoesVault/.echoes-vault.json").write_text("{not json")
    before = snapshot(vault, lock_ok=True)
    rt.fail("init", code="unsupported-protocol")
    rt.fail("append", "--payload", "-", payload={"entry": "x"}, code="unsupported-protocol")
    assert snapshot(vault, lock_ok=True) == before


def test_s6_marker_without_protocol_version_is_rewritten_by_init(rt: Runtime, vault: Path) -> None:
    """It declares no protocol, so writes stop until init, which rewrites it (as the reference
    runtime does) instead of refusing."""
    marker = vault / "EchoesVault/.echoes-vault.json"
    marker.write_text(json.dumps({"schemaVersion": 3, "generatedIndex": True}))
    rt.fail("append", "--payload", "-", payload={"entry": "x"}, code="unsupported-protocol")
    assert rt.ok("init")["created"] is True
    assert marker.read_bytes() == EXACT_MARKER


def test_s12_3_protocol_reports_versions_and_commands(bare: Runtime, repo: Path) -> None:
    before = snapshot(repo)
    info = bare.ok("protocol")
    assert info["protocolVersion"] == "1.0.0"
    assert info["engineVersion"] and info["managedAdapterVersion"]
    assert info["codexAdapterVersion"] == info["managedAdapterVersion"]
    assert info["markerProtocolVersion"] is None
    assert info["runtimePath"] == str(repo / ".echoes-vault/echoes_vault.py")
    assert info["protocolPath"] == str(repo / "EchoesVault/AGENT_PROTOCOL.md")
    assert set(info["commands"]) >= {
        "init",
        "migrate",
        "upgrade",
        "protocol",
        "configure-agents",
        "inspect",
        "status",
        "hydrate",
        "start",
        "search",
        "append",
        "hash",
        "upsert",
        "end",
        "rebuild-index",
    }
    assert snapshot(repo) == before
