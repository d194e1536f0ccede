"""The server beside hostile files (issue 12, item 3), as `check` sees them: a FIFO named like a
page and a folder it cannot list are EV401, never opened, and the server keeps answering."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, List

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.runtime.test_hostile_files import no_dac_override

from .conftest import WAIT, Session, copy_vault, make_client, start_session

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")

PREFIX: List[str] = []
try:
    PREFIX = no_dac_override()
except pytest.skip.Exception:  # not root and no setpriv: permissions apply anyway
    PREFIX = []

SERVER = ClientServerConfig(
    client_factory=make_client,
    server_command=[*PREFIX, sys.executable, "-m", "echoes_lsp", "serve"],
    server_env={**os.environ, "PYTHONUNBUFFERED": "1"},
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = copy_vault("lsp-vault", tmp_path)
    vault = root / "EchoesVault"
    os.mkfifo(vault / "pages" / "pipe.md")
    hidden = vault / "pages" / "private"
    hidden.mkdir()
    hidden.chmod(0)
    return root


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    await start_session(lsp_client, workspace, "visual_studio_code")
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)
    (workspace / "EchoesVault" / "pages" / "private").chmod(0o755)


async def _pull(session: Session, path: Path) -> Any:
    report = await asyncio.wait_for(
        session.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=path.resolve().as_uri())
            )
        ),
        WAIT,
    )
    return {(str(d.code), d.message) for d in getattr(report, "items", []) or []}


async def test_special_and_unreadable_entries_are_ev401(
    client: LanguageClient, workspace: Path
) -> None:
    session = Session(client, workspace, "visual_studio_code")
    pages = workspace / "EchoesVault" / "pages"
    found = await _pull(session, pages / "pipe.md")
    assert any(c == "EV401" and "is a FIFO, not a regular file" in m for c, m in found), found
    found = await _pull(session, pages / "private")
    assert any(c == "EV401" and "Permission denied" in m for c, m in found), found
    await session.alive()
