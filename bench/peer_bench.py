"""echoes-lsp side by side with VS Code's Markdown language server, on one generated vault.

The peer is `vscode-markdown-languageserver` (pinned below), installed from npm into
`bench/.peer/` on first use and run with the machine's `node --stdio`. Both servers get the same
vault (`bench/vaultgen.py` plus a hub page that 500 pages link to, in both link syntaxes) and the
same requests from one client class (`lsp_bench.Bench`), alternating A, B, B, A ... sample by
sample so that machine noise falls on both alike.

Measures (milliseconds unless said):
- initialize → first diagnostics of an opened page, fresh server each round. echoes-lsp pushes
  them; the peer answers a `textDocument/diagnostic` pull, with VS Code's link validation
  settings and `markdown.validate.enabled` turned on (VS Code ships it off);
- initialize → first answer of references on the hub page, fresh server each round;
- link completion: `[[` for echoes-lsp, `[x](` path completion for the peer (it has no `[[`);
- references on the hub page, warm: `textDocument/references` for echoes-lsp, the peer's own
  file references request (`markdown/getReferencesToFileInWorkspace`, what VS Code's "Find File
  References" sends) for the peer;
- workspace symbols; didChange → diagnostics (debounce 0 for echoes-lsp; a pull right after
  the change for the peer);
- peak resident memory (VmHWM) and CPU seconds (utime + stime) of each server process after the
  steady-state run.
Not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vaultgen
from lsp_bench import HUB, Bench, hub_vault, percentile, timed
from process_memory import cpu_seconds, memory_mb

BENCH = Path(__file__).resolve().parent
PEER_DIR = BENCH / ".peer"
PEER_PACKAGE = "vscode-markdown-languageserver"
# The server, and markdown-it with its front matter plugin: the parser VS Code's Markdown
# extension uses to answer the server's requests for tokens.
PINNED = {
    PEER_PACKAGE: "0.5.0",
    "markdown-it": "14.3.3",
    "markdown-it-front-matter": "0.2.4",
}
PEER_NAME = f"{PEER_PACKAGE} {PINNED[PEER_PACKAGE]}"

# The `markdown` settings VS Code sends the server (its defaults), with link validation on.
PEER_SETTINGS: Dict[str, Any] = {
    "markdown": {
        "server": {"log": "off"},
        "preferredMdPathExtensionStyle": "auto",
        "suggest": {
            "paths": {"enabled": True, "includeWorkspaceHeaderCompletions": "onDoubleHash"}
        },
        "occurrencesHighlight": {"enabled": False},
        "validate": {
            "enabled": True,
            "referenceLinks": {"enabled": "warning"},
            "fragmentLinks": {"enabled": "warning"},
            "fileLinks": {"enabled": "warning", "markdownFragmentLinks": "inherit"},
            "ignoredLinks": [],
            "unusedLinkDefinitions": {"enabled": "hint"},
            "duplicateLinkDefinitions": {"enabled": "warning"},
        },
    }
}


def install_peer(folder: Path = PEER_DIR) -> Path:
    """The node_modules folder holding the pinned packages, installed by npm when missing."""
    modules = folder / "node_modules"
    stamp = folder / ".installed.json"
    if stamp.exists() and json.loads(stamp.read_text(encoding="utf-8")) == PINNED:
        return modules
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"name": "echoes-peer-bench", "private": True, "dependencies": PINNED}
    (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
        cwd=folder,
        check=True,
    )
    stamp.write_text(json.dumps(PINNED) + "\n", encoding="utf-8")
    return modules


def field(params: Any, name: str) -> Any:
    """A field of a custom request's parameters, whichever form the client library gave them."""
    return params.get(name) if isinstance(params, dict) else getattr(params, name, None)


def uri_path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def markdown_files(root: Path) -> List[str]:
    """What VS Code's `findFiles('**/*.md')` gives the peer: every Markdown file in the
    workspace outside hidden folders and node_modules (the server's own excludes)."""
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [name for name in subfolders if not name.startswith(".")]
        subfolders[:] = [name for name in subfolders if name != "node_modules"]
        found += [Path(folder, name).as_uri() for name in files if name.endswith(".md")]
    return found


class RawJson(str):
    """A result that is JSON text already, sent as it is by `RawResultProtocol`."""


class RawResultProtocol(LanguageServerProtocol):
    """Sends `RawJson` results without decoding and encoding them again.

    The peer's file contents and markdown-it tokens pass through the bench client, about 45 KB
    of JSON per page. VS Code hands them over at native speed; the client library's generic
    encoding would spend about 13 ms of Python per page on them, and that would be counted in
    the peer's times."""

    def _send_data(self, data: Any) -> None:
        result = getattr(data, "result", None)
        if not isinstance(result, RawJson) or self.writer is None:
            super()._send_data(data)
            return
        body = f'{{"jsonrpc": "2.0", "id": {json.dumps(data.id)}, "result": {result}}}'
        encoded = body.encode("utf-8")
        # Over stdio the writer is the server's stdin, a stream whose `write` only buffers.
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(encoded) + encoded)


class Tokenizer:
    """The markdown-it process (`bench/peer_parse.cjs`) that answers the peer's
    `markdown/parse`, as VS Code's extension host does; requests are pipelined by id."""

    def __init__(self, modules: Path, node: str) -> None:
        self.modules = modules
        self.node = node
        self.process: Optional[asyncio.subprocess.Process] = None
        self.waiting: Dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.reader: Optional[asyncio.Task[None]] = None
        # The most token requests in flight at once: the peer asks for a whole workspace's.
        self.most_waiting = 0

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            self.node,
            str(BENCH / "peer_parse.cjs"),
            str(self.modules),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,
        )
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        while True:
            line = await self.process.stdout.readline()
            if not line:
                return
            number, _, tokens = line.partition(b"\t")
            self.waiting.pop(int(number)).set_result(RawJson(tokens.decode("utf-8").rstrip()))

    async def tokens(self, uri: str, text: Optional[str]) -> RawJson:
        assert self.process is not None and self.process.stdin is not None
        self.next_id += 1
        answer = self.waiting[self.next_id] = asyncio.get_running_loop().create_future()
        self.most_waiting = max(self.most_waiting, len(self.waiting))
        request = {"id": self.next_id, "uri": uri, "text": text}
        self.process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
        return await answer

    def cpu_seconds(self) -> Optional[float]:
        return cpu_seconds(self.process.pid) if self.process is not None else None

    def peak_mb(self) -> Optional[float]:
        return memory_mb(self.process.pid, "VmHWM") if self.process is not None else None

    async def stop(self) -> None:
        if self.process is None:
            return
        if self.process.stdin is not None:
            self.process.stdin.close()
        await self.process.wait()
        if self.reader is not None:
            await self.reader


class PeerBench(Bench):
    """The bench client for VS Code's Markdown server: it answers the server's requests for
    tokens, files, folders and watchers as VS Code does, and pulls diagnostics."""

    name = PEER_NAME
    protocol = RawResultProtocol

    def __init__(self, workspace: Path, modules: Path, node: str) -> None:
        super().__init__(workspace)
        self.modules = modules
        self.node = node
        self.tokenizer = Tokenizer(modules, node)
        client = self.client

        @client.feature("markdown/parse")
        async def parse(params: Any) -> Any:
            uri = field(params, "uri")
            text = field(params, "text")
            return await self.tokenizer.tokens(
                uri, text if text is not None else self.texts.get(uri)
            )

        @client.feature("markdown/fs/readFile")
        def read_file(params: Any) -> RawJson:
            return RawJson(json.dumps(list(uri_path(field(params, "uri")).read_bytes())))

        @client.feature("markdown/fs/readDirectory")
        def read_directory(params: Any) -> List[Any]:
            with os.scandir(uri_path(field(params, "uri"))) as entries:
                return [[entry.name, {"isDirectory": entry.is_dir()}] for entry in entries]

        @client.feature("markdown/fs/stat")
        def stat(params: Any) -> Optional[Dict[str, bool]]:
            path = uri_path(field(params, "uri"))
            return {"isDirectory": path.is_dir()} if path.exists() else None

        @client.feature("markdown/findMarkdownFilesInWorkspace")
        def find_files(params: Any) -> List[str]:
            return markdown_files(self.workspace)

        # The bench changes files only through the open documents, so the peer's file watchers
        # and its dynamic registrations need an answer and nothing more.
        @client.feature("markdown/fs/watcher/create")
        @client.feature("markdown/fs/watcher/delete")
        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        @client.feature(types.CLIENT_UNREGISTER_CAPABILITY)
        @client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
        def acknowledged(params: Any) -> None:
            return None

    def command(self) -> List[str]:
        server = self.modules / PEER_PACKAGE / "dist" / "node" / "workerMain.js"
        return [self.node, str(server), "--stdio"]

    def initialization_options(self) -> Any:
        return {"markdownFileExtensions": ["md"]}

    def capabilities(self) -> types.ClientCapabilities:
        capabilities = super().capabilities()
        assert capabilities.text_document is not None
        capabilities.text_document.diagnostic = types.DiagnosticClientCapabilities()
        return capabilities

    async def start(self) -> None:
        await self.tokenizer.start()
        await super().start()
        self.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=PEER_SETTINGS)
        )
        # Nothing to index in the background: the peer reads the workspace on first need.
        self.ready.set()

    def expect_diagnostics(self, uri: str) -> Any:
        return self.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def link_text(self, typed: str) -> str:
        return f"[x]({typed}"

    def link_to(self, stem: str) -> str:
        return f"[{stem}]({stem}.md)"

    async def references(self, uri: str) -> List[Any]:
        found = await self.client.protocol.send_request_async(
            "markdown/getReferencesToFileInWorkspace", {"uri": uri}
        )
        return list(found or [])

    async def stop(self) -> None:
        try:
            await super().stop()
        finally:
            await self.tokenizer.stop()


def order(benches: List[Bench], index: int) -> List[Bench]:
    """A, B on even samples and B, A on odd ones: neither server always goes first."""
    return benches if index % 2 == 0 else benches[::-1]


async def cold_round(bench: Bench) -> Dict[str, float]:
    """A fresh server: initialize → first diagnostics of a page, then → first references."""
    start = time.perf_counter()
    await bench.start()
    await bench.open(bench.page(vaultgen.page_stem(1)))
    diagnosed = time.perf_counter()
    hub_uri = await bench.open(bench.page(HUB))
    asked = time.perf_counter()
    found = await bench.references(hub_uri)
    answered = time.perf_counter()
    await bench.stop()
    return {
        "firstDiagnostics": (diagnosed - start) * 1000,
        "firstReferences": (answered - start) * 1000,
        "firstReferencesRequest": (answered - asked) * 1000,
        "referenceCount": len(found),
    }


LINE = 12  # the line of the open page where links are typed


async def complete(bench: Bench, uri: str, typed: str, samples: List[float]) -> int:
    """Types a link and asks for completion at its end; the number of items offered."""
    await bench.change(uri, LINE, bench.link_text(typed) + "\n")
    position = types.Position(line=LINE, character=len(bench.link_text(typed)))
    answer = await timed(
        samples,
        bench.client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=position
            )
        ),
    )
    return len(getattr(answer, "items", answer) or [])


async def symbols(bench: Bench, query: str, samples: List[float]) -> int:
    answer = await timed(
        samples, bench.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    )
    return len(answer or [])


async def measure(benches: List[Bench], repeat: int) -> Dict[str, Dict[str, Any]]:
    """The steady-state requests, the same to each server, alternating sample by sample."""
    results: Dict[str, Dict[str, Any]] = {
        bench.name: {"completion": [], "didChange": [], "references": [], "workspaceSymbols": []}
        for bench in benches
    }
    page = vaultgen.page_stem(3)
    uris = {bench.name: await bench.open(bench.page(page)) for bench in benches}
    for index in range(repeat):
        typed = ("", "top", "topic-1", "tpc")[index % 4]
        for bench in order(benches, index):
            mine = results[bench.name]
            mine["completionItems"] = await complete(
                bench, uris[bench.name], typed, mine["completion"]
            )
    for index in range(repeat):
        for bench in order(benches, index):
            text = f"edit {index} {bench.link_to(HUB)}\n"
            await timed(
                results[bench.name]["didChange"], bench.change(uris[bench.name], LINE, text)
            )
    hubs = {bench.name: await bench.open(bench.page(HUB)) for bench in benches}
    for index in range(repeat + 1):
        for bench in order(benches, index):
            mine = results[bench.name]
            mine["referenceCount"] = len(
                await timed(mine["references"], bench.references(hubs[bench.name]))
            )
    for index in range(repeat + 1):
        query = ("topic", "pay", "12", "settlement webhook")[index % 4]
        for bench in order(benches, index):
            mine = results[bench.name]
            counts = mine.setdefault("symbolCounts", {})
            counts[query] = await symbols(bench, query, mine["workspaceSymbols"])
    return results


def account(bench: Bench, measured: Dict[str, Any]) -> None:
    """Splits the cold first requests from the warm ones and adds the process's memory and
    CPU time."""
    # The first references and workspace symbols requests of a server are cold ones (the peer
    # reads and parses the whole workspace for each); the rest are warm.
    measured["referencesFirst"] = measured["references"].pop(0)
    measured["workspaceSymbolsFirst"] = measured["workspaceSymbols"].pop(0)
    measured["peakMB"] = bench.rss_mb("VmHWM")
    measured["rssMB"] = bench.rss_mb()
    measured["cpuSeconds"] = bench.cpu_seconds()
    if isinstance(bench, PeerBench):
        measured["tokenizerCpuSeconds"] = bench.tokenizer.cpu_seconds()
        measured["tokenizerPeakMB"] = bench.tokenizer.peak_mb()
        measured["tokenizerMostWaiting"] = bench.tokenizer.most_waiting


async def steady(benches: List[Bench], repeat: int) -> Dict[str, Dict[str, Any]]:
    """One server of each kind, started one after the other (each indexed before the next
    starts), then the same requests to both."""
    for bench in benches:
        await bench.start()
        await asyncio.wait_for(bench.ready.wait(), 600)
    # Keep this client's own garbage collections out of the servers' latencies.
    gc.collect()
    gc.freeze()
    try:
        results = await measure(benches, repeat)
        for bench in benches:
            account(bench, results[bench.name])
    finally:
        for bench in benches:
            await bench.stop()
        gc.unfreeze()
    return results


def ratio(ours: Optional[float], theirs: Optional[float]) -> str:
    """echoes-lsp's figure as a multiple of the peer's: below 1 means echoes-lsp is faster or
    smaller."""
    if ours is None or not theirs:
        return "n/a"
    value = ours / theirs
    # Two significant digits for small ratios, so that none reads as 0.00x.
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def quantiles(samples: List[float]) -> str:
    return f"{percentile(samples, 0.5):.1f} / {percentile(samples, 0.95):.1f}"


def table_row(name: str, ours: List[float], theirs: List[float]) -> str:
    """One measure: p50 / p95 of each server, then the ratios of the p50s and of the p95s."""
    return (
        f"| {name} | {quantiles(ours)} | {quantiles(theirs)} "
        f"| {ratio(percentile(ours, 0.5), percentile(theirs, 0.5))} "
        f"| {ratio(percentile(ours, 0.95), percentile(theirs, 0.95))} |"
    )


def tokenizer_peak(peer: Dict[str, Any]) -> str:
    peak, waiting = peer.get("tokenizerPeakMB"), peer.get("tokenizerMostWaiting")
    if not peak:
        return ""
    if not waiting:
        return f", {peak:.0f} MB at its peak"
    return f", {peak:.0f} MB at its peak, with up to {waiting} pages' tokens asked for at once"


def single_row(name: str, ours: float, theirs: float) -> str:
    """A measure with one sample per server."""
    return f"| {name} | {ours:.1f} | {theirs:.1f} | {ratio(ours, theirs)} | |"


def report(pages: int, measured: Dict[str, Any]) -> None:
    """Markdown tables of one vault size's results (as `--json` writes them)."""
    cold, load = measured["cold"], measured["load"]
    mine, peer = measured["steady"][Bench.name], measured["steady"][PEER_NAME]

    def first(label: str, key: str) -> str:
        ours = [run[key] for run in cold[Bench.name]]
        return table_row(label, ours, [run[key] for run in cold[PEER_NAME]])

    print(f"\n#### {pages:,} pages\n")
    print(f"| measure (ms) | {Bench.name} p50 / p95 | peer p50 / p95 | ratio p50 | ratio p95 |")
    print("|---|---|---|---|---|")
    print(first("initialize → first diagnostics (fresh server)", "firstDiagnostics"))
    print(first("initialize → first references (fresh server)", "firstReferences"))
    print(table_row("link completion", mine["completion"], peer["completion"]))
    print(single_row("references, first request", mine["referencesFirst"], peer["referencesFirst"]))
    print(table_row("references, warm", mine["references"], peer["references"]))
    print(
        single_row(
            "workspace symbols, first request",
            mine["workspaceSymbolsFirst"],
            peer["workspaceSymbolsFirst"],
        )
    )
    print(table_row("workspace symbols, warm", mine["workspaceSymbols"], peer["workspaceSymbols"]))
    print(table_row("didChange → diagnostics", mine["didChange"], peer["didChange"]))
    print(
        f"| peak memory (VmHWM, MB) | {mine['peakMB']:.0f} | {peer['peakMB']:.0f} "
        f"| {ratio(mine['peakMB'], peer['peakMB'])} | |"
    )
    print(
        f"| CPU seconds, steady-state run | {mine['cpuSeconds']:.2f} | {peer['cpuSeconds']:.2f} "
        f"| {ratio(mine['cpuSeconds'], peer['cpuSeconds'])} | |"
    )
    print(
        f"\n{len(cold[Bench.name])} fresh servers of each kind; {len(mine['completion'])} "
        f"steady-state samples per measure. Found: {mine['referenceCount']} / "
        f"{peer['referenceCount']} references, {mine['completionItems']} / "
        f"{peer['completionItems']} completion items, {mine['symbolCounts']['topic']} / "
        f"{peer['symbolCounts']['topic']} workspace symbols for `topic`. The peer's markdown-it "
        f"process: {peer['tokenizerCpuSeconds']:.2f} CPU seconds"
        f"{tokenizer_peak(peer)}. Load average (1 minute): "
        f"{load[0][0]:.1f} before, {load[1][0]:.1f} after."
    )
    sys.stdout.flush()


async def run(
    sizes: List[int], repeat: int, cold_runs: int, node: str, json_path: Optional[str]
) -> None:
    modules = install_peer()
    raw: Dict[str, Any] = {}
    for pages in sizes:
        workspace = hub_vault(pages, markdown_links=True)
        load_before = os.getloadavg()
        cold: Dict[str, List[Dict[str, float]]] = {Bench.name: [], PEER_NAME: []}
        for index in range(cold_runs):
            fresh = [Bench(workspace), PeerBench(workspace, modules, node)]
            for bench in order(fresh, index):
                cold[bench.name].append(await cold_round(bench))
        warm = await steady([Bench(workspace), PeerBench(workspace, modules, node)], repeat)
        raw[str(pages)] = {"cold": cold, "steady": warm, "load": [load_before, os.getloadavg()]}
        report(pages, raw[str(pages)])
    if json_path:
        Path(json_path).write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated page counts")
    parser.add_argument("--large", action="store_true", help="also 50,000 pages")
    parser.add_argument("--repeat", type=int, default=20, help="samples per steady measure")
    parser.add_argument("--cold-runs", type=int, default=3, help="fresh servers of each kind")
    parser.add_argument("--node", default=shutil.which("node") or "node", help="Node.js binary")
    parser.add_argument("--json", help="also write the raw samples to this file")
    parser.add_argument("--report", metavar="JSON", help="only print the tables of a --json file")
    args = parser.parse_args()
    if args.report:
        for pages, measured in json.loads(Path(args.report).read_text("utf-8")).items():
            report(int(pages), measured)
        return
    sizes = [int(size) for size in args.sizes.split(",") if size]
    if args.large:
        sizes.append(50_000)
    asyncio.run(run(sizes, args.repeat, args.cold_runs, args.node, args.json))


if __name__ == "__main__":
    main()
