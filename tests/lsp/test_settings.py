"""Typed settings from initializationOptions and workspace/configuration; bad values fall back."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from echoes_lsp.server.client_settings import OPTIONS

from .conftest import WAIT, Session, codes, copy_vault, start_session
from .test_limits import HEAD, broken_links, wait_until_ready

SECRET_PAGE = (
    "---\ntype: note\nstack: []\nstatus: active\nsummary: Has a key.\n---\n\n"
    "The key is AKIA"
    "Q3J7ZT2LMX4PRW8B, do not share.\n"
)  # not the AWS docs placeholder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    workspace = copy_vault("lsp-vault", tmp_path)
    (workspace / "EchoesVault" / "pages" / "keys.md").write_text(SECRET_PAGE, encoding="utf-8")
    return workspace


async def start(client: LanguageClient, workspace: Path, options: Optional[dict]) -> Session:
    return await start_session(client, workspace, "neovim", options)


async def test_per_code_severity_and_off(bare_client: LanguageClient, workspace: Path) -> None:
    client = bare_client
    session = await start(
        client,
        workspace,
        {"echoes": {"diagnostics": {"severity": {"EV300": "error", "EV301": "off"}}}},
    )
    document = session.open(session.page("auth.md"))
    items = await session.diagnostics(document, lambda d: "EV300" in codes(d))
    assert "EV301" not in codes(items)
    assert all(d.severity == types.DiagnosticSeverity.Error for d in items if d.code == "EV300")


async def test_secret_scanning_can_be_turned_off(
    bare_client: LanguageClient, workspace: Path
) -> None:
    client = bare_client
    session = await start(client, workspace, {"echoes": {"secrets": {"enabled": False}}})
    # A broken link shows that the page was analysed; the secret must not be reported with it.
    document = session.open(session.page("keys.md"), SECRET_PAGE + "\n[[nowhere]]\n")
    items = await session.diagnostics(document, lambda d: "EV300" in codes(d))
    assert "EV600" not in codes(items)


async def test_secrets_are_reported_without_echoing_the_value(
    bare_client: LanguageClient, workspace: Path
) -> None:
    client = bare_client
    session = await start(client, workspace, None)
    document = session.open(session.page("keys.md"))
    items = await session.diagnostics(document, lambda d: "EV600" in codes(d))
    secret = next(d for d in items if d.code == "EV600")
    assert "AWS access key ID" in secret.message
    assert "Q3J7ZT2LMX4PRW8B" not in secret.message
    assert (secret.range.start.line, secret.range.start.character) == (7, 11)
    assert secret.range.end.character - secret.range.start.character == 20


async def test_bad_settings_are_reported_and_defaults_used(
    bare_client: LanguageClient, workspace: Path
) -> None:
    client = bare_client
    options: Any = {
        "echoes": {
            "diagnostics": {"debounce": "soon", "severity": {"EV999": "error", "EV300": "loud"}},
            "runtime": {"timeout": -1},
            "exclude": "pages/*",
        }
    }
    session = await start(client, workspace, options)
    document = session.open(session.page("auth.md"))
    items = await session.diagnostics(document, lambda d: "EV300" in codes(d))
    assert all(d.severity == types.DiagnosticSeverity.Warning for d in items if d.code == "EV300")
    warnings = " ".join(m.message for m in session.client.messages)
    for fragment in ("debounce", "EV999", "EV300", "timeout", "exclude"):
        assert fragment in warnings


async def test_workspace_configuration_is_read(
    bare_client: LanguageClient, workspace: Path
) -> None:
    client = bare_client
    client.set_configuration({"diagnostics": {"severity": {"EV302": "off"}}}, section="echoes")
    session = await start(client, workspace, None)
    document = session.open(session.page("auth.md"))
    # The configuration arrives by a round trip after `initialized`: wait for its effect (a server
    # that never reads it times out here).
    items = await session.diagnostics(
        document, lambda d: "EV300" in codes(d) and "EV302" not in codes(d)
    )
    assert "EV302" not in codes(items)
    # A configuration change is picked up without restarting.
    client.set_configuration({"diagnostics": {"severity": {"EV300": "off"}}}, section="echoes")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    items = await session.diagnostics(document, lambda d: "EV300" not in codes(d), timeout=WAIT)
    assert "EV302" in codes(items)


async def test_runtime_interpreter_and_timeout_settings(
    bare_client: LanguageClient, tmp_path: Path
) -> None:
    workspace = copy_vault("lsp-vault", tmp_path / "initialized", init=True)
    session = await start(
        bare_client, workspace, {"echoes": {"runtime": {"python": "/nonexistent/python3"}}}
    )
    with pytest.raises(JsonRpcException) as missing:
        await session.command("echoes.status", {})
    assert "cannot start the runtime" in str(missing.value)
    bare_client.set_configuration({"runtime": {"python": "", "timeout": 0.001}}, section="echoes")
    bare_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )
    # The new configuration is pulled by a round trip: retry until the old interpreter is gone.
    deadline = asyncio.get_event_loop().time() + WAIT
    while True:
        with pytest.raises(JsonRpcException) as slow:
            await session.command("echoes.status", {})
        if "cannot start the runtime" not in str(slow.value):
            break
        assert asyncio.get_event_loop().time() < deadline, "the new settings were never applied"
        await asyncio.sleep(0.05)
    assert "did not answer within" in str(slow.value)


def as_vscode_sends(changed: Dict[str, Any]) -> Dict[str, Any]:
    """The section `echoes` as the VS Code extension answers `workspace/configuration` and sends
    `initializationOptions`: every server setting, nested by its dotted key, those not in
    `changed` at their defaults (`toServerSettings` in editors/vscode/src/settings.ts; its unit
    test checks that it sends exactly package.json's server settings, and
    tests/test_editor_settings.py that those are `OPTIONS` with the same defaults)."""
    tree: Dict[str, Any] = {}
    for option in OPTIONS:
        *parents, last = option.key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = changed.get(option.key, option.default)
    return tree


def raw_vscode_section(changed: Dict[str, Any]) -> Dict[str, Any]:
    """What vscode-languageclient puts in `workspace/didChangeConfiguration` for
    `synchronize.configurationSection: "echoes"`: VS Code's own section, unmapped, with the
    extension's settings too."""
    section = as_vscode_sends(changed)
    section["server"] = {"path": "", "python": "", "importStrategy": "useBundled"}
    section["saveThroughRuntime"] = "off"
    section["trace"] = {"server": "off"}
    return {"echoes": section}


def count_is(count: int) -> Callable[[List[types.Diagnostic]], bool]:
    return lambda found: len(found) == count


async def test_the_diagnostic_cap_follows_the_vscode_configuration(
    bare_client: LanguageClient, workspace: Path
) -> None:
    """`echoes.diagnostics.maxPerDocument` set in VS Code reaches the server as the answer to
    `workspace/configuration` (section `echoes`), at startup and after a change."""
    client = bare_client
    off = {"watch.pollInterval": 0}
    client.set_configuration(
        as_vscode_sends({**off, "diagnostics.maxPerDocument": 10}), section="echoes"
    )
    # The initializationOptions carry no cap: only the configuration answer can set it.
    options = as_vscode_sends(off)
    del options["diagnostics"]["maxPerDocument"]
    session = await start_session(client, workspace, "visual_studio_code", {"echoes": options})
    document = session.open(session.page("many-links.md"), HEAD + broken_links(25))
    items = await session.diagnostics(document, count_is(11))
    assert "15 more diagnostics" in items[-1].message
    await wait_until_ready(session)  # no refresh for the vault's first load is still to come

    # (value in VS Code's settings, value the extension sends for it, diagnostics shown): a
    # negative cap is marked in the settings editor and sent as the default.
    for typed, mapped, expected in ((0, 0, 25), (4, 4, 5), (-3, 1000, 25)):
        refreshes = client.diagnostic_refresh_count
        client.set_configuration(
            as_vscode_sends({**off, "diagnostics.maxPerDocument": mapped}), section="echoes"
        )
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings=raw_vscode_section({**off, "diagnostics.maxPerDocument": typed})
            )
        )
        # VS Code pulls diagnostics again only when the server asks it to.
        deadline = asyncio.get_event_loop().time() + WAIT
        while client.diagnostic_refresh_count == refreshes:
            assert asyncio.get_event_loop().time() < deadline, "no diagnostic refresh was asked"
            await asyncio.sleep(0.05)
        items = await session.diagnostics(document, count_is(expected))
        summaries = [d for d in items if "more diagnostics" in d.message]
        assert len(summaries) == (1 if expected == 5 else 0)
    # The server read the extension's answer, not the raw section of the notification.
    assert not [m.message for m in client.messages if "settings" in m.message]
