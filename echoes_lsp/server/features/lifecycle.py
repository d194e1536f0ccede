"""The session: `initialize` (settings, pull or push diagnostics, position encoding, the
workspace folders with a vault), `initialized` (settings pulled, file watching registered, the
poller started), `shutdown`, and changes of the configuration and of the workspace folders."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from lsprotocol import types

from ...runtime import echoes_vault as rules
from ..echoes_server import EchoesServer
from ..lsp_convert import uri_to_path
from . import Feature, view_refresh
from .diagnostics import choose_pull_or_push
from .file_events import VAULT_GLOB, poll_disk, polling_notice

# How long the server waits for the client's answer to `workspace/configuration`.
CONFIGURATION_WAIT = 5


def has_vault(path: str) -> bool:
    return os.path.isdir(os.path.join(path, rules.VAULT_DIR))


def initialize(ls: EchoesServer, params: types.InitializeParams) -> None:
    ls.adopt_workspace()
    ls.adopt_client(params)
    if params.initialization_options is not None:
        ls.apply_settings(params.initialization_options)
    choose_pull_or_push(ls, params.capabilities)
    for folder in ls.workspace.folders.values():
        path = uri_to_path(folder.uri)
        if path and has_vault(path):
            ls.add_folder(path)
    root = ls.workspace.root_path
    if not ls.folders() and root and has_vault(root):
        ls.add_folder(root)


async def initialized(ls: EchoesServer, params: types.InitializedParams) -> None:
    ls.initialized.set()
    if ls.capability("workspace.configuration"):
        await pull_configuration(ls)
        ls.refresh_open()
    registered = False
    if ls.capability("workspace.did_change_watched_files.dynamic_registration"):
        registered = await watch_vaults(ls)
    # Poll even with a watcher (more slowly): some clients' watchers report only the
    # editor's own writes, and agents, git and Obsidian write behind the editor's back. A
    # watcher that misses a replace by rename (how the runtime writes) counts as none.
    watching = registered and ls.support.watcher_sees_renames
    ls.log(polling_notice(ls, registered, watching))
    ls.scheduler.start_polling(poll_disk(ls, watching))
    ls.schedule_status()


async def watch_vaults(ls: EchoesServer) -> bool:
    """Ask the client to report changes to the vaults' files; whether it agreed."""
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
    except Exception as error:
        ls.log(f"file watching registration failed ({error}); polling instead")
        return False
    return True


def shutdown(ls: EchoesServer, params: Any) -> None:
    ls.scheduler.stop()


async def did_change_configuration(
    ls: EchoesServer, params: types.DidChangeConfigurationParams
) -> None:
    hints = (ls.settings.hint_block_text, ls.settings.hint_deprecated)
    if ls.capability("workspace.configuration"):
        await pull_configuration(ls)
    elif params.settings is not None:
        ls.apply_settings(params.settings)
    ls.refresh_open()
    if hints != (ls.settings.hint_block_text, ls.settings.hint_deprecated):
        view_refresh.refresh(ls)  # the hints shown follow the settings at once


def did_change_folders(ls: EchoesServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    for removed in params.event.removed:
        path = uri_to_path(removed.uri)
        if path:
            ls.remove_folder(path)
    for added in params.event.added:
        path = uri_to_path(added.uri)
        if path and has_vault(path):
            ls.add_folder(path)


async def pull_configuration(ls: EchoesServer) -> None:
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="echoes")])
            ),
            timeout=CONFIGURATION_WAIT,
        )
    except Exception as error:
        ls.log(f"workspace/configuration failed: {error}")
        return
    if result and result[0] is not None:
        ls.apply_settings(result[0])


FEATURES = [
    Feature(types.INITIALIZE, initialize),
    Feature(types.INITIALIZED, initialized),
    Feature(types.SHUTDOWN, shutdown),
    Feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration),
    Feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, did_change_folders),
]
