"""Payloads and arguments the reference runtime accepts, accepted here too where the spec allows
it (contract section 4); the stricter rules that remain are tested with their sections."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Runtime, daily_files, index_text, page, pages_dir


@pytest.mark.parametrize("updates", [[], None])
def test_end_accepts_empty_or_null_index_updates(rt: Runtime, vault: Path, updates: object) -> None:
    payload = {"dailySummary": "- Done.", "indexUpdates": updates}
    result = rt.ok("end", "--confirm-explicit-user-end", "--payload", "-", payload=payload)
    assert result["memorySaved"] is True and len(daily_files(vault)) == 1


@pytest.mark.parametrize("updates", [[{"slug": "x"}], {"x": "y"}, "x"])
def test_end_still_refuses_index_updates(rt: Runtime, vault: Path, updates: object) -> None:
    payload = {"dailySummary": "- Done.", "indexUpdates": updates}
    rt.fail("end", "--confirm-explicit-user-end", "--payload", "-", payload=payload, code="payload")
    assert daily_files(vault) == []


def test_payload_defaults_to_standard_input(rt: Runtime, vault: Path) -> None:
    created = rt.ok("upsert", payload={"filename": "stdin.md", "content": page("From stdin.")})
    assert created["action"] == "created" and (pages_dir(vault) / "stdin.md").is_file()
    appended = rt.ok("append", payload={"entry": "- From stdin."})
    assert Path(appended["dailyLog"]).read_text().endswith("- From stdin.\n")
    ended = rt.ok("end", "--confirm-explicit-user-end", payload={"dailySummary": "- Saved."})
    assert ended["memorySaved"] is True and len(daily_files(vault)) == 2


def test_search_query_is_trimmed_and_must_not_be_blank(rt: Runtime) -> None:
    rt.upsert("auth.md", page("JWT validation.", body="JWT at the boundary.\n"))
    result = rt.ok("search", "  jwt  ")
    assert result["query"] == "jwt" and len(result["results"]) == 2
    rt.fail("search", "   ", code="usage")
    rt.fail("search", "", code="usage")


def test_index_description_given_as_a_legacy_row(rt: Runtime, vault: Path) -> None:
    legacy = "---\ntype: note\nstack: []\nstatus: active\n---\n\nBody\n"
    rt.upsert("same.md", legacy, indexDescription="- [[same]]: From the row.")
    assert 'summary: "From the row."' in (pages_dir(vault) / "same.md").read_text()
    rt.upsert("other.md", legacy, indexDescription="- [[elsewhere]]: Kept whole.")
    assert "- [[other]]: - [[elsewhere]]: Kept whole." in index_text(vault)
