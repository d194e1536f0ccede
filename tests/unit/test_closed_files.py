"""A closed file keeps a compact form in the server's model (its anchors, link keys and
frontmatter values, not its links, headings or fields); every answer about it must be the one
the whole parse gives, which an open buffer of the same text keeps."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from echoes_lsp.engine.catalog import catalog
from echoes_lsp.engine.findings import diagnose
from echoes_lsp.engine.page_fixes import PLACEHOLDER
from echoes_lsp.engine.vault import Vault
from echoes_lsp.runtime import echoes_vault as rules

from .helpers import make_vault, page, page_path

TARGET_BODY = "# Target\n\n## Setup Steps\n\nA paragraph. ^para-1\n\n```\n# not a heading\n```\n"
PAGES: Dict[str, str] = {
    "target": page(body=TARGET_BODY),
    "links": page(
        body=(
            "[[target#Setup Steps]] [[target#setup   steps]] [[target#Missing]]\n"
            "[[target#^para-1]] [[target#^nope]] [[target#not a heading]] [[nowhere]]\n"
        )
    ),
    "placeholder": page(summary=f"{PLACEHOLDER} fill this in", body="[[target]]\n"),
    "old": page(status="deprecated", body="# Old\n\nNo callout and no replacement.\n"),
    "extra-keys": "---\ntype: note\nstack: []\nstatus: active\nsummary: Keys.\nowner: me\n---\n",
}


def findings(vault: Vault, stem: str) -> List[Tuple[str, int, int, int, str]]:
    return [
        (f.code, f.line, f.start, f.end, f.message) for f in diagnose(vault, page_path(vault, stem))
    ]


@pytest.fixture
def closed(tmp_path: Path) -> Vault:
    return make_vault(tmp_path / "closed", PAGES)


@pytest.fixture
def opened(tmp_path: Path) -> Vault:
    vault = make_vault(tmp_path / "opened", PAGES)
    for stem, text in PAGES.items():
        vault.open(page_path(vault, stem), text)
    return vault


def test_the_model_keeps_no_fields_and_no_links_of_a_closed_page(closed: Vault) -> None:
    entry = closed.entry(page_path(closed, "links"))
    assert entry is not None and entry.info is not None and entry.structure is not None
    assert entry.info.frontmatter is None
    assert entry.info.summary == "A page."
    assert entry.structure._links == () and entry.structure._headings == ()


@pytest.mark.parametrize("stem", sorted(PAGES))
def test_a_closed_page_is_diagnosed_like_the_same_text_open(
    closed: Vault, opened: Vault, stem: str
) -> None:
    assert findings(closed, stem) == findings(opened, stem)


def test_anchor_checks_against_a_closed_page(closed: Vault) -> None:
    found = [(code, message) for code, _line, _start, _end, message in findings(closed, "links")]
    assert found == [
        ("EV303", "heading `Missing` not found in `target`"),
        ("EV303", "block `^nope` not found in `target`"),
        ("EV303", "heading `not a heading` not found in `target`"),
        ("EV300", "no page named `nowhere` in pages/"),
    ]


def test_placeholder_and_deprecation_findings_of_closed_pages(closed: Vault) -> None:
    assert [f[0] for f in findings(closed, "placeholder")] == ["EV202"]
    summary_line = PAGES["placeholder"].split("\n").index(f"summary: {PLACEHOLDER} fill this in")
    assert findings(closed, "placeholder")[0][1:3] == (summary_line, len("summary: "))
    status_line = PAGES["old"].split("\n").index("status: deprecated")
    assert [(f[0], f[1]) for f in findings(closed, "old")] == [
        ("EV310", status_line),
        ("EV311", status_line),
    ]


def test_the_completion_vocabulary_counts_the_keys_of_closed_pages(closed: Vault) -> None:
    keys = dict(catalog(closed).vocabulary()["keys"])
    assert keys["owner"] == 1
    assert keys["summary"] == len(PAGES)


def test_a_closed_page_is_read_again_for_its_links_and_headings(closed: Vault) -> None:
    entry = closed.entry(page_path(closed, "target"))
    assert entry is not None and entry.structure is not None
    assert [h.text for h in entry.structure.headings] == ["Target", "Setup Steps"]
    assert [b.name for b in entry.structure.blocks] == ["para-1"]
    # The title is not kept (only `[[target|` completion shows it): it is read again too.
    assert entry.title is None
    assert closed.title(entry) == "Target"
    assert entry.title_line == PAGES["target"].split("\n").index("# Target")


def test_changed_anchors_of_a_closed_page_re_check_its_backlinks(closed: Vault) -> None:
    path = page_path(closed, "target")
    Path(path).write_text(page(body=TARGET_BODY + "\nMore prose.\n"), encoding="utf-8")
    assert closed.update(path) == set()
    Path(path).write_text(page(body=TARGET_BODY + "\n## Missing\n"), encoding="utf-8")
    assert closed.update(path) == {"target"}
    assert "Missing" not in " ".join(f[4] for f in findings(closed, "links"))
    Path(path).write_text(page(body=TARGET_BODY.replace("^para-1", "^para-2")), encoding="utf-8")
    assert closed.update(path) == {"target"}


def test_closed_pages_share_what_recurs_across_pages(tmp_path: Path) -> None:
    stacks = {f"page-{n}": page(stack="[python, go]", body="# Title\n") for n in range(3)}
    vault = make_vault(tmp_path, stacks)
    first, second = (vault.entry(page_path(vault, stem)) for stem in ("page-0", "page-1"))
    assert first is not None and second is not None
    assert first.info is not None and second.info is not None
    # one string per distinct value, one empty list of problems
    assert first.info.type is second.info.type and first.info.type == "note"
    assert first.info.status is second.info.status and first.info.stack is second.info.stack
    assert first.info.problems is second.info.problems and first.info.problems == []
    cards = catalog(vault).by_path
    assert cards[first.path].stack is cards[second.path].stack == ("python", "go")


def test_a_file_keeps_its_hash_as_bytes_and_its_vault_path_inside_its_path(
    closed: Vault,
) -> None:
    path = page_path(closed, "target")
    entry = closed.entry(path)
    assert entry is not None
    assert entry.digest is not None and len(entry.digest) == 32
    assert entry.text_hash == rules.text_sha256(PAGES["target"])
    assert entry.rel == "pages/target.md" and entry.path.endswith("/pages/target.md")
    assert entry.stamp == (os.stat(path).st_mtime_ns, os.stat(path).st_size)
