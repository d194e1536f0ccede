"""The read paths of the commands that look at every page.

Health reads the vault once for both of its reports: unchanged pages come from the page cache's
columns (never reread, never made into records), `pages/` is listed once, and Git's queries are
started before the vault is read, so they run beside it. `search` opens `pages/` once and reads
each page by its name in it.

These drive the runtime in-process on real files. Counting spies wrap the real functions (they
count calls and pass them on); what the report says is compared with a cold read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from echoes_lsp.runtime import echoes_vault as ev

from .conftest import base_env, page
from .test_page_cache import KINDS, STEMS, body, make_workspace, workspace_with_pages, write


def warm_cache(ws: Any) -> None:
    cache = ev.IndexCache(ws)
    ev.scan_pages(ws, cache)
    cache.save(force=True)


def report_of(ws: Any) -> str:
    """The report as JSON. Pages' conflict markers are listed in scan order (cached pages
    first), so both conflict lists are compared as sets."""
    report = ev.collect_health(ws)
    report["conflictMarkers"].sort(key=lambda item: item["file"])
    report["health"]["conflictMarkers"].sort()
    return json.dumps(report, indent=2, ensure_ascii=False)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    before=st.dictionaries(
        st.sampled_from(STEMS), st.tuples(st.sampled_from(KINDS), st.sampled_from(["A.", "B."]))
    ),
    changes=st.lists(
        st.tuples(
            st.sampled_from(["delete", "rewrite", "add", "hidden", "directory", "index"]),
            st.sampled_from(STEMS),
            st.sampled_from(KINDS),
        ),
        max_size=4,
    ),
)
@example(before={"é": ("deprecated", "A."), "e\u0301": ("valid", "A.")}, changes=[])
@example(before={"alpha": ("conflict", "A."), "beta": ("invalid", "B.")}, changes=[])
@example(before={"alpha": ("valid", "A.")}, changes=[("index", "alpha", "valid")])
def test_health_from_the_cache_equals_a_cold_read(
    no_racy_window: None,
    before: Dict[str, Tuple[str, str]],
    changes: List[Tuple[str, str, str]],
) -> None:
    """Both reports (this runtime's lists and the reference `health`), byte for byte."""
    root = Path(tempfile.mkdtemp())
    try:
        ws, pages = workspace_with_pages(root, before)
        (root / "EchoesVault" / "index.md").write_text(
            ev.scan_pages(ws).index_build()[0] or "", encoding="utf-8"
        )
        warm_cache(ws)
        for action, stem, kind in changes:
            path = pages / f"{stem}.md"
            if path.is_dir():
                continue
            if action == "delete" and path.exists():
                path.unlink()
            elif action in ("rewrite", "add"):
                write(path, body(kind, "Changed outside."))
            elif action == "hidden":
                write(pages / f".{stem}.md", body(kind, "Hidden."))
            elif action == "directory":
                if path.exists():
                    path.unlink()
                path.mkdir()
            elif action == "index":
                with (root / "EchoesVault" / "index.md").open("a", encoding="utf-8") as index:
                    index.write(f"- [[{stem}]]: Listed again.\n- [[{stem}]]:\n")
        warm = report_of(ws)
        os.unlink(ws.cache)
        assert warm == report_of(ws)
    finally:
        shutil.rmtree(root)


def spy(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, seen: List[Any]) -> None:
    """Count the calls of `owner.name` (their first argument), passing them on."""
    real: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append(args[0] if args else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


def test_a_warm_cache_spares_the_unchanged_pages(
    no_racy_window: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With 40 pages cached and two changed since, health reads and makes records of those two
    only, and lists `pages/` once."""
    ws = make_workspace(tmp_path)
    pages = tmp_path / "EchoesVault" / "pages"
    for number in range(40):
        write(pages / f"p{number:02}.md", page(f"S {number}."))
    warm_cache(ws)
    write(pages / "p03.md", page("Changed outside."))
    write(pages / "p31.md", page("Changed too.", status="deprecated"))
    (pages / "notes.txt").write_text("not a page\n", encoding="utf-8")

    records: List[Any] = []
    reads: List[Any] = []
    listings: List[Any] = []
    spy(monkeypatch, ev.PageRecord, "__init__", records)
    spy(monkeypatch, ev, "read_bytes", reads)
    spy(monkeypatch, os, "listdir", listings)
    spy(monkeypatch, os, "scandir", listings)
    # the finder of writers' temporary files lists the hidden names of pages/ on its own
    finder = ev.find_temp_files
    monkeypatch.setattr(
        ev, "find_temp_files", lambda *args: (listings.append("finder"), finder(*args))[1]
    )
    report = ev.collect_health(ws)

    assert sorted(record.name for record in records) == ["p03.md", "p31.md"]
    assert sorted(os.path.basename(p) for p in reads if os.path.dirname(p) == ws.pages) == [
        "p03.md",
        "p31.md",
    ]
    before_finder = listings[: listings.index("finder")]
    assert [p for p in before_finder if os.path.normpath(str(p)) == ws.pages] == [ws.pages]
    # and what it reports still covers every page and every file
    assert report["counts"]["pages"] == 40 and report["counts"]["deprecatedPages"] == 1
    assert report["health"]["deprecatedSlugs"] == ["p31"]
    assert report["totals"]["markdownFiles"] >= 40 and report["totals"]["files"] >= 41
    assert report["health"]["totalPages"] == 40


def test_git_is_queried_while_the_vault_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git's three queries start before `pages/` is listed, and are all collected."""
    ws = make_workspace(tmp_path)
    shutil.rmtree(tmp_path / ".git")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, env=base_env(), check=True)
    write(tmp_path / "EchoesVault" / "pages" / "a.md", page("A."))
    events: List[Any] = []
    spy(monkeypatch, subprocess, "Popen", events)
    spy(monkeypatch, os, "listdir", events)
    report = ev.collect_health(ws)

    started = [i for i, event in enumerate(events) if isinstance(event, list) and "git" in event]
    listed = [i for i, event in enumerate(events) if event == ws.pages]
    assert len(started) == 3 and listed
    assert max(started) < min(listed)
    assert report["git"]["available"] is True and report["git"]["error"] is None
    assert report["git"]["untrackedDurable"] == ["EchoesVault/pages/a.md"]


def test_search_opens_pages_once_and_each_page_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages are opened relative to the one open `pages/` (no path resolved again for each);
    a link among them is not followed."""
    ws = make_workspace(tmp_path)
    pages = tmp_path / "EchoesVault" / "pages"
    for number in range(12):
        write(pages / f"p{number:02}.md", page(f"Summary {number}.", body=f"Needle {number}.\n"))
    (tmp_path / "outside.md").write_text("needle outside\n", encoding="utf-8")
    os.symlink(tmp_path / "outside.md", pages / "link.md")
    opened: List[Tuple[Any, Any]] = []
    real_open = os.open

    def counted(path: Any, flags: int, mode: int = 0o777, *, dir_fd: Any = None) -> int:
        opened.append((path, dir_fd))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", counted)
    monkeypatch.setattr(os, "supports_dir_fd", os.supports_dir_fd | {counted})
    args = type("Args", (), {"query": "NEEDLE", "limit": 5})()
    result = ev.cmd_search(ev.Context(ws), args)

    assert [r["file"] for r in result["results"]] == [
        f"EchoesVault/pages/p{number:02}.md" for number in range(5)
    ]
    assert result["truncated"] is True
    assert [path for path, _ in opened if path == ws.pages] == [ws.pages]
    by_name = [(path, fd) for path, fd in opened if path != ws.pages]
    assert [path for path, _ in by_name] == [f"p{number:02}.md" for number in range(6)]
    assert all(fd is not None for _, fd in by_name)
