"""Block-reference benchmark: `[[page#^` completion on a large target page.

A real LSP client (named "Neovim", so blocks without an id are offered with their command)
drives `echoes-lsp serve` over stdio in a small vault whose target page has --lines lines of
paragraphs, list items, callouts and quotes, a few with ids. It asks for the block completion
after `[[target#^` (every block, capped at 200) and after `[[target#^deploy 4` (ranked by the
query), with the target closed (read from disk) and open in the editor, and prints the latency
of each (p50, p95, max) and the server's CPU time per request (user + system, from /proc: on
a busy machine the latency counts the wait for a core, the CPU time does not). Not a test: it
never fails on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, List, Optional, Tuple

from lsprotocol import types
from pygls.lsp.client import LanguageClient

SERVER = [sys.executable, "-m", "echoes_lsp", "serve"]
HEAD = "---\ntype: note\nstack: []\nstatus: active\nsummary: {summary}\n---\n\n"


def target_text(lines: int) -> str:
    """About `lines` lines: a heading, then groups of a two-line paragraph, a list of three
    items, a callout and a quote, separated by blank lines; every tenth paragraph has an id."""
    out = [HEAD.format(summary="A long page of blocks."), "# Target\n\n"]
    count = 8
    group = 0
    while count < lines:
        anchor = f" ^p{group}" if group % 10 == 0 else ""
        out.append(f"Paragraph {group} about deploy {group} and the release train.\n")
        out.append(f"Its second line names host-{group}.{anchor}\n\n")
        out.append(f"- item {group}a\n- item {group}b\n- item {group}c\n\n")
        out.append(f"> [!note] Callout {group}\n> body {group}\n\n")
        out.append(f"> quote {group}\n\n")
        count += 12
        group += 1
    return "".join(out)


def percentile(samples: List[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class Bench:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.client = LanguageClient("echoes-blockref-bench", "1")

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        @self.client.feature(types.PROGRESS)
        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        @self.client.feature("echoes/statusChanged")
        def ignored(params: Any) -> None:
            return None

    async def start(self) -> None:
        await self.client.start_io(*SERVER)
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                client_info=types.ClientInfo(name="Neovim", version="bench"),
                root_uri=self.workspace.as_uri(),
            )
        )
        self.client.initialized(types.InitializedParams())

    def open(self, uri: str, text: str) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=text
                )
            )
        )

    async def complete(self, uri: str, line: int, column: int) -> types.CompletionList:
        result = await self.client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=column),
            )
        )
        assert isinstance(result, types.CompletionList), result
        return result

    @property
    def pid(self) -> int:
        return self.client._server.pid  # type: ignore[attr-defined,union-attr]

    def cpu_ms(self) -> float:
        """The server's CPU time so far (user + system), in ms."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])
        return ticks * 1000 / os.sysconf("SC_CLK_TCK")

    async def stop(self) -> None:
        await asyncio.wait_for(self.client.shutdown_async(None), 60)
        self.client.exit(None)
        await self.client.stop()


async def measure(
    bench: Bench, uri: str, line: int, column: int, rounds: int
) -> Tuple[List[float], float]:
    """Latencies (ms) of `rounds` completions, after five not counted (warm-up), and the
    server's mean CPU time per completion (ms)."""
    samples: List[float] = []
    for _ in range(5):
        await bench.complete(uri, line, column)
    cpu_before = bench.cpu_ms()
    for _ in range(rounds):
        start = time.perf_counter()
        result = await bench.complete(uri, line, column)
        samples.append((time.perf_counter() - start) * 1000)
        assert result.items, "no block offered"
    return samples, (bench.cpu_ms() - cpu_before) / rounds


async def run(lines: int, rounds: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="echoes-blockref-"))
    try:
        pages = root / "EchoesVault" / "pages"
        pages.mkdir(parents=True)
        target = target_text(lines)
        (pages / "target.md").write_text(target, encoding="utf-8")
        bench = Bench(root)
        await bench.start()
        draft_lines = ["See [[target#^", "See [[target#^deploy 4"]
        draft = HEAD.format(summary="Links to blocks.") + "\n".join(draft_lines) + "\n"
        draft_uri = (pages / "draft.md").as_uri()
        bench.open(draft_uri, draft)
        first = draft.split("\n").index(draft_lines[0])
        rows = []
        for state in ("closed", "open"):
            if state == "open":
                bench.open((pages / "target.md").as_uri(), target)
            for offset, text in enumerate(draft_lines):
                measured = await measure(bench, draft_uri, first + offset, len(text), rounds)
                rows.append((f"`{text.split('[[', 1)[1]}`, target {state}", *measured))
        await bench.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\n### Block completion on a {target.count(chr(10)):,}-line target page\n")
    print("| request | p50 ms | p95 ms | max ms | server CPU ms per request | samples |")
    print("|---|---|---|---|---|---|")
    for name, samples, cpu in rows:
        print(
            f"| {name} | {statistics.median(samples):.1f} | {percentile(samples, 0.95):.1f} "
            f"| {max(samples):.1f} | {cpu:.1f} | {len(samples)} |"
        )


def main(argv: Optional[List[Any]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5_000, help="lines of the target page")
    parser.add_argument("--rounds", type=int, default=100, help="completions per measure")
    args = parser.parse_args(argv)
    asyncio.run(run(args.lines, args.rounds))


if __name__ == "__main__":
    main()
