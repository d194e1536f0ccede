"""Structure requests benchmark: folding ranges, selection ranges and document highlights on a
long page, and on two pathological ones.

A real LSP client drives `echoes-lsp serve` over stdio. It opens a 5,000-line page (headings,
lists, callouts, tables, code and links every few lines), then, many times over, edits one line,
waits for the page's diagnostics (so the model holds the edit) and sends each request once.
Then it opens a page of 200,000 links and a page whose one line is 1 MB long, and times each
request there too: the handlers run on the event loop, so that time is how long every other
request waits. Prints p50 and p95 per request, in milliseconds of wall-clock time at the client.
Not a test: it never fails on timing.
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
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.lsp.client import LanguageClient

SERVER = [sys.executable, "-m", "echoes_lsp", "serve"]
HEAD = "---\ntype: note\nstack: []\nstatus: active\nsummary: A long page.\n---\n\n# Long page\n"
SMALL = "---\ntype: note\nstack: []\nstatus: active\nsummary: Tokens.\n---\n\n# Auth\n## Tokens\n"


def long_page(lines: int) -> str:
    """A page of `lines` lines with every kind of block, repeated."""
    out = HEAD.rstrip("\n").split("\n")
    part = 0
    while len(out) < lines:
        part += 1
        out += [
            f"## Part {part}",
            "",
            f"About [[page-{part % 50}]] and [[auth#Tokens|tokens]].",
            "",
        ]
        out += [f"### Sub {part}", "", "- item one", "  continued [[auth]]", "  - nested"]
        out += ["- item two", "", "> [!note] A callout", "> with a body", ""]
        out += ["| a | b |", "|---|---|", "| 1 | 2 |", "", "```py", "x = 1", "```", ""]
    return "\n".join(out[:lines]) + "\n"


def many_links(links: int) -> str:
    return HEAD + "".join(f"See [[missing-{n}]].\n" for n in range(links))


def long_line(size: int) -> str:
    return HEAD + "\n" + "word [[auth]] " * (size // 14) + "\n"


def percentile(samples: List[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def capabilities() -> types.ClientCapabilities:
    """What VS Code declares for these requests."""
    return types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            folding_range=types.FoldingRangeClientCapabilities(
                range_limit=5000, line_folding_only=True
            ),
            selection_range=types.SelectionRangeClientCapabilities(),
            document_highlight=types.DocumentHighlightClientCapabilities(),
        )
    )


class Bench:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.client = LanguageClient("echoes-structure-bench", "1")
        self.published: Dict[str, asyncio.Event] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            event = self.published.get(params.uri)
            if event is not None:
                event.set()

        @self.client.feature(types.PROGRESS)
        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        @self.client.feature("echoes/statusChanged")
        def ignored(params: Any) -> None:
            return None

    async def start(self) -> None:
        await self.client.start_io(*SERVER)
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=capabilities(),
                root_uri=self.workspace.as_uri(),
                initialization_options={"diagnostics": {"debounce": 0}},
            )
        )
        self.client.initialized(types.InitializedParams())

    async def open(self, uri: str, text: str) -> None:
        event = self.published[uri] = asyncio.Event()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=text
                )
            )
        )
        await asyncio.wait_for(event.wait(), 600)

    async def edit(self, uri: str, version: int, line: int) -> None:
        """Insert or delete (every other time) one letter at the start of `line`."""
        event = self.published[uri] = asyncio.Event()
        end = 0 if version % 2 == 0 else 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=line, character=0),
                            end=types.Position(line=line, character=end),
                        ),
                        text="X" if end == 0 else "",
                    )
                ],
            )
        )
        await asyncio.wait_for(event.wait(), 600)

    def requests(
        self, uri: str, position: types.Position
    ) -> List[Tuple[str, Callable[[], Awaitable[Any]]]]:
        document = types.TextDocumentIdentifier(uri=uri)
        return [
            (
                "foldingRange",
                lambda: self.client.text_document_folding_range_async(
                    types.FoldingRangeParams(text_document=document)
                ),
            ),
            (
                "selectionRange",
                lambda: self.client.text_document_selection_range_async(
                    types.SelectionRangeParams(text_document=document, positions=[position])
                ),
            ),
            (
                "documentHighlight",
                lambda: self.client.text_document_document_highlight_async(
                    types.DocumentHighlightParams(text_document=document, position=position)
                ),
            ),
        ]

    async def timed(self, request: Callable[[], Awaitable[Any]]) -> float:
        start = time.perf_counter()
        await request()
        return (time.perf_counter() - start) * 1000

    async def stop(self) -> None:
        await asyncio.wait_for(self.client.shutdown_async(None), 60)
        self.client.exit(None)
        await self.client.stop()


def report(title: str, samples: Dict[str, List[float]]) -> None:
    print(f"\n### {title}\n")
    print("| request | p50 ms | p95 ms | samples |")
    print("|---|---|---|---|")
    for name, values in samples.items():
        print(
            f"| {name} | {statistics.median(values):.1f} | {percentile(values, 0.95):.1f} "
            f"| {len(values)} |"
        )


async def run(lines: int, rounds: int, links: int, line_size: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="echoes-structure-"))
    try:
        pages = root / "EchoesVault" / "pages"
        pages.mkdir(parents=True)
        (pages / "auth.md").write_text(SMALL, encoding="utf-8")
        bench = Bench(root)
        await bench.start()
        long_uri = (pages / "long.md").as_uri()
        text = long_page(lines)
        await bench.open(long_uri, text)
        # on the first link of the part in the middle: `About [[page-n]]`
        split = text.split("\n")
        middle = next(n for n in range(lines // 2, lines) if split[n].startswith("About [["))
        position = types.Position(line=middle, character=10)
        samples: Dict[str, List[float]] = {}
        for version in range(2, rounds + 2):
            await bench.edit(long_uri, version, middle + 1)
            for name, request in bench.requests(long_uri, position):
                samples.setdefault(name, []).append(await bench.timed(request))
        report(f"A page of {lines:,} lines, after each of {rounds} edits", samples)
        for title, uri, text, where in (
            (f"A page of {links:,} links", "links.md", many_links(links), (links // 2, 6)),
            (
                f"A page with a line of {line_size:,} characters",
                "line.md",
                long_line(line_size),
                (9, line_size // 2),
            ),
        ):
            page_uri = (pages / uri).as_uri()
            await bench.open(page_uri, text)
            at = types.Position(line=where[0], character=where[1])
            extreme: Dict[str, List[float]] = {}
            for _round in range(5):
                for name, request in bench.requests(page_uri, at):
                    extreme.setdefault(name, []).append(await bench.timed(request))
            report(title, extreme)
        await bench.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: Optional[List[Any]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000, help="lines of the long page")
    parser.add_argument("--rounds", type=int, default=100, help="edits, each followed by requests")
    parser.add_argument("--links", type=int, default=200_000, help="links of the linked page")
    parser.add_argument("--line-size", type=int, default=1_000_000, help="the long line's size")
    args = parser.parse_args(argv)
    asyncio.run(run(args.lines, args.rounds, args.links, args.line_size))


if __name__ == "__main__":
    main()
