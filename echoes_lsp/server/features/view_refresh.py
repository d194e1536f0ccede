"""Asking the client to show fresh inlay hints and semantic tokens after the vault changed: a
page that appears resolves a link, a deprecated page changes its replacement, a block changes
its text. One refresh per burst of changes, and only to a client that declared it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, List

from ..echoes_server import EchoesServer
from ..vault_folder import Folder

log = logging.getLogger("echoes_lsp")


def follow_views(ls: EchoesServer, folder: Folder) -> None:
    """Refresh hints and tokens after every change of this vault, from now on."""
    support = ls.support
    if support.inlay_hint_refresh or support.semantic_tokens_refresh:
        folder.follow_views(lambda _path: ls.scheduler.views_refresh_soon(lambda: refresh(ls)))


def refresh(ls: EchoesServer) -> None:
    """Send the refresh requests the client declared."""
    requests: List[Callable[[None], Any]] = []
    if ls.support.inlay_hint_refresh:
        requests.append(ls.workspace_inlay_hint_refresh)
    if ls.support.semantic_tokens_refresh:
        requests.append(ls.workspace_semantic_tokens_refresh)
    for request in requests:
        try:
            answer = request(None)
        except Exception:
            log.exception("refresh request failed")
            continue
        if isinstance(answer, asyncio.Future):
            answer.add_done_callback(settled)


def settled(answer: asyncio.Future[Any]) -> None:
    """Consume the outcome of a refresh (a client may refuse it)."""
    if not answer.cancelled() and answer.exception() is not None:
        log.debug("client refused a refresh: %s", answer.exception())
