"""Navigation and completion latencies of `echoes-lsp serve`, as an editor sees them.

A minimal JSON-RPC client drives the server over stdio and times each request from the moment it
is written until its JSON response has been read and decoded (editors decode JSON natively, so
no protocol-object conversion is counted). The vault is the generated one of `lsp_bench.py`: N
pages plus a hub page with 500 backlinks. Prints p50 and p95 in milliseconds per request kind.
Not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lsp_bench
import vaultgen

SERVER = [sys.executable, "-m", "echoes_lsp", "serve"]
CAPABILITIES: Dict[str, Any] = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "completion": {"completionItem": {"tagSupport": {"valueSet": [1]}}},
        "definition": {"linkSupport": True},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "rename": {"prepareSupport": True},
        "codeLens": {},
    },
    "workspace": {
        # Watching (rather than the server polling the disk) as editors do.
        "didChangeWatchedFiles": {"dynamicRegistration": True},
        "workspaceEdit": {"documentChanges": True, "resourceOperations": ["rename"]},
        "symbol": {"tagSupport": {"valueSet": [1]}},
    },
}


class Client:
    """Just enough JSON-RPC over stdio: requests with ids, notifications, answers to requests."""

    def __init__(self) -> None:
        self.process: Optional[asyncio.subprocess.Process] = None
        self.next_id = 0
        self.pending: Dict[int, asyncio.Future[Any]] = {}
        self.ready = asyncio.Event()
        self.reader: Optional[asyncio.Task[None]] = None

    async def start(self, workspace: Path) -> None:
        # What the benchmark built so far (a generated vault of thousands of pages) is kept out
        # of this client's garbage collections, which would otherwise pause it for 20-30 ms
        # while it decodes an answer and count in the server's latency.
        gc.collect()
        gc.freeze()
        self.process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        self.reader = asyncio.ensure_future(self.read())
        uri = workspace.resolve().as_uri()
        await self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": uri,
                "capabilities": CAPABILITIES,
                "workspaceFolders": [{"uri": uri, "name": "bench"}],
            },
        )
        self.notify("initialized", {})

    def send(self, message: Dict[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        body = json.dumps(message).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any, timeout: float = 120) -> Any:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_event_loop().create_future()
        self.pending[self.next_id] = future
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await asyncio.wait_for(future, timeout)

    async def read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        while True:
            length = 0
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value.strip())
            message = json.loads(await stdout.readexactly(length))
            if "id" in message and "method" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "id" in message:
                future = self.pending.pop(message["id"], None)
                if future is not None and not future.done():
                    if "error" in message:
                        future.set_exception(RuntimeError(message["error"].get("message")))
                    else:
                        future.set_result(message.get("result"))
            else:
                self.notified(message.get("method"), message.get("params"))

    def notified(self, method: Optional[str], params: Any) -> None:
        """A notification from the server."""
        if method == "echoes/statusChanged" and (params or {}).get("ready"):
            self.ready.set()

    async def stop(self) -> None:
        try:
            await self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            if self.process is not None:
                await asyncio.wait_for(self.process.wait(), 30)
        finally:
            if self.reader is not None:
                self.reader.cancel()


async def timed(samples: List[float], client: Client, method: str, params: Any) -> Any:
    start = time.perf_counter()
    result = await client.request(method, params)
    samples.append((time.perf_counter() - start) * 1000)
    return result


async def measure(workspace: Path, repeat: int) -> Dict[str, List[float]]:
    client = Client()
    await client.start(workspace)
    await asyncio.wait_for(client.ready.wait(), 600)
    page = workspace / "EchoesVault" / "pages" / f"{vaultgen.page_stem(3)}.md"
    hub = workspace / "EchoesVault" / "pages" / f"{lsp_bench.HUB}.md"
    text = page.read_text(encoding="utf-8")
    uri = page.resolve().as_uri()
    hub_uri = hub.resolve().as_uri()
    lines = text.split("\n")
    line = len(lines)
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
    )
    results: Dict[str, List[float]] = {}
    version = 1
    for typed in ("", "top", "topic-1", "tpc", "payment", "refund ledger"):
        samples = results.setdefault(f"completion `[[{typed}`", [])
        version += 1
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": text + f"\n[[{typed}"}],
            },
        )
        for _ in range(repeat):
            await timed(
                samples,
                client,
                "textDocument/completion",
                {
                    "textDocument": {"uri": uri},
                    "position": {"line": line, "character": 2 + len(typed)},
                },
            )
    link_line = next(i for i, item in enumerate(lines) if "[[" in item)
    link_column = lines[link_line].index("[[") + 3
    where = {
        "textDocument": {"uri": uri},
        "position": {"line": link_line, "character": link_column},
    }
    for name, method in (
        ("hover", "textDocument/hover"),
        ("definition", "textDocument/definition"),
    ):
        samples = results.setdefault(name, [])
        for _ in range(repeat):
            await timed(samples, client, method, where)
    hub_where = {"textDocument": {"uri": hub_uri}, "position": {"line": 7, "character": 2}}
    samples = results.setdefault("references (hub, 500 backlinks)", [])
    count = 0
    for _ in range(repeat):
        found = await timed(
            samples,
            client,
            "textDocument/references",
            {**hub_where, "context": {"includeDeclaration": False}},
        )
        count = len(found or [])
    print(f"references returned {count} locations", file=sys.stderr)
    for name, method, params in (
        ("code lens (hub)", "textDocument/codeLens", {"textDocument": {"uri": hub_uri}}),
        ("document symbols", "textDocument/documentSymbol", {"textDocument": {"uri": uri}}),
        ("document links", "textDocument/documentLink", {"textDocument": {"uri": uri}}),
        ("prepareRename (hub)", "textDocument/prepareRename", hub_where),
        ("rename (hub, 500 files)", "textDocument/rename", {**hub_where, "newName": "hub-two"}),
    ):
        samples = results.setdefault(name, [])
        for _ in range(repeat):
            await timed(samples, client, method, params)
    for query in ("", "topic", "pay", "12", "settlement webhook"):
        samples = results.setdefault(f"workspace symbols `{query}`", [])
        for _ in range(repeat):
            await timed(samples, client, "workspace/symbol", {"query": query})
    await client.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    workspace = lsp_bench.hub_vault(args.pages)
    results = asyncio.run(measure(workspace, args.repeat))
    print(f"\n### {args.pages:,} pages\n")
    print("| request | p50 ms | p95 ms | samples |")
    print("|---|---|---|---|")
    for name, samples in results.items():
        print(
            f"| {name} | {statistics.median(samples):.1f} | "
            f"{lsp_bench.percentile(samples, 0.95):.1f} | {len(samples)} |"
        )


if __name__ == "__main__":
    main()
