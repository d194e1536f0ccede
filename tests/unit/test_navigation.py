"""Navigation without a server: links under the cursor, resolution, references, outlines,
page search and rename edits."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Dict, List

import pytest

from echoes_lsp.engine.link_targets import (
    Refusal,
    Subject,
    TextChange,
    check_new_name,
    declaration,
    definition,
    hover_markdown,
    link_at,
    outline,
    references,
    rename_changes,
    resolve,
    search_pages,
    stem_columns,
    structure_for,
    subject_at,
    text_structure,
)
from echoes_lsp.engine.markdown import Structure, parse_link
from echoes_lsp.engine.vault import Vault

from .helpers import make_vault, page, page_path

AUTH_BODY = """# Auth

See [[sessions]], [[Sessions#Token Lifetime|lifetimes]] and [[pages/sessions.md]].
Embedded: ![[sessions]] and ![[diagram.png]]; broken: [[nowhere]], [[#Local]].
Code: `[[sessions]]`.

## Local

Text ^here
"""
SESSIONS_BODY = """# Sessions

## Token lifetime

Fifteen minutes. ^rotation
"""


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return make_vault(
        tmp_path,
        {
            "auth": page("Authentication.", AUTH_BODY, type_="architecture"),
            "sessions": page("Session storage.", SESSIONS_BODY, stack="[python, redis]"),
            "old": page(
                "Old design.", "> [!warning] DEPRECATED\n> Use [[auth]].\n", status="deprecated"
            ),
            "café": page("Coffee.", "Back to [[sessions#^rotation]].\n"),
        },
        files={"daily/2026-01-01/entry.md": "- Worked on [[Sessions]] and [[CAFE\u0301]].\n"},
        assets=["diagram.png"],
    )


def structure(vault: Vault, stem: str) -> Structure:
    entry = vault.entry(page_path(vault, stem))
    assert entry is not None and entry.structure is not None
    return entry.structure


def test_link_under_the_cursor(vault: Vault) -> None:
    links = structure(vault, "auth")
    first = links.links[0]
    assert link_at(links, first.line, first.start) == first
    assert link_at(links, first.line, first.end) == first  # just after `]]`
    assert link_at(links, first.line, first.start - 1) is None
    assert link_at(links, 99, 0) is None
    assert all(link.target != "sessions" or link.line != 11 for link in links.links)  # code span


def test_resolution_of_every_link_form(vault: Vault) -> None:
    auth = vault.entry(page_path(vault, "auth"))
    own = structure(vault, "auth")
    results = {link.start: resolve(vault, auth, link, own) for link in own.links}
    by_text = {f"{t.link.target}|{t.link.heading}|{t.link.block}": t for t in results.values()}
    assert by_text["sessions|None|None"].page is vault.page("sessions")
    heading = by_text["Sessions|Token Lifetime|None"]
    assert heading.heading is not None and heading.heading.text == "Token lifetime"
    assert by_text["pages/sessions.md|None|None"].page is vault.page("sessions")
    assert by_text["diagram.png|None|None"].asset is not None
    assert by_text["nowhere|None|None"].missing == "page"
    local = by_text["|Local|None"]
    assert local.page is auth and local.heading is not None
    place = definition(local)
    assert place is not None and place[0].line == own.headings[1].line
    assert definition(by_text["nowhere|None|None"]) is None


def test_unicode_and_case_resolution(vault: Vault) -> None:
    daily = vault.entry(f"{vault.root}/daily/2026-01-01/entry.md")
    assert daily is not None and daily.structure is not None
    targets = [resolve(vault, daily, link).page for link in daily.structure.links]
    assert targets == [vault.page("sessions"), vault.page("café")]


def test_hover_text(vault: Vault) -> None:
    auth = vault.entry(page_path(vault, "auth"))
    own = structure(vault, "auth")
    sessions = resolve(vault, auth, own.links[0], own)
    text = hover_markdown(vault, sessions)
    assert "**sessions** — Session storage." in text
    assert "`python`, `redis`" in text
    assert "## Token lifetime" in text  # first body lines
    old_page = vault.entry(page_path(vault, "old"))
    assert old_page is not None and old_page.structure is not None
    old = resolve(vault, old_page, old_page.structure.links[0])
    assert "Deprecated" not in hover_markdown(vault, old)  # auth is current
    back = resolve(vault, auth, old_page.structure.links[0])
    assert back.page is not None
    to_old = parse_link("old", False, 0, 0)
    deprecated = hover_markdown(vault, resolve(vault, None, to_old))
    assert "Deprecated" in deprecated and "[[auth]]" in deprecated
    missing = hover_markdown(vault, resolve(vault, auth, own.links[5]))
    assert "No such page" in missing and "nowhere" in missing
    asset = hover_markdown(vault, resolve(vault, auth, own.links[4]))
    assert "EchoesVault/assets/diagram.png" in asset


def test_references_use_the_reverse_index(vault: Vault) -> None:
    found = references(vault, Subject("sessions"))
    assert [(p.path.rsplit("/", 1)[-1], p.line, p.start, p.end) for p in found] == [
        ("entry.md", 0, 12, 24),  # [[Sessions]]
        ("auth.md", 9, 4, 16),  # [[sessions]]
        ("auth.md", 9, 18, 55),  # [[Sessions#Token Lifetime|lifetimes]]
        ("auth.md", 9, 60, 81),  # [[pages/sessions.md]]
        ("auth.md", 10, 10, 23),  # ![[sessions]]
        ("café.md", 7, 8, 30),  # [[sessions#^rotation]]
    ]
    heading = references(vault, Subject("sessions", heading="token  LIFETIME"))
    assert [(p.line, p.start) for p in heading] == [(9, 18)]
    block = references(vault, Subject("sessions", block="rotation"))
    assert [p.path for p in block] == [page_path(vault, "café")]
    local = references(vault, Subject("auth", heading="Local"))
    assert [p.path for p in local] == [page_path(vault, "auth")]
    own = declaration(vault, Subject("sessions", heading="Token lifetime"))
    assert own is not None and own.line == 9
    assert declaration(vault, Subject("nowhere")) is None


def test_references_never_scan_the_vault(vault: Vault) -> None:
    # A file the reverse index does not list is not read, whatever it contains.
    entry = vault.entry(page_path(vault, "old"))
    assert entry is not None
    vault.backlinks["sessions"] = tuple(
        path for path in vault.backlinks["sessions"] if path != page_path(vault, "auth")
    )
    assert all(p.path != page_path(vault, "auth") for p in references(vault, Subject("sessions")))


def test_subject_under_the_cursor(vault: Vault) -> None:
    auth = vault.entry(page_path(vault, "auth"))
    own = structure(vault, "auth")
    lifetime = own.links[1]
    assert subject_at(vault, auth, own, lifetime.line, lifetime.target_start) == Subject("sessions")
    assert subject_at(vault, auth, own, lifetime.line, lifetime.anchor_start + 1) == Subject(
        "sessions", heading="Token Lifetime"
    )
    title, local = own.headings
    assert subject_at(vault, auth, own, title.line, 0) == Subject("auth")
    assert subject_at(vault, auth, own, local.line, 3) == Subject("auth", heading="Local")
    block = own.blocks[0]
    assert subject_at(vault, auth, own, block.line, block.start + 1) == Subject(
        "auth", block="here"
    )
    assert subject_at(vault, auth, own, 0, 0) == Subject("auth")


def test_outline_nests_headings(tmp_path: Path) -> None:
    text = "# A\n\n## B\n\n### C\n\n## D\n\n# E\n"
    found = outline(text_structure(text, False), len(text.split("\n")))
    shape = [
        (
            s.heading.text,
            s.end_line,
            [
                (c.heading.text, c.end_line, [g.heading.text for g in c.children])
                for c in s.children
            ],
        )
        for s in found
    ]
    assert shape == [("A", 7, [("B", 5, ["C"]), ("D", 7, [])]), ("E", 9, [])]


def test_buffer_structure_skips_frontmatter(vault: Vault) -> None:
    text = "---\ntitle: [[not-a-link]]\n---\n# T\n[[sessions]]\n"
    found = text_structure(text, True)
    assert [link.target for link in found.links] == ["sessions"]
    assert [h.text for h in found.headings] == ["T"]
    path = page_path(vault, "sessions")
    assert structure_for(vault, path, (Path(path)).read_text(encoding="utf-8")) is structure(
        vault, "sessions"
    )


def test_search_pages(vault: Vault) -> None:
    assert [c.stem for c in search_pages([vault], "")][-1] == "old"  # deprecated last
    assert [c.stem for c in search_pages([vault], "SES")] == ["sessions"]
    assert [c.stem for c in search_pages([vault], "storage")] == ["sessions"]
    assert [c.stem for c in search_pages([vault], unicodedata.normalize("NFD", "café"))] == ["café"]
    assert search_pages([vault], "", limit=2) == search_pages([vault], "")[:2]


def apply(text: str, changes: List[TextChange]) -> str:
    lines = text.split("\n")
    for change in sorted(changes, key=lambda c: (c.line, c.start), reverse=True):
        line = lines[change.line]
        lines[change.line] = line[: change.start] + change.new_text + line[change.end :]
    return "\n".join(lines)


def renamed(vault: Vault, key: str, stem: str) -> Dict[str, str]:
    changes = rename_changes(vault, key, stem)
    return {
        path.rsplit("/", 1)[-1]: apply(Path(path).read_text(encoding="utf-8"), edits)
        for path, edits in changes.items()
    }


def test_rename_keeps_every_link_style(vault: Vault) -> None:
    result = renamed(vault, "sessions", "store")
    assert set(result) == {"auth.md", "café.md", "entry.md"}
    assert (
        "See [[store]], [[store#Token Lifetime|lifetimes]] and [[pages/store.md]]."
        in result["auth.md"]
    )
    assert "Embedded: ![[store]] and ![[diagram.png]]" in result["auth.md"]
    assert "Code: `[[sessions]]`." in result["auth.md"]
    assert "Back to [[store#^rotation]]." in result["café.md"]
    assert "- Worked on [[store]] and [[CAFE\u0301]]." in result["entry.md"]
    # The page's own `[[#Local]]` link needs no change; the deprecated page's link does.
    gateway = renamed(vault, "auth", "gateway")
    assert set(gateway) == {"old.md"}
    assert "> Use [[gateway]]." in gateway["old.md"]


def test_stem_columns_skip_folders_and_extension(vault: Vault) -> None:
    own = structure(vault, "auth")
    folder = own.links[2]
    start, end = stem_columns(folder)
    line = Path(page_path(vault, "auth")).read_text(encoding="utf-8").split("\n")[folder.line]
    assert line[start:end] == "sessions"
    assert line[folder.target_start : folder.target_end] == "pages/sessions.md"


def test_new_names_are_checked(vault: Vault) -> None:
    sessions = vault.entry(page_path(vault, "sessions"))
    assert sessions is not None
    assert check_new_name(vault, sessions, "store") == "store"
    assert check_new_name(vault, sessions, " store.md ") == "store"
    assert check_new_name(vault, sessions, "Sessions") == "Sessions"  # a change of case only
    nfd = unicodedata.normalize("NFD", "Café")
    for name, reason in (
        ("AUTH", "collides"),
        (nfd, "collides"),
        ("a/b", "invalid"),
        (".hidden", "invalid"),
        ("", "invalid"),
        ("x]]y", "cannot be linked"),
        ("x^y", "cannot be linked"),
        ("sessions.md", "already named"),
    ):
        with pytest.raises(Refusal) as refused:
            check_new_name(vault, sessions, name)
        assert reason in str(refused.value)
    Path(vault.root, "pages", "ghost.md").mkdir()  # on disk, though not a page
    with pytest.raises(Refusal, match="already exists"):
        check_new_name(vault, sessions, "ghost")
