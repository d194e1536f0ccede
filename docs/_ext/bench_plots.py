"""Benchmark plots for the docs, drawn at build time from the JSON the `bench/` scripts write.

`bench/results/` holds the data as committed: `runtime.json` (`bench/runtime_bench.py --json`),
`check.json` (`bench/check_bench.py --json`) and `lsp.json` (`bench/lsp_bench.py --json`), each
keyed by vault size in pages. Nothing here is drawn by hand: run the benchmarks again with `--json`
into `bench/results/` and the next `make docs` shows the new numbers.

    python docs/_ext/bench_plots.py [OUT_DIR]   # draws every plot (default docs/_generated)
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
Series = Dict[int, float]


def _load(results: Path, name: str) -> Dict[int, Any]:
    data = json.loads((results / name).read_text(encoding="utf-8"))
    return {int(pages): value for pages, value in data.items()}


def _median(values: List[float]) -> float:
    return float(statistics.median(values))


def _p95(values: List[float]) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))])


def command_times(results: Path) -> Dict[str, Series]:
    """Median seconds per vault size of the command-line cases."""
    runtime = _load(results, "runtime.json")
    check = _load(results, "check.json")
    series: Dict[str, Series] = {}
    for label, key in (
        ("runtime rebuild-index", "rebuild-index"),
        ("runtime upsert", "upsert (index regenerated)"),
        ("runtime search", "search (full scan)"),
    ):
        series[label] = {n: _median(runtime[n][key][0]) for n in runtime if key in runtime[n]}
    series["check, whole vault (wall)"] = {
        n: _median(check[n]["whole vault"]["wall"]) for n in check
    }
    series["check, whole vault (CPU)"] = {n: _median(check[n]["whole vault"]["cpu"]) for n in check}
    series["check, one page (stdin)"] = {
        n: _median(check[n]["stdin (one page)"]["wall"]) for n in check
    }
    return series


def server_latencies(results: Path) -> Dict[str, Series]:
    """p95 milliseconds per vault size of the language server's measures."""
    lsp = _load(results, "lsp.json")
    names = (
        ("initialize → first diagnostics", "firstDiagnostics"),
        ("[[ completion", "completion"),
        ("references (500+ backlinks)", "references"),
        ("didChange → diagnostics", "didChange"),
        ("workspace symbols", "workspaceSymbols"),
    )
    series = {label: {n: _p95(lsp[n][key]) for n in lsp} for label, key in names}
    # One sample per size, in the runs that measured it.
    first = {n: _p95(lsp[n]["firstCompletion"]) for n in lsp if "firstCompletion" in lsp[n]}
    if first:
        series["first [[ completion after indexing"] = first
    return series


def server_memory(results: Path) -> Dict[str, Series]:
    lsp = _load(results, "lsp.json")
    return {"server resident memory after indexing": {n: float(lsp[n]["rssMB"]) for n in lsp}}


def _axes(ax: Any, title: str, unit: str, series: Dict[str, Series], log: bool = False) -> None:
    for label, points in series.items():
        sizes = sorted(points)
        ax.plot(sizes, [points[n] for n in sizes], marker="o", label=label)
    ax.set_title(title)
    ax.set_xlabel("vault size (pages, log scale)")
    ax.set_xscale("log")
    ax.set_ylabel(unit)
    if log:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    # Below the axes, so that no legend hides a line.
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)


def _time(results: Path, out: Path) -> None:
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 5.5))
    _axes(left, "Command line (median)", "seconds", command_times(results))
    _axes(
        right, "Language server (p95)", "milliseconds (log scale)", server_latencies(results), True
    )
    figure.tight_layout()
    figure.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(figure)


def _memory(results: Path, out: Path) -> None:
    figure, ax = plt.subplots(figsize=(6, 4.5))
    _axes(ax, "Language server memory", "MB (resident)", server_memory(results))
    ax.set_ylim(bottom=0)
    figure.tight_layout()
    figure.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(figure)


PLOTS: Dict[str, Tuple[str, Callable[[Path, Path], None]]] = {
    "time": ("bench-time.png", _time),
    "memory": ("bench-memory.png", _memory),
}


def draw(metric: str, results: Path, out_dir: Path) -> Path:
    """Draw one plot into `out_dir`; its path."""
    name, render = PLOTS[metric]
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / name
    render(results, path)
    return path


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "_generated"
    for metric in PLOTS:
        print(draw(metric, RESULTS, target))
