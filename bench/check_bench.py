"""Whole-process timings of `echoes-lsp check` on synthetic vaults.

Three measurements per vault size, each on vaults from `bench/vaultgen.py` (cached under
`bench/.vaults/`, shared with the other benchmarks and never modified here):

- **whole vault**: `python -m echoes_lsp check --format concise` as a fresh process (a cold
  interpreter; the file system cache is warm after the untimed warm-up run);
- **stdin**: `check --stdin-filename EchoesVault/pages/<page>.md` with an edited page on stdin;
- **watch**: `check --watch` on a private copy of the vault; one page is edited at a time and the
  time from detecting the change to a rendered report (printed by watch mode in its header) is
  recorded, as well as the time from the write to the report arriving on stdout (which includes
  waiting for the next poll).

Medians, 95th percentiles and CPU time (user + system) are printed as a Markdown table. Bytecode
caching is enabled for the measured processes, as for an installed package.

    python bench/check_bench.py                  # 1k and 10k pages
    python bench/check_bench.py --sizes 10000 --runs 11 --json results.json
    python bench/check_bench.py --sizes 10000 --whole-only --jobs 1,0 --gc   # what the tricks buy

Benchmarks never fail on timing; targets are printed for comparison only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vaultgen

BENCH_DIR = Path(__file__).resolve().parent
CACHE_DIR = BENCH_DIR / ".vaults"
TARGETS = {"whole vault": 1.0, "stdin (one page)": 0.4, "watch: detection to report": 0.05}
RECHECK = re.compile(r"re-checked (\d+) files? in ([0-9.]+) ms")


def environment() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    return env


def command(*args: str) -> List[str]:
    return [sys.executable, "-m", "echoes_lsp", "check", *args]


# `check` as above, with `gc.disable()` made a no-op: the cost of cyclic collection in `check`.
GC_ON = (
    "import gc, runpy, sys; gc.disable = lambda: None; "
    "sys.argv = ['echoes-lsp', *sys.argv[1:]]; runpy.run_module('echoes_lsp', run_name='__main__')"
)


def command_with_gc(*args: str) -> List[str]:
    return [sys.executable, "-c", GC_ON, "check", *args]


def timed(args: List[str], cwd: Path, stdin: Optional[bytes] = None) -> Tuple[float, float]:
    """(wall, CPU) seconds of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.run(
        args, cwd=cwd, env=environment(), input=stdin, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{args} failed ({process.returncode}): {process.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def repeat(args: List[str], cwd: Path, runs: int, stdin: Optional[bytes] = None):  # type: ignore[no-untyped-def]
    timed(args, cwd, stdin)  # warm-up: bytecode and file system cache
    results = [timed(args, cwd, stdin) for _ in range(runs)]
    return [r[0] for r in results], [r[1] for r in results]


def watch_latency(
    root: Path, runs: int, interval: float
) -> Tuple[List[float], List[float], List[int]]:
    """(detection → report seconds, write → report-arrival seconds, files re-checked)."""
    work = Path(tempfile.mkdtemp(prefix="echoes-check-bench-"))
    try:
        copy = work / "vault"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        process = subprocess.Popen(
            command("--watch", "--poll-interval", str(interval), "--format", "concise"),
            cwd=copy,
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        lines: queue.Queue[Optional[str]] = queue.Queue()

        def pump() -> None:
            assert process.stdout is not None
            for raw in process.stdout:
                lines.put(raw.decode("utf-8", "replace"))
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()

        def next_header(timeout: float) -> str:
            deadline = time.monotonic() + timeout
            while True:
                line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
                if line is None:
                    raise RuntimeError("watch mode exited")
                if line.startswith("[") and ("watching" in line or "changed:" in line):
                    return line

        next_header(300)  # the initial full check
        page = copy / "EchoesVault" / "pages" / f"{vaultgen.page_stem(42)}.md"
        original = page.read_text(encoding="utf-8")
        internal: List[float] = []
        arrival: List[float] = []
        rechecked: List[int] = []
        phases = random.Random(7)
        for attempt in range(runs + 1):
            # A random phase relative to the poll loop, so that "write to report" averages the
            # wait for the next poll instead of locking onto one point of the cycle.
            time.sleep(interval * (1 + phases.random()))
            edit = original + f"\nEdit {attempt}: see [[{vaultgen.page_stem(attempt)}]].\n"
            written = time.perf_counter()
            page.write_text(edit, encoding="utf-8")
            header = next_header(60)
            arrived = time.perf_counter() - written
            match = RECHECK.search(header)
            if match is None:
                raise RuntimeError(f"unexpected header: {header!r}")
            if attempt:
                internal.append(float(match.group(2)) / 1000)
                arrival.append(arrived)
                rechecked.append(int(match.group(1)))
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        return internal, arrival, rechecked
    finally:
        shutil.rmtree(work, ignore_errors=True)


def p95(values: List[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def bench_size(
    pages: int,
    runs: int,
    interval: float,
    jobs: Sequence[int] = (),
    with_gc: bool = False,
    whole_only: bool = False,
) -> Dict[str, Dict[str, List[float]]]:
    root = vaultgen.cached_vault(CACHE_DIR, pages)
    results: Dict[str, Dict[str, List[float]]] = {}
    wall, cpu = repeat(command("--format", "concise"), root, runs)
    results["whole vault"] = {"wall": wall, "cpu": cpu}
    for count in jobs:  # 0 is the automatic choice, 1 a single process
        wall, cpu = repeat(command("--format", "concise", "--jobs", str(count)), root, runs)
        results[f"whole vault, --jobs {count}"] = {"wall": wall, "cpu": cpu}
    if with_gc:
        wall, cpu = repeat(command_with_gc("--format", "concise"), root, runs)
        results["whole vault, gc enabled"] = {"wall": wall, "cpu": cpu}
    if whole_only:
        return results
    page = f"EchoesVault/pages/{vaultgen.page_stem(42)}.md"
    edited = (root / page).read_bytes() + b"\nSee [[no-such-page]] and [[topic-00001#Nowhere]].\n"
    wall, cpu = repeat(command("--format", "concise", "--stdin-filename", page), root, runs, edited)
    results["stdin (one page)"] = {"wall": wall, "cpu": cpu}
    internal, arrival, rechecked = watch_latency(root, runs, interval)
    results["watch: detection to report"] = {
        "wall": internal,
        "rechecked": [float(n) for n in rechecked],
    }
    results[f"watch: write to report (poll {interval:g}s)"] = {"wall": arrival}
    return results


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated page counts")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per case (default 7)")
    parser.add_argument("--poll-interval", type=float, default=0.3, help="watch mode interval")
    parser.add_argument(
        "--jobs",
        default="",
        help="also time the whole vault with these comma-separated --jobs values "
        "(1 = one process, 0 = automatic): what the parallel check gains",
    )
    parser.add_argument(
        "--gc",
        action="store_true",
        help="also time the whole vault with cyclic garbage collection left on: what "
        "check's gc.disable() gains",
    )
    parser.add_argument(
        "--whole-only", action="store_true", help="skip the stdin and watch measurements"
    )
    parser.add_argument("--json", help="also write the raw timings to this file")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    jobs = [int(j) for j in args.jobs.split(",") if j.strip()]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"python {platform.python_version()} · {os.cpu_count()} CPUs · load {load:.2f} · "
        f"{args.runs} timed runs after one warm-up"
    )
    raw: Dict[str, Dict[str, Dict[str, List[float]]]] = {}
    for pages in sizes:
        raw[str(pages)] = bench_size(
            pages, args.runs, args.poll_interval, jobs, args.gc, args.whole_only
        )
        print(f"\n{pages} pages\n")
        print("| case | median (s) | p95 (s) | median CPU (s) | target (s) |")
        print("|---|---:|---:|---:|---:|")
        for label, values in raw[str(pages)].items():
            wall = values["wall"]
            cpu = f"{statistics.median(values['cpu']):.3f}" if "cpu" in values else ""
            target = TARGETS.get(label)
            shown = f"{target:.2f}" if target and pages == 10000 else ""
            print(
                f"| {label} | {statistics.median(wall):.3f} | {p95(wall):.3f} | {cpu} | {shown} |"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
