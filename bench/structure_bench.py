"""Structure requests benchmark: folding ranges, selection ranges and document highlights on a
long page, and on two pathological ones.

A minimal JSON-RPC client (`navigation_bench.Client`) drives `echoes-lsp serve` over stdio and
times each request until its JSON answer is decoded. It opens a 5,000-line page (headings,
lists, callouts, tables, code and links every few lines), then, many times over, edits one line,
waits for the page's diagnostics (so the model holds the edit) and sends each request once.
Then it opens a page of 200,000 links and a page whose one line is 1 MB long, and times each
request there too: the handlers run on the event loop, so that time is how long every other
request waits. Prints p50 and p95 per request, in milliseconds of wall-clock time, and the
server's mean CPU time per request (read from /proc; it also counts any work the server does
meanwhile, so it is an upper bound),
then the CPU time of the pure functions behind each request on the same pages, in this process
(what the server spends, whatever else the machine runs): folding ranges both without the
document's memory of its sections (the first request) and with it, after a one-line edit. Not a
test: it never fails on timing.
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
from typing import Any, Callable, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import navigation_bench

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


def prose_page(lines: int) -> str:
    """A page of `lines` lines, mostly paragraphs: a section of prose, a short list and a
    callout, repeated."""
    out = HEAD.rstrip("\n").split("\n")
    part = 0
    sentence = "The service checks [[auth#Tokens|tokens]] before it reads the session store,"
    while len(out) < lines:
        part += 1
        out += [f"## Part {part}", "", f"About [[page-{part % 50}]] and [[auth]]."]
        for _paragraph in range(3):
            out += [sentence] * 5 + [""]
        out += ["- one [[auth]]", "- two", "- three", "", "> [!note] A callout", "> body", ""]
    return "\n".join(out[:lines]) + "\n"


def many_links(links: int) -> str:
    return HEAD + "".join(f"See [[missing-{n}]].\n" for n in range(links))


def long_line(size: int) -> str:
    return HEAD + "\n" + "word [[auth]] " * (size // 14) + "\n"


def percentile(samples: List[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


CAPABILITIES: Dict[str, Any] = {
    # What VS Code declares for these requests.
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "foldingRange": {"rangeLimit": 5000, "lineFoldingOnly": True},
        "selectionRange": {},
        "documentHighlight": {},
    },
}


class Client(navigation_bench.Client):
    """The minimal JSON-RPC client of `navigation_bench`, which also sees diagnostics arrive."""

    def __init__(self) -> None:
        super().__init__()
        self.published: Dict[str, asyncio.Event] = {}
        self.cpu: Dict[str, float] = {}  # the server's CPU time during each kind of request

    def notified(self, method: Optional[str], params: Any) -> None:
        if method == "textDocument/publishDiagnostics":
            event = self.published.get(params["uri"])
            if event is not None:
                event.set()
        super().notified(method, params)

    async def open(self, uri: str, text: str) -> None:
        event = self.published[uri] = asyncio.Event()
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
        )
        await asyncio.wait_for(event.wait(), 600)

    async def edit(self, uri: str, version: int, line: int) -> None:
        """Insert or delete (every other time) one letter at the start of `line`, and wait for
        the page's diagnostics: the model then holds the edit."""
        event = self.published[uri] = asyncio.Event()
        end = 0 if version % 2 == 0 else 1
        span = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": end}}
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": span, "text": "X" if end == 0 else ""}],
            },
        )
        await asyncio.wait_for(event.wait(), 600)

    def cpu_ms(self) -> float:
        """The server process's CPU time so far (user and system), in milliseconds."""
        assert self.process is not None
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    async def each_request(
        self, uri: str, line: int, character: int, into: Dict[str, list]
    ) -> None:
        """Send each request once and add its time (ms) to `into`."""
        document = {"uri": uri}
        position = {"line": line, "character": character}
        for method, params in (
            ("textDocument/foldingRange", {"textDocument": document}),
            ("textDocument/selectionRange", {"textDocument": document, "positions": [position]}),
            ("textDocument/documentHighlight", {"textDocument": document, "position": position}),
        ):
            name = method.split("/")[1]
            before = self.cpu_ms()
            await navigation_bench.timed(into.setdefault(name, []), self, method, params)
            self.cpu[name] = self.cpu.get(name, 0.0) + self.cpu_ms() - before


def report(
    title: str, samples: Dict[str, List[float]], cpu: Optional[Dict[str, float]] = None
) -> None:
    """A table of p50 and p95; with `cpu`, also the server's mean CPU time per request (its
    CPU clock counts in 10 ms ticks, so only the mean over many requests tells)."""
    print(f"\n### {title}\n")
    print(
        "| request | p50 ms | p95 ms | samples |" + (" server CPU per request, ms |" if cpu else "")
    )
    print("|---|---|---|---|" + ("---|" if cpu else ""))
    for name, values in samples.items():
        mean = f" {cpu.get(name, 0.0) / len(values):.1f} |" if cpu else ""
        print(
            f"| {name} | {statistics.median(values):.1f} | {percentile(values, 0.95):.1f} "
            f"| {len(values)} |{mean}"
        )


async def after_edits(client: Client, uri: str, middle: int, rounds: int, title: str) -> None:
    """Edit the line after `middle` `rounds` times, each edit followed by every request."""
    samples: Dict[str, List[float]] = {}
    client.cpu = {}
    for version in range(2, rounds + 2):
        await client.edit(uri, version, middle + 1)
        await client.each_request(uri, middle, 10, samples)
    report(f"{title}, after each of {rounds} edits", samples, client.cpu)


async def run(lines: int, rounds: int, links: int, line_size: int) -> None:
    navigation_bench.CAPABILITIES.clear()
    navigation_bench.CAPABILITIES.update(CAPABILITIES)
    root = Path(tempfile.mkdtemp(prefix="echoes-structure-"))
    try:
        pages = root / "EchoesVault" / "pages"
        pages.mkdir(parents=True)
        (pages / "auth.md").write_text(SMALL, encoding="utf-8")
        client = Client()
        await client.start(root)
        long_uri = (pages / "long.md").as_uri()
        text = long_page(lines)
        await client.open(long_uri, text)
        # on the first link of the part in the middle: `About [[page-n]]`
        split = text.split("\n")
        middle = next(n for n in range(lines // 2, lines) if split[n].startswith("About [["))
        await after_edits(
            client, long_uri, middle, rounds, f"A page of {lines:,} lines, a block every few lines"
        )
        prose_uri = (pages / "prose.md").as_uri()
        await client.open(prose_uri, prose_page(lines))
        await after_edits(
            client, prose_uri, middle, rounds, f"A page of {lines:,} lines, mostly paragraphs"
        )
        for title, name, page, (line, character) in (
            (f"A page of {links:,} links", "links.md", many_links(links), (links // 2 + 8, 6)),
            (
                f"A page with a line of {line_size:,} characters",
                "line.md",
                long_line(line_size),
                (9, line_size // 2),
            ),
        ):
            page_uri = (pages / name).as_uri()
            await client.open(page_uri, page)
            extreme: Dict[str, List[float]] = {}
            client.cpu = {}
            for _round in range(5):
                await client.each_request(page_uri, line, character, extreme)
            report(title, extreme, client.cpu)
        await client.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def engine_samples(text: str, where: Tuple[int, int], rounds: int) -> Dict[str, List[float]]:
    """CPU time (ms) of the engine's functions behind each request, at `where` in `text`."""
    from echoes_lsp.engine.folding import folds
    from echoes_lsp.engine.highlights import highlights
    from echoes_lsp.engine.link_targets import text_structure
    from echoes_lsp.engine.selection import selection_spans
    from echoes_lsp.runtime import echoes_vault as rules

    split = text.split("\n")
    line, column = where
    structure = text_structure(text, True)
    frontmatter = rules.parse_frontmatter(split)
    measures: Dict[str, Callable[[], Any]] = {
        "foldingRange": lambda: folds(text, structure, split),
        "foldingRange after an edit": folds_after_edits(text, line + 1),
        "selectionRange": lambda: selection_spans(
            split, structure, folds(text, structure, split, around=line), line, column, frontmatter
        ),
        "documentHighlight": lambda: highlights(None, structure, line, column),
    }
    samples: Dict[str, List[float]] = {}
    for name, measure in measures.items():
        for _round in range(rounds):
            start = time.process_time()
            measure()
            samples.setdefault(name, []).append((time.process_time() - start) * 1000)
    return samples


def folds_after_edits(text: str, line: int) -> Callable[[], Any]:
    """A call of `folds` with the document's memory (as the server makes it) after a one-line
    edit: each call folds, in turn, the page with a letter added at the start of `line` and
    the page as it was (both parsed beforehand, as the server's model has them)."""
    from echoes_lsp.engine.folding import FoldMemory, folds
    from echoes_lsp.engine.link_targets import text_structure

    split = text.split("\n")
    edited = "\n".join([*split[:line], "X" + split[line], *split[line + 1 :]])
    versions = [(page, text_structure(page, True), page.split("\n")) for page in (text, edited)]
    memory: FoldMemory = {}
    folds(*versions[1], memory=memory)
    calls = [0]

    def fold_next() -> Any:
        calls[0] += 1
        return folds(*versions[calls[0] % 2], memory=memory)

    return fold_next


def engine_times(lines: int, links: int, line_size: int, rounds: int) -> None:
    text = long_page(lines)
    split = text.split("\n")
    middle = next(n for n in range(lines // 2, lines) if split[n].startswith("About [["))
    for title, page, where in (
        (f"{lines:,} lines, a block every few lines", text, (middle, 10)),
        (f"{lines:,} lines, mostly paragraphs", prose_page(lines), (middle, 10)),
        (f"{links:,} links", many_links(links), (links // 2 + 8, 6)),
        (f"a line of {line_size:,} characters", long_line(line_size), (9, line_size // 2)),
    ):
        report(f"CPU time of the engine: a page of {title}", engine_samples(page, where, rounds))


def main(argv: Optional[List[Any]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000, help="lines of the long page")
    parser.add_argument("--rounds", type=int, default=100, help="edits, each followed by requests")
    parser.add_argument("--links", type=int, default=200_000, help="links of the linked page")
    parser.add_argument("--line-size", type=int, default=1_000_000, help="the long line's size")
    args = parser.parse_args(argv)
    asyncio.run(run(args.lines, args.rounds, args.links, args.line_size))
    engine_times(args.lines, args.links, args.line_size, args.rounds)


if __name__ == "__main__":
    main()
