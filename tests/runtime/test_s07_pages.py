"""Spec 7 and 16: page names, frontmatter, summaries and fail-closed validation."""

from __future__ import annotations

import hashlib
import os
import unicodedata
from pathlib import Path

import pytest

from .conftest import Runtime, index_text, page, pages_dir, snapshot

UNSAFE_NAMES = [
    "",
    ".md",
    "a/b.md",
    "a\\b.md",
    "..",
    "x..y.md",
    "../escape.md",
    ".hidden.md",
    "bad\x00.md",
    "tab\t.md",
]


def test_s7_1_unsafe_names_are_refused(rt: Runtime, vault: Path) -> None:
    before = snapshot(vault, lock_ok=True)
    for name in UNSAFE_NAMES:
        rt.fail(
            "upsert",
            "--payload",
            "-",
            payload={"filename": name, "content": page()},
            code="unsafe-path",
        )
    assert snapshot(vault, lock_ok=True) == before


def test_s7_1_name_is_nfc_and_gets_exactly_one_md_suffix(rt: Runtime, vault: Path) -> None:
    decomposed = unicodedata.normalize("NFD", "Café")
    result = rt.upsert(decomposed, page())
    assert result["page"] == str(pages_dir(vault) / "Café.md")
    assert os.listdir(pages_dir(vault)) == ["Café.md"]
    # only one final lowercase `.md` is the suffix, as the reference runtime normalizes it
    assert rt.upsert("twice.md.md", page())["page"] == str(pages_dir(vault) / "twice.md.md")
    assert rt.upsert("note.MD", page())["page"] == str(pages_dir(vault) / "note.MD.md")
    assert rt.upsert("  spaced  ", page())["page"] == str(pages_dir(vault) / "spaced.md")
    rows = [line for line in index_text(vault).splitlines() if line.startswith("- [[")]
    assert [row.split("]]")[0][4:] for row in rows] == ["Café", "note.MD", "spaced", "twice.md"]


def test_s7_1_upper_case_suffix_on_disk_is_a_page(rt: Runtime, vault: Path) -> None:
    """`Upper.MD` written by hand is indexed as `[[Upper]]` and searched, as the reference does;
    `hash` names pages by the normalized name, so `Upper` and `Upper.MD` do not reach it."""
    (pages_dir(vault) / "Upper.MD").write_text(page("Upper case suffix.", body="findme\n"))
    rt.ok("rebuild-index")
    assert "- [[Upper]]: Upper case suffix.\n" in index_text(vault)
    found = rt.ok("search", "findme")["results"]
    assert [r["file"] for r in found] == ["EchoesVault/pages/Upper.MD"]
    assert "did you mean `Upper.MD`" in rt.fail("hash", "Upper", code="not-found")["error"]
    rt.fail("hash", "Upper.MD", code="not-found")
    error = rt.fail("upsert", "--payload", "-", payload={"filename": "upper", "content": page()})
    assert error["code"] == "collision" and "Upper.MD" in error["error"]


def test_s7_1_collision_after_case_folding_is_refused(rt: Runtime, vault: Path) -> None:
    rt.upsert("Auth.md", page())
    before = snapshot(vault, lock_ok=True)
    rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "AUTH.md", "content": page()},
        code="collision",
    )
    rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": unicodedata.normalize("NFD", "auth"), "content": page()},
        code="collision",
    )
    assert snapshot(vault, lock_ok=True) == before


def test_s7_1_symlinked_page_target_is_refused(rt: Runtime, vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(page("Outside."))
    os.symlink(outside, pages_dir(vault) / "linked.md")
    rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "linked.md", "content": page()},
        code="symlink",
    )
    assert outside.read_text() == page("Outside.")
    rt.fail("hash", "linked.md", code="symlink")


@pytest.mark.parametrize("managed", ["EchoesVault", "EchoesVault/pages"])
def test_s16_symlinked_managed_directory_is_refused(
    rt: Runtime, vault: Path, tmp_path: Path, managed: str
) -> None:
    target = tmp_path / "elsewhere"
    os.rename(vault / managed, target)
    os.symlink(target, vault / managed)
    before = snapshot(target)
    rt.fail(
        "upsert", "--payload", "-", payload={"filename": "x.md", "content": page()}, code="symlink"
    )
    if managed == "EchoesVault":
        rt.fail("append", "--payload", "-", payload={"entry": "- x"}, code="symlink")
    rt.fail("rebuild-index", code="symlink")
    assert snapshot(target) == before


INVALID = {
    "no frontmatter": ("# Just a heading\n", "EV100"),
    "unclosed": ("---\ntype: a\nstack: []\nstatus: active\nsummary: s\n", "EV101"),
    "missing type": ("---\nstack: []\nstatus: active\nsummary: s\n---\n", "EV104"),
    "missing summary": ("---\ntype: a\nstack: []\nstatus: active\n---\n", "EV104"),
    "empty status": ("---\ntype: a\nstack: []\nstatus:\nsummary: s\n---\n", "EV105"),
    "empty stack": ("---\ntype: a\nstack:\nstatus: active\nsummary: s\n---\n", "EV105"),
    "duplicate key": (
        "---\ntype: a\ntype: b\nstack: []\nstatus: active\nsummary: s\n---\n",
        "EV103",
    ),
    "bad key": ("---\ntype: a\n1bad: x\nstack: []\nstatus: active\nsummary: s\n---\n", "EV102"),
    "long summary": (page("x" * 161), "EV200"),
    "multiline summary": (
        "---\ntype: a\nstack: []\nstatus: active\nsummary: |\n  two\n  lines\n---\n",
        "EV201",
    ),
    "bad double quote": ('---\ntype: "a\nstack: []\nstatus: active\nsummary: s\n---\n', "EV102"),
}


def test_s7_2_s7_3_invalid_pages_are_refused_with_every_problem(rt: Runtime, vault: Path) -> None:
    before = snapshot(vault, lock_ok=True)
    for case, (content, code) in sorted(INVALID.items()):
        error = rt.fail(
            "upsert",
            "--payload",
            "-",
            payload={"filename": "bad.md", "content": content},
            code="invalid-page",
        )
        assert code in error["error"], case
    assert snapshot(vault, lock_ok=True) == before


def test_s7_2_every_problem_is_listed(rt: Runtime) -> None:
    content = "---\ntype: a\ntype: b\nstatus:\nsummary: " + "y" * 170 + "\n---\n"
    error = rt.fail("upsert", "--payload", "-", payload={"filename": "bad.md", "content": content})
    for code in ("EV103", "EV104", "EV105", "EV200"):
        assert code in error["error"]


def test_s7_2_conflict_markers_are_refused(rt: Runtime, vault: Path) -> None:
    content = page(body="# T\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n")
    before = snapshot(vault, lock_ok=True)
    error = rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "c.md", "content": content},
        code="conflict-marker",
    )
    assert "EV400" in error["error"]
    assert snapshot(vault, lock_ok=True) == before


def test_s7_2_accepted_scalar_forms_and_extra_fields(rt: Runtime, vault: Path) -> None:
    content = (
        "\n\n---\ntype: 'decision'\nstack:\n  - python\n  - go\nstatus: \"Active\"\n"
        "summary: 'It''s quoted.'\nowner: team-a\n---\nBody\n"
    )
    result = rt.upsert("forms.md", content)
    assert result["action"] == "created"
    assert "- [[forms]]: It's quoted." in (vault / "EchoesVault/index.md").read_text()
    assert (pages_dir(vault) / "forms.md").read_text() == content


def test_s7_3_summary_of_exactly_160_characters_is_accepted(rt: Runtime) -> None:
    rt.upsert("edge.md", page("é" * 160))


def test_s7_2_lone_surrogate_content_is_refused_cleanly(rt: Runtime, vault: Path) -> None:
    before = snapshot(vault, lock_ok=True)
    raw = b'{"filename": "s.md", "content": "---\\ntype: a\\nstack: []\\nstatus: a\\nsummary: \\ud800\\n---\\n"}'
    rt.fail("upsert", "--payload", "-", stdin=raw, code="payload")
    assert snapshot(vault, lock_ok=True) == before


def test_s16_symlinked_index_and_state_are_refused(
    rt: Runtime, vault: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("not yours\n")
    index = vault / "EchoesVault/index.md"
    index.unlink()
    index.symlink_to(outside)
    rt.fail("rebuild-index", code="symlink")
    rt.fail(
        "upsert", "--payload", "-", payload={"filename": "x.md", "content": page()}, code="symlink"
    )
    assert outside.read_text() == "not yours\n"
    assert not (pages_dir(vault) / "x.md").exists()
    index.unlink()
    state = vault / ".echoes-vault/state.json"
    state.unlink()
    state.symlink_to(outside)
    rt.fail("hydrate", code="symlink")
    assert outside.read_text() == "not yours\n"
    assert rt.ok("status")["state"]["status"] == "symlink"


def test_s7_2_a_byte_order_mark_stands_before_the_fence(rt: Runtime, vault: Path) -> None:
    """U+FEFF is not whitespace, so a page whose file begins with the mark does not "begin with
    a frontmatter block" (§7.2): named in the error, it blocks the index, and `hash` digests the
    mark with the text (§12.9, "its current decoded text")."""
    data = b"\xef\xbb\xbf" + page("Saved with a mark.").encode("utf-8")
    (pages_dir(vault) / "marked.md").write_bytes(data)
    assert rt.hash("marked") == hashlib.sha256(data).hexdigest()
    error = rt.fail("rebuild-index", code="invalid-page")
    assert "marked.md: EV100 line 1" in error["error"]
    assert "byte-order mark (U+FEFF)" in error["error"]
    refused = rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "other.md", "content": "\ufeff" + page()},
        code="invalid-page",
    )
    assert "page `other.md` is invalid: EV100" in refused["error"]
    assert "byte-order mark" in refused["error"]
    # Written without the mark, with the hash of the file as it is, the page is valid again.
    rt.upsert("marked.md", page("Saved with a mark."), expectedSha256=rt.hash("marked"))
    assert (pages_dir(vault) / "marked.md").read_bytes() == data[3:]
    rt.ok("rebuild-index")
