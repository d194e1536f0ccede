"""`Scheduler`: the server's work that runs later. Per-document debounce timers, the one pending
status notification, the one pending code-lens refresh, the disk poller, and the background tasks,
each reported when it fails and cancelled at shutdown."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable, Dict, Optional, Set

log = logging.getLogger("echoes_lsp")
# How long a status notification waits for more changes before it is sent.
STATUS_DELAY = 0.3
# Code lenses are refreshed at most this often.
LENS_REFRESH_DELAY = 0.5

Report = Callable[[str, Optional[BaseException]], object]


class Scheduler:
    """Timers and tasks, owned in one place. `report` logs and counts a failure (see
    `EchoesServer.report_failure`): a deferred action has no caller to raise to."""

    def __init__(self, report: Report) -> None:
        self._report = report
        self._debounced: Dict[str, asyncio.TimerHandle] = {}
        self._status: Optional[asyncio.TimerHandle] = None
        self._lens_refresh: Optional[asyncio.TimerHandle] = None
        self._views_refresh: Optional[asyncio.TimerHandle] = None
        self._poller: Optional[asyncio.Task[Any]] = None
        self._background: Set[asyncio.Task[Any]] = set()

    # -- background tasks ------------------------------------------------------------------------

    def spawn(self, coroutine: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run `coroutine` as a task kept until it ends; its failure is reported."""
        task: asyncio.Task[Any] = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._report("a background task", task.exception())

    def start_polling(self, coroutine: Awaitable[Any]) -> None:
        """Run the disk poller (one at a time) until shutdown."""
        if self._poller is not None:
            self._poller.cancel()
        self._poller = asyncio.ensure_future(coroutine)

    def stop(self) -> None:
        """Shutdown: the poller and every background task are cancelled."""
        if self._poller is not None:
            self._poller.cancel()
        for task in list(self._background):
            task.cancel()

    # -- debounced document updates --------------------------------------------------------------

    def debounce(self, uri: str, delay: float, action: Callable[[], None]) -> None:
        """Run `action` once `delay` seconds pass without another call for `uri`."""
        self.cancel(uri)
        loop = asyncio.get_event_loop()

        def fire() -> None:
            self._debounced.pop(uri, None)
            try:
                action()
            except Exception as error:
                self._report(f"the deferred update of {uri}", error)

        self._debounced[uri] = loop.call_later(delay, fire)

    def cancel(self, uri: str) -> bool:
        """Drop the pending update of `uri`; whether there was one."""
        timer = self._debounced.pop(uri, None)
        if timer is None:
            return False
        timer.cancel()
        return True

    # -- notifications sent once per burst of changes --------------------------------------------

    def status_soon(self, send: Callable[[], None]) -> None:
        """Send the status once changes have paused for `STATUS_DELAY`."""
        if self._status is not None:
            self._status.cancel()

        def fire() -> None:
            self._status = None
            send()

        self._status = asyncio.get_event_loop().call_later(STATUS_DELAY, fire)

    def lens_refresh_soon(self, refresh: Callable[[], None]) -> None:
        """One code-lens refresh per burst of changes, `LENS_REFRESH_DELAY` after its first."""
        if self._lens_refresh is not None:
            return

        def fire() -> None:
            self._lens_refresh = None
            refresh()

        try:
            self._lens_refresh = asyncio.get_event_loop().call_later(LENS_REFRESH_DELAY, fire)
        except RuntimeError:  # no event loop (a change made while shutting down)
            pass

    def views_refresh_soon(self, refresh: Callable[[], None]) -> None:
        """One inlay-hint and semantic-token refresh per burst of changes, `LENS_REFRESH_DELAY`
        after its first."""
        if self._views_refresh is not None:
            return

        def fire() -> None:
            self._views_refresh = None
            refresh()

        try:
            self._views_refresh = asyncio.get_event_loop().call_later(LENS_REFRESH_DELAY, fire)
        except RuntimeError:  # no event loop (a change made while shutting down)
            pass
