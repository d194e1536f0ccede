"""Incremental updates equal a full rebuild.

A random sequence of edits, creates, renames, deletes, buffer opens and closes is applied to the
disk and, one file at a time, to a `Vault`. Afterwards the model must equal what a fresh
`Vault.load()` of the same disk (plus the same open buffers) builds from scratch: files, pages,
the forward links, the reverse index (backlinks) and the assets. The completion catalog, which
follows the model through its change listener, must equal a freshly built one as well.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import unicodedata
from pathlib import Path
from typing import Dict, List, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from echoes_lsp.engine.catalog import Catalog, catalog
from echoes_lsp.engine.vault import MANY_SOURCES, Vault

from .helpers import make_vault, page

STEMS = ["alpha", "Alpha", "beta", "café", unicodedata.normalize("NFD", "café"), "gamma"]
TARGETS = ["alpha", "ALPHA", "beta", "café", "missing", "pages/gamma.md", ""]
ANCHORS = ["", "#Heading A", "#heading a", "#^blk", "#Nope"]
ALIASES = ["", "|shown"]
BODY_LINES = [
    "# Title",
    "## Heading A",
    "Text with a block. ^blk",
    "![[img.png]]",
    "![[sub/img.png]]",
    "![[gone.png]]",
    "`[[code-span]]`",
    "```\n[[fenced]]\n```",
    "plain words",
]
FRONTMATTERS = [
    "---\ntype: note\nstack: [python]\nstatus: active\nsummary: Fine.\n---\n",
    "---\ntype: note\nstack: []\nstatus: deprecated\nsummary: Old.\n---\n",
    "---\ntype: note\nstatus: active\n---\n",
    "",
]
FILES = [f"pages/{stem}.md" for stem in STEMS] + [
    "pages/nested/inner.md",
    "daily/2026-01-01/entry-a.md",
    "daily/2026-01-02/entry-b.md",
    "daily/2026-01-01.md",
    "raw/notes.md",
    "index.md",
    "assets/img.png",
    "assets/sub/img.png",
    "assets/other.png",
]
DIRECTORIES = ["daily/2026-01-01", "daily/2026-01-02", "assets/sub", "pages/nested"]

link = st.builds(
    lambda target, anchor, alias, embed: ("!" if embed else "") + f"[[{target}{anchor}{alias}]]",
    st.sampled_from(TARGETS),
    st.sampled_from(ANCHORS),
    st.sampled_from(ALIASES),
    st.booleans(),
)
text = st.builds(
    lambda front, lines: front + "\n".join(lines) + "\n",
    st.sampled_from(FRONTMATTERS),
    st.lists(st.one_of(link, st.sampled_from(BODY_LINES)), max_size=6),
)
operation = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(FILES), text),
    st.tuples(st.just("delete"), st.sampled_from(FILES), st.just("")),
    st.tuples(st.just("rename"), st.sampled_from(FILES), st.sampled_from(FILES)),
    st.tuples(st.just("open"), st.sampled_from(FILES), text),
    st.tuples(st.just("close"), st.sampled_from(FILES), st.just("")),
    st.tuples(st.just("rmdir"), st.sampled_from(DIRECTORIES), st.just("")),
    st.tuples(st.just("movedir"), st.sampled_from(DIRECTORIES), st.sampled_from(DIRECTORIES)),
    st.tuples(st.just("parse"), st.just(""), st.just("")),
)


def write(path: str, content: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(content)


def apply(vault: Vault, root: str, step: Tuple[str, str, str], overlays: Dict[str, str]) -> None:
    kind, rel, extra = step
    path = os.path.join(root, rel)
    if kind == "write":
        write(path, extra)
        if path not in overlays:
            vault.update(path)
    elif kind == "delete":
        if os.path.isfile(path):
            os.remove(path)
            overlays.pop(path, None)
            vault.remove(path)
    elif kind == "rename":
        target = os.path.join(root, extra)
        if os.path.isfile(path) and not os.path.exists(target) and path != target:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.rename(path, target)
            overlays.pop(path, None)
            vault.rename(path, target)
    elif kind == "open":
        overlays[path] = extra
        vault.open(path, extra)
    elif kind == "close":
        if path in overlays:
            del overlays[path]
            vault.close(path)
    elif kind == "rmdir":
        if os.path.isdir(path):
            shutil.rmtree(path)
            for open_path in [p for p in overlays if p.startswith(path + os.sep)]:
                del overlays[open_path]
            vault.remove(path)
    elif kind == "movedir":
        target = os.path.join(root, extra)
        if os.path.isdir(path) and not os.path.exists(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.rename(path, target)
            for open_path in [p for p in overlays if p.startswith(path + os.sep)]:
                del overlays[open_path]
            vault.rename(path, target)
    elif kind == "parse":
        vault.parse_pending(2)


def cards(found: Catalog) -> List[Tuple[object, ...]]:
    return [
        (c.path, c.stem, c.summary, c.type, c.status, c.stack, c.deprecated, c.title_line)
        for c in found.cards
    ]


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    initial=st.lists(st.tuples(st.sampled_from(FILES), text), max_size=5),
    steps=st.lists(operation, max_size=14),
)
def test_incremental_updates_equal_a_full_rebuild(
    initial: List[Tuple[str, str]], steps: List[Tuple[str, str, str]]
) -> None:
    workspace = tempfile.mkdtemp(prefix="echoes-incremental-")
    try:
        root = os.path.join(workspace, "EchoesVault")
        for folder in ("pages", "daily", "assets", "raw"):
            os.makedirs(os.path.join(root, folder))
        for rel, content in initial:
            write(os.path.join(root, rel), content)
        vault = Vault(workspace)
        vault.load()  # parsing stays lazy: updates meet unparsed entries too
        watched = catalog(vault)
        overlays: Dict[str, str] = {}
        for step in steps:
            apply(vault, root, step, overlays)
            if step[0] == "parse":
                catalog(vault)  # the catalog catches up in the middle of the sequence

        fresh = Vault(workspace)
        fresh.load()
        for path, content in overlays.items():
            fresh.open(path, content)
        assert vault.snapshot() == fresh.snapshot()
        # Which of two colliding pages a link resolves to must not depend on history either.
        assert {k: v for k, v in vault.by_key.items() if v} == {
            k: v for k, v in fresh.by_key.items() if v
        }
        assert cards(catalog(vault)) == cards(catalog(fresh))
        assert catalog(vault) is watched
        assert catalog(vault).vocabulary() == catalog(fresh).vocabulary()
        assert catalog(vault).assets(vault) == [
            (name, path) for name, path in catalog(fresh).assets(fresh)
        ]
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def test_a_page_linked_from_many_files_keeps_its_sources_like_a_fresh_model(
    tmp_path: Path,
) -> None:
    # Past MANY_SOURCES linking files, a page's sources are kept as a set, not a tuple.
    pages = {f"from-{n:03d}": page(body="[[hub]] [[hub#top]]\n") for n in range(MANY_SOURCES + 6)}
    pages["hub"] = page(body="# Top\n")
    vault = make_vault(tmp_path, pages)
    assert isinstance(vault.backlinks["hub"], set)
    assert len(vault.backlinks["hub"]) == MANY_SOURCES + 6  # each file once, whatever its links
    for n in range(0, MANY_SOURCES + 6, 2):
        path = str(tmp_path / "EchoesVault" / "pages" / f"from-{n:03d}.md")
        vault.open(path, page(body="[[elsewhere]]\n"))
    os.remove(tmp_path / "EchoesVault" / "pages" / "from-001.md")
    vault.remove(str(tmp_path / "EchoesVault" / "pages" / "from-001.md"))
    fresh = Vault(str(tmp_path))
    fresh.load()
    for path, text in vault.overlays.items():
        fresh.open(path, text)
    assert vault.snapshot() == fresh.snapshot()
    assert len(vault.backlinks["hub"]) == (MANY_SOURCES + 6) // 2 - 1


def test_the_list_of_files_to_parse_gives_back_its_memory_once_empty(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {f"page-{n}": page() for n in range(200)}, complete=False)
    assert len(vault.pending) == 200
    vault.complete()
    assert not vault.pending and sys.getsizeof(vault.pending) == sys.getsizeof(set())
