"""Whole-process timings of the portable runtime on synthetic vaults.

Each command runs as its own `python .echoes-vault/echoes_vault.py --workspace <vault> ...` process,
exactly as agents and editors invoke it, and the wall time of the whole process is recorded. Every
command gets one untimed warm-up run, then `--runs` timed runs; the median and the maximum are
printed. Vaults come from `bench/vaultgen.py` and are cached under `bench/.vaults/`.

The floor is one Python process that lists `pages/` and reads, decodes and splits every page once:
the least any command that looks at every page must pay. It is measured in the same run, each of its
runs right before a round of the commands (so a machine that speeds up or slows down affects both
alike), and every command is also printed as its ratio to the floor (medians of wall and CPU time).

    python bench/runtime_bench.py                 # 1k and 10k pages
    python bench/runtime_bench.py --large         # adds 50k pages
    python bench/runtime_bench.py --sizes 2000 --runs 11 --json results.json
    python bench/runtime_bench.py --sizes 10000 --runtime old/echoes_vault.py   # before/after

Benchmarks never fail on timing; targets are printed for comparison only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vaultgen

BENCH_DIR = Path(__file__).resolve().parent
CACHE_DIR = BENCH_DIR / ".vaults"
TARGETS = {
    "rebuild-index": 0.6,
    "inspect": 0.6,
    "start --recent 3": 0.6,
    "search (full scan)": 0.3,
    "upsert (index regenerated)": 0.15,
}
FLOOR = "floor (read and split every page)"
# Commands that touch every page, and their target as a multiple of the floor at 10,000 pages.
FLOOR_TARGETS = {
    "inspect": 1.5,
    "status --format card": 1.5,
    "start --recent 3": 1.5,
    "search (full scan)": 1.5,
}
FLOOR_SOURCE = """\
import os, sys
pages = sys.argv[1]
lines = 0
for name in os.listdir(pages):
    if name.endswith(".md"):
        with open(os.path.join(pages, name), "rb") as page:
            lines += len(page.read().decode("utf-8").split("\\n"))
print(lines)
"""


class Bench:
    def __init__(self, root: Path, python: str) -> None:
        self.root = root
        self.python = python
        self.script = root / ".echoes-vault" / "echoes_vault.py"
        self.payload = Path(tempfile.mkdtemp(prefix="echoes-bench-")) / "payload.json"
        self.flip = 0
        self.last_cpu = 0.0

    def command(self, *args: str) -> List[str]:
        return [self.python, str(self.script), "--workspace", str(self.root), *args]

    def run(self, *args: str) -> Tuple[float, str]:
        return self.run_argv(self.command(*args))

    def run_floor(self) -> Tuple[float, str]:
        pages = self.root / "EchoesVault" / "pages"
        return self.run_argv([self.python, "-c", FLOOR_SOURCE, str(pages)])

    def run_argv(self, argv: List[str]) -> Tuple[float, str]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        process = subprocess.run(argv, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.last_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if process.returncode != 0:
            raise RuntimeError(f"{argv[1:]} failed: {process.stderr.strip()}")
        return elapsed, process.stdout

    def prepare_upsert(self) -> None:
        """Untimed: hash the page and write a payload whose summary differs from the current one."""
        name = vaultgen.page_stem(5)
        _, out = self.run("hash", name)
        digest = json.loads(out)["sha256"]
        text = (self.root / "EchoesVault" / "pages" / f"{name}.md").read_text(encoding="utf-8")
        lines = text.split("\n")
        self.flip += 1
        for number, line in enumerate(lines):
            if line.startswith("summary: "):
                lines[number] = f"summary: Benchmark revision {self.flip} of topic 5."
                break
        self.payload.write_text(
            json.dumps(
                {"filename": f"{name}.md", "content": "\n".join(lines), "expectedSha256": digest}
            ),
            encoding="utf-8",
        )

    def prepare_append(self) -> None:
        self.payload.write_text(
            json.dumps({"entry": "- Benchmark entry.", "agent": "bench"}), encoding="utf-8"
        )


Case = Tuple[str, Tuple[str, ...], Optional[Callable[[], None]]]
Timings = Tuple[List[float], List[float]]


def measure_rounds(bench: Bench, cases: List[Case], runs: int) -> Dict[str, Timings]:
    """(wall times, CPU times) of every case and of the floor: `runs` rounds after one untimed
    warm-up round, each round the floor first and then every case once."""
    results: Dict[str, Timings] = {FLOOR: ([], [])}
    results.update((label, ([], [])) for label, _args, _prepare in cases)
    for attempt in range(runs + 1):
        elapsed, _ = bench.run_floor()
        if attempt:
            results[FLOOR][0].append(elapsed)
            results[FLOOR][1].append(bench.last_cpu)
        for label, args, prepare in cases:
            if prepare:
                prepare()
            elapsed, _ = bench.run(*args)
            if attempt:
                results[label][0].append(elapsed)
                results[label][1].append(bench.last_cpu)
    return results


def bench_size(pages: int, runs: int, python: str, runtime_file: Path) -> Dict[str, Timings]:
    root = vaultgen.cached_vault(CACHE_DIR, pages)
    runtime = runtime_file.read_bytes()
    project = root / ".echoes-vault" / "echoes_vault.py"
    if project.read_bytes() != runtime:
        project.write_bytes(runtime)
    bench = Bench(root, python)
    try:
        cases: List[Case] = [
            ("rebuild-index", ("rebuild-index",), None),
            ("inspect", ("inspect",), None),
            ("status --format card", ("status", "--format", "card"), None),
            ("start --recent 3", ("start", "--recent", "3"), None),
            ("search (full scan)", ("search", "no-such-text-anywhere"), None),
            ("search (common word)", ("search", "payment"), None),
            ("hash", ("hash", vaultgen.page_stem(5)), None),
            (
                "upsert (index regenerated)",
                ("upsert", "--payload", str(bench.payload)),
                bench.prepare_upsert,
            ),
            ("append", ("append", "--payload", str(bench.payload)), bench.prepare_append),
        ]
        results = measure_rounds(bench, cases, runs)
        cold, cold_cpu = [], []
        cache = root / ".echoes-vault" / "index-cache.json"
        for _ in range(max(1, runs // 2)):
            cache.unlink(missing_ok=True)
            cold.append(bench.run("rebuild-index")[0])
            cold_cpu.append(bench.last_cpu)
        results["rebuild-index (no cache)"] = (cold, cold_cpu)
        return results
    finally:
        shutil.rmtree(bench.payload.parent, ignore_errors=True)


def print_table(results: Dict[str, Timings], pages: int) -> None:
    """One row per command: medians, maximum, and both medians as multiples of the floor's."""
    floor_wall = statistics.median(results[FLOOR][0])
    floor_cpu = statistics.median(results[FLOOR][1])
    print(
        "| command | median (s) | max (s) | median CPU (s) | target (s) "
        "| × floor | CPU × floor | target × floor |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, (times, cpu) in results.items():
        target = TARGETS.get(label)
        shown = f"{target:.2f}" if target and pages == 10000 else ""
        ratio = FLOOR_TARGETS.get(label)
        ratio_shown = f"{ratio:.1f}" if ratio and pages == 10000 else ""
        wall, used = statistics.median(times), statistics.median(cpu)
        print(
            f"| {label} | {wall:.3f} | {max(times):.3f} | {used:.3f} | {shown} "
            f"| {wall / floor_wall:.2f} | {used / floor_cpu:.2f} | {ratio_shown} |"
        )


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated page counts")
    parser.add_argument("--large", action="store_true", help="also run 50,000 pages")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per command (default 7)")
    parser.add_argument(
        "--python", default=sys.executable, help="interpreter that runs the runtime"
    )
    parser.add_argument(
        "--runtime",
        type=Path,
        default=vaultgen.RUNTIME,
        help="the runtime file to measure, installed as each vault's project runtime "
        "(default: runtime/echoes_vault.py; another engine's file compares before and after)",
    )
    parser.add_argument("--json", help="also write the raw timings to this file")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.large and 50000 not in sizes:
        sizes.append(50000)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    version = subprocess.run(
        [args.python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    print(
        f"python {version} ({args.python}) · {platform.machine()} · {os.cpu_count()} CPUs · "
        f"load {load:.2f} · {args.runs} timed runs after one warm-up · runtime {args.runtime}"
    )
    raw: Dict[str, Dict[str, Timings]] = {}
    for pages in sizes:
        started = time.perf_counter()
        raw[str(pages)] = bench_size(pages, args.runs, args.python, args.runtime)
        print(
            f"\n{pages} pages ({time.perf_counter() - started:.0f} s including generation if needed)\n"
        )
        print_table(raw[str(pages)], pages)
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
