"""Document sync: `didOpen`, `didChange` (incremental, debounced), `willSave`, `didSave` and
`didClose`. An open buffer counts as the page; its base hash for a checked save is taken when it
opens and when the editor saves it."""

from __future__ import annotations

import os

from lsprotocol import types

from ...runtime import echoes_vault as rules
from .. import hydrate_on_save
from ..echoes_server import EchoesServer
from ..model_sync import apply_now, reanalyse, resync
from ..vault_folder import Folder
from . import Feature
from .document_context import locate


def did_open(ls: EchoesServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    located = locate(ls, uri)
    if located is None:
        return
    folder, path = located
    text = ls.document_text(uri)  # as the buffer holds it: Unicode text (see `buffers`)
    if text is None:
        return
    ls.save_safety.opened(uri, path, text)
    if ls.large_documents.is_large(uri):
        ls.large_documents.refresh(folder, uri, path)
        return
    changed = folder.vault.open(path, text)
    ls.publish(uri)
    ls.after_change(folder, changed)


def did_change(ls: EchoesServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    located = locate(ls, uri)
    if located is None:
        return
    folder, path = located
    delay = ls.settings.debounce_ms / 1000.0
    ls.scheduler.debounce(uri, delay, lambda: reanalyse(ls, folder, uri, path))


def will_save(ls: EchoesServer, params: types.WillSaveTextDocumentParams) -> None:
    """Warn before a plain save overwrites a change made on disk since the page was opened."""
    uri = params.text_document.uri
    located = locate(ls, uri)
    if located is None:
        return
    _folder, path = located
    changed = ls.save_safety.check_disk(uri, path, ls.document_text(uri))
    if changed and ls.save_safety.is_stale(uri):
        ls.show(
            f"{os.path.basename(path)} changed on disk since it was opened; a plain save "
            "overwrites that change. Use “Save through EchoesVault” for a checked save.",
            types.MessageType.Warning,
        )
        ls.publish(uri)


def did_save(ls: EchoesServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    located = locate(ls, uri)
    if located is None:
        return
    folder, path = located
    ls.save_safety.saved_by_editor(uri, path)
    apply_now(ls, folder, uri, path)
    if hydrate_on_save.hydrate_wanted(
        folder.vault, path, ls.settings.hydrate_on_save, folder.writable
    ):
        # logged as it starts, before this notification's handling ends: a client can tell
        # that a save started none
        ls.log(f"{hydrate_on_save.HYDRATE_LOG} after saving {os.path.basename(path)}")
        ls.scheduler.spawn(hydrate_after_save(ls, folder))


def did_close(ls: EchoesServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.scheduler.cancel(uri)
    ls.save_safety.closed(uri)
    ls.fold_memories.closed(uri)
    located = locate(ls, uri, create=False)
    if located is None:
        return
    folder, path = located
    changed = folder.vault.close(path)
    ls.clear_diagnostics(uri)
    ls.after_change(folder, changed)


async def hydrate_after_save(ls: EchoesServer, folder: Folder) -> None:
    """Refresh the local index through the runtime's `hydrate` (see `hydrate_on_save`)."""
    try:
        await ls.run_runtime(folder, ["hydrate"], quiet=True)
    except Exception as error:  # the runtime refused: the index stays as it is (EV403)
        ls.log(f"EchoesVault hydrate after save failed: {error}")
        return
    await resync(ls, folder)
    ls.refresh_paths([os.path.join(folder.vault.root, rules.INDEX_NAME)])


FEATURES = [
    Feature(types.TEXT_DOCUMENT_DID_OPEN, did_open),
    Feature(types.TEXT_DOCUMENT_DID_CHANGE, did_change),
    Feature(types.TEXT_DOCUMENT_WILL_SAVE, will_save),
    Feature(types.TEXT_DOCUMENT_DID_SAVE, did_save),
    Feature(types.TEXT_DOCUMENT_DID_CLOSE, did_close),
]
