"""Workspace-symbol benchmark: how long a hover waits while a long `workspace/symbol` query runs.

A real LSP client drives `echoes-lsp serve` over stdio on the generated vaults of
`lsp_bench.py` (default 10,000 pages; `--large` adds 50,000). Once the vault is indexed it sends
the first `workspace/symbol` request (which makes the page catalog), then queries of 100,000
characters and of the longest length kept (256) that match nothing, so that every tier of the
search runs over every page, and the ordinary queries of `lsp_bench.py`. While each runs, it
sends a hover on a link every 5 ms. Prints how long the symbol requests took (p50) and how long
the hovers sent meanwhile waited (p50, p95, max).
Not a test: it never fails on timing. `--server` runs another build of the server, for a
before/after comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lsp_bench
import vaultgen

HOVER_EVERY = 0.005


ORDINARY = ("topic", "pay", "12", "settlement webhook")


def queries(rounds: int) -> List[Tuple[str, str]]:
    """(kind, query) pairs: long queries that match no page, so every tier searches everything,
    and the ordinary queries of `lsp_bench.py`."""
    rng = random.Random(7)
    made = []
    for _ in range(rounds):
        # A new query each time: Python keeps the last few hundred compiled patterns.
        made.append(("100,000 characters", "".join(rng.choice("qxzjvw") for _ in range(100_000))))
        made.append(("256 letters", "".join(rng.choice("qxzjvw") for _ in range(256))))
        made.append(("256 characters, 4 words", " ".join(["zqxj" * 16] * 4)[:256]))
        made.extend(("ordinary (" + ", ".join(ORDINARY) + ")", query) for query in ORDINARY)
    return made


async def hovers_during(
    bench: lsp_bench.Bench, query: str, hovered: types.TextDocumentIdentifier
) -> Tuple[float, List[float]]:
    """The symbol request's duration (ms) and the waits of the hovers sent meanwhile (ms)."""
    start = time.perf_counter()
    request = asyncio.ensure_future(
        bench.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    )
    waits: List[float] = []
    while not request.done():
        sent = time.perf_counter()
        await bench.client.text_document_hover_async(
            types.HoverParams(text_document=hovered, position=types.Position(line=14, character=9))
        )
        waits.append((time.perf_counter() - sent) * 1000)
        await asyncio.sleep(HOVER_EVERY)
    await request
    return (time.perf_counter() - start) * 1000, waits


def row(name: str, durations: List[float], waits: List[float]) -> str:
    if not waits:
        return f"| {name} | {statistics.median(durations):.0f} | | | | 0 |"
    ordered = sorted(waits)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"| {name} | {statistics.median(durations):.0f} | {statistics.median(waits):.1f} "
        f"| {p95:.1f} | {max(waits):.1f} | {len(waits)} |"
    )


async def run(pages: int, rounds: int) -> None:
    workspace = lsp_bench.hub_vault(pages)
    bench = lsp_bench.Bench(workspace)
    await bench.start()
    await asyncio.wait_for(bench.ready.wait(), 600)
    gc.collect()
    gc.freeze()
    uri = await bench.open(bench.page(vaultgen.page_stem(2)))
    hovered = types.TextDocumentIdentifier(uri=uri)
    first, first_waits = await hovers_during(bench, "", hovered)
    measured: Dict[str, Tuple[List[float], List[float]]] = {}
    for kind, query in queries(rounds):
        duration, waits = await hovers_during(bench, query, hovered)
        durations, all_waits = measured.setdefault(kind, ([], []))
        durations.append(duration)
        all_waits.extend(waits)
    await bench.stop()
    print(f"\n### {pages:,} pages\n")
    print("| workspace/symbol query | request ms (p50) | hover wait p50 | p95 | max | hovers |")
    print("|---|---|---|---|---|---|")
    print(row("the first one (makes the catalog)", [first], first_waits))
    for kind, (durations, waits) in measured.items():
        print(row(kind, durations, waits))
    sys.stdout.flush()


def main(argv: Optional[List[Any]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated page counts")
    parser.add_argument("--large", action="store_true", help="also 50,000 pages")
    parser.add_argument("--rounds", type=int, default=5, help="queries of each kind")
    parser.add_argument("--server", help="the command that starts the server (default: this one)")
    args = parser.parse_args(argv)
    if args.server:
        lsp_bench.SERVER[:] = shlex.split(args.server)
    sizes = [int(size) for size in args.sizes.split(",") if size]
    if args.large:
        sizes.append(50_000)
    for pages in sizes:
        asyncio.run(run(pages, args.rounds))


if __name__ == "__main__":
    main()
