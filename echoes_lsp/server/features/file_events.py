"""Files changed outside the open buffers: `workspace/didChangeWatchedFiles` (registered for the
vaults when the client can watch files), the file operations `workspace/didCreateFiles`,
`didDeleteFiles` and `didRenameFiles`, and the poller that notices other programs' changes by
file metadata."""

from __future__ import annotations

import asyncio
import logging
import os

from lsprotocol import types

from ..echoes_server import EchoesServer
from ..model_sync import disk_event, file_event
from . import Feature
from .document_context import locate

log = logging.getLogger("echoes_lsp")
VAULT_GLOB = "**/EchoesVault/**"
FILE_FILTERS = types.FileOperationRegistrationOptions(
    filters=[
        types.FileOperationFilter(
            pattern=types.FileOperationPattern(glob=VAULT_GLOB), scheme="file"
        )
    ]
)
# While the client watches files, the disk is still polled, at most this often.
WATCHED_POLL_FLOOR = 10.0
# With polling off, how often the interval setting is looked at again.
POLL_OFF_RECHECK = 5.0


def did_change_watched(ls: EchoesServer, params: types.DidChangeWatchedFilesParams) -> None:
    for event in params.changes:
        located = locate(ls, event.uri, create=False)
        if located is not None:
            folder, path = located
            disk_event(ls, folder, path, deleted=event.type == types.FileChangeType.Deleted)


def did_create_files(ls: EchoesServer, params: types.CreateFilesParams) -> None:
    for item in params.files:
        located = locate(ls, item.uri, create=False)
        if located is not None:
            disk_event(ls, *located, deleted=False)


def did_delete_files(ls: EchoesServer, params: types.DeleteFilesParams) -> None:
    for item in params.files:
        located = locate(ls, item.uri, create=False)
        if located is not None:
            disk_event(ls, *located, deleted=True)


def did_rename_files(ls: EchoesServer, params: types.RenameFilesParams) -> None:
    for item in params.files:
        old = locate(ls, item.old_uri, create=False)
        new = locate(ls, item.new_uri, create=False)
        if old is not None:
            folder, path = old
            if new is not None and same_file(path, new[1]):
                # A change of case on a file system that ignores case: the old name is gone
                # from the model, though the disk still answers to it.
                file_event(ls, folder, path, deleted=True)
            else:
                disk_event(ls, folder, path, deleted=True)
        if new is not None:
            disk_event(ls, *new, deleted=False)


def same_file(one: str, other: str) -> bool:
    """Whether two different paths name the same file on the disk."""
    try:
        return one != other and os.path.samefile(one, other)
    except OSError:
        return False


def poll_interval(ls: EchoesServer, watching: bool) -> float:
    """Seconds between two polls; 0 when polling is off."""
    interval = ls.settings.poll_interval
    if watching and interval > 0:
        interval = max(interval, WATCHED_POLL_FLOOR)
    return interval


def polling_notice(ls: EchoesServer, registered: bool, watching: bool) -> str:
    """The log line that says how often the vault is polled, and why."""
    interval = poll_interval(ls, watching)
    if interval <= 0:
        return "echoes-lsp: the vault is not polled (echoes.watch.pollInterval is 0)"
    if watching:
        why = "the client watches the vault's files; this is a safety net"
    elif registered:
        who = (
            f"client {ls.support.name!r}" if ls.support.name else "client (it sends no clientInfo)"
        )
        why = f"the {who} watches files but misses a file replaced by rename"
    else:
        why = "the client watches no files for the server"
    return f"echoes-lsp: polling the vault every {interval:g} s: {why}"


async def poll_disk(ls: EchoesServer, watching: bool) -> None:
    """Notice other programs' changes by file metadata: every `pollInterval` seconds without a
    file watcher, and at most every 10 s as a safety net when the client watches files."""
    while True:
        interval = poll_interval(ls, watching)
        await asyncio.sleep(interval if interval > 0 else POLL_OFF_RECHECK)
        if interval > 0:
            await poll_once(ls)


async def poll_once(ls: EchoesServer) -> None:
    """Take in every change on disk in the vaults that are indexed."""
    for folder in ls.folders():
        if not folder.loaded.is_set():
            continue
        try:
            changes = await asyncio.get_event_loop().run_in_executor(
                None, folder.vault.stat_changes
            )
            for path, deleted in changes:
                disk_event(ls, folder, path, deleted)
        except Exception:
            log.exception("polling the vault failed")


FEATURES = [
    Feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, did_change_watched),
    Feature(types.WORKSPACE_DID_CREATE_FILES, did_create_files, FILE_FILTERS),
    Feature(types.WORKSPACE_DID_DELETE_FILES, did_delete_files, FILE_FILTERS),
    Feature(types.WORKSPACE_DID_RENAME_FILES, did_rename_files, FILE_FILTERS),
]
