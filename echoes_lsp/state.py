"""The server object: its state (one vault model per workspace, open-page base hashes, timers,
the failure counter) and the operations on it that several features share.

It sits below `echoes_lsp/features/`, which import it; `server.py` registers the features on it.
Nothing here imports a feature module.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter

from . import __version__
from .buffers import Buffers
from .diagnose import Finding, apply_policy, cap, diagnose, hidden_bom_finding, read_only_finding
from .fuzzy import Steps
from .lsp_util import (
    Columns,
    is_text,
    path_to_uri,
    request_failed,
    shown,
    to_diagnostic,
    uri_problem,
    uri_to_path,
)
from .runtime import echoes_vault as rules
from .runtime_client import RuntimeCall, RuntimeFailure, run
from .settings import Settings, parse_settings
from .transport import strict_converter
from .vault import Vault, find_workspace, larger_than, prepare, prepare_file, read_text

log = logging.getLogger("echoes_lsp")
T = TypeVar("T")
# Indexing parses files in batches until a step has taken this long, then lets requests in.
INDEX_STEP_SECONDS = 0.008
INDEX_BATCH = 20
# Open documents longer than this (in characters) are analysed and diagnosed off the event loop,
# so that no request waits more than a few milliseconds behind them.
LARGE_TEXT = 128 * 1024
RENAME_MEMORY = 30.0
# URIs already reported as ignored (each is logged once), forgotten past this many.
IGNORED_MEMORY = 1000
STRICT_ENV = "ECHOES_LSP_STRICT"
# The start of every message that reports an unexpected failure (a bug) to the person.
INTERNAL_ERROR = "echoes-lsp internal error"


def uncollected(function: Callable[..., Any], *args: Any) -> Any:
    """Call `function` with the cyclic garbage collector paused. Analysing a large document
    makes hundreds of thousands of objects and no cycles; left on, the collector runs a full
    collection of the whole heap (40-80 ms) every few of them, holding the interpreter lock
    that the event loop is waiting for. Only the one large-document worker thread calls this."""
    gc.disable()
    try:
        return function(*args)
    finally:
        # Everything made meanwhile is young; the first collection after `enable` would walk
        # it all (30 ms for a page of 200,000 links). It is kept (the analysis) or freed by
        # reference counting, never by the collector: out of its sight.
        gc.freeze()
        gc.enable()


async def sliced(steps: Steps[T]) -> T:
    """Run a sliced computation (a generator that yields between slices of its work, such as
    `navigation.page_search`) on the event loop, letting other requests in after each slice.
    What a slice made (the page catalog, as long-lived as the model) is moved out of the
    collector's sight, as indexing does, so that no collection walks it in a later slice."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        gc.freeze()
        await asyncio.sleep(0)


@dataclass
class Folder:
    """One workspace with an `EchoesVault/`."""

    workspace: str
    vault: Vault
    loaded: asyncio.Event = field(default_factory=asyncio.Event)
    # Whether code-lens refreshes already follow this vault's link graph.
    lenses_followed: bool = False

    @property
    def writable(self) -> bool:
        return self.vault.writable


class Renames:
    """Renames this server asked the client to perform, so that the client's own
    `willRenameFiles` for them does not update the links a second time."""

    def __init__(self) -> None:
        self.expected: Dict[Tuple[str, str], float] = {}

    def expect(self, old: str, new: str) -> None:
        now = time.monotonic()
        self.expected = {pair: until for pair, until in self.expected.items() if until > now}
        self.expected[(old, new)] = now + RENAME_MEMORY

    def claim(self, old: str, new: str) -> bool:
        until = self.expected.pop((old, new), None)
        return until is not None and until > time.monotonic()


class EchoesServer(LanguageServer):
    """State: one vault model per workspace, open-page base hashes, debounce timers, renames in
    flight, and the count of unexpected failures."""

    def __init__(self) -> None:
        super().__init__(
            "echoes-lsp", __version__, converter_factory=strict_converter(default_converter)
        )
        self.settings = Settings()
        self.folders: Dict[str, Folder] = {}
        self.base_hashes: Dict[str, Optional[str]] = {}
        self.stale: Dict[str, Finding] = {}
        self.timers: Dict[str, asyncio.TimerHandle] = {}
        self.columns = Columns()
        self.pull = False
        self.pull_refresh = False
        self.background: Set[asyncio.Task[Any]] = set()
        self.poller: Optional[asyncio.Task[Any]] = None
        self.watching = False
        self.status_timer: Optional[asyncio.TimerHandle] = None
        self.initialized = asyncio.Event()
        self.renames = Renames()
        self.lens_timer: Optional[asyncio.TimerHandle] = None
        # Unexpected exceptions caught so far (see `guard.guarded`); with ECHOES_LSP_STRICT=1 (the
        # test suite sets it) they are re-raised rather than answered, so a bug fails a test.
        self.failures = 0
        self.strict = os.environ.get(STRICT_ENV) == "1"
        # Large documents are analysed and diagnosed in one worker thread, one job per URI at a
        # time; a change that arrives meanwhile is picked up when the job comes round again.
        self.large_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="echoes-large")
        self.large_jobs: Dict[str, asyncio.Task[Any]] = {}
        self.large_again: Set[str] = set()
        self.ignored: Set[str] = set()

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

    # -- folders and documents -------------------------------------------------------------------

    def use_buffers(self) -> None:
        """Replace the workspace pygls made for `initialize` (it holds no document yet) with one
        whose documents apply edits in time proportional to the edit (see `buffers`)."""
        made = self.workspace
        self.protocol._workspace = Buffers(
            made.root_uri,
            made._sync_kind,
            list(made.folders.values()),
            made.position_encoding,
        )

    def folder_for_path(self, path: Optional[str], create: bool = True) -> Optional[Folder]:
        """The vault holding `path`, loading it on first use. Only a vault the path names
        lies in is loaded: never one that a symbolic link on the way leads to."""
        if not path or "\x00" in path or not is_text(path):
            return None
        for workspace, folder in self.folders.items():
            if path == folder.vault.root or path.startswith(folder.vault.root + os.sep):
                return folder
            if path == workspace:
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

    def locate(self, uri: str, create: bool = True) -> Optional[Tuple[Folder, str]]:
        """The vault and path of a file a client names by URI, or None, with one log line per
        URI saying why: the URI names no local file (`uri_problem`), the path lies in no
        vault, or a folder on its way is a symbolic link that leads out of the vault. Every
        handler takes the URIs it is sent through here, so none of them is kept or read."""
        problem = uri_problem(uri)
        if problem is not None:
            self.ignore(uri, problem)
            return None
        path = uri_to_path(uri)
        folder = self.folder_for_path(path, create)
        if folder is None or path is None:
            self.ignore(uri, "it is not in an EchoesVault/ folder")
            return None
        if not folder.vault.confines(path):
            self.ignore(uri, "a symbolic link on its way leads out of the vault")
            return None
        return folder, path

    def ignore(self, uri: str, reason: str) -> None:
        """Log, once per URI, that a URI the client sent was ignored and why."""
        if uri in self.ignored:
            return
        if len(self.ignored) >= IGNORED_MEMORY:
            self.ignored.clear()
        self.ignored.add(uri)
        shown = repr(uri if len(uri) <= 300 else uri[:300] + "…")
        self.log(f"echoes-lsp ignored {shown}: {reason}")

    def add_folder(self, workspace: str) -> Folder:
        workspace = os.path.abspath(workspace)
        existing = self.folders.get(workspace)
        if existing is not None:
            return existing
        vault = Vault(workspace, self.settings.exclude)
        vault.load()
        folder = Folder(workspace, vault)
        self.folders[workspace] = folder
        if vault.linked is not None:
            self.show(
                f"{vault.read_only_reason}: the vault is read-only"
                + (", and nothing in it is read" if vault.reads_nothing else ""),
                types.MessageType.Warning,
            )
        self.spawn(self.finish_loading(folder))
        return folder

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
        if self.folders:
            return next(iter(self.folders.values()))
        raise request_failed("no workspace with an EchoesVault/ folder is open")

    async def finish_loading(self, folder: Folder) -> None:
        """Parse the whole vault in chunks so requests are served meanwhile."""
        token = f"echoes-load-{len(self.folders)}-{id(folder)}"
        try:
            await asyncio.wait_for(self.initialized.wait(), timeout=5)
        except asyncio.TimeoutError:
            pass
        vault = folder.vault
        total = len(vault.pending)
        progress = self.progress_supported() and total > 10 * INDEX_BATCH
        if progress:
            try:
                await self.work_done_progress.create_async(token)
                self.work_done_progress.begin(
                    token,
                    types.WorkDoneProgressBegin(
                        title="EchoesVault", message=f"indexing {total} files", percentage=0
                    ),
                )
            except Exception:
                progress = False
        await self._index_large_files(folder)
        reported = 0
        while vault.pending:
            deadline = time.perf_counter() + INDEX_STEP_SECONDS
            remaining = vault.parse_pending(INDEX_BATCH)
            while remaining and time.perf_counter() < deadline:
                remaining = vault.parse_pending(INDEX_BATCH)
            # What was parsed lives as long as the model: out of the collector's sight, so that
            # full collections (which would walk every parsed page) do not pause requests.
            gc.freeze()
            percentage = int((total - remaining) * 100 / total) if total else 100
            if progress and percentage != reported:
                reported = percentage
                self.work_done_progress.report(
                    token,
                    types.WorkDoneProgressReport(
                        message=f"{total - remaining}/{total}", percentage=percentage
                    ),
                )
            await asyncio.sleep(0)
        if progress:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="ready"))
        folder.loaded.set()
        # The model is long-lived: move it out of the collector's sight so that full collections
        # (which would walk every parsed page) do not pause requests.
        gc.collect()
        gc.freeze()
        self.refresh_open(folder)
        self.schedule_status()

    async def _index_large_files(self, folder: Folder) -> None:
        """Parse the files of more than LARGE_TEXT bytes that indexing would parse in place in
        the worker thread, one at a time, and install each on the event loop: a 5 MB page would
        otherwise be one indexing step of half a second."""
        vault = folder.vault
        loop = asyncio.get_running_loop()
        for path in await loop.run_in_executor(None, larger_than, list(vault.pending), LARGE_TEXT):
            entry = vault.entries.get(path)
            if entry is None or entry.parsed or path in vault.overlays:
                continue
            found = await loop.run_in_executor(
                self.large_pool, uncollected, prepare_file, entry.kind, entry.key, path
            )
            if found is None or vault.entries.get(path) is not entry or entry.parsed:
                continue  # unreadable (parsed in place, to report why), or changed meanwhile
            text, prepared = found
            vault.pending.discard(path)
            vault.update(path, text, prepared)
            gc.freeze()

    def progress_supported(self) -> bool:
        window = self.client_capabilities.window if self.client_capabilities else None
        return bool(window and window.work_done_progress)

    def spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self.background.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self.background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.report_failure("a background task", task.exception())

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
        results = diagnose(vault, path) if vault.entries.get(path) else []
        reason = read_only_finding(vault) if not vault.writable else None
        if reason is not None and path == vault.root and vault.reads_nothing:
            results.append(reason)  # a linked vault, in the workspace's report
        elif reason is not None and self.document_text(uri) is not None:
            on_marker = reason.code == "EV700" and vault.rel(path) == rules.MARKER_NAME
            results.append(reason if on_marker else reason._replace(line=0, end_line=0, end=0))
        document = self.open_document(uri)
        hidden = hidden_bom_finding(folder.vault, path, document.source) if document else None
        if hidden is not None:
            results.append(hidden)
        stale = self.stale.get(uri)
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

    # -- large documents -------------------------------------------------------------------------

    def is_large(self, uri: str) -> bool:
        """Whether an open document is too large to analyse on the event loop."""
        document = self.open_document(uri)
        return document is not None and len(document.source) > LARGE_TEXT

    def refresh_large(self, folder: Folder, uri: str, path: str) -> None:
        """Analyse (if its text changed) and re-diagnose a large document, off the event loop."""
        if uri in self.large_jobs:
            self.large_again.add(uri)
            return
        task = asyncio.ensure_future(self._large_job(folder, uri, path))
        self.large_jobs[uri] = task
        task.add_done_callback(self._task_done)
        self.background.add(task)

    async def _large_job(self, folder: Folder, uri: str, path: str) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                self.large_again.discard(uri)
                text = self.document_text(uri)
                described = folder.vault.describe(path)
                if text is None or described is None:
                    return
                if folder.vault.overlays.get(path) != text:
                    kind, key = described
                    entry = folder.vault.entries.get(path)
                    base = entry.counts if entry is not None else None
                    prepared = await loop.run_in_executor(
                        self.large_pool, uncollected, prepare, kind, key, text, base
                    )
                    if uri in self.large_again:
                        continue  # newer text arrived: analyse that instead
                    if self.open_document(uri) is None:
                        return
                    changed = folder.vault.open(path, text, prepared)
                    # Long-lived, like the model after indexing: out of the collector's sight.
                    gc.freeze()
                    if not self.pull:
                        await self.publish_now(uri)
                    # Refreshing the pages that link here re-asks for this page too: that
                    # request is this very run.
                    again = uri in self.large_again
                    self.after_change(folder, changed)
                    if not again:
                        self.large_again.discard(uri)
                elif not self.pull:
                    await self.publish_now(uri)
                if uri not in self.large_again:
                    return
        finally:
            self.large_jobs.pop(uri, None)

    async def diagnostics_async(self, uri: str) -> List[types.Diagnostic]:
        """`diagnostics`, computed in the worker thread for a large document. The model may
        change meanwhile (only the event loop changes it): the work is repeated until a run saw
        no change, at most three times."""
        folder = self.folder_for_uri(uri)
        if folder is None or not self.is_large(uri):
            return self.diagnostics(uri)
        await folder.loaded.wait()  # parsing the rest of the vault must not run in two threads
        job = self.large_jobs.get(uri)
        if job is not None and job is not asyncio.current_task():
            await asyncio.shield(job)
        loop = asyncio.get_running_loop()
        result: List[types.Diagnostic] = []
        for _attempt in range(3):
            generation = folder.vault.generation
            try:
                result = await loop.run_in_executor(
                    self.large_pool, uncollected, self.diagnostics, uri
                )
            except Exception:
                log.debug("the model changed while diagnosing %s; again", uri, exc_info=True)
                continue
            if folder.vault.generation == generation:
                break
        return result

    async def publish_now(self, uri: str) -> None:
        diagnostics = await self.diagnostics_async(uri)
        document = self.open_document(uri)
        if document is None:
            return
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, diagnostics=diagnostics, version=document.version
            )
        )

    def publish(self, uri: str) -> None:
        if self.pull:
            return
        if self.is_large(uri):
            folder = self.folder_for_uri(uri)
            path = uri_to_path(uri)
            if folder is not None and path is not None:
                self.refresh_large(folder, uri, path)
                return
        document = self.open_document(uri)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                diagnostics=self.diagnostics(uri),
                version=document.version if document else None,
            )
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

    def debounce(self, uri: str, action: Callable[[], None]) -> None:
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        delay = self.settings.debounce_ms / 1000.0
        loop = asyncio.get_event_loop()

        def fire() -> None:
            self.timers.pop(uri, None)
            try:
                action()
            except Exception:
                self.report_failure(f"the deferred update of {uri}")

        self.timers[uri] = loop.call_later(delay, fire)

    # -- status ----------------------------------------------------------------------------------

    def schedule_status(self) -> None:
        if self.status_timer is not None:
            self.status_timer.cancel()
        loop = asyncio.get_event_loop()
        self.status_timer = loop.call_later(0.3, self.send_status)

    def status_of(self, folder: Folder) -> Dict[str, Any]:
        vault = folder.vault
        if vault.linked is not None:
            integrity = "read-only"
        elif not vault.marker.present:
            integrity = "uninitialized"
        elif not vault.marker.writable:
            integrity = "read-only"
        else:
            integrity = "healthy"
        issues = count_issues(vault) if folder.loaded.is_set() else 0
        if integrity == "healthy" and issues:
            integrity = "attention"
        return {
            "workspace": path_to_uri(folder.workspace),
            "integrity": integrity,
            "issueCount": issues,
            "pages": len(vault.by_key),
            "ready": folder.loaded.is_set(),
        }

    def send_status(self) -> None:
        self.status_timer = None
        for folder in list(self.folders.values()):
            try:
                self.protocol.notify("echoes/statusChanged", self.status_of(folder))
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
            return await asyncio.get_event_loop().run_in_executor(
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
            for folder in self.folders.values():
                folder.vault.exclude = settings.exclude
                folder.vault.load()
                for uri in self.open_uris():
                    path = uri_to_path(uri)
                    if path and self.folder_for_path(path, create=False) is folder:
                        folder.vault.open(path, self.document_text(uri) or "")
                self.spawn(self.finish_loading(folder))


def count_issues(vault: Vault) -> int:
    """Files with protocol-level problems, the same ones the runtime's health report counts."""
    issues = 0
    for entry in vault.entries.values():
        if (
            entry.symlink
            or entry.read_error
            or entry.conflicts
            or (entry.info is not None and entry.info.problems)
            or entry.kind == "stray"
        ):
            issues += 1
    issues += sum(len(paths) for paths in vault.by_key.values() if len(paths) > 1)
    return issues
