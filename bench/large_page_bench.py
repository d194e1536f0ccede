"""Large-page benchmark: how long other requests wait while a huge page is open and edited.

A real LSP client drives `echoes-lsp serve` over stdio. It opens an unsaved page with
200,000 `[[links]]` (none resolves, so every link is a diagnostic) in a small vault, and while
the server analyses it, sends a hover on another page every 20 ms. Then it edits the big page a
few times and does the same. Prints the hover latencies (p50, p95, max), the time until the big
page's (capped) diagnostics arrived, how many were sent, and the server's peak resident memory
(VmHWM). Not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_memory import memory_mb

SERVER = [sys.executable, "-m", "echoes_lsp", "serve"]
HEAD = "---\ntype: note\nstack: []\nstatus: active\nsummary: A page of many links.\n---\n\n"
PAGE = "---\ntype: note\nstack: []\nstatus: active\nsummary: A small page.\n---\n\n# Small\n"


def big_text(links: int) -> str:
    return HEAD + "".join(f"See [[missing-{n}]].\n" for n in range(links))


def percentile(samples: List[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class Bench:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.client = LanguageClient("echoes-large-bench", "1")
        self.published: Dict[str, asyncio.Event] = {}
        self.counts: Dict[str, int] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.counts[params.uri] = len(params.diagnostics)
            event = self.published.get(params.uri)
            if event is not None and params.diagnostics:
                event.set()

        # Handled, and dropped, so that pygls does not log a line for each one: the output is
        # only the results.
        @self.client.feature(types.PROGRESS)
        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        @self.client.feature("echoes/statusChanged")
        def ignored(params: Any) -> None:
            return None

    async def start(self) -> None:
        await self.client.start_io(*SERVER)
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=self.workspace.as_uri(),
                initialization_options={"diagnostics": {"debounce": 0}},
            )
        )
        self.client.initialized(types.InitializedParams())

    @property
    def pid(self) -> int:
        return self.client._server.pid  # type: ignore[attr-defined,union-attr]

    async def hovers_until(self, event: asyncio.Event, uri: str) -> List[float]:
        """Hover latencies (ms), one request every 20 ms, until `event` is set."""
        samples: List[float] = []
        while not event.is_set():
            start = time.perf_counter()
            await self.client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=7, character=2),
                )
            )
            samples.append((time.perf_counter() - start) * 1000)
            await asyncio.sleep(0.02)
        return samples

    async def stop(self) -> None:
        await asyncio.wait_for(self.client.shutdown_async(None), 60)
        self.client.exit(None)
        await self.client.stop()


async def run(links: int, edits: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="echoes-large-"))
    try:
        pages = root / "EchoesVault" / "pages"
        pages.mkdir(parents=True)
        (pages / "small.md").write_text(PAGE, encoding="utf-8")
        bench = Bench(root)
        await bench.start()
        small = (pages / "small.md").as_uri()
        big = (pages / "big.md").as_uri()
        text = big_text(links)
        event = bench.published[big] = asyncio.Event()
        start = time.perf_counter()
        bench.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=big, language_id="markdown", version=1, text=text
                )
            )
        )
        opening = await asyncio.wait_for(bench.hovers_until(event, small), 600)
        first = (time.perf_counter() - start) * 1000
        editing: List[float] = []
        edit_times: List[float] = []
        for version in range(2, edits + 2):
            event = bench.published[big] = asyncio.Event()
            start = time.perf_counter()
            bench.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=big, version=version),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(
                                start=types.Position(line=7, character=0),
                                end=types.Position(line=7, character=0),
                            ),
                            text=f"edit {version} ",
                        )
                    ],
                )
            )
            editing += await asyncio.wait_for(bench.hovers_until(event, small), 600)
            edit_times.append((time.perf_counter() - start) * 1000)
        peak = memory_mb(bench.pid, "VmHWM")
        sent = bench.counts.get(big, 0)
        await bench.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\n### A page with {links:,} links\n")
    print("| measure | p50 ms | p95 ms | max ms | samples |")
    print("|---|---|---|---|---|")
    for name, samples in (("hover while opening", opening), ("hover while editing", editing)):
        if samples:
            print(
                f"| {name} | {statistics.median(samples):.1f} | {percentile(samples, 0.95):.1f} "
                f"| {max(samples):.1f} | {len(samples)} |"
            )
    print(f"\ndidOpen → capped diagnostics: {first:.0f} ms ({sent:,} diagnostics sent)")
    if edit_times:
        print(f"didChange → diagnostics: median {statistics.median(edit_times):.0f} ms")
    if peak is not None:
        print(f"Peak resident memory of the server (VmHWM): {peak:.0f} MB")


def main(argv: Optional[List[Any]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=200_000, help="links on the big page")
    parser.add_argument("--edits", type=int, default=5, help="edits of the big page")
    args = parser.parse_args(argv)
    asyncio.run(run(args.links, args.edits))


if __name__ == "__main__":
    main()
