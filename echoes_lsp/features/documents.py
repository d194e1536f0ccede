"""Lifecycle, document sync, file watching, and pull/push diagnostics."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any, List, Set

from lsprotocol import types

from .. import index_refresh
from ..diagnose import Finding, Related, checked_paths, vault_findings
from ..lsp_util import Columns, path_to_uri, uri_to_path
from ..runtime import echoes_vault as rules
from ..state import EchoesServer, Folder
from ..vault import buffer_hash, disk_hash, stamp_of, starts_with_bom
from . import Feature

# Files a workspace diagnostic report diagnoses between two turns of the event loop.
WORKSPACE_STEP = 50
log = logging.getLogger("echoes_lsp")
PULL_OPTIONS = types.DiagnosticOptions(
    identifier="echoes", inter_file_dependencies=True, workspace_diagnostics=True
)
VAULT_GLOB = "**/EchoesVault/**"
FILE_FILTERS = types.FileOperationRegistrationOptions(
    filters=[
        types.FileOperationFilter(
            pattern=types.FileOperationPattern(glob=VAULT_GLOB), scheme="file"
        )
    ]
)


def stale_finding(path: str) -> Finding:
    return Finding(
        "EV701",
        "page changed on disk since it was opened; saving through EchoesVault is refused until "
        "you reload it or confirm an overwrite",
        0,
        0,
        0,
        0,
        (Related(path, 0, 0, 0, "current disk version"),),
    )


def check_disk(ls: EchoesServer, uri: str, path: str) -> bool:
    """Mark EV701 when the disk no longer holds the text the buffer was based on."""
    if uri not in ls.base_hashes:
        return False
    current = disk_hash(path)
    base = ls.base_hashes[uri]
    buffer = ls.document_text(uri)
    if current == base:
        changed = ls.stale.pop(uri, None) is not None
        return changed
    if (
        buffer is not None
        and current is not None
        and buffer_hash(buffer, starts_with_bom(path)) == current
    ):
        # The disk now holds exactly the buffer (the editor saved it): it is the new base.
        ls.base_hashes[uri] = current
        return ls.stale.pop(uri, None) is not None
    if uri not in ls.stale:
        ls.stale[uri] = stale_finding(path)
        return True
    return False


def initialize(ls: EchoesServer, params: types.InitializeParams) -> None:
    ls.use_buffers()
    if params.initialization_options is not None:
        ls.apply_settings(params.initialization_options)
    caps = params.capabilities
    pull = bool(caps.text_document and caps.text_document.diagnostic is not None)
    refresh = bool(
        caps.workspace and caps.workspace.diagnostics and caps.workspace.diagnostics.refresh_support
    )
    # Pull only when the client can also be told to re-pull; otherwise pages that link to a
    # changed page would keep stale diagnostics until edited.
    ls.pull = pull and refresh
    ls.pull_refresh = refresh
    if not ls.pull:
        # Not advertising pull diagnostics keeps a pull-capable client (Neovim) from showing
        # every diagnostic twice, once pulled and once pushed.
        for method in (types.TEXT_DOCUMENT_DIAGNOSTIC, types.WORKSPACE_DIAGNOSTIC):
            ls.protocol.fm.features.pop(method, None)
            ls.protocol.fm.feature_options.pop(method, None)
    ls.columns = Columns.negotiated(ls.workspace.position_encoding)

    for folder in ls.workspace.folders.values():
        path = uri_to_path(folder.uri)
        if path and os.path.isdir(os.path.join(path, rules.VAULT_DIR)):
            ls.add_folder(path)
    root = ls.workspace.root_path
    if not ls.folders and root and os.path.isdir(os.path.join(root, rules.VAULT_DIR)):
        ls.add_folder(root)


async def initialized(ls: EchoesServer, params: types.InitializedParams) -> None:
    ls.initialized.set()
    caps = ls.client_capabilities
    if caps.workspace and caps.workspace.configuration:
        await pull_configuration(ls)
        ls.refresh_open()
    watched = bool(
        caps.workspace
        and caps.workspace.did_change_watched_files
        and caps.workspace.did_change_watched_files.dynamic_registration
    )
    if watched:
        try:
            await ls.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id="echoes-watch",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                watchers=[types.FileSystemWatcher(glob_pattern=VAULT_GLOB)]
                            ),
                        )
                    ]
                )
            )
            ls.watching = True
        except Exception as error:
            ls.log(f"file watching registration failed ({error}); polling instead")
    # Poll even with a watcher (more slowly): some clients' watchers report only the
    # editor's own writes, and agents, git and Obsidian write behind the editor's back.
    ls.poller = asyncio.ensure_future(poll_disk(ls))
    ls.schedule_status()


def shutdown(ls: EchoesServer, params: Any) -> None:
    if ls.poller is not None:
        ls.poller.cancel()
    for task in list(ls.background):
        task.cancel()


async def did_change_configuration(
    ls: EchoesServer, params: types.DidChangeConfigurationParams
) -> None:
    caps = ls.client_capabilities
    if caps.workspace and caps.workspace.configuration:
        await pull_configuration(ls)
    elif params.settings is not None:
        ls.apply_settings(params.settings)
    ls.refresh_open()


def did_change_folders(ls: EchoesServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    for removed in params.event.removed:
        path = uri_to_path(removed.uri)
        if path and os.path.abspath(path) in ls.folders:
            del ls.folders[os.path.abspath(path)]
    for added in params.event.added:
        path = uri_to_path(added.uri)
        if path and os.path.isdir(os.path.join(path, rules.VAULT_DIR)):
            ls.add_folder(path)


def did_open(ls: EchoesServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    located = ls.locate(uri)
    if located is None:
        return
    folder, path = located
    text = ls.document_text(uri)  # as the buffer holds it: Unicode text (see `buffers`)
    if text is None:
        return
    # Editors open a file with its disk text: that text is the base of a later checked save.
    # Hashing the text we were sent (not the disk now) keeps a change that lands between the
    # editor's read and this notification from being overwritten silently.
    ls.base_hashes[uri] = (
        buffer_hash(text, starts_with_bom(path)) if os.path.lexists(path) else None
    )
    ls.stale.pop(uri, None)
    if ls.is_large(uri):
        ls.refresh_large(folder, uri, path)
        return
    changed = folder.vault.open(path, text)
    ls.publish(uri)
    ls.after_change(folder, changed)


def did_change(ls: EchoesServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    located = ls.locate(uri)
    if located is None:
        return
    folder, path = located
    ls.debounce(uri, lambda: reanalyse(ls, folder, uri, path))


def will_save(ls: EchoesServer, params: types.WillSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    located = ls.locate(uri)
    if located is None:
        return
    _folder, path = located
    if check_disk(ls, uri, path) and uri in ls.stale:
        ls.show(
            f"{os.path.basename(path)} changed on disk since it was opened; a plain save "
            "overwrites that change. Use “Save through EchoesVault” for a checked save.",
            types.MessageType.Warning,
        )
        ls.publish(uri)


def did_save(ls: EchoesServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    located = ls.locate(uri)
    if located is None:
        return
    folder, path = located
    ls.base_hashes[uri] = disk_hash(path)
    ls.stale.pop(uri, None)
    flush(ls, folder, uri, path)
    if index_refresh.hydrate_wanted(
        folder.vault, path, ls.settings.hydrate_on_save, folder.writable
    ):
        ls.spawn(hydrate_after_save(ls, folder))


def did_close(ls: EchoesServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    timer = ls.timers.pop(uri, None)
    if timer is not None:
        timer.cancel()
    ls.base_hashes.pop(uri, None)
    ls.stale.pop(uri, None)
    located = ls.locate(uri, create=False)
    if located is None:
        return
    folder, path = located
    changed = folder.vault.close(path)
    if not ls.pull:
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )
    ls.after_change(folder, changed)


def did_change_watched(ls: EchoesServer, params: types.DidChangeWatchedFilesParams) -> None:
    for event in params.changes:
        located = ls.locate(event.uri, create=False)
        if located is not None:
            folder, path = located
            disk_event(ls, folder, path, deleted=event.type == types.FileChangeType.Deleted)


def did_create_files(ls: EchoesServer, params: types.CreateFilesParams) -> None:
    for item in params.files:
        located = ls.locate(item.uri, create=False)
        if located is not None:
            disk_event(ls, *located, deleted=False)


def did_delete_files(ls: EchoesServer, params: types.DeleteFilesParams) -> None:
    for item in params.files:
        located = ls.locate(item.uri, create=False)
        if located is not None:
            disk_event(ls, *located, deleted=True)


def did_rename_files(ls: EchoesServer, params: types.RenameFilesParams) -> None:
    for item in params.files:
        old = ls.locate(item.old_uri, create=False)
        new = ls.locate(item.new_uri, create=False)
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


async def document_diagnostic(
    ls: EchoesServer, params: types.DocumentDiagnosticParams
) -> types.RelatedFullDocumentDiagnosticReport:
    if ls.locate(params.text_document.uri) is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    flush_pending(ls, params.text_document.uri)
    items = await ls.diagnostics_async(params.text_document.uri)
    return types.RelatedFullDocumentDiagnosticReport(items=items)


async def workspace_diagnostic(
    ls: EchoesServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    """Every file with diagnostics, diagnosed a few files at a time: at 50,000 pages the whole
    report takes seconds, and requests are answered between the steps."""
    items: List[types.WorkspaceDocumentDiagnosticReport] = []
    for folder in list(ls.folders.values()):
        await folder.loaded.wait()  # the background indexing finishes first, in its own steps
        vault = folder.vault
        paths = checked_paths(vault)
        whole = list(vault_findings(vault))  # the marker, or a linked vault
        paths.extend(whole)
        for count, path in enumerate(paths, 1):
            if count % WORKSPACE_STEP == 0:
                await asyncio.sleep(0)
            if path not in whole and path not in vault.entries:
                continue  # removed while the report was being made
            uri = path_to_uri(path)
            diagnostics = ls.diagnostics(uri)
            document = ls.open_document(uri)
            if diagnostics or document is not None:
                items.append(
                    types.WorkspaceFullDocumentDiagnosticReport(
                        uri=uri,
                        items=diagnostics,
                        version=document.version if document else None,
                    )
                )
    return types.WorkspaceDiagnosticReport(items=items)


async def pull_configuration(ls: EchoesServer) -> None:
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="echoes")])
            ),
            timeout=5,
        )
    except Exception as error:
        ls.log(f"workspace/configuration failed: {error}")
        return
    if result and result[0] is not None:
        ls.apply_settings(result[0])


def flush_pending(ls: EchoesServer, uri: str) -> None:
    """Apply a debounced change now (a pull request wants the current state)."""
    timer = ls.timers.pop(uri, None)
    if timer is None:
        return
    timer.cancel()
    path = uri_to_path(uri)
    folder = ls.folder_for_path(path)
    if folder is not None and path is not None:
        update_overlay(ls, folder, uri, path)


def update_overlay(ls: EchoesServer, folder: Folder, uri: str, path: str) -> Set[str]:
    text = ls.document_text(uri)
    if text is None:
        return set()
    if ls.is_large(uri):
        ls.refresh_large(folder, uri, path)
        return set()
    return folder.vault.open(path, text)


def reanalyse(ls: EchoesServer, folder: Folder, uri: str, path: str) -> None:
    changed = update_overlay(ls, folder, uri, path)
    if ls.pull:
        # The client pulls this document itself; others may need a refresh.
        if changed:
            ls.after_change(folder, changed)
        return
    ls.publish(uri)
    ls.after_change(folder, changed)


async def resync(ls: EchoesServer, folder: Folder) -> None:
    """Bring the model up to date with what the runtime just wrote."""
    changes = await asyncio.get_event_loop().run_in_executor(None, folder.vault.stat_changes)
    for path, deleted in changes:
        disk_event(ls, folder, path, deleted)
    ls.schedule_status()


async def hydrate_after_save(ls: EchoesServer, folder: Folder) -> None:
    """Refresh the local index through the runtime's `hydrate` (see `index_refresh`)."""
    try:
        await ls.run_runtime(folder, ["hydrate"], quiet=True)
    except Exception as error:  # the runtime refused: the index stays as it is (EV403)
        ls.log(f"EchoesVault hydrate after save failed: {error}")
        return
    await resync(ls, folder)
    ls.refresh_paths([os.path.join(folder.vault.root, rules.INDEX_NAME)])


def flush(ls: EchoesServer, folder: Folder, uri: str, path: str) -> None:
    timer = ls.timers.pop(uri, None)
    if timer is not None:
        timer.cancel()
    changed = update_overlay(ls, folder, uri, path)
    ls.publish(uri)
    ls.after_change(folder, changed)


def disk_event(ls: EchoesServer, folder: Folder, path: str, deleted: bool) -> None:
    """A change made outside the editor (agents, git, Obsidian) or by a file operation. The
    disk has the last word: a path reported deleted that is still there is looked at again,
    and a folder is compared with the disk file by file, so that a client's notification
    naming `pages/` forgets no page that still exists."""
    path = os.path.abspath(path)
    vault = folder.vault
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
    extra: List[str] = []
    if deleted:
        changed = folder.vault.remove(path)
        if is_open and ls.is_large(uri):
            ls.base_hashes[uri] = None
            ls.refresh_large(folder, uri, path)
        elif is_open:
            # Keep analysing the buffer of a page deleted while open.
            text = ls.document_text(uri) or ""
            changed |= folder.vault.open(path, text)
            ls.base_hashes[uri] = None
            extra.append(path)
    elif is_open:
        entry = folder.vault.entries.get(path)
        if entry is not None:
            entry.stamp = stamp_of(path)
        if check_disk(ls, uri, path):
            extra.append(path)
        changed = set()
    else:
        changed = folder.vault.update(path)
        extra.append(path)
    ls.after_change(folder, changed, extra)


WATCHED_POLL_FLOOR = 10.0


async def poll_disk(ls: EchoesServer) -> None:
    """Notice other programs' changes by file metadata: every `pollInterval` seconds without a
    file watcher, and at most every 10 s as a safety net when the client watches files."""
    while True:
        interval = ls.settings.poll_interval
        if ls.watching and interval > 0:
            interval = max(interval, WATCHED_POLL_FLOOR)
        await asyncio.sleep(interval if interval > 0 else 5)
        if interval <= 0:
            continue
        for folder in list(ls.folders.values()):
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
    Feature(types.INITIALIZE, initialize),
    Feature(types.INITIALIZED, initialized),
    Feature(types.SHUTDOWN, shutdown),
    Feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration),
    Feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, did_change_folders),
    Feature(types.TEXT_DOCUMENT_DID_OPEN, did_open),
    Feature(types.TEXT_DOCUMENT_DID_CHANGE, did_change),
    Feature(types.TEXT_DOCUMENT_WILL_SAVE, will_save),
    Feature(types.TEXT_DOCUMENT_DID_SAVE, did_save),
    Feature(types.TEXT_DOCUMENT_DID_CLOSE, did_close),
    Feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, did_change_watched),
    Feature(types.WORKSPACE_DID_CREATE_FILES, did_create_files, FILE_FILTERS),
    Feature(types.WORKSPACE_DID_DELETE_FILES, did_delete_files, FILE_FILTERS),
    Feature(types.WORKSPACE_DID_RENAME_FILES, did_rename_files, FILE_FILTERS),
    Feature(types.TEXT_DOCUMENT_DIAGNOSTIC, document_diagnostic, PULL_OPTIONS),
    Feature(types.WORKSPACE_DIAGNOSTIC, workspace_diagnostic),
]
