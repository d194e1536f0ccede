"""`echoes-lsp check` and the language server report the same codes and ranges on one vault."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Set, Tuple

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.conftest import capabilities, make_client

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "check-vault"
Key = Tuple[str, str, int, int, int, int]


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "echoes_lsp", "serve"], client_factory=make_client
    )
)
async def client(lsp_client: LanguageClient):
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 30)


def check_findings(workspace: Path) -> Set[Key]:
    process = subprocess.run(
        [sys.executable, "-m", "echoes_lsp", "check", str(workspace), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert process.returncode in (0, 1), process.stderr
    report = json.loads(process.stdout)
    return {
        (
            Path(item["absolutePath"]).resolve().as_uri(),
            item["code"],
            item["line"] - 1,
            item["column"] - 1,
            item["endLine"] - 1,
            item["endColumn"] - 1,
        )
        for item in report["diagnostics"]
    }


async def test_check_and_server_agree(client: LanguageClient, tmp_path: Path) -> None:
    workspace = tmp_path / "vault"
    shutil.copytree(FIXTURE, workspace, symlinks=True)
    expected = check_findings(workspace)
    assert len(expected) > 20
    caps = capabilities("visual_studio_code")  # pull diagnostics, workspace report
    assert caps.general is not None
    caps.general.position_encodings = [types.PositionEncodingKind.Utf32]
    await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="vault")],
        )
    )
    report = await asyncio.wait_for(
        client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[])),
        60,
    )
    served = {
        (
            Path(types_uri_path(item.uri)).resolve().as_uri(),
            str(d.code),
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
        )
        for item in report.items
        for d in item.items
    }
    assert served == expected


def types_uri_path(uri: str) -> str:
    from pygls.uris import to_fs_path

    return to_fs_path(uri) or uri
