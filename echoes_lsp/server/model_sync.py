"""Keeping each vault model in step with the open buffers and the disk.

A buffer's text is applied to the model at once or after the debounce; a file changed outside the
editor (agents, git, Obsidian, the runtime itself) is taken in from the disk; after a runtime
command the model is brought up to date with what it wrote. Document sync, file events, pull
diagnostics and the commands all go through these functions.
"""

from __future__ import annotations

import asyncio
import os
from typing import List, Optional, Set

from ..engine.vault import stamp_of
from .echoes_server import EchoesServer
from .lsp_convert import path_to_uri, uri_to_path
from .vault_folder import Folder


def apply_buffer(ls: EchoesServer, folder: Folder, uri: str, path: str) -> Set[str]:
    """Put the open buffer of `uri` into the model (a large one through the worker, later);
    returns the keys whose pages changed as others see them."""
    text = ls.document_text(uri)
    if text is None:
        return set()
    if ls.large_documents.is_large(uri):
        ls.large_documents.refresh(folder, uri, path)
        return set()
    return folder.vault.open(path, text)


def apply_pending(ls: EchoesServer, uri: str) -> None:
    """Apply a debounced change now (a pull request wants the current state)."""
    if not ls.scheduler.cancel(uri):
        return
    path = uri_to_path(uri)
    folder = ls.folder_for_path(path)
    if folder is not None and path is not None:
        apply_buffer(ls, folder, uri, path)


def apply_now(ls: EchoesServer, folder: Folder, uri: str, path: str) -> None:
    """Apply the buffer at once, dropping its pending debounce, and report the result."""
    ls.scheduler.cancel(uri)
    changed = apply_buffer(ls, folder, uri, path)
    ls.publish(uri)
    ls.after_change(folder, changed)


def reanalyse(ls: EchoesServer, folder: Folder, uri: str, path: str) -> None:
    """The debounced update after typing."""
    changed = apply_buffer(ls, folder, uri, path)
    if ls.pull:
        # The client pulls this document itself; others may need a refresh.
        if changed:
            ls.after_change(folder, changed)
        return
    ls.publish(uri)
    ls.after_change(folder, changed)


def disk_event(ls: EchoesServer, folder: Folder, path: str, deleted: bool) -> None:
    """A change made outside the editor (agents, git, Obsidian) or by a file operation. The
    disk has the last word: a path reported deleted that is still there is looked at again,
    and a folder is compared with the disk file by file, so that a client's notification
    naming `pages/` forgets no page that still exists."""
    path = os.path.abspath(path)
    vault = folder.vault
    if path == vault.kept_dir:  # versions kept aside by a roll-forward (EV702), outside the vault
        if vault.read_kept():
            ls.refresh_open(folder)
        return
    if deleted and os.path.lexists(path):
        deleted = False
    if os.path.isdir(path) and not os.path.islink(path):
        changes = vault.stat_changes(path)
    elif deleted and path not in vault.entries:
        inside = path.rstrip(os.sep) + os.sep  # a folder that is gone, with its files
        changes = [(known, True) for known in vault.entries if known.startswith(inside)]
    else:
        changes = [(path, deleted)]
    for changed, gone in changes:
        file_event(ls, folder, changed, gone)


def file_event(ls: EchoesServer, folder: Folder, path: str, deleted: bool) -> None:
    """One file created, changed or deleted on the disk."""
    uri = path_to_uri(path)
    is_open = ls.open_document(uri) is not None
    changed: Set[str] = set()
    recheck: List[str] = []  # files to re-diagnose although no page changed for the others
    if deleted:
        changed = folder.vault.remove(path)
        reopened = keep_deleted_buffer(ls, folder, uri, path) if is_open else None
        if reopened is not None:
            changed |= reopened
            recheck.append(path)
    elif is_open:
        if changed_under_buffer(ls, folder, uri, path):
            recheck.append(path)
    else:
        changed = folder.vault.update(path)
        recheck.append(path)
    ls.after_change(folder, changed, recheck)


def keep_deleted_buffer(
    ls: EchoesServer, folder: Folder, uri: str, path: str
) -> Optional[Set[str]]:
    """A page deleted while open keeps being analysed from its buffer, and a checked save of it
    creates it anew. The keys its buffer changed, or None for a large one, which the worker
    re-diagnoses."""
    ls.save_safety.deleted(uri)
    if ls.large_documents.is_large(uri):
        ls.large_documents.refresh(folder, uri, path)
        return None
    return folder.vault.open(path, ls.document_text(uri) or "")


def changed_under_buffer(ls: EchoesServer, folder: Folder, uri: str, path: str) -> bool:
    """An open file changed on disk: the buffer stays the page, but a checked save must now
    be refused (EV701). Whether its diagnostics changed."""
    entry = folder.vault.entries.get(path)
    if entry is not None:
        entry.stamp = stamp_of(path)
    return ls.save_safety.check_disk(uri, path, ls.document_text(uri))


async def resync(ls: EchoesServer, folder: Folder) -> None:
    """Bring the model up to date with what the runtime just wrote."""
    changes = await asyncio.get_event_loop().run_in_executor(None, folder.vault.stat_changes)
    for path, deleted in changes:
        disk_event(ls, folder, path, deleted)
    ls.schedule_status()
