"""The page cache's write path: an index joined from cached lines, collision lookups and counts
must equal what a cold scan of every page gives, whatever changed on disk in between.

These drive the runtime's scan in-process on real files. The cache's racy window is set to zero
so that freshly written files get entries; every outside change here alters a file's size or
inode, so it is seen whatever the file system's timestamp granularity."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from .conftest import ROOT, page

sys.path.insert(0, str(ROOT / "runtime"))
from echoes_lsp.runtime import echoes_vault as ev

# `é` twice (NFC and NFD), `ſ` folding to `s`, and `ǰ`, whose case folding is not NFC; names
# continuing a shared prefix with a character below `.`, which the index sorts before the prefix
# alone because its key is the file name with `.md` (spec 8).
STEMS = ["alpha", "Alpha", "beta", "BETA", "gamma", "star", "é", "É", "ſtar", "e\u0301", "ǰ"]
STEMS += ["api", "api-gateway", "API-x", "api.v2", "strasse-2", "straße"]
KINDS = ["valid", "deprecated", "invalid", "conflict"]


def body(kind: str, summary: str) -> str:
    if kind == "valid":
        return page(summary)
    if kind == "deprecated":
        return page(summary, status="deprecated")
    if kind == "invalid":
        return "---\ntype: note\n---\n" + summary
    return page(summary) + "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n"


def make_workspace(root: Path) -> Any:
    (root / ".git").mkdir()
    (root / ".echoes-vault").mkdir()
    (root / "EchoesVault" / "pages").mkdir(parents=True)
    return ev.Workspace(str(root))


def write(path: Path, text: str) -> None:
    """Through a new file and a rename, as editors that save atomically do (a new inode)."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def workspace_with_pages(root: Path, before: Dict[str, Tuple[str, str]]) -> Tuple[Any, Path]:
    """A workspace at `root` whose pages/ holds a page of each (kind, summary) in `before`."""
    ws = make_workspace(root)
    pages = root / "EchoesVault" / "pages"
    for stem, (kind, summary) in before.items():
        write(pages / f"{stem}.md", body(kind, summary))
    return ws, pages


def facts(record: Any) -> Tuple[Any, ...]:
    return (record.name, record.row, record.deprecated, list(record.errors), record.conflict)


def cold(ws: Any, pages: List[Any]) -> Tuple[Optional[str], List[Dict[str, Any]], Any]:
    scan = ev.scan_pages(ws)
    records = {r.name: r for r in scan.records}
    for record in pages:
        records[record.name] = record
    text, errors = ev.index_build(list(records.values()))
    return text, errors, scan


def prepared(name: str, text: str) -> Any:
    record = ev.PageRecord(name)
    record.apply_text(text)
    return record


SUMMARIES = st.sampled_from(["A.", "Bb."])
# Mostly valid pages, so that caches are ordered and the joined path runs.
pages_strategy = st.one_of(
    st.dictionaries(st.sampled_from(STEMS), st.tuples(st.sampled_from(KINDS[:2]), SUMMARIES)),
    st.dictionaries(st.sampled_from(STEMS), st.tuples(st.sampled_from(KINDS), SUMMARIES)),
)
change_strategy = st.lists(
    st.tuples(
        st.sampled_from(["delete", "grow", "rewrite", "add", "directory"]),
        st.sampled_from(STEMS),
        st.sampled_from(KINDS),
    ),
    max_size=4,
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    before=pages_strategy,
    changes=change_strategy,
    written=st.lists(st.tuples(st.sampled_from(STEMS), st.sampled_from(KINDS)), max_size=2),
)
@example(before={"alpha": ("valid", "A.")}, changes=[("add", "Alpha", "valid")], written=[])
@example(before={"alpha": ("valid", "A.")}, changes=[], written=[("Alpha", "valid")])
@example(before={}, changes=[], written=[("beta", "valid"), ("BETA", "valid")])
@example(
    before={"alpha": ("valid", "A.")},
    changes=[("delete", "alpha", "valid")],
    written=[("Alpha", "valid")],
)
@example(
    before={"é": ("valid", "A."), "star": ("valid", "A.")}, changes=[], written=[("ſtar", "valid")]
)
@example(before={"é": ("valid", "A.")}, changes=[("add", "É", "valid")], written=[])
@example(before={"ǰ": ("valid", "A.")}, changes=[], written=[("beta", "valid")])
@example(
    before={"api": ("valid", "A."), "api.v2": ("valid", "A.")},
    changes=[("add", "straße", "valid")],
    written=[("api-gateway", "valid"), ("strasse-2", "valid")],
)
@example(before={"star": ("valid", "A.")}, changes=[], written=[("ǰ", "valid")])
def test_cached_index_equals_a_cold_build(
    no_racy_window: None,
    before: Dict[str, Tuple[str, str]],
    changes: List[Tuple[str, str, str]],
    written: List[Tuple[str, str]],
) -> None:
    root = Path(tempfile.mkdtemp())
    try:
        ws, pages = workspace_with_pages(root, before)
        cache = ev.IndexCache(ws)
        ev.scan_pages(ws, cache)
        cache.save(force=True)

        for action, stem, kind in changes:
            path = pages / f"{stem}.md"
            if path.is_dir():
                continue
            if action == "delete" and path.exists():
                path.unlink()
            elif action == "grow" and path.exists():
                with path.open("a", encoding="utf-8") as handle:  # in place: same inode
                    handle.write("\nMore text.\n")
            elif action in ("rewrite", "add"):
                write(path, body(kind, "Changed outside."))
            elif action == "directory":
                if path.exists():
                    path.unlink()
                path.mkdir()

        records = [prepared(f"{stem}.md", body(kind, "Written.")) for stem, kind in written]
        records = list({r.name: r for r in records}.values())
        warm = ev.scan_pages(ws, ev.IndexCache(ws))
        expected_text, expected_errors, reference = cold(ws, records)
        assert warm.index_build(records) == (expected_text, expected_errors)
        assert warm.stats() == reference.stats()
        assert sorted(map(facts, warm.records)) == sorted(map(facts, reference.records))
        assert sorted(warm.others) == sorted(reference.others)
        for record in records:
            clashing = sorted(
                r.name for r in reference.records if r.key == record.key and r.name != record.name
            )
            found = warm.collision(record)
            assert (found is None) == (not clashing) and (found is None or found in clashing)
        warm.install(records)
        assert warm.stats() == ev.PageScan.stats(_installed(reference, records))
    finally:
        shutil.rmtree(root)


def _installed(scan: Any, records: List[Any]) -> Any:
    names = {r.name for r in records}
    scan.fresh = [r for r in scan.fresh if r.name not in names] + records
    return scan


def test_an_ordered_cache_joins_cached_lines(no_racy_window: None, tmp_path: Path) -> None:
    """The common case takes the joined path, and a cache in index order is what makes it."""
    ws = make_workspace(tmp_path)
    pages = tmp_path / "EchoesVault" / "pages"
    for number in range(30):
        write(pages / f"page-{number:02}.md", page(f"Summary {number}."))
    cache = ev.IndexCache(ws)
    ev.scan_pages(ws, cache)
    cache.save(force=True)
    write(pages / "page-07.md", page("Changed outside."))
    written = prepared("page-15.md", page("Written."))

    loaded = ev.IndexCache(ws)
    assert loaded.ordered and loaded.names == sorted(loaded.names)
    warm = ev.scan_pages(ws, loaded)
    assert len(warm.hits) == 29 and [r.name for r in warm.fresh] == ["page-07.md"]
    joined = warm._joined_index([written])
    assert joined is not None and joined == cold(ws, [written])[0]
    assert "- [[page-07]]: Changed outside.\n" in joined
    assert "- [[page-15]]: Written.\n" in joined
    assert warm.collision(prepared("PAGE-03.md", page("x"))) == "page-03.md"
    assert warm.collision(prepared("page-03.md", page("x"))) is None


def test_a_collision_among_cached_pages_is_never_joined(
    no_racy_window: None, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path)
    pages = tmp_path / "EchoesVault" / "pages"
    write(pages / "Alpha.md", page("One."))
    write(pages / "alpha.md", page("Two."))
    cache = ev.IndexCache(ws)
    ev.scan_pages(ws, cache)
    cache.save(force=True)
    loaded = ev.IndexCache(ws)
    assert not loaded.ordered
    text, errors = ev.scan_pages(ws, loaded).index_build()
    assert text is None and "EV501" in errors[0]["problems"][0]


def test_a_large_cache_sees_changes_anywhere_among_its_stamps(
    no_racy_window: None, tmp_path: Path
) -> None:
    """Every entry's stamp is compared: changes at both ends and a removal are all found."""
    ws = make_workspace(tmp_path)
    pages = tmp_path / "EchoesVault" / "pages"
    count = 2500
    for number in range(count):
        (pages / f"p{number:05}.md").write_text(page(f"S {number}."), encoding="utf-8")
    cache = ev.IndexCache(ws)
    ev.scan_pages(ws, cache)
    cache.save(force=True)
    changed = ["p00003.md", f"p{count - 4:05}.md"]
    for name in changed:
        write(pages / name, page("Changed outside."))
    (pages / "p00010.md").unlink()

    warm = ev.scan_pages(ws, ev.IndexCache(ws))
    assert sorted(r.name for r in warm.fresh) == changed
    assert len(warm.hits) == count - 3
    assert warm.index_build() == cold(ws, [])[:2]


def test_no_fork_is_allowed_while_other_threads_run() -> None:
    """A program that imports the runtime may run threads, and forking one is unsafe (the
    parallel `check` asks before it forks)."""
    alone = ev.can_fork()
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        assert not ev.can_fork()
    finally:
        stop.set()
        worker.join()
    assert ev.can_fork() == alone


def test_the_joined_index_orders_shared_prefixes_by_file_name(
    no_racy_window: None, tmp_path: Path
) -> None:
    """`api-gateway.md` sorts before `api.md` (`-` < `.`): the joined path must agree with a cold
    build, for cached pages and for pages merged in."""
    ws = make_workspace(tmp_path)
    pages = tmp_path / "EchoesVault" / "pages"
    for stem in ("api", "api.v2", "strasse-2", "zeta"):
        write(pages / f"{stem}.md", page(f"About {stem}."))
    cache = ev.IndexCache(ws)
    ev.scan_pages(ws, cache)
    cache.save(force=True)
    write(pages / "API-x.md", page("Changed outside."))
    written = [prepared("api-gateway.md", page("Written.")), prepared("straße.md", page("S."))]
    loaded = ev.IndexCache(ws)
    assert loaded.ordered
    warm = ev.scan_pages(ws, loaded)
    joined = warm._joined_index(written)
    assert joined is not None and joined == cold(ws, written)[0]
    rows = [line.split("]]")[0][4:] for line in joined.split("\n") if line.startswith("- [[")]
    assert rows == ["api-gateway", "API-x", "api", "api.v2", "strasse-2", "straße", "zeta"]
    assert warm.collision(prepared("API.md", page("x"))) == "api.md"
    assert warm.collision(prepared("Api-Gateway.md", page("x"))) is None


def test_a_cache_that_cannot_be_written_does_not_fail_a_write(vault: Path) -> None:
    """The page cache is optional: when the disk refuses it after the command's own files are
    written, the command must still succeed, rather than report an error for a write that landed
    (an agent would send it again). The file-size limit lets the index through (under 20 KB) and
    refuses the cache of 500 pages (over 20 KB), as a nearly full disk would."""
    import json
    import resource
    import subprocess
    import time

    from .conftest import PYTHON, base_env, pages_dir

    for number in range(500):
        (pages_dir(vault) / f"p{number}.md").write_text(page(f"Page number {number}."))
    time.sleep(ev.CACHE_RACY_NS / 1e9 + 0.1)  # files this fresh are not cached (their ctime)

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    process = subprocess.run(
        [PYTHON, str(vault / ".echoes-vault" / "echoes_vault.py"), "rebuild-index"],
        capture_output=True,
        text=True,
        cwd=vault,
        env=base_env(),
        preexec_fn=limit_file_size,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout)["ok"] is True
    index = (vault / "EchoesVault" / "index.md").read_text()
    assert "[[p499]]: Page number 499." in index
    runtime_dir = vault / ".echoes-vault"
    assert not [name for name in os.listdir(runtime_dir) if name.endswith(".echoes-tmp")]
    # the cache is what the limit refused: written without the limit, it is over 20 KB
    subprocess.run(
        [PYTHON, str(runtime_dir / "echoes_vault.py"), "rebuild-index"],
        capture_output=True,
        cwd=vault,
        env=base_env(),
        check=True,
    )
    assert (runtime_dir / ev.CACHE_NAME).stat().st_size > 20_000
