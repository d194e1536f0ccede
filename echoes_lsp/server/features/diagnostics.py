"""Diagnostics, pulled or pushed. Pull (`textDocument/diagnostic`, `workspace/diagnostic`) is
used when the client supports it and can be asked to pull again; otherwise the server pushes
(`EchoesServer.publish`, after each change) and the pull methods are not advertised."""

from __future__ import annotations

import asyncio
from typing import List

from lsprotocol import types

from ...engine.findings import checked_paths, vault_findings
from ..echoes_server import EchoesServer
from ..lsp_convert import path_to_uri
from ..model_sync import apply_pending
from ..vault_folder import Folder
from . import Feature
from .document_context import locate

# Files a workspace diagnostic report diagnoses between two turns of the event loop.
WORKSPACE_STEP = 50
PULL_OPTIONS = types.DiagnosticOptions(
    identifier="echoes", inter_file_dependencies=True, workspace_diagnostics=True
)


def choose_pull_or_push(ls: EchoesServer, caps: types.ClientCapabilities) -> None:
    """Pull only when the client can also be told to re-pull; otherwise pages that link to a
    changed page would keep stale diagnostics until edited."""
    pull = bool(caps.text_document and caps.text_document.diagnostic is not None)
    refresh = bool(
        caps.workspace and caps.workspace.diagnostics and caps.workspace.diagnostics.refresh_support
    )
    ls.use_diagnostics(pull=pull and refresh, refresh=refresh)


async def document_diagnostic(
    ls: EchoesServer, params: types.DocumentDiagnosticParams
) -> types.RelatedFullDocumentDiagnosticReport:
    if locate(ls, params.text_document.uri) is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    apply_pending(ls, params.text_document.uri)
    items = await ls.diagnostics_async(params.text_document.uri)
    ls.note_shown(params.text_document.uri, len(items))
    return types.RelatedFullDocumentDiagnosticReport(items=items)


async def workspace_diagnostic(
    ls: EchoesServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    """Every file with diagnostics, diagnosed a few files at a time: at 50,000 pages the whole
    report takes seconds, and requests are answered between the steps."""
    items: List[types.WorkspaceDocumentDiagnosticReport] = []
    for folder in ls.folders():
        await folder.loaded.wait()  # the background indexing finishes first, in its own steps
        items += await folder_reports(ls, folder)
    return types.WorkspaceDiagnosticReport(items=items)


async def folder_reports(
    ls: EchoesServer, folder: Folder
) -> List[types.WorkspaceDocumentDiagnosticReport]:
    """The reports of one vault's files that have diagnostics or are open."""
    vault = folder.vault
    paths = checked_paths(vault)
    whole = list(vault_findings(vault))  # the marker, or a linked vault
    paths.extend(whole)
    items: List[types.WorkspaceDocumentDiagnosticReport] = []
    for count, path in enumerate(paths, 1):
        if count % WORKSPACE_STEP == 0:
            await asyncio.sleep(0)
        if path not in whole and path not in vault.entries:
            continue  # removed while the report was being made
        uri = path_to_uri(path)
        diagnostics = ls.diagnostics(uri)
        document = ls.open_document(uri)
        if document is not None:
            ls.note_shown(uri, len(diagnostics))
        if diagnostics or document is not None:
            items.append(
                types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri,
                    items=diagnostics,
                    version=document.version if document else None,
                )
            )
    return items


FEATURES = [
    Feature(types.TEXT_DOCUMENT_DIAGNOSTIC, document_diagnostic, PULL_OPTIONS),
    Feature(types.WORKSPACE_DIAGNOSTIC, workspace_diagnostic),
]
