"""Where the server's vault model keeps its memory: `tracemalloc` over one fully parsed `Vault`.

The profile holds what a server holds once it has answered completion and symbol queries: the
model, its catalog of cards and the catalog's search index. Prints the total traced and the
source lines that allocated the most live memory, plus the process's resident memory (which
`tracemalloc` itself inflates). Not a test: it measures and prints.

    .venv/bin/python bench/memory_profile.py bench/.vaults/lsp-50000 --top 25
"""

from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_memory import memory_mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace", help="a folder holding EchoesVault/ (e.g. a bench vault)")
    parser.add_argument("--top", type=int, default=20, help="source lines to list")
    args = parser.parse_args()
    from echoes_lsp.engine.catalog import catalog
    from echoes_lsp.engine.vault import Vault

    tracemalloc.start(1)
    vault = Vault(args.workspace)
    vault.load()
    vault.complete()
    cards = catalog(vault)
    cards.index().search("topic", 20)
    cards.index().search("settlement webhook", 20)
    cards.vocabulary()
    gc.collect()
    snapshot = tracemalloc.take_snapshot()
    lines = snapshot.statistics("lineno")
    total = sum(stat.size for stat in lines)
    print(
        f"{len(vault.entries):,} files; traced {total / 1e6:.1f} MB; resident {memory_mb('self') or 0:.0f} MB"
    )
    for stat in lines[: args.top]:
        frame = stat.traceback[0]
        print(f"{stat.size / 1e6:8.1f} MB {stat.count:9,d}  {frame.filename}:{frame.lineno}")


if __name__ == "__main__":
    main()
