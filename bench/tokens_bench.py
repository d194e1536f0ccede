"""Semantic tokens and inlay hints of `echoes-lsp serve`, as an editor sees them.

Times, from the request written to its JSON answer decoded (the client of `navigation_bench.py`):
- on a 5,000-line page (links to existing, missing, deprecated pages, headings, blocks, aliases,
  non-ASCII text) in a generated vault: `semanticTokens/full` as the first request on a page
  just opened (it waits for the page's analysis), as the first request once the analysis is
  done, and after each one-line edit (the steady state of typing), `semanticTokens/full/delta`
  after each one-line edit, `semanticTokens/range` over a screenful (60 lines) at spread
  positions, and `inlayHint` over the same screenfuls and over the whole page;
- on a page of 200,000 links (opt-in, `--huge`): a range, and the full answer (capped).
Prints p50 and p95 in milliseconds. Not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lsp_bench
import navigation_bench
import vaultgen

HEAD = "---\ntype: note\nstack: []\nstatus: active\nsummary: {summary}\n---\n\n"
SCREEN = 60


def bench_pages(workspace: Path) -> None:
    """The block page and the deprecated page the long page links to."""
    pages = workspace / "EchoesVault" / "pages"
    blocks = "".join(f"Block number {n} says something é. ^b{n}\n\n" for n in range(50))
    (pages / "bench-blocks.md").write_text(
        HEAD.format(summary="Blocks.") + "# Blocks\n\n" + blocks, encoding="utf-8"
    )
    (pages / "bench-old.md").write_text(
        HEAD.replace("active", "deprecated").format(summary="Old.")
        + "> [!warning] DEPRECATED\n> Use [[bench-blocks]].\n",
        encoding="utf-8",
    )


def long_page(lines: int, pages: int, sparse: bool = False) -> str:
    """A page of `lines` body lines, five kinds of line in turn (one link per line on average);
    `sparse`: prose with a link on one line in five, as most pages have."""
    body = []
    for n in range(lines):
        kind = n % 5
        if sparse and kind in (1, 2) and n % 25 not in (1, 2):
            kind = 3
        if kind == 0:
            stem = vaultgen.page_stem(n % pages)
            body.append(f"Ligne {n} é: see [[{stem}]] and [[{stem}#Overview|the overview]].")
        elif kind == 1:
            body.append(f"Quoted: [[bench-blocks#^b{n % 50}]] here.")
        elif kind == 2:
            body.append(f"Missing [[nowhere-{n}]] and the old [[bench-old]].")
        elif kind == 3:
            body.append(f"Plain text on line {n}, nothing to colour.")
        else:
            body.append(f"## Heading {n}")
    return HEAD.format(summary="A long page.") + "\n".join(body) + "\n"


def huge_page(links: int) -> str:
    return HEAD.format(summary="Many links.") + "".join(
        f"See [[missing-{n}]].\n" for n in range(links)
    )


# Server CPU time (user + system, all threads) spent during each series of requests, by the id
# of its list of samples: the machine may be shared, and wall time then counts the waits for a
# core; CPU time counts the work. Read in clock ticks (10 ms), so only a series' mean is shown.
CPU: Dict[int, float] = {}


def server_cpu_ms(client: Any) -> float:
    fields = Path(f"/proc/{client.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def timed(samples: List[float], client: Any, method: str, params: Any) -> Any:
    cpu = server_cpu_ms(client)
    start = time.perf_counter()
    result = await client.request(method, params)
    samples.append((time.perf_counter() - start) * 1000)
    CPU[id(samples)] = CPU.get(id(samples), 0.0) + server_cpu_ms(client) - cpu
    return result


def window(uri: str, first: int) -> Dict[str, Any]:
    return {
        "textDocument": {"uri": uri},
        "range": {
            "start": {"line": first, "character": 0},
            "end": {"line": first + SCREEN, "character": 0},
        },
    }


def whole_page(uri: str) -> Dict[str, Any]:
    return {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 5010, "character": 0}},
    }


def open_page(client: Any, path: Path, text: str) -> str:
    uri = path.resolve().as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
    )
    return uri


def one_line_edit(client: Any, uri: str, version: int, line: int) -> None:
    """Type one character at the start of a body line, as an editor sends it."""
    where = {"line": line, "character": 0}
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": where, "end": where}, "text": "x"}],
        },
    )


async def measure_first(
    client: Any, workspace: Path, text: str, repeat: int, results: Dict[str, Any]
) -> None:
    """The first full request on a page just opened, and on one whose analysis is done."""
    pages = workspace / "EchoesVault" / "pages"
    for name, settle in (("on open", False), ("after the analysis", True)):
        samples = results.setdefault(f"5,000 lines: semanticTokens/full, first {name}", [])
        for n in range(max(3, repeat // 4)):
            path = pages / f"bench-first-{int(settle)}-{n}.md"
            uri = open_page(client, path, text)
            if settle:
                await asyncio.sleep(3)
            await timed(
                samples, client, "textDocument/semanticTokens/full", {"textDocument": {"uri": uri}}
            )
            client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def measure_edits(client: Any, uri: str, repeat: int, results: Dict[str, Any]) -> None:
    """Full and delta requests, each right after a one-line edit (before the debounce)."""
    whole = {"textDocument": {"uri": uri}}
    answer = await client.request("textDocument/semanticTokens/full", whole)
    fulls = results.setdefault("5,000 lines: semanticTokens/full after a one-line edit", [])
    deltas = results.setdefault("5,000 lines: semanticTokens/full/delta after a one-line edit", [])
    version = 1
    for samples, method in ((fulls, "full"), (deltas, "full/delta")):
        for n in range(repeat):
            version += 1
            one_line_edit(client, uri, version, 8 + (n * 997 + version) % 4990)
            params = dict(whole)
            if method == "full/delta":
                params["previousResultId"] = answer["resultId"]
            answer = await timed(samples, client, f"textDocument/semanticTokens/{method}", params)
    results["5,000 lines: integers in the last delta"] = sum(
        len(edit.get("data", [])) for edit in answer.get("edits", [])
    )


async def measure_long(
    client: Any, workspace: Path, pages: int, repeat: int, sparse: bool = False
) -> Dict[str, Any]:
    text = long_page(5000, pages, sparse)
    name = "bench-sparse.md" if sparse else "bench-long.md"
    uri = open_page(client, workspace / "EchoesVault" / "pages" / name, text)
    await asyncio.sleep(1)  # past the debounce: the model holds the page, as it does while typing
    results: Dict[str, Any] = {}
    whole = {"textDocument": {"uri": uri}}
    samples = results.setdefault("5,000 lines: semanticTokens/full, unchanged page", [])
    for _ in range(repeat):
        found = await timed(samples, client, "textDocument/semanticTokens/full", whole)
    results["5,000 lines: tokens in the full answer"] = len(found["data"]) // 5
    await measure_first(client, workspace, text, repeat, results)
    starts = [(n * 997) % 4900 for n in range(repeat)]
    samples = results.setdefault("5,000 lines: semanticTokens/range (60 lines)", [])
    for first in starts:
        await timed(samples, client, "textDocument/semanticTokens/range", window(uri, first))
    samples = results.setdefault("5,000 lines: inlayHint (60 lines)", [])
    for first in starts:
        await timed(samples, client, "textDocument/inlayHint", window(uri, first))
    samples = results.setdefault("5,000 lines: inlayHint (whole page)", [])
    for _ in range(repeat):
        found = await timed(samples, client, "textDocument/inlayHint", whole_page(uri))
    results["5,000 lines: hints on the whole page"] = len(found)
    await measure_edits(client, uri, repeat, results)
    samples = results.setdefault("5,000 lines: inlayHint (whole page) after a one-line edit", [])
    for n in range(repeat):
        one_line_edit(client, uri, 1000 + n, 8 + (n * 991) % 4990)
        await timed(samples, client, "textDocument/inlayHint", whole_page(uri))
    return results


async def measure_huge(client: Any, workspace: Path, repeat: int) -> Dict[str, Any]:
    uri = open_page(
        client, workspace / "EchoesVault" / "pages" / "bench-huge.md", huge_page(200_000)
    )
    results: Dict[str, Any] = {}
    start = time.perf_counter()
    await client.request("textDocument/semanticTokens/range", window(uri, 0), timeout=600)
    results["200,000 links: first range (waits for the analysis), ms"] = (
        time.perf_counter() - start
    ) * 1000
    samples = results.setdefault("200,000 links: semanticTokens/range (60 lines)", [])
    for n in range(repeat):
        await timed(samples, client, "textDocument/semanticTokens/range", window(uri, n * 6007))
    samples = results.setdefault("200,000 links: inlayHint (60 lines)", [])
    for n in range(repeat):
        await timed(samples, client, "textDocument/inlayHint", window(uri, n * 6007))
    samples = results.setdefault("200,000 links: semanticTokens/full (capped)", [])
    for _ in range(max(3, repeat // 10)):
        found = await timed(
            samples, client, "textDocument/semanticTokens/full", {"textDocument": {"uri": uri}}
        )
    results["tokens in the capped full answer"] = len(found["data"]) // 5
    return results


async def measure(workspace: Path, pages: int, repeat: int, huge: bool) -> Dict[str, Any]:
    bench_pages(workspace)
    client = navigation_bench.Client()
    await client.start(workspace)
    await asyncio.wait_for(client.ready.wait(), 600)
    results = await measure_long(client, workspace, pages, repeat)
    sparse = await measure_long(client, workspace, pages, repeat, sparse=True)
    results.update(
        {name.replace("5,000 lines", "5,000 lines, sparse"): v for name, v in sparse.items()}
    )
    if huge:
        results.update(await measure_huge(client, workspace, repeat))
    await client.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--huge", action="store_true", help="also a page of 200,000 links")
    args = parser.parse_args()
    workspace = lsp_bench.hub_vault(args.pages)
    results = asyncio.run(measure(workspace, args.pages, args.repeat, args.huge))
    print(f"\n### {args.pages:,} pages\n")
    print("| request | p50 ms | p95 ms | samples | server CPU ms per request (mean) |")
    print("|---|---|---|---|---|")
    for name, samples in results.items():
        if isinstance(samples, list):
            print(
                f"| {name} | {statistics.median(samples):.1f} | "
                f"{lsp_bench.percentile(samples, 0.95):.1f} | {len(samples)} | "
                f"{CPU.get(id(samples), 0.0) / len(samples):.1f} |"
            )
        else:
            print(f"| {name} | {samples:,.0f} | | | |")


if __name__ == "__main__":
    main()
