"""A journal that never overwrites: an `end` that took effect but could not write a page is
finished by the next writer only where the page still holds what the `end` replaced. A page
changed by hand, replaced by another writer, or deleted in between is left as it is; the
`end`'s version is kept in `.echoes-vault/kept/` and reported (the result's warnings, `status`).
Journals of an earlier engine never replace a page they cannot vouch for, and a journal that
cannot be read is moved aside, never rolled forward."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest

from .conftest import Runtime, daily_files, page, pages_dir
from .needs import is_root, unavailable

JOURNAL = ".echoes-vault/end-journal.json"
OLD = page("Notes, first version.")
ENDS = page("Notes, from the end.")
HAND = page("Notes, edited by hand.")
OTHER = page("Notes, from another writer.")


@pytest.fixture
def immutable() -> Iterator[Callable[[Path], None]]:
    """Make a file immutable (`chattr +i`), undone after the test."""
    tool = shutil.which("chattr")
    if tool is None or not is_root():
        unavailable("making a file immutable needs chattr and root")
    made: List[Path] = []

    def make(path: Path) -> None:
        done = subprocess.run([tool, "+i", str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            unavailable(f"chattr +i is refused here: {done.stderr.strip()}")
        made.append(path)

    yield make
    for path in made:
        subprocess.run([tool, "-i", str(path)], check=False)


def release(path: Path) -> None:
    subprocess.run(["chattr", "-i", str(path)], check=True)


def end_left_pending(rt: Runtime, vault: Path, immutable: Callable[[Path], None]) -> Dict[str, Any]:
    """An `end` that took effect but could not replace `notes.md` (immutable): it succeeds with a
    warning and leaves its journal for the next writer. Returns its result."""
    rt.upsert("notes.md", OLD)
    target = pages_dir(vault) / "notes.md"
    item = {"filename": "notes.md", "content": ENDS, "expectedSha256": rt.hash("notes")}
    immutable(target)
    result = rt.ok("end", "--confirm-explicit-user-end", "--payload", "-",
                   payload={"dailySummary": "- The session.", "pages": [item]})  # fmt: skip
    release(target)
    assert [w["kind"] for w in result["warnings"]] == ["end-unfinished"], result["warnings"]
    assert result["warnings"][0]["path"] == "EchoesVault/pages/notes.md"
    assert (vault / JOURNAL).exists() and target.read_text() == OLD
    assert len(daily_files(vault)) == 1, "the session entry was written: the end took effect"
    pending = rt.ok("status")["pendingEnd"]
    assert pending["pages"] == ["EchoesVault/pages/notes.md"] and pending["dailyLog"] is None
    return result


def kept_files(vault: Path) -> List[Path]:
    return sorted(p for p in (vault / ".echoes-vault/kept").rglob("*") if p.is_file())


def replace_as_another_writer(path: Path, text: str) -> None:
    """What a writer that does not know this runtime's journal (the reference runtime) does to a
    page: a temporary file renamed over it."""
    temporary = path.with_name(f".{path.name}.other-writer")
    temporary.write_text(text)
    os.replace(temporary, path)


@pytest.mark.parametrize(
    "meanwhile, left",
    [
        (lambda p: p.write_text(HAND), HAND),
        (lambda p: replace_as_another_writer(p, OTHER), OTHER),
        (lambda p: p.unlink(), None),
    ],
    ids=["hand-edit", "another-writer", "deleted"],
)
def test_a_page_changed_after_the_end_is_left_and_the_end_s_version_kept(
    rt: Runtime, vault: Path, immutable: Callable[[Path], None], meanwhile: Any, left: Any
) -> None:
    end_left_pending(rt, vault, immutable)
    target = pages_dir(vault) / "notes.md"
    meanwhile(target)
    nxt = rt.ok("append", "--payload", "-", payload={"entry": "- the next writer"})
    kinds = [(w["kind"], w["path"]) for w in nxt["warnings"]]
    assert kinds == [("kept-version", "EchoesVault/pages/notes.md")], nxt["warnings"]
    kept = kept_files(vault)
    assert len(kept) == 1 and kept[0].name == "notes.md" and kept[0].read_text() == ENDS
    shown = kept[0].relative_to(vault).as_posix()
    assert f"`{shown}`" in nxt["warnings"][0]["message"]
    # nothing lost on either side: the page as it was left, the end's version beside it
    assert (target.read_text() if target.exists() else None) == left
    assert not (vault / JOURNAL).exists()
    state = json.loads((vault / ".echoes-vault/state.json").read_text())
    assert state["session"]["saved"] is True
    report = rt.ok("status")
    assert report["keptVersions"] == [{"file": shown, "page": "EchoesVault/pages/notes.md"}]
    assert ("kept-version", shown) in {(i["kind"], i.get("path")) for i in report["issues"]}
    assert report["integrity"] == "attention"
    # reported until a person deletes the kept file; later writers do not touch it again
    again = rt.ok("append", "--payload", "-", payload={"entry": "- and another"})
    assert again["warnings"] == [] and kept_files(vault) == kept
    kept[0].unlink()
    assert rt.ok("status")["keptVersions"] == []


def test_a_page_unchanged_since_the_end_gets_the_end_s_version(
    rt: Runtime, vault: Path, immutable: Callable[[Path], None]
) -> None:
    end_left_pending(rt, vault, immutable)
    nxt = rt.ok("append", "--payload", "-", payload={"entry": "- the next writer"})
    assert nxt["warnings"] == []
    assert (pages_dir(vault) / "notes.md").read_text() == ENDS
    assert kept_files(vault) == [] and not (vault / JOURNAL).exists()
    assert "Notes, from the end." in (vault / "EchoesVault/index.md").read_text()
    assert len([p for p in daily_files(vault) if "-session" in p.name]) == 1


def test_a_new_end_waits_for_the_one_not_finished(
    rt: Runtime, vault: Path, immutable: Callable[[Path], None]
) -> None:
    """While a journal cannot be finished, a new `end` would write its journal over it: it is
    refused, and writes nothing."""
    end_left_pending(rt, vault, immutable)
    immutable(pages_dir(vault) / "notes.md")
    refused = rt.fail("end", "--confirm-explicit-user-end", "--payload", "-",
                      payload={"dailySummary": "- Another session."}, code="pending-end")  # fmt: skip
    assert "end-journal.json" in refused["error"]
    assert len(daily_files(vault)) == 1
    release(pages_dir(vault) / "notes.md")
    ended = rt.ok("end", "--confirm-explicit-user-end", "--payload", "-",
                  payload={"dailySummary": "- Another session."})  # fmt: skip
    assert ended["warnings"] == []
    assert (pages_dir(vault) / "notes.md").read_text() == ENDS
    assert len([p for p in daily_files(vault) if "-session" in p.name]) == 2


def old_journal(vault: Path, text: str) -> None:
    """A journal as engines before 1.6.0 wrote it: no hash of the page it replaces."""
    journal = {
        "format": "echoes-vault-end/1",
        "pages": [{"rel": "EchoesVault/pages/notes.md", "text": text}],
        "daily": {
            "rel": "EchoesVault/daily/2026-01-02/20260102T030405000000Z-session-codex-0123abcd.md",
            "text": "### Session — 2026-01-02T03:04:05+00:00\n\n- done\n",
        },
        "agent": "codex",
        "adapterVersion": None,
        "lastSave": "2026-01-02T03:04:05+00:00",
    }
    (vault / JOURNAL).write_text(json.dumps(journal))


@pytest.mark.parametrize("on_disk", ["absent", "same", "other"])
def test_an_earlier_engine_s_journal_never_replaces_a_page_it_cannot_vouch_for(
    rt: Runtime, vault: Path, on_disk: str
) -> None:
    notes = pages_dir(vault) / "notes.md"
    if on_disk != "absent":
        rt.upsert("notes.md", ENDS if on_disk == "same" else HAND)
    old_journal(vault, ENDS)
    nxt = rt.ok("hydrate")
    if on_disk == "other":  # it cannot know whether HAND is what it replaced, or a later edit
        assert notes.read_text() == HAND
        assert [w["kind"] for w in nxt["warnings"]] == ["kept-version"]
        assert "earlier engine" in nxt["warnings"][0]["message"]
        assert [p.read_text() for p in kept_files(vault)] == [ENDS]
    else:  # nothing to overwrite, or nothing to do
        assert notes.read_text() == ENDS and nxt["warnings"] == []
        assert kept_files(vault) == []
    assert not (vault / JOURNAL).exists()
    assert len([p for p in daily_files(vault) if "-session-codex" in p.name]) == 1


UNREADABLE = {
    "deep-1000": b"[" * 1000 + b"]" * 1000,
    "deep-100000": b'{"format": ' * 100_000 + b"1" + b"}" * 100_000,
    "invalid-utf8": b'{"format": "echoes-vault-end/2", "pages": ["\xff\xfe"]}',
    "wrong-type": b'["echoes-vault-end/2"]',
    "other-format": b'{"format": "echoes-vault-end/9", "pages": []}',
    "damaged-page": json.dumps(
        {
            "format": "echoes-vault-end/2",
            "daily": None,
            "pages": [
                {
                    "rel": "EchoesVault/pages/notes.md",
                    "text": ENDS,
                    "expectedSha256": None,
                    "sha256": "0" * 64,
                }
            ],
        }
    ).encode(),
    "escaping-path": json.dumps(
        {
            "format": "echoes-vault-end/2",
            "daily": None,
            "pages": [
                {
                    "rel": "EchoesVault/pages/../../AGENTS.md",
                    "text": "x",
                    "expectedSha256": None,
                    "sha256": "0" * 64,
                }
            ],
        }
    ).encode(),
}


@pytest.mark.parametrize("content", sorted(UNREADABLE), ids=sorted(UNREADABLE))
def test_a_journal_that_cannot_be_read_is_moved_aside_and_reported(
    rt: Runtime, vault: Path, content: str
) -> None:
    agents = (vault / "AGENTS.md").read_bytes()
    (vault / JOURNAL).write_bytes(UNREADABLE[content])
    report = rt.ok("status")  # read-only: reported, nothing moved
    assert report["pendingEnd"]["unreadable"], report["pendingEnd"]
    assert "unreadable-journal" in {i["kind"] for i in report["issues"]}
    assert (vault / JOURNAL).exists()
    nxt = rt.ok("append", "--payload", "-", payload={"entry": "- the next writer"})
    assert [w["kind"] for w in nxt["warnings"]] == ["unreadable-journal"], nxt["warnings"]
    kept = kept_files(vault)
    assert [p.name for p in kept] == ["end-journal.json"]
    assert kept[0].read_bytes() == UNREADABLE[content], "moved, not rewritten"
    assert not (vault / JOURNAL).exists()
    assert (
        not (pages_dir(vault) / "notes.md").exists()
        and (vault / "AGENTS.md").read_bytes() == agents
    )
    after = rt.ok("status")
    assert after["pendingEnd"] is None
    assert after["keptVersions"] == [{"file": kept[0].relative_to(vault).as_posix(), "page": None}]


def test_a_journal_that_is_a_directory_is_moved_aside(rt: Runtime, vault: Path) -> None:
    (vault / JOURNAL).mkdir()
    (vault / JOURNAL / "inside").write_text("x")
    nxt = rt.ok("upsert", "--payload", "-", payload={"filename": "a.md", "content": page()})
    assert [w["kind"] for w in nxt["warnings"]] == ["unreadable-journal"]
    assert not (vault / JOURNAL).exists()
    assert [p.name for p in kept_files(vault)] == ["inside"]
