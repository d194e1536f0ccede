"""Indexing a vault ends with its page catalog and search index made, before the vault is
reported ready: the first `[[` completion or symbol search after that makes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import List, Tuple

from lsprotocol import types

from echoes_lsp.engine.catalog import catalog, catalog_steps
from echoes_lsp.server.echoes_server import EchoesServer
from echoes_lsp.server.vault_folder import Folder

from .helpers import make_vault, page
from .test_symbol_slices import count_steps


def initialized_server() -> EchoesServer:
    """A server as a client's `initialize` (declaring no capability) leaves it: pygls's own
    part of the request sets the capabilities and the workspace."""
    server = EchoesServer()
    steps = server.protocol.lsp_initialize(
        types.InitializeParams(capabilities=types.ClientCapabilities())
    )
    next(steps, None)  # stops before the server's own handler, which would index the folder
    server.initialized.set()
    return server


def test_the_vault_is_ready_once_its_catalog_and_index_are_made(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path, {f"topic-{n:03d}": page(f"Subject {n}.") for n in range(600)}, complete=False
    )
    folder = Folder(str(tmp_path), vault)
    # (loaded, ready) as other tasks see them while the vault is indexed
    seen: List[Tuple[bool, bool]] = []

    async def load() -> None:
        server = initialized_server()
        task = asyncio.ensure_future(server.finish_loading(folder))
        while not task.done():
            seen.append((folder.loaded.is_set(), folder.status()["ready"]))
            await asyncio.sleep(0)
        await task

    asyncio.run(load())
    assert folder.status()["ready"]
    # Parsed, then the catalog made in slices while other tasks ran, and only then ready.
    assert (True, False) in seen and (False, True) not in seen
    assert count_steps(catalog_steps(vault))[0] == 0
    assert count_steps(catalog(vault).index_steps())[0] == 0
