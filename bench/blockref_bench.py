"""Block-reference benchmark: `[[page#^` completion on a large target page.

A minimal JSON-RPC client (named "Neovim", so blocks without an id are offered with their
command) drives `echoes-lsp serve` over stdio in a small vault whose target page has --lines
lines of paragraphs, list items, callouts and quotes, a few with ids. It asks for the block
completion after `[[target#^` (every block, capped at 200) and after `[[target#^deploy 4`
(ranked by the query), with the target closed (read from disk) and open in the editor, and
prints the latency of each (p50, p95, max: from writing the request to the answer parsed with
`json.loads`, as an editor parses it) and the server's CPU time per request (user + system,
from /proc: on a busy machine the latency counts the wait for a core, the CPU time does not).
Not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

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
    """The server process and the few messages the benchmark sends it."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.process = subprocess.Popen(
            SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.next_id = 0

    def send(self, method: str, params: Any, request: bool = True) -> Optional[int]:
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        number = None
        if request:
            self.next_id += 1
            number = message["id"] = self.next_id
        body = json.dumps(message).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return number

    def receive(self) -> Dict[str, Any]:
        stream = self.process.stdout
        assert stream is not None
        length = 0
        while True:
            header = stream.readline()
            if header in (b"\r\n", b""):
                break
            if header.lower().startswith(b"content-length:"):
                length = int(header.split(b":", 1)[1])
        return json.loads(stream.read(length))  # type: ignore[no-any-return]

    def answer(self, number: Optional[int]) -> Any:
        """The result of request `number`, skipping notifications (and answering requests)."""
        while True:
            message = self.receive()
            if message.get("id") == number and "method" not in message:
                return message.get("result")
            if "method" in message and "id" in message:
                self.reply(message["id"])

    def reply(self, number: Any) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": number, "result": None}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def start(self) -> None:
        params = {
            "processId": os.getpid(),
            "capabilities": {},
            "clientInfo": {"name": "Neovim", "version": "bench"},
            "rootUri": self.workspace.as_uri(),
        }
        self.answer(self.send("initialize", params))
        self.send("initialized", {}, request=False)

    def open(self, uri: str, text: str) -> None:
        document = {"uri": uri, "languageId": "markdown", "version": 1, "text": text}
        self.send("textDocument/didOpen", {"textDocument": document}, request=False)

    def complete(self, uri: str, line: int, column: int) -> Dict[str, Any]:
        position = {"line": line, "character": column}
        params = {"textDocument": {"uri": uri}, "position": position}
        return self.answer(self.send("textDocument/completion", params))  # type: ignore[no-any-return]

    def cpu_ms(self) -> float:
        """The server's CPU time so far (user + system), in ms."""
        stat = Path(f"/proc/{self.process.pid}/stat").read_text()
        fields = stat.rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])
        return ticks * 1000 / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.answer(self.send("shutdown", None))
        self.send("exit", None, request=False)
        self.process.wait(60)


def measure(
    bench: Bench, uri: str, line: int, column: int, rounds: int
) -> Tuple[List[float], float]:
    """Latencies (ms) of `rounds` completions, after five not counted (warm-up), and the
    server's mean CPU time per completion (ms)."""
    samples: List[float] = []
    for _ in range(5):
        bench.complete(uri, line, column)
    cpu_before = bench.cpu_ms()
    for _ in range(rounds):
        start = time.perf_counter()
        result = bench.complete(uri, line, column)
        samples.append((time.perf_counter() - start) * 1000)
        assert result["items"], "no block offered"
    return samples, (bench.cpu_ms() - cpu_before) / rounds


def run(lines: int, rounds: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="echoes-blockref-"))
    try:
        pages = root / "EchoesVault" / "pages"
        pages.mkdir(parents=True)
        target = target_text(lines)
        (pages / "target.md").write_text(target, encoding="utf-8")
        bench = Bench(root)
        bench.start()
        draft_lines = ["See [[target#^", "See [[target#^deploy 4"]
        draft = HEAD.format(summary="Links to blocks.") + "\n".join(draft_lines) + "\n"
        draft_uri = (pages / "draft.md").as_uri()
        bench.open(draft_uri, draft)
        first = draft.split("\n").index(draft_lines[0])
        # A page-name completion first: it waits for the vault's first index, which is not
        # what is measured here.
        bench.complete(draft_uri, first, len("See [["))
        start = time.perf_counter()
        bench.complete(draft_uri, first, len(draft_lines[0]))
        cold = (time.perf_counter() - start) * 1000
        rows = []
        for state in ("closed", "open"):
            if state == "open":
                bench.open((pages / "target.md").as_uri(), target)
            for offset, text in enumerate(draft_lines):
                measured = measure(bench, draft_uri, first + offset, len(text), rounds)
                rows.append((f"`{text.split('[[', 1)[1]}`, target {state}", *measured))
        bench.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\n### Block completion on a {target.count(chr(10)):,}-line target page\n")
    print(f"First block request (finds the page's blocks, kept by its hash): {cold:.1f} ms\n")
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
    run(args.lines, args.rounds)


if __name__ == "__main__":
    main()
