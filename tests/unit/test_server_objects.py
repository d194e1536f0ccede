"""The server's state objects on their own: `SaveSafety` against real files and the project
runtime's own `hash`, and `Scheduler` on a real event loop (steps counted, never timed)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Tuple

from echoes_lsp.server.lsp_convert import path_to_uri
from echoes_lsp.server.save_safety import SaveSafety
from echoes_lsp.server.scheduler import Scheduler

from .helpers import page

RUNTIME = Path(__file__).resolve().parents[2] / "runtime" / "echoes_vault.py"
BOM = "\ufeff"


def workspace_page(root: Path, text: str, stem: str = "alpha") -> Path:
    pages = root / "EchoesVault" / "pages"
    pages.mkdir(parents=True, exist_ok=True)
    path = pages / f"{stem}.md"
    path.write_bytes(text.encode("utf-8"))
    return path


def runtime_hash(root: Path, stem: str = "alpha") -> str:
    """What the runtime's `hash` command reports for a page, as a checked save compares it."""
    done = subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(root), "hash", stem],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["sha256"])


def test_a_checked_save_expects_the_hash_the_runtime_has_for_the_opened_text(
    tmp_path: Path,
) -> None:
    text = page(body="# Alpha\n")
    path = workspace_page(tmp_path, text)
    uri = path_to_uri(str(path))
    safety = SaveSafety()
    safety.opened(uri, str(path), text)
    payload = safety.upsert_payload(uri, str(path), text + "more\n")
    assert payload == {
        "filename": "alpha.md",
        "content": text + "more\n",
        "expectedSha256": runtime_hash(tmp_path),
    }


def test_a_page_with_a_byte_order_mark_is_expected_with_it_and_written_without(
    tmp_path: Path,
) -> None:
    text = page(body="# Alpha\n")
    path = workspace_page(tmp_path, BOM + text)
    uri = path_to_uri(str(path))
    safety = SaveSafety()
    safety.opened(uri, str(path), text)  # editors drop the mark from the buffer
    payload = safety.upsert_payload(uri, str(path), BOM + text)
    assert payload["expectedSha256"] == runtime_hash(tmp_path)
    assert payload["content"] == text


def test_a_change_on_disk_makes_the_page_stale_until_the_disk_holds_the_buffer(
    tmp_path: Path,
) -> None:
    text = page(body="# Alpha\n")
    path = workspace_page(tmp_path, text)
    uri = path_to_uri(str(path))
    safety = SaveSafety()
    safety.opened(uri, str(path), text)
    assert safety.check_disk(uri, str(path), text) is False  # nothing changed
    workspace_page(tmp_path, page(body="# Alpha\nan agent wrote this\n"))
    assert safety.check_disk(uri, str(path), text) is True
    assert safety.is_stale(uri)
    finding = safety.stale_finding(uri)
    assert finding is not None and finding.code == "EV701"
    assert [item.path for item in finding.related] == [str(path)]
    assert safety.check_disk(uri, str(path), text) is False  # already shown
    buffer = page(body="# Alpha\nthe editor's text\n")
    workspace_page(tmp_path, buffer)  # the editor saved its buffer over the change
    assert safety.check_disk(uri, str(path), buffer) is True
    assert not safety.is_stale(uri)
    assert safety.upsert_payload(uri, str(path), buffer)["expectedSha256"] == runtime_hash(tmp_path)


def test_a_confirmed_overwrite_expects_the_disk_as_it_is_now(tmp_path: Path) -> None:
    text = page(body="# Alpha\n")
    path = workspace_page(tmp_path, text)
    uri = path_to_uri(str(path))
    safety = SaveSafety()
    safety.opened(uri, str(path), text)
    workspace_page(tmp_path, page(body="# Alpha\nchanged behind the buffer\n"))
    safety.refused(uri, str(path))
    assert safety.is_stale(uri)
    safety.overwrite_confirmed(uri, str(path))
    assert safety.upsert_payload(uri, str(path), text)["expectedSha256"] == runtime_hash(tmp_path)
    safety.written(uri, "0" * 64)
    assert not safety.is_stale(uri)
    assert safety.upsert_payload(uri, str(path), text)["expectedSha256"] == "0" * 64


def test_a_page_deleted_while_open_or_closed_has_no_base(tmp_path: Path) -> None:
    text = page()
    path = workspace_page(tmp_path, text)
    uri = path_to_uri(str(path))
    safety = SaveSafety()
    safety.opened(uri, str(path), text)
    path.unlink()
    safety.deleted(uri)
    assert "expectedSha256" not in safety.upsert_payload(uri, str(path), text)
    workspace_page(tmp_path, page(summary="Elsewhere."))
    safety.closed(uri)
    assert safety.check_disk(uri, str(path), text) is False  # a closed page is not watched
    assert not safety.is_stale(uri)


def test_a_page_not_yet_on_disk_opens_with_no_base(tmp_path: Path) -> None:
    path = tmp_path / "EchoesVault" / "pages" / "new.md"
    uri = path_to_uri(str(path))
    safety = SaveSafety()
    safety.opened(uri, str(path), page())
    assert "expectedSha256" not in safety.upsert_payload(uri, str(path), page())


class Recorder:
    """What the scheduler reports as failures."""

    def __init__(self) -> None:
        self.reports: List[Tuple[str, Optional[BaseException]]] = []

    def __call__(self, what: str, error: Optional[BaseException]) -> None:
        self.reports.append((what, error))


def test_debounced_updates_coalesce_and_a_failing_one_is_reported() -> None:
    async def scenario() -> Tuple[List[str], bool, bool, Recorder]:
        recorder = Recorder()
        scheduler = Scheduler(recorder)
        ran: List[str] = []
        for text in ("a", "ab", "abc"):
            scheduler.debounce("file:///p.md", 0.01, lambda text=text: ran.append(text))
        scheduler.debounce("file:///q.md", 0.01, lambda: ran.append("q"))
        scheduler.debounce("file:///r.md", 0.01, lambda: ran.append("r"))
        had_r = scheduler.cancel("file:///r.md")

        def broken() -> None:
            raise KeyError("broken")

        scheduler.debounce("file:///s.md", 0.01, broken)
        await asyncio.sleep(0.05)  # a later timer: every one above has fired before it
        return ran, had_r, scheduler.cancel("file:///p.md"), recorder

    ran, had_r, still_pending, recorder = asyncio.run(scenario())
    assert sorted(ran) == ["abc", "q"]
    assert had_r is True and still_pending is False
    assert [(what, type(error)) for what, error in recorder.reports] == [
        ("the deferred update of file:///s.md", KeyError)
    ]


def test_status_and_lens_refreshes_are_sent_once_per_burst() -> None:
    async def scenario() -> Tuple[int, int]:
        scheduler = Scheduler(Recorder())
        sent: List[str] = []
        for _ in range(5):
            scheduler.status_soon(lambda: sent.append("status"))
            scheduler.lens_refresh_soon(lambda: sent.append("lens"))
        await asyncio.sleep(0.6)  # after both delays
        scheduler.lens_refresh_soon(lambda: sent.append("lens"))  # a new burst
        await asyncio.sleep(0.6)
        return sent.count("status"), sent.count("lens")

    assert asyncio.run(scenario()) == (1, 2)


def test_background_failures_are_reported_and_shutdown_cancels_the_rest() -> None:
    async def scenario() -> Tuple[Recorder, bool, List[str]]:
        recorder = Recorder()
        scheduler = Scheduler(recorder)
        stopped: List[str] = []

        async def failing() -> None:
            raise ValueError("background")

        async def forever(name: str) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                stopped.append(name)
                raise

        scheduler.spawn(failing())
        waiting = scheduler.spawn(forever("task"))
        scheduler.start_polling(forever("poller"))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        scheduler.stop()
        await asyncio.sleep(0)
        return recorder, waiting.cancelled(), sorted(stopped)

    recorder, cancelled, stopped = asyncio.run(scenario())
    assert [(what, type(error)) for what, error in recorder.reports] == [
        ("a background task", ValueError)
    ]
    assert cancelled
    assert stopped == ["poller", "task"]
