"""The server object: the vault model of each workspace, the client's settings and capabilities,
the failure counter, and the operations several features share (publishing diagnostics, running
the runtime). The rest of its state belongs to objects it holds, one per concern:

- `save_safety` (`SaveSafety`): the base hash of each open page and the EV701 of stale ones;
- `large_documents` (`LargeDocuments`): the worker thread for documents too large for the loop;
- `scheduler` (`Scheduler`): debounce timers, status and code-lens notifications, the disk poller
  and background tasks;
- `renames` (`Renames`): renames this server asked the client for;
- `token_rows` (`RowMemory`): semantic-token and inlay-hint rows of the open pages;
- `fold_memories` (`FoldMemories`): the folds of each heading section of the open pages.

Features call their methods; none edits their containers. It sits below `server/features/`, which
import it; `server/app.py` registers the features on it. Nothing here imports a feature module.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter

from .. import __version__
from ..engine.catalog import prepare_steps
from ..engine.findings import (
    Finding,
    apply_policy,
    cap,
    diagnose,
    hidden_bom_finding,
    kept_findings,
    read_only_finding,
)
from ..engine.fuzzy import Steps
from ..engine.vault import PAGE, Vault, find_workspace, read_text
from ..runtime import echoes_vault as rules
from ..runtime_client import RuntimeCall, RuntimeFailure, run, warnings_of
from .buffers import Buffers
from .client_settings import Settings, parse_settings
from .client_support import ClientSupport, declared
from .fold_memory import FoldMemories
from .large_documents import LargeDocuments
from .lsp_convert import (
    Columns,
    is_text,
    path_to_uri,
    request_failed,
    shown,
    to_diagnostic,
    uri_to_path,
)
from .save_safety import SaveSafety
from .scheduler import Scheduler
from .token_rows import RowMemory
from .transport import EchoesProtocol, strict_converter
from .vault_folder import Folder

log = logging.getLogger("echoes_lsp")
T = TypeVar("T")
# Indexing parses files in batches until a step has taken this long, then lets requests in.
INDEX_STEP_SECONDS = 0.008
INDEX_BATCH = 20
RENAME_MEMORY = 30.0
# URIs already reported as ignored (each is logged once), forgotten past this many.
IGNORED_MEMORY = 1000
STRICT_ENV = "ECHOES_LSP_STRICT"
# The start of every message that reports an unexpected failure (a bug) to the person.
INTERNAL_ERROR = "echoes-lsp internal error"


async def sliced(steps: Steps[T]) -> T:
    """Run a sliced computation (a generator that yields between slices of its work, such as
    `link_targets.page_search`) on the event loop, letting other requests in after each slice.
    What a slice made (the page catalog, as long-lived as the model) is moved out of the
    collector's sight, as indexing does, so that no collection walks it in a later slice."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        gc.freeze()
        await asyncio.sleep(0)


class Renames:
    """Renames this server asked the client to perform, so that the client's own
    `willRenameFiles` for them does not update the links a second time."""

    def __init__(self) -> None:
        self._expected: Dict[Tuple[str, str], float] = {}

    def expect(self, old: str, new: str) -> None:
        now = time.monotonic()
        self._expected = {pair: until for pair, until in self._expected.items() if until > now}
        self._expected[(old, new)] = now + RENAME_MEMORY

    def claim(self, old: str, new: str) -> bool:
        until = self._expected.pop((old, new), None)
        return until is not None and until > time.monotonic()


class IndexProgress:
    """Work-done progress of the indexing of one vault, when the client shows it."""

    def __init__(self, ls: EchoesServer, token: str, total: int) -> None:
        self.ls = ls
        self.token = token
        self.total = total
        self.shown = False
        self.percentage = 0

    async def begin(self) -> None:
        try:
            await self.ls.work_done_progress.create_async(self.token)
            self.ls.work_done_progress.begin(
                self.token,
                types.WorkDoneProgressBegin(
                    title="EchoesVault", message=f"indexing {self.total} files", percentage=0
                ),
            )
        except Exception:
            return
        self.shown = True

    def report(self, remaining: int) -> None:
        done = self.total - remaining
        percentage = int(done * 100 / self.total) if self.total else 100
        if self.shown and percentage != self.percentage:
            self.percentage = percentage
            self.ls.work_done_progress.report(
                self.token,
                types.WorkDoneProgressReport(message=f"{done}/{self.total}", percentage=percentage),
            )

    def end(self) -> None:
        if self.shown:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message="ready"))


class EchoesServer(LanguageServer):
    """State: one vault model per workspace, the negotiated client features, the failure count,
    and one object per concern (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(
            "echoes-lsp",
            __version__,
            protocol_cls=EchoesProtocol,
            converter_factory=strict_converter(default_converter),
        )
        self.settings = Settings()
        # What the client declared it can do (`initialize`); one rule for every feature.
        self.support = ClientSupport()
        self._folders: Dict[str, Folder] = {}
        self.columns = Columns()
        self.pull = False
        self.pull_refresh = False
        self.initialized = asyncio.Event()
        self.renames = Renames()
        # Unexpected exceptions caught so far (see `guard.guarded`); with ECHOES_LSP_STRICT=1 (the
        # test suite sets it) they are re-raised rather than answered, so a bug fails a test.
        self.failures = 0
        self.strict = os.environ.get(STRICT_ENV) == "1"
        self.scheduler = Scheduler(self.report_failure)
        self.save_safety = SaveSafety()
        # Semantic-token and inlay-hint rows of the open pages, kept between requests.
        self.token_rows = RowMemory()
        # The folds of each heading section of the open pages, kept between folding requests.
        self.fold_memories = FoldMemories()
        self.large_documents = LargeDocuments(self, self.scheduler)
        self._ignored: Set[str] = set()  # URIs already logged as ignored
        # How many diagnostics each open document (by path) shows now: the status's problems in
        # open files.
        self._shown: Dict[str, int] = {}

    def report_failure(
        self, what: str, error: Optional[BaseException] = None, show: bool = True
    ) -> str:
        """Log an unexpected exception (by default the one being handled) with its traceback,
        count it, and (if `show`) tell the person. Returns the sentence shown, which names the
        exception's type only: its text may quote a document."""
        self.failures += 1
        error = error if error is not None else sys.exc_info()[1]
        log.error("%s failed", what, exc_info=error if error is not None else True)
        kind = type(error).__name__ if error is not None else "error"
        message = f"{INTERNAL_ERROR}: {what} failed ({kind}); the server log has the details"
        if show:
            self.show(message, types.MessageType.Error)
        return message

    # -- the client ------------------------------------------------------------------------------

    def adopt_workspace(self) -> None:
        """Replace the workspace pygls made for `initialize` (it holds no document yet) with one
        whose documents apply edits in time proportional to the edit (see `buffers`), and take
        its negotiated position encoding."""
        made = self.workspace
        self.protocol._workspace = Buffers(
            made.root_uri,
            made._sync_kind,
            list(made.folders.values()),
            made.position_encoding,
        )
        self.columns = Columns.negotiated(self.workspace.position_encoding)

    def adopt_client(self, params: types.InitializeParams) -> None:
        """Read once what the client can do; see `client_support`."""
        self.support = ClientSupport.of(params)

    def use_diagnostics(self, pull: bool, refresh: bool) -> None:
        """Pull diagnostics when `pull`, else push them; `refresh`: the client can be asked to
        pull again. Not advertising pull diagnostics keeps a pull-capable client (Neovim) from
        showing every diagnostic twice, once pulled and once pushed."""
        self.pull = pull
        self.pull_refresh = refresh
        if not pull:
            for method in (types.TEXT_DOCUMENT_DIAGNOSTIC, types.WORKSPACE_DIAGNOSTIC):
                self.protocol.fm.features.pop(method, None)
                self.protocol.fm.feature_options.pop(method, None)

    def capability(self, path: str, default: Any = None) -> Any:
        """A client capability by dotted attribute path (`text_document.definition.link_support`)."""
        value = declared(self.client_capabilities, path)
        return default if value is None else value

    # -- folders ---------------------------------------------------------------------------------

    def folders(self) -> List[Folder]:
        """The workspaces with a vault, in the order they were added."""
        return list(self._folders.values())

    def folder_for_path(self, path: Optional[str], create: bool = True) -> Optional[Folder]:
        """The vault holding `path`, loading it on first use. Only a vault the path names
        lies in is loaded: never one that a symbolic link on the way leads to."""
        if not path or "\x00" in path or not is_text(path):
            return None
        for workspace, folder in self._folders.items():
            if path == workspace or in_vault(folder, path):
                return folder
        if not create:
            return None
        found = find_workspace(path)
        if found is None:
            return None
        root = os.path.join(found, rules.VAULT_DIR)
        if path != found and path != root and not path.startswith(root + os.sep):
            return None
        return self.add_folder(found)

    def folder_for_uri(self, uri: str) -> Optional[Folder]:
        return self.folder_for_path(uri_to_path(uri))

    def ignore(self, uri: str, reason: str) -> None:
        """Log, once per URI, that a URI the client sent was ignored and why."""
        if uri in self._ignored:
            return
        if len(self._ignored) >= IGNORED_MEMORY:
            self._ignored.clear()
        self._ignored.add(uri)
        shown = repr(uri if len(uri) <= 300 else uri[:300] + "…")
        self.log(f"echoes-lsp ignored {shown}: {reason}")

    def add_folder(self, workspace: str) -> Folder:
        """The folder of `workspace`, its vault listed now and parsed in the background."""
        workspace = os.path.abspath(workspace)
        existing = self._folders.get(workspace)
        if existing is not None:
            return existing
        vault = Vault(workspace, self.settings.exclude)
        vault.load()
        folder = Folder(workspace, vault)
        self._folders[workspace] = folder
        if vault.linked is not None:
            self.show(
                f"{vault.read_only_reason}: the vault is read-only"
                + (", and nothing in it is read" if vault.reads_nothing else ""),
                types.MessageType.Warning,
            )
        elif vault.marker.present and not vault.marker.writable:
            # a marker that cannot be read, or of another protocol: read, checked, never written
            self.show(
                f"EchoesVault: the {vault.marker.problem}: the vault is read-only (EV700)",
                types.MessageType.Warning,
            )
        self.scheduler.spawn(self.finish_loading(folder))
        return folder

    def remove_folder(self, workspace: str) -> None:
        self._folders.pop(os.path.abspath(workspace), None)

    def default_folder(self, workspace_uri: Optional[str] = None) -> Folder:
        """The folder a command targets: explicit, else the only/first one."""
        if workspace_uri:
            path = uri_to_path(workspace_uri) if "://" in workspace_uri else workspace_uri
            if path:
                folder = self.folder_for_path(os.path.abspath(path))
                if folder is not None:
                    return folder
                if os.path.isdir(path):
                    return self.add_folder(path)
            raise request_failed(f"no EchoesVault workspace at {workspace_uri}")
        if self._folders:
            return next(iter(self._folders.values()))
        raise request_failed("no workspace with an EchoesVault/ folder is open")

    async def finish_loading(self, folder: Folder) -> None:
        """Parse the whole vault in chunks so requests are served meanwhile."""
        token = f"echoes-load-{len(self._folders)}-{id(folder)}"
        try:
            await asyncio.wait_for(self.initialized.wait(), timeout=5)
        except asyncio.TimeoutError:
            pass
        vault = folder.vault
        progress = IndexProgress(self, token, len(vault.pending))
        if self.progress_supported() and progress.total > 10 * INDEX_BATCH:
            await progress.begin()
        await self.large_documents.index_large_files(vault)
        while vault.pending:
            deadline = time.perf_counter() + INDEX_STEP_SECONDS
            remaining = vault.parse_pending(INDEX_BATCH)
            while remaining and time.perf_counter() < deadline:
                remaining = vault.parse_pending(INDEX_BATCH)
            # What was parsed lives as long as the model: out of the collector's sight, so that
            # full collections (which would walk every parsed page) do not pause requests.
            gc.freeze()
            progress.report(remaining)
            await asyncio.sleep(0)
        folder.loaded.set()
        # The model is long-lived: move it out of the collector's sight so that full collections
        # (which would walk every parsed page) do not pause requests.
        gc.collect()
        gc.freeze()
        self.refresh_open(folder)
        try:
            # Indexing ends with the page catalog and its search index made, a slice at a time,
            # so that the first `[[` completion or symbol search does not make them.
            await sliced(prepare_steps(vault))
        finally:
            folder.searchable.set()
        progress.end()
        self.schedule_status()

    def progress_supported(self) -> bool:
        return bool(self.capability("window.work_done_progress"))

    # -- documents -------------------------------------------------------------------------------

    def open_document(self, uri: str) -> Any:
        """The open document for a URI in any quoting: the one lookup of an open buffer."""
        documents = self.workspace.text_documents
        return documents.get(uri) or documents.get(unquote(uri))

    def open_uris(self) -> List[str]:
        """URIs of the open documents that lie in a loaded vault, in the quoted form this server
        publishes: the documents it analyses (others, Markdown elsewhere, are left alone)."""
        uris = []
        for key in list(self.workspace.text_documents):
            path = uri_to_path(key)
            folder = self.folder_for_path(path, create=False)
            if path is not None and folder is not None and folder.vault.confines(path):
                uris.append(path_to_uri(path))
        return uris

    def document_text(self, uri: str) -> Optional[str]:
        document = self.open_document(uri)
        if document is None:
            return None
        return rules.normalize_newlines(document.source)

    def lines_of(self, path: str) -> List[str]:
        """Lines of a file: the open buffer when there is one, else the disk."""
        uri = path_to_uri(path)
        text = self.document_text(uri)
        if text is None:
            text, _error = read_text(path)
        return (text or "").split("\n")

    # -- diagnostics -----------------------------------------------------------------------------

    def findings(self, uri: str) -> List[Finding]:
        path = uri_to_path(uri)
        folder = self.folder_for_path(path)
        if folder is None or path is None:
            return []
        vault = folder.vault
        entry = vault.entries.get(path)
        results = diagnose(vault, path) if entry else []
        if entry is None or entry.kind != PAGE:  # a page's own EV702 comes with `diagnose`
            results.extend(kept_findings(vault, path))
        reason = read_only_finding(vault) if not vault.writable else None
        if reason is not None and path == vault.root and vault.reads_nothing:
            results.append(reason)  # a linked vault, in the workspace's report
        elif reason is not None and self.document_text(uri) is not None:
            on_marker = reason.code == "EV700" and vault.rel(path) == rules.MARKER_NAME
            results.append(
                reason if on_marker else Finding(reason.code, reason.message, 0, 0, 0, 0)
            )
        document = self.open_document(uri)
        hidden = hidden_bom_finding(folder.vault, path, document.source) if document else None
        if hidden is not None:
            results.append(hidden)
        stale = self.save_safety.stale_finding(uri)
        if stale is not None:
            results.append(stale)
        return results

    def diagnostics(self, uri: str) -> List[types.Diagnostic]:
        path = uri_to_path(uri)
        if path is None:
            return []
        policy = self.settings.policy()
        decided = cap(apply_policy(self.findings(uri), policy), self.settings.max_per_document)
        if not decided:
            return []  # the file's lines are read only to place a diagnostic
        lines = self.lines_of(path)
        return [
            to_diagnostic(finding, severity, lines, self.columns, self.lines_of)
            for finding, severity in decided
        ]

    async def diagnostics_async(self, uri: str) -> List[types.Diagnostic]:
        """`diagnostics`, computed in the worker thread for a large document."""
        folder = self.folder_for_uri(uri)
        if folder is None or not self.large_documents.is_large(uri):
            return self.diagnostics(uri)
        return await self.large_documents.diagnostics(folder, uri, self.diagnostics)

    def note_shown(self, uri: str, count: int) -> None:
        """An open document now shows `count` diagnostics; the status follows when that
        changes."""
        path = uri_to_path(uri)
        if path is None:
            return
        if self.open_document(uri) is None:
            count = 0
        before = self._shown.pop(path, 0)  # by path: clients quote the same URI differently
        if count:
            self._shown[path] = count
        if count != before:
            self.schedule_status()

    def open_problems(self, folder: Folder) -> int:
        """The diagnostics the open documents of a workspace show."""
        return sum(
            n
            for path, n in self._shown.items()
            if self.folder_for_path(path, create=False) is folder
        )

    async def publish_now(self, uri: str) -> None:
        diagnostics = await self.diagnostics_async(uri)
        document = self.open_document(uri)
        if document is None:
            return
        self.note_shown(uri, len(diagnostics))
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, diagnostics=diagnostics, version=document.version
            )
        )

    def publish(self, uri: str) -> None:
        if self.pull:
            return
        if self.large_documents.is_large(uri):
            folder = self.folder_for_uri(uri)
            path = uri_to_path(uri)
            if folder is not None and path is not None:
                self.large_documents.refresh(folder, uri, path)
                return
        document = self.open_document(uri)
        diagnostics = self.diagnostics(uri)
        self.note_shown(uri, len(diagnostics))
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                diagnostics=diagnostics,
                version=document.version if document else None,
            )
        )

    def clear_diagnostics(self, uri: str) -> None:
        """A closed document shows nothing (pushed diagnostics stay until replaced)."""
        self.note_shown(uri, 0)
        if not self.pull:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    def refresh_paths(self, paths: Sequence[str]) -> None:
        """Re-report diagnostics for these files (open ones when pushing; all when pulling)."""
        if self.pull:
            if paths and self.pull_refresh:
                self.workspace_diagnostic_refresh(None)
            return
        for path in paths:
            uri = path_to_uri(path)
            if self.open_document(uri) is not None:
                self.publish(uri)

    def refresh_open(self, folder: Optional[Folder] = None) -> None:
        uris = [
            uri for uri in self.open_uris() if folder is None or self.folder_for_uri(uri) is folder
        ]
        if self.pull:
            if self.pull_refresh:
                self.workspace_diagnostic_refresh(None)
            return
        for uri in uris:
            self.publish(uri)

    def after_change(
        self, folder: Folder, changed_keys: Set[str], extra: Sequence[str] = ()
    ) -> None:
        """Refresh the pages that link to changed pages, and the index view."""
        dependents = set(folder.vault.dependents(changed_keys)) | set(extra)
        if changed_keys:
            index = os.path.join(folder.vault.root, rules.INDEX_NAME)
            dependents.add(index)
        self.refresh_paths(sorted(dependents))
        if changed_keys:
            self.schedule_status()

    # -- status ----------------------------------------------------------------------------------

    def schedule_status(self) -> None:
        self.scheduler.status_soon(self.send_status)

    def send_status(self) -> None:
        for folder in self.folders():
            try:
                self.protocol.notify(
                    "echoes/statusChanged", folder.status(self.open_problems(folder))
                )
            except Exception:
                log.exception("status notification failed")

    # -- runtime ---------------------------------------------------------------------------------

    def runtime_call(self, folder: Folder) -> RuntimeCall:
        return RuntimeCall(
            workspace=folder.workspace,
            python=self.settings.python,
            timeout=self.settings.timeout,
            agent=self.settings.agent,
        )

    async def run_runtime(
        self,
        folder: Folder,
        args: Sequence[str],
        payload: Optional[Dict[str, Any]] = None,
        mutating: bool = True,
        quiet: bool = False,
    ) -> Any:
        """Run the project runtime off the event loop. Failures become LSP errors and a message."""
        if mutating and not folder.writable and args[0] not in ("init", "migrate"):
            message = f"EchoesVault is read-only here: {folder.vault.read_only_reason}"
            self.show(message, types.MessageType.Warning)
            raise shown(request_failed(message, {"code": "read-only"}))
        try:
            result = await asyncio.get_event_loop().run_in_executor(
                None, lambda: run(self.runtime_call(folder), list(args), payload)
            )
        except RuntimeFailure as failure:
            error = request_failed(failure.message, {"code": failure.code})
            if not quiet:
                self.show(
                    f"EchoesVault {args[0]} failed: {failure.message}", types.MessageType.Error
                )
                shown(error)
            raise error from failure
        self.warn_of(args[0], result)
        return result

    def warn_of(self, command: str, result: Any) -> None:
        """A runtime result's `warnings`, shown once and logged on one line: the command took
        effect, but something after its commit point (or an earlier writer's leftover) needs
        attention. The result itself keeps them for the client."""
        found = warnings_of(result)
        if not found:
            return
        message = f"EchoesVault {command} took effect, with warnings: " + " · ".join(found)
        self.show(message, types.MessageType.Warning)
        log.warning("%s", rules.mask_secrets(message))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        try:
            self.window_show_message(
                types.ShowMessageParams(type=kind, message=rules.mask_secrets(message))
            )
        except Exception:
            log.exception("showMessage failed")

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        try:
            self.window_log_message(
                types.LogMessageParams(type=kind, message=rules.mask_secrets(message))
            )
        except Exception:
            pass

    # -- settings --------------------------------------------------------------------------------

    def apply_settings(self, raw: Any) -> None:
        settings = parse_settings(raw, self.settings)
        if settings.errors:
            self.show(
                "echoes-lsp settings: " + "; ".join(settings.errors) + " (defaults used)",
                types.MessageType.Warning,
            )
        exclude_changed = settings.exclude != self.settings.exclude
        self.settings = settings
        if exclude_changed:
            for folder in self.folders():
                self.reload(folder)

    def reload(self, folder: Folder) -> None:
        """List the vault again (the excluded paths changed), keep its open buffers, and parse
        it in the background."""
        folder.vault.exclude = self.settings.exclude
        folder.vault.load()
        for uri in self.open_uris():
            path = uri_to_path(uri)
            if path and self.folder_for_path(path, create=False) is folder:
                folder.vault.open(path, self.document_text(uri) or "")
        self.scheduler.spawn(self.finish_loading(folder))


def in_vault(folder: Folder, path: str) -> bool:
    """Whether `path` is the vault folder of `folder` or inside it."""
    root = folder.vault.root
    return path == root or path.startswith(root + os.sep)
