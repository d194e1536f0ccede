"""The secret scanner and the parsers on adversarial text: linear time, measured.

Every text of `tests/adversarial_text.py` (for each credential shape and each Markdown or
frontmatter construct: its prefix repeated, a run without its terminator, its separators
repeated) is built at 64 KB and at 256 KB and given to what reads untrusted text:

- the secret scanner, as every write and `check` call it (`find_secrets`, its gates included);
- the Markdown scan of a page (`markdown.scan`) and the batch check's link reader
  (`Structure.links_except`);
- the runtime's frontmatter parser, index-row reader and conflict-marker finder.

For each it prints the best of `--runs` timings at each size, the ratio of the two (about 4 when
the time is linear) and whether the 256 KB time is within the target. Times are processor
time, the steadier measure on a busy machine; the wall time at 256 KB is printed beside them.
Texts dense with findings (thousands of tokens, links or headings in 256 KB) are listed apart:
their time is that of the findings made, one by one.

    python bench/scanner_bench.py                 # every text, 5 runs each
    python bench/scanner_bench.py --only JSON     # the texts whose name holds `JSON`

Benchmarks never fail on timing; the target is printed for comparison only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from echoes_lsp.engine import markdown  # noqa: E402
from echoes_lsp.runtime import echoes_vault as rules  # noqa: E402
from tests.adversarial_text import (  # noqa: E402
    AWS_ID,
    AWS_KEY,
    MARKDOWN_TEXTS,
    RUNTIME_TEXTS,
    SECRET_TEXTS,
    Text,
    repeated,
)

SMALL, LARGE = 64 * 1024, 256 * 1024
TARGET = 0.100  # seconds for a 256 KB text
Run = Callable[[str], object]


def links_except(text: str) -> object:
    return markdown.Structure.deferred(text).links_except(lambda inner: False)


RUNTIME_RUNS: Dict[str, Run] = {
    "frontmatter": lambda text: rules.parse_frontmatter(rules.split_lines(text)),
    "index rows": rules.parse_index_rows,
    "conflict markers": lambda text: rules.find_conflict_markers(text.split("\n")),
}

GITHUB_TOKEN = "ghp" + "_" + "a1B2c3D4e5" * 3 + "F6g7H8"
DENSE: Dict[str, Text] = {
    "GitHub tokens": repeated(GITHUB_TOKEN + " "),
    "JSON Web Tokens": repeated("eyJabcdefgh.eyJabcdefgh.abcdefghij\n"),
    "credential URIs": repeated("ab://u:p@h "),
    "AWS access key IDs with keys": repeated(f"{AWS_ID} {AWS_KEY}\n"),
}
DENSE_MARKDOWN: Dict[str, Text] = {"links": repeated("[[a]] "), "headings": repeated("\n# x")}


# Adversarial texts that are also dense with findings: a token, link, heading or problem every
# few characters.
DENSE_NAMES = {
    "IDs with keys beside them",
    "IDs in a run of key characters",
    "passwords without a host",
    "links on one line with code",
    "links among fences",
    "unclosed runs",
    "headings repeated",
    "keys repeated",
}


def cases() -> Iterator[Tuple[str, str, Run, Text, bool]]:
    """(group, name, what reads the text, the text, whether it is dense with findings)."""
    for kind, texts in SECRET_TEXTS.items():
        for name, make in texts.items():
            dense = name in DENSE_NAMES
            yield "secret scanner", f"{kind}: {name}", rules.find_secrets, make, dense
    for group, texts in MARKDOWN_TEXTS.items():
        for name, make in texts.items():
            dense = name in DENSE_NAMES
            yield "markdown.scan", f"{group}: {name}", markdown.scan, make, dense
            yield "links_except", f"{group}: {name}", links_except, make, dense
    for group, texts in RUNTIME_TEXTS.items():
        for name, make in texts.items():
            dense = name in DENSE_NAMES
            yield "runtime", f"{group}: {name}", RUNTIME_RUNS[group], make, dense
    for name, make in DENSE.items():
        yield "secret scanner", name, rules.find_secrets, make, True
    for name, make in DENSE_MARKDOWN.items():
        yield "markdown.scan", name, markdown.scan, make, True


def best(run: Run, text: str, runs: int) -> Tuple[float, float]:
    """The least wall and processor seconds of `runs` calls."""
    walls: List[float] = []
    cpus: List[float] = []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        run(text)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - started_cpu)
    return min(walls), min(cpus)


def row(group: str, name: str, run: Run, make: Text, runs: int) -> str:
    _wall, small = best(run, make(SMALL), runs)
    large_wall, large = best(run, make(LARGE), runs)
    ratio = large / small if small > 0 else float("inf")
    within = "yes" if large <= TARGET else "no"
    return (
        f"| {group} | {name} | {small * 1000:.1f} | {large * 1000:.1f} | {ratio:.1f} | "
        f"{large_wall * 1000:.1f} | {within} |"
    )


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timings per text and size")
    parser.add_argument("--only", default="", help="only the texts whose name holds this")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Python {sys.version.split()[0]}, load average {load:.2f}, best of {args.runs}")
    header = (
        "| reader | text | 64 KB CPU (ms) | 256 KB CPU (ms) | ratio | 256 KB wall (ms) "
        f"| ≤ {TARGET * 1000:.0f} ms |\n|---|---|---:|---:|---:|---:|---|"
    )
    for title, wanted in (("Adversarial texts", False), ("Texts dense with findings", True)):
        print(f"\n{title}\n\n{header}")
        for group, name, run, make, dense in cases():
            if dense == wanted and args.only in name:
                print(row(group, name, run, make, args.runs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
