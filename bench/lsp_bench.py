"""Language-server benchmark: a real LSP client drives `echoes-lsp serve` over stdio.

Measures, on generated vaults (default 1,000 and 10,000 pages; `--large` adds 50,000 and `--huge`
100,000):
- initialize → first diagnostics of an opened page (fresh server each run);
- the first `[[` completion once the server reports the vault indexed (one sample per size: the
  request that would pay for building the page catalog and its search index, reported on its own);
- `[[` completion latency (the requests after the first);
- references on a page with 500 backlinks;
- didChange → diagnostics with the debounce set to 0;
- workspace symbols;
- hovers on a page while the vault is indexed in the background;
- resident memory of the server once the vault is fully indexed.
Prints p50 and p95 (milliseconds) per measure. Not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Dict, List, Optional, Type

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vaultgen
from process_memory import cpu_seconds, memory_mb

CACHE = Path(__file__).resolve().parent / ".vaults"
HUB = "hub-page"
HUB_BACKLINKS = 500
SERVER = [sys.executable, "-m", "echoes_lsp", "serve"]


def hub_vault(pages: int, markdown_links: bool = False) -> Path:
    """A generated vault plus a page that 500 other pages link to: by `[[hub-page]]`, and with
    `markdown_links` also by a standard Markdown link `[the hub](hub-page.md)` on the same line,
    for servers that do not read wikilinks."""
    root = CACHE / (f"peer-{pages}" if markdown_links else f"lsp-{pages}")
    stamp = root / ".lsp-bench.json"
    wanted = {"pages": pages, "generator": vaultgen.GENERATOR_VERSION, "hub": HUB_BACKLINKS}
    if markdown_links:
        wanted["markdownLinks"] = True
    if stamp.exists() and json.loads(stamp.read_text(encoding="utf-8")) == wanted:
        return root
    if root.exists():
        shutil.rmtree(root)
    vaultgen.generate(root, pages, commit=False)
    pages_dir = root / "EchoesVault" / "pages"
    (pages_dir / f"{HUB}.md").write_text(
        "---\ntype: architecture\nstack: []\nstatus: active\nsummary: The hub.\n---\n\n# Hub\n",
        encoding="utf-8",
    )
    backlink = f"[[{HUB}]] and [the hub]({HUB}.md)" if markdown_links else f"[[{HUB}]]"
    for path in vaultgen.pages_of(root)[: min(HUB_BACKLINKS, pages)]:
        if path.stem == HUB:
            continue
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\nDepends on {backlink}.\n")
    stamp.write_text(json.dumps(wanted) + "\n", encoding="utf-8")
    return root


def insert_at_line(text: str, line: int, new: str) -> str:
    """`text` after inserting `new` at the start of line `line` (0-based, lines end in \\n):
    the client's copy of a document after the edit `Bench.change` sends."""
    offset = 0
    for _ in range(line):
        offset = text.index("\n", offset) + 1
    return text[:offset] + new + text[offset:]


def percentile(samples: List[float], fraction: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


class Bench:
    """One LSP client driving one server over stdio.

    This class drives echoes-lsp; `bench/peer_bench.py` subclasses it for another server and
    overrides only what differs: the command, the initialization, how diagnostics arrive, the
    completion text and the references request."""

    name = "echoes-lsp"
    protocol: Type[LanguageServerProtocol] = LanguageServerProtocol

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.client = LanguageClient("echoes-bench", "1", protocol_cls=self.protocol)
        self.diagnostics: Dict[str, asyncio.Event] = {}
        self.texts: Dict[str, str] = {}
        self.ready = asyncio.Event()
        self.version = 1

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            event = self.diagnostics.get(params.uri)
            if event is not None:
                event.set()

        @self.client.feature("echoes/statusChanged")
        def status(params: Any) -> None:
            ready = (
                params.get("ready") if isinstance(params, dict) else getattr(params, "ready", None)
            )
            if ready:
                self.ready.set()

        @self.client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress_create(params: Any) -> None:
            return None

        # Handled, and dropped, so that pygls does not log a line for each one: the output is
        # only the results.
        @self.client.feature(types.PROGRESS)
        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def ignored(params: Any) -> None:
            return None

        @self.client.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: Any) -> List[Any]:
            return [{"diagnostics": {"debounce": 0}}]

    def command(self) -> List[str]:
        return SERVER

    def initialization_options(self) -> Any:
        return {"diagnostics": {"debounce": 0}}

    def capabilities(self) -> types.ClientCapabilities:
        return types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(configuration=True),
            window=types.WindowClientCapabilities(work_done_progress=True),
            text_document=types.TextDocumentClientCapabilities(
                completion=types.CompletionClientCapabilities(),
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
            ),
        )

    async def start(self) -> None:
        await self.client.start_io(*self.command())
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=self.capabilities(),
                root_uri=self.workspace.as_uri(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=self.workspace.as_uri(), name="bench")
                ],
                initialization_options=self.initialization_options(),
            )
        )
        self.client.initialized(types.InitializedParams())

    def page(self, stem: str) -> Path:
        return self.workspace / "EchoesVault" / "pages" / f"{stem}.md"

    def expect_diagnostics(self, uri: str) -> Awaitable[Any]:
        """Called just before a document is opened or changed; awaited just after: the
        diagnostics the server pushes for it."""
        event = self.diagnostics[uri] = asyncio.Event()
        return asyncio.wait_for(event.wait(), 60)

    async def open(self, path: Path) -> str:
        uri = path.as_uri()
        text = self.texts[uri] = path.read_text("utf-8")
        diagnosed = self.expect_diagnostics(uri)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=text
                )
            )
        )
        await diagnosed
        return uri

    async def change(self, uri: str, line: int, text: str) -> None:
        self.version += 1
        self.texts[uri] = insert_at_line(self.texts[uri], line, text)
        diagnosed = self.expect_diagnostics(uri)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=line, character=0),
                            end=types.Position(line=line, character=0),
                        ),
                        text=text,
                    )
                ],
            )
        )
        await diagnosed

    def link_text(self, typed: str) -> str:
        """The text of a link being typed, up to the cursor, where completion is asked."""
        return f"[[{typed}"

    def link_to(self, stem: str) -> str:
        return f"[[{stem}]]"

    async def references(self, uri: str) -> List[Any]:
        """The pages that link to the page `uri` (asked on its first heading)."""
        found = await self.client.text_document_references_async(
            types.ReferenceParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=7, character=2),
                context=types.ReferenceContext(include_declaration=False),
            )
        )
        return list(found or [])

    @property
    def pid(self) -> Optional[int]:
        process = getattr(self.client, "_server", None)
        return process.pid if process is not None else None

    def rss_mb(self, field: str = "VmRSS") -> Optional[float]:
        """The server's resident memory now (VmRSS) or at its peak (VmHWM), from /proc."""
        pid = self.pid
        return memory_mb(pid, field) if pid is not None else None

    def cpu_seconds(self) -> Optional[float]:
        """The CPU time the server process has used since it started."""
        pid = self.pid
        return cpu_seconds(pid) if pid is not None else None

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 30)
            self.client.exit(None)
        finally:
            await self.client.stop()


async def timed(samples: List[float], coroutine: Any) -> Any:
    start = time.perf_counter()
    result = await coroutine
    samples.append((time.perf_counter() - start) * 1000)
    return result


async def first_diagnostics(workspace: Path, runs: int) -> List[float]:
    samples = []
    for _ in range(runs):
        bench = Bench(workspace)
        start = time.perf_counter()
        await bench.start()
        await bench.open(bench.page(vaultgen.page_stem(1)))
        samples.append((time.perf_counter() - start) * 1000)
        await bench.stop()
    return samples


async def steady_state(workspace: Path, repeat: int) -> Dict[str, Any]:
    bench = Bench(workspace)
    await bench.start()
    # Hovers on a page every 20 ms while the vault is indexed in the background.
    indexing: List[float] = []
    hovered = types.TextDocumentIdentifier(uri=bench.page(vaultgen.page_stem(2)).as_uri())
    deadline = time.perf_counter() + 300
    while not bench.ready.is_set() and time.perf_counter() < deadline:
        await timed(
            indexing,
            bench.client.text_document_hover_async(
                types.HoverParams(
                    text_document=hovered, position=types.Position(line=7, character=2)
                )
            ),
        )
        await asyncio.sleep(0.02)
    await asyncio.wait_for(bench.ready.wait(), 300)
    # Keep this client's own garbage collections out of the server's latencies.
    gc.collect()
    gc.freeze()
    results: Dict[str, Any] = {"hoverWhileIndexing": indexing}
    uri = await bench.open(bench.page(vaultgen.page_stem(3)))
    document = types.TextDocumentIdentifier(uri=uri)
    line = 12

    # The first [[ completion after indexing, on its own: what it needs is built while indexing.
    await bench.change(uri, line, "[[top\n")
    first: List[float] = []
    await timed(
        first,
        bench.client.text_document_completion_async(
            types.CompletionParams(
                text_document=document, position=types.Position(line=line, character=5)
            )
        ),
    )
    results["firstCompletion"] = first
    # [[ completion, with a few typed prefixes.
    completion: List[float] = []
    for index in range(repeat):
        typed = ("", "top", "topic-1", "tpc")[index % 4]
        await bench.change(uri, line, f"[[{typed}\n")
        await timed(
            completion,
            bench.client.text_document_completion_async(
                types.CompletionParams(
                    text_document=document,
                    position=types.Position(line=line, character=2 + len(typed)),
                )
            ),
        )
    results["completion"] = completion

    # didChange → diagnostics (debounce 0).
    changes: List[float] = []
    for index in range(repeat):
        await timed(changes, bench.change(uri, line, f"edit {index} [[{HUB}]]\n"))
    results["didChange"] = changes

    # References of the hub page (500 backlinks).
    hub_uri = await bench.open(bench.page(HUB))
    references: List[float] = []
    count = 0
    for _ in range(repeat):
        found = await timed(references, bench.references(hub_uri))
        count = len(found)
    results["references"] = references
    results["referenceCount"] = count

    symbols: List[float] = []
    for index in range(repeat):
        query = ("topic", "pay", "12", "settlement webhook")[index % 4]
        await timed(
            symbols,
            bench.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)),
        )
    results["workspaceSymbols"] = symbols
    results["rssMB"] = bench.rss_mb()
    results["peakMB"] = bench.rss_mb("VmHWM")
    await bench.stop()
    return results


def row(name: str, samples: List[float]) -> str:
    return (
        f"| {name} | {statistics.median(samples):.1f} | {percentile(samples, 0.95):.1f} "
        f"| {len(samples)} |"
    )


async def run(
    sizes: List[int], repeat: int, cold_runs: int, json_path: Optional[str] = None
) -> None:
    raw: Dict[str, Dict[str, Any]] = {}
    for pages in sizes:
        workspace = hub_vault(pages)
        cold = await first_diagnostics(workspace, cold_runs)
        steady = await steady_state(workspace, repeat)
        raw[str(pages)] = {"firstDiagnostics": cold, **steady}
        print(f"\n### {pages:,} pages\n")
        print("| measure | p50 ms | p95 ms | samples |")
        print("|---|---|---|---|")
        print(row("initialize → first diagnostics", cold))
        print(row("first `[[` completion after indexing", steady["firstCompletion"]))
        print(row("`[[` completion", steady["completion"]))
        print(row(f"references ({steady['referenceCount']} backlinks)", steady["references"]))
        print(row("didChange → diagnostics (no debounce)", steady["didChange"]))
        print(row("workspace symbols", steady["workspaceSymbols"]))
        if steady["hoverWhileIndexing"]:
            print(row("hover while the vault is indexed", steady["hoverWhileIndexing"]))
        rss, peak = steady["rssMB"], steady["peakMB"]
        if rss and peak:
            print(f"\nResident memory after indexing: {rss:.0f} MB (peak {peak:.0f} MB)")
        sys.stdout.flush()
    if json_path:
        # Samples in milliseconds, memory in MB: the data `docs/_ext/bench_plots.py` draws.
        Path(json_path).write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated page counts")
    parser.add_argument("--large", action="store_true", help="also 50,000 pages")
    parser.add_argument("--huge", action="store_true", help="also 100,000 pages")
    parser.add_argument("--repeat", type=int, default=40, help="samples per steady-state measure")
    parser.add_argument("--cold-runs", type=int, default=5, help="fresh servers for startup")
    parser.add_argument("--json", help="also write the raw samples to this file")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",") if size]
    if args.large:
        sizes.append(50_000)
    if args.huge:
        sizes.append(100_000)
    asyncio.run(run(sizes, args.repeat, args.cold_runs, args.json))


if __name__ == "__main__":
    main()
