"""Rules the engine applies in several places, each decided by one function: which files are
pages, which files the model leaves out, and how bytes become text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from echoes_lsp.engine.vault import PAGE, STRAY, Vault, classify, decode_text, read_text
from echoes_lsp.runtime import echoes_vault as rules

from .helpers import make_vault, page


@pytest.mark.parametrize(
    ("rel", "is_page"),
    [
        ("pages/auth.md", True),
        ("pages/Ünïcode name.md", True),
        ("pages/.auth.md", False),  # a dot file
        ("pages/.auth.md.swp", False),
        ("pages/Upper.MD", True),  # as the reference runtime reads it
        ("pages/auth.txt", False),
        ("pages/nested/auth.md", False),
        ("pages", False),
        ("daily/auth.md", False),
        ("auth.md", False),
        ("raw/pages/auth.md", False),
    ],
)
def test_the_page_rule(tmp_path: Path, rel: str, is_page: bool) -> None:
    assert rules.is_page_path(rel) is is_page
    vault = Vault(str(tmp_path))
    assert vault.is_page(os.path.join(vault.root, *rel.split("/"))) is is_page
    if rel.startswith("pages/"):
        assert classify(rel) == (PAGE if is_page else STRAY)


def test_file_events_and_disk_scans_leave_out_the_same_files(tmp_path: Path) -> None:
    hidden = [
        "pages/.auth.md.swp",  # an editor's swap file
        "pages/.auth.md",
        ".obsidian/workspace.md",
        "raw/.cache/notes.md",
        "raw/drafts/idea.md",  # under an `exclude` pattern's folder
        "raw/drafts",
    ]
    vault = make_vault(tmp_path, {"auth": page()})
    vault.exclude = ("raw/drafts",)
    for rel in hidden[:-1]:
        target = Path(vault.root) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page(), encoding="utf-8")
    vault.load()
    scanned = {entry.rel for entry in vault.entries.values()}
    assert scanned == {"pages/auth.md"}
    for rel in hidden:
        assert vault.excluded(rel), rel
        assert vault.update(os.path.join(vault.root, *rel.split("/"))) == set()
    assert {entry.rel for entry in vault.entries.values()} == scanned
    assert not vault.excluded(rules.MARKER_NAME)
    assert vault.excluded("pages/" + rules.MARKER_NAME)


def test_one_decoder_for_files_and_standard_input(tmp_path: Path) -> None:
    cases = {
        # the mark is kept, as the runtime reads it (and hashes it)
        b"\xef\xbb\xbf---\r\ntype: note\r\n": ("\ufeff---\ntype: note\n", None),
        b"caf\xe9": (None, "is not valid UTF-8 (byte 3)"),
        b"a\x00b": (None, "is a binary file (contains NUL bytes), not UTF-8 text"),
    }
    for data, expected in cases.items():
        path = tmp_path / "file.md"
        path.write_bytes(data)
        assert decode_text(data) == expected
        assert read_text(str(path)) == expected


def test_the_safe_reader_does_not_open_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    text, error = read_text(str(fifo))
    assert text is None and error is not None and "not a regular file" in error
