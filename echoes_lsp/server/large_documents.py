"""`LargeDocuments`: the one worker thread that analyses and diagnoses documents too large for the
event loop, so that no request waits more than a few milliseconds behind them.

Open documents longer than `LARGE_TEXT` characters, and vault files of that size met while
indexing, are prepared (`engine.vault.prepare`) in the worker and installed in the model on the
event loop, which alone changes the model. One job runs per document at a time; a change that
arrives meanwhile is picked up when the job comes round again.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Set, TypeVar

from lsprotocol import types

from ..engine.vault import Vault, larger_than, prepare, prepare_file
from .scheduler import Scheduler
from .vault_folder import Folder

log = logging.getLogger("echoes_lsp")
LARGE_TEXT = 128 * 1024
# A diagnosis in the worker is repeated while the model changed under it, at most this often.
DIAGNOSE_ATTEMPTS = 3
Result = TypeVar("Result")


def uncollected(function: Callable[..., Result], *args: Any) -> Result:
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


class Host(Protocol):
    """What the worker needs of the server: the open buffers, and the publication of what it
    found."""

    @property
    def pull(self) -> bool: ...

    def document_text(self, uri: str) -> Optional[str]: ...

    def open_document(self, uri: str) -> Any: ...

    async def publish_now(self, uri: str) -> None: ...

    def after_change(
        self, folder: Folder, changed_keys: Set[str], extra: Sequence[str] = ()
    ) -> None: ...


class LargeDocuments:
    """The worker thread, the job of each large document, and the documents that changed while
    their job ran."""

    def __init__(self, host: Host, scheduler: Scheduler) -> None:
        self._host = host
        self._scheduler = scheduler
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="echoes-large")
        self._jobs: Dict[str, asyncio.Task[Any]] = {}
        self._again: Set[str] = set()

    def is_large(self, uri: str) -> bool:
        """Whether an open document is too large to analyse on the event loop."""
        document = self._host.open_document(uri)
        return document is not None and len(document.source) > LARGE_TEXT

    def refresh(self, folder: Folder, uri: str, path: str) -> None:
        """Analyse (if its text changed) and re-diagnose a large document, off the event loop."""
        if uri in self._jobs:
            self._again.add(uri)
            return
        self._jobs[uri] = self._scheduler.spawn(self._job(folder, uri, path))

    async def settled(self, folder: Folder, uri: str, path: str) -> bool:
        """Wait until the model holds the text of a large open document, analysing it now if no
        job is on its way; False when it still differs (edited again meanwhile, or closed)."""
        text = self._host.document_text(uri)
        if text is None or folder.vault.overlays.get(path) == text:
            return text is not None
        self.refresh(folder, uri, path)
        job = self._jobs.get(uri)
        if job is not None:
            await asyncio.shield(job)
        text = self._host.document_text(uri)
        return text is not None and folder.vault.overlays.get(path) == text

    async def _job(self, folder: Folder, uri: str, path: str) -> None:
        try:
            while True:
                self._again.discard(uri)
                if not await self._analyse(folder, uri, path):
                    return
                if uri not in self._again:
                    return
        finally:
            self._jobs.pop(uri, None)

    async def _analyse(self, folder: Folder, uri: str, path: str) -> bool:
        """One turn of a job: analyse the buffer if the model lacks its text, install it, and
        publish. False when there is nothing (more) to do: the document closed or left the
        vault."""
        host = self._host
        text = host.document_text(uri)
        described = folder.vault.describe(path)
        if text is None or described is None:
            return False
        if folder.vault.overlays.get(path) == text:
            if not host.pull:
                await host.publish_now(uri)
            return True
        kind, key = described
        entry = folder.vault.entries.get(path)
        base = entry.counts if entry is not None else None
        prepared = await self._in_worker(prepare, kind, key, text, base)
        if uri in self._again:
            return True  # newer text arrived: analyse that instead
        if host.open_document(uri) is None:
            return False
        changed = folder.vault.open(path, text, prepared)
        # Long-lived, like the model after indexing: out of the collector's sight.
        gc.freeze()
        if not host.pull:
            await host.publish_now(uri)
        # Refreshing the pages that link here re-asks for this page too: that request is this
        # very run.
        again = uri in self._again
        host.after_change(folder, changed)
        if not again:
            self._again.discard(uri)
        return True

    async def _in_worker(self, function: Callable[..., Result], *args: Any) -> Result:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, uncollected, function, *args)

    async def computed(self, function: Callable[..., Result], *args: Any) -> Result:
        """`function(*args)` run in the worker thread, after any work queued there before it:
        an answer about a large document that would hold the event loop too long."""
        return await self._in_worker(function, *args)

    async def diagnostics(
        self, folder: Folder, uri: str, diagnose: Callable[[str], List[types.Diagnostic]]
    ) -> List[types.Diagnostic]:
        """`diagnose(uri)` computed in the worker thread. The model may change meanwhile (only
        the event loop changes it): the work is repeated until a run saw no change, at most
        `DIAGNOSE_ATTEMPTS` times."""
        await folder.loaded.wait()  # parsing the rest of the vault must not run in two threads
        job = self._jobs.get(uri)
        if job is not None and job is not asyncio.current_task():
            await asyncio.shield(job)
        result: List[types.Diagnostic] = []
        for _attempt in range(DIAGNOSE_ATTEMPTS):
            generation = folder.vault.generation
            try:
                result = await self._in_worker(diagnose, uri)
            except Exception:
                log.debug("the model changed while diagnosing %s; again", uri, exc_info=True)
                continue
            if folder.vault.generation == generation:
                break
        return result

    async def index_large_files(self, vault: Vault) -> None:
        """Parse the files of more than LARGE_TEXT bytes that indexing would parse in place in
        the worker thread, one at a time, and install each on the event loop: a 5 MB page would
        otherwise be one indexing step of half a second."""
        loop = asyncio.get_running_loop()
        for path in await loop.run_in_executor(None, larger_than, list(vault.pending), LARGE_TEXT):
            entry = vault.entries.get(path)
            if entry is None or entry.parsed or path in vault.overlays:
                continue
            found = await self._in_worker(prepare_file, entry.kind, entry.key, path)
            if found is None or vault.entries.get(path) is not entry or entry.parsed:
                continue  # unreadable (parsed in place, to report why), or changed meanwhile
            text, prepared = found
            vault.pending.discard(path)
            vault.update(path, text, prepared)
            gc.freeze()
