"""Read-only mode: an unsupported or missing marker keeps diagnostics but disables every write."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import Session, codes, copy_vault


@pytest.fixture(scope="module", params=["unsupported", "missing", "fifo", "deep", "not-utf8"])
def shared_workspace(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Every test here only reads: one server per marker problem and client kind."""
    workspace = copy_vault("lsp-vault", tmp_path_factory.mktemp(request.param), init=True)
    marker = workspace / "EchoesVault" / ".echoes-vault.json"
    if request.param == "missing":
        marker.unlink()
    elif request.param == "deep":  # used to fail `initialize` with a RecursionError (-32603)
        marker.write_text("[" * 100_000 + "]" * 100_000)
    elif request.param == "not-utf8":
        marker.write_bytes(b'{"protocolVersion": "1.0.0\xff"}')
    elif request.param == "fifo":
        # Opening a FIFO that no one writes to blocks: the marker is read by the safe reader.
        marker.unlink()
        os.mkfifo(marker)
    else:
        data = json.loads(marker.read_text(encoding="utf-8"))
        data["protocolVersion"] = "2.0.0"
        marker.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return workspace


async def test_read_only_vault_still_gets_diagnostics_plus_ev700(shared: Session) -> None:
    document = shared.open(shared.page("auth.md"))
    items = await shared.diagnostics(document, lambda d: "EV700" in codes(d))
    assert {"EV300", "EV301", "EV700"} <= set(codes(items))
    marker = next(d for d in items if d.code == "EV700")
    assert "read-only" in marker.message


async def test_read_only_vault_refuses_every_write(shared: Session) -> None:
    page = shared.page("sessions.md")
    original = page.read_text(encoding="utf-8")
    document = shared.open(page)
    shared.replace(document, original + "\nMore.\n")
    daily = shared.workspace / "EchoesVault" / "daily"
    before = sorted(str(p) for p in daily.rglob("*"))
    for name, argument in [
        ("echoes.savePage", {"uri": document}),
        ("echoes.append", {"entry": "- note"}),
        ("echoes.rebuildIndex", {}),
        ("echoes.createPage", {"name": "new-page"}),
        ("echoes.endSession", {"dailySummary": "- x", "confirmExplicitUserEnd": True}),
    ]:
        with pytest.raises(JsonRpcException) as refused:
            await shared.command(name, argument)
        assert "read-only" in str(refused.value), name
    assert page.read_text(encoding="utf-8") == original
    assert not shared.page("new-page.md").exists()
    assert sorted(str(p) for p in daily.rglob("*")) == before
    assert any("read-only" in m.message for m in shared.client.messages)


async def test_mutating_code_actions_are_disabled_with_a_reason(shared: Session) -> None:
    document = shared.open(shared.page("auth.md"))
    items = await shared.diagnostics(document, lambda d: "EV300" in codes(d))
    broken = next(d for d in items if d.code == "EV300")
    actions = await shared.code_actions(document, broken)
    create = next(a for a in actions or [] if "Create page" in a.title)
    assert isinstance(create, types.CodeAction)
    assert create.disabled is not None and "read-only" in create.disabled.reason


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """For `session`: a vault whose marker nests 100,000 arrays deep."""
    workspace = copy_vault("lsp-vault", tmp_path, init=True)
    (workspace / "EchoesVault" / ".echoes-vault.json").write_text("[" * 100_000 + "]" * 100_000)
    return workspace


async def test_a_marker_that_cannot_be_read_is_announced_once(session: Session) -> None:
    """`initialize` succeeds (it used to fail with -32603 on a RecursionError); one warning names
    the marker's problem, and the pages get EV700."""
    document = session.open(session.page("auth.md"))
    items = await session.diagnostics(document, lambda d: "EV700" in codes(d))
    marker = next(d for d in items if d.code == "EV700")
    assert "nests deeper than 64 levels" in marker.message
    shown = [m.message for m in session.client.messages if "(EV700)" in m.message]
    assert len(shown) == 1 and "marker cannot be read" in shown[0], shown
    assert "the vault is read-only" in shown[0]
