"""A large document analysed off the event loop (`prepare`) and installed with a backlink delta
leaves the same model as parsing it in place."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List

from echoes_lsp.engine.vault import LARGE_LINK_KEYS, Vault, larger_than, prepare, prepare_file

HEAD = "---\ntype: note\nstack: []\nstatus: active\nsummary: Big.\n---\n\n"


def make_vault(root: Path) -> Vault:
    pages = root / "EchoesVault" / "pages"
    pages.mkdir(parents=True)
    for stem in ("alpha", "beta"):
        (pages / f"{stem}.md").write_text(HEAD + f"# {stem}\n[[big]]\n", encoding="utf-8")
    (pages / "big.md").write_text(big_text(0), encoding="utf-8")
    vault = Vault(str(root))
    vault.load()
    vault.complete()
    return vault


def big_text(version: int) -> str:
    links = [f"[[target-{(n + version) % 3000}]]" for n in range(LARGE_LINK_KEYS + 1500)]
    links += ["[[alpha]]"] * (version % 3) + ["[[beta#beta]]"] * version
    return HEAD + "\n".join(links) + "\n"


def backlinks(vault: Vault) -> Dict[str, List[str]]:
    return {key: sorted(sources) for key, sources in vault.backlinks.items() if sources}


def test_installing_prepared_analyses_equals_parsing_in_place(tmp_path: Path) -> None:
    fast = make_vault(tmp_path / "fast")
    slow = make_vault(tmp_path / "slow")
    fast_path = os.path.join(fast.root, "pages", "big.md")
    slow_path = os.path.join(slow.root, "pages", "big.md")
    assert fast.entries[fast_path].counts is not None  # kept for a file this large
    deltas: List[int] = []
    for version in (1, 2, 2, 5, 0):
        text = big_text(version)
        entry = fast.entries[fast_path]
        prepared = prepare(entry.kind, entry.key, text, entry.counts)
        assert prepared.delta is not None
        deltas.append(len(prepared.delta))
        fast.open(fast_path, text, prepared)
        slow.open(slow_path, text)
        assert backlinks(fast) == {
            key: sorted(path.replace(slow.root, fast.root) for path in sources)
            for key, sources in backlinks(slow).items()
        }
    assert deltas[2] == 0  # the same text again changes nothing
    snapshot = fast.snapshot()
    fresh = Vault(fast.workspace)
    fresh.load()
    fresh.open(fast_path, big_text(0))
    assert fresh.snapshot() == snapshot


def test_a_stale_preparation_falls_back_to_a_full_relink(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    path = os.path.join(vault.root, "pages", "big.md")
    entry = vault.entries[path]
    prepared = prepare(entry.kind, entry.key, big_text(4), entry.counts)
    vault.open(path, big_text(7))  # parsed again meanwhile: the delta no longer applies
    vault.open(path, big_text(4), prepared)
    fresh = Vault(vault.workspace)
    fresh.load()
    fresh.open(path, big_text(4))
    assert fresh.snapshot() == vault.snapshot()


def test_a_large_file_indexed_in_the_worker_equals_one_parsed_in_place(tmp_path: Path) -> None:
    # What indexing does with a large file on disk: found by its size, read and prepared in
    # the worker thread, installed with `update`.
    pages = tmp_path / "EchoesVault" / "pages"
    pages.mkdir(parents=True)
    (pages / "small.md").write_text(HEAD + "[[big]]\n", encoding="utf-8")
    (pages / "big.md").write_text(big_text(3), encoding="utf-8")
    in_place = Vault(str(tmp_path))
    in_place.load()
    in_place.complete()
    worker = Vault(str(tmp_path))
    worker.load()
    assert larger_than(list(worker.pending), 16 * 1024) == [str(pages / "big.md")]
    entry = worker.entries[str(pages / "big.md")]
    found = prepare_file(entry.kind, entry.key, entry.path)
    assert found is not None
    worker.pending.discard(entry.path)
    worker.update(entry.path, *found)
    worker.complete()
    assert worker.snapshot() == in_place.snapshot()
    assert prepare_file("page", "gone", str(pages / "gone.md")) is None


def test_the_collector_is_paused_for_an_analysis_and_back_after_it() -> None:
    # A large analysis runs with the cyclic collector off (its full collections would hold the
    # interpreter lock the event loop waits for), and what it made is frozen, not collected.
    import gc

    from echoes_lsp.server.large_documents import uncollected

    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    made: List[object] = []

    def analysis() -> bool:
        made.extend([[n] for n in range(1000)])  # tracked objects, young when made
        return gc.isenabled()

    try:
        assert uncollected(analysis) is False
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen + len(made)

        def failing() -> None:
            raise ValueError("the analysis failed")

        try:
            uncollected(failing)
        except ValueError:
            pass
        assert gc.isenabled()
    finally:
        gc.unfreeze()
