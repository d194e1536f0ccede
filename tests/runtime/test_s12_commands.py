"""Spec 12.5.1 hydrate, 12.6 start, 12.7 search, 12.9 hash, 12.10 upsert, 12.11 end, 12.12."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from .conftest import Runtime, daily_files, index_text, page, pages_dir, snapshot


def test_s12_9_hash_uses_normalized_text(rt: Runtime, vault: Path) -> None:
    path = pages_dir(vault) / "crlf.md"
    path.write_bytes(page("Windows line endings.").replace("\n", "\r\n").encode("utf-8"))
    result = rt.ok("hash", "crlf")
    expected = hashlib.sha256(page("Windows line endings.").encode("utf-8")).hexdigest()
    assert result == {"ok": True, "page": str(path), "sha256": expected}
    # the same hash authorizes the replacement
    rt.upsert("crlf.md", page("Replaced."), expectedSha256=expected)


def test_s12_9_hash_errors(rt: Runtime) -> None:
    rt.fail("hash", "absent.md", code="not-found")
    rt.fail("hash", "../x", code="unsafe-path")


def test_s12_10_upsert_result_shape(rt: Runtime, vault: Path) -> None:
    content = page("Created page.")
    result = rt.upsert("new page.md", content)
    assert result["ok"] is True and result["action"] == "created"
    assert result["page"] == str(pages_dir(vault) / "new page.md")
    assert result["sha256"] == hashlib.sha256(content.encode()).hexdigest() == rt.hash("new page")
    assert result["indexChanged"] is True
    assert (pages_dir(vault) / "new page.md").read_text() == content
    updated = rt.upsert("new page.md", page("Updated page."), expectedSha256=result["sha256"])
    assert updated["action"] == "updated" and updated["indexChanged"] is True


def test_s12_10_upsert_normalizes_line_endings(rt: Runtime, vault: Path) -> None:
    result = rt.upsert("n.md", page("Line endings.").replace("\n", "\r\n"))
    assert b"\r" not in (pages_dir(vault) / "n.md").read_bytes()
    assert result["sha256"] == rt.hash("n")


def test_s12_10_index_description_compatibility(rt: Runtime, vault: Path) -> None:
    legacy = "---\ntype: note\nstack: []\nstatus: active\n---\n\nBody\n"
    rt.upsert("legacy.md", legacy, indexDescription="From the   legacy index.")
    text = (pages_dir(vault) / "legacy.md").read_text()
    assert 'summary: "From the legacy index."' in text
    assert "- [[legacy]]: From the legacy index." in index_text(vault)
    rt.upsert("both.md", page("Same text."), indexDescription="Same  text.")
    rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "diff.md", "content": page("One."), "indexDescription": "Two."},
        code="invalid-page",
    )
    # as the reference runtime does, an existing page without a summary converts it too
    rt.ok(
        "upsert",
        "--payload",
        "-",
        payload={
            "filename": "legacy.md",
            "content": legacy,
            "indexDescription": "Replaced.",
            "expectedSha256": rt.hash("legacy"),
        },
    )
    assert "- [[legacy]]: Replaced." in index_text(vault)


def test_s12_10_new_page_with_hash_is_refused(rt: Runtime, vault: Path) -> None:
    rt.fail(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "gone.md", "content": page(), "expectedSha256": "a" * 64},
        code="stale-hash",
    )
    assert not (pages_dir(vault) / "gone.md").exists()


def test_s12_10_payload_from_file(rt: Runtime, vault: Path, tmp_path: Path) -> None:
    payload = tmp_path / "payload.json"
    payload.write_text(
        json.dumps({"filename": "f.md", "content": page("From a file.")}), encoding="utf-8"
    )
    assert rt.ok("upsert", "--payload", str(payload))["action"] == "created"


def end_payload(**extra: object) -> dict:
    return {"dailySummary": "- Completed the middleware.\n- Remaining: tests.", **extra}


def test_s12_11_end_requires_explicit_confirmation(rt: Runtime, vault: Path) -> None:
    before = snapshot(vault)
    rt.fail("end", "--payload", "-", payload=end_payload(), code="confirmation-required")
    rt.fail("end", code="confirmation-required")
    assert snapshot(vault) == before


def test_s12_11_end_writes_pages_index_session_and_state(rt: Runtime, vault: Path) -> None:
    rt.upsert("existing.md", page("Existing."))
    payload = end_payload(
        agent="Codex",
        pages=[
            {
                "filename": "existing.md",
                "content": page("Existing, revised."),
                "expectedSha256": rt.hash("existing"),
            },
            {"filename": "fresh", "content": page("Fresh page.")},
        ],
    )
    result = rt.ok("end", "--confirm-explicit-user-end", "--payload", "-", payload=payload)
    assert result["memorySaved"] is True and result["agent"] == "codex"
    assert result["pagesWritten"] == 2  # a count, as the reference runtime reports it
    assert [item["page"] for item in result["pages"]] == [
        str(pages_dir(vault) / "existing.md"),
        str(pages_dir(vault) / "fresh.md"),
    ]
    assert result["index"] == str(vault / "EchoesVault/index.md")
    log = Path(result["dailyLog"])
    assert "-session-codex-" in log.name
    assert log.read_text().startswith("### Session — ")
    assert log.read_text().endswith(
        "Agent: `codex`\n\n- Completed the middleware.\n- Remaining: tests.\n"
    )
    assert "- [[existing]]: Existing, revised.\n- [[fresh]]: Fresh page.\n" in index_text(vault)
    state = json.loads((vault / ".echoes-vault/state.json").read_text())
    assert state["session"]["saved"] is True and state["session"]["lastSave"]


def test_s12_11_end_without_pages(rt: Runtime, vault: Path) -> None:
    result = rt.ok("end", "--confirm-explicit-user-end", "--payload", "-", payload=end_payload())
    assert result["pagesWritten"] == 0 and len(daily_files(vault)) == 1


@pytest.mark.parametrize(
    "payload, code",
    [
        ({}, "payload"),
        ({"dailySummary": ""}, "payload"),
        (end_payload(indexUpdates=[{"slug": "x"}]), "payload"),
        (end_payload(pages={"filename": "x"}), "payload"),
        (
            end_payload(
                pages=[
                    {"filename": "a.md", "content": page()},
                    {"filename": "A", "content": page()},
                ]
            ),
            "payload",
        ),
        (
            end_payload(
                pages=[
                    {"filename": "ok.md", "content": page()},
                    {"filename": "bad.md", "content": "nope"},
                ]
            ),
            "invalid-page",
        ),
        (end_payload(pages=[{"filename": "p.md", "content": page()}]), "missing-hash"),
        (
            end_payload(
                pages=[
                    {"filename": "ok.md", "content": page()},
                    {"filename": "p.md", "content": page(), "expectedSha256": "b" * 64},
                ]
            ),
            "stale-hash",
        ),
    ],
    ids=[
        "empty",
        "blank-summary",
        "index-updates",
        "pages-not-array",
        "duplicates",
        "invalid",
        "missing-hash",
        "stale-hash",
    ],
)
def test_s12_11_end_validates_everything_before_writing(
    rt: Runtime, vault: Path, payload: dict, code: str
) -> None:
    rt.upsert("p.md", page("Existing."))
    before = snapshot(vault, lock_ok=True)
    rt.fail("end", "--confirm-explicit-user-end", "--payload", "-", payload=payload, code=code)
    assert snapshot(vault, lock_ok=True) == before


def test_s12_6_start_returns_index_and_recent_entries(rt: Runtime, vault: Path) -> None:
    rt.upsert("p.md", page("Page summary.", body="SECRET-BODY-TEXT\n"))
    for number in range(4):
        rt.ok("append", "--payload", "-", payload={"entry": f"- entry {number}"})
    text = rt.text("start")
    assert "- [[p]]: Page summary." in text
    assert "SECRET-BODY-TEXT" not in text
    assert (
        "- entry 3" in text
        and "- entry 2" in text
        and "- entry 1" in text
        and "- entry 0" not in text
    )
    assert text.index("- entry 3") < text.index("- entry 1")
    assert "- entry 0" in rt.text("start", "--recent", "99")
    none = rt.text("start", "--recent", "-5")
    assert "- entry" not in none
    state = json.loads((vault / ".echoes-vault/state.json").read_text())
    assert state["session"]["started"] is True and state["session"]["saved"] is False


def test_s12_6_start_scale_warning(rt: Runtime, vault: Path) -> None:
    for number in range(201):
        (pages_dir(vault) / f"p{number:03d}.md").write_text(page(f"Page {number}."))
    text = rt.text("start", "--recent", "0")
    assert "Scale alert" in text
    health = rt.ok("status")
    assert health["scaleAlert"]["pages"] == 201 and health["counts"]["pages"] == 201


def test_s12_6_start_with_an_invalid_page_keeps_the_old_index(rt: Runtime, vault: Path) -> None:
    rt.upsert("good.md", page("Good."))
    (pages_dir(vault) / "bad.md").write_text("no frontmatter\n")
    text = rt.text("start")
    assert "could not be regenerated" in text and "EchoesVault/pages/bad.md" in text
    assert "- [[good]]: Good." in text


def test_s12_7_search(rt: Runtime, vault: Path) -> None:
    rt.upsert(
        "auth.md",
        page(
            "Auth.",
            body="# Auth\n\n  JWT validation occurs at the service boundary.  \n"
            + "x" * 400
            + " jwt\n",
        ),
    )
    rt.upsert("other.md", page("Other.", body="Nothing here. jWt once.\n"))
    result = rt.ok("search", "JWT")
    assert result["ok"] is True and result["query"] == "JWT" and result["truncated"] is False
    assert result["results"][0] == {
        "file": "EchoesVault/pages/auth.md",
        "line": 10,
        "text": "JWT validation occurs at the service boundary.",
    }
    assert len(result["results"][1]["text"]) == 300
    assert [r["file"] for r in result["results"]] == ["EchoesVault/pages/auth.md"] * 2 + [
        "EchoesVault/pages/other.md"
    ]
    limited = rt.ok("search", "jwt", "--limit", "1")
    assert limited["truncated"] is True and len(limited["results"]) == 1
    assert rt.ok("search", "jwt", "--limit", "0")["limit"] == 1
    assert rt.ok("search", "jwt", "--limit", "100000")["limit"] == 500
    assert rt.ok("search", "(a+)*[")["results"] == []  # literal, not a pattern


def test_s12_7_search_is_case_insensitive_beyond_ascii(rt: Runtime) -> None:
    rt.upsert("u.md", page("Unicode.", body="STRASSE und Öl\n"))
    assert len(rt.ok("search", "straße")["results"]) == 1
    assert len(rt.ok("search", "öL")["results"]) == 1


def test_s12_7_search_only_scans_top_level_pages(rt: Runtime, vault: Path) -> None:
    (pages_dir(vault) / "nested").mkdir()
    (pages_dir(vault) / "nested" / "n.md").write_text("needle\n")
    rt.ok("append", "--payload", "-", payload={"entry": "- needle"})
    assert rt.ok("search", "needle")["results"] == []
    rt.fail("search", "", code="usage")


def test_s12_5_1_hydrate_only_touches_index_and_state(rt: Runtime, vault: Path) -> None:
    rt.upsert("p.md", page("P."))
    (vault / "EchoesVault/index.md").unlink()
    (vault / ".echoes-vault/state.json").unlink()
    (vault / "AGENTS.md").write_text("user edit\n")
    (vault / "EchoesVault/AGENT_PROTOCOL.md").write_text("edited\n")
    (vault / "EchoesVault/pages/legacy.md").write_text(
        "---\ntype: a\nstack: []\nstatus: active\n---\n"
    )
    before = snapshot(vault)
    rt.fail("hydrate", code="invalid-page")  # legacy page: hydrate never migrates
    (vault / "EchoesVault/pages/legacy.md").unlink()
    before = snapshot(vault)
    result = rt.ok("hydrate")
    assert result["indexRefresh"]["status"] == "rebuilt"
    after = snapshot(vault)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert changed <= {
        "EchoesVault",
        "EchoesVault/index.md",
        ".echoes-vault",
        ".echoes-vault/state.json",
        ".echoes-vault/index-cache.json",
    }, changed
    assert (vault / "AGENTS.md").read_text() == "user edit\n"


def test_s12_5_1_hydrate_requires_the_project_runtime(rt: Runtime, vault: Path) -> None:
    (vault / ".echoes-vault/echoes_vault.py").unlink()
    rt.fail("hydrate", code="not-initialized")


def test_s12_12_rebuild_index_result(rt: Runtime, vault: Path) -> None:
    (pages_dir(vault) / "a.md").write_text(page("A."))
    result = rt.ok("rebuild-index")
    data = (vault / "EchoesVault/index.md").read_bytes()
    assert result["rebuilt"] is True and result["pages"] == 1
    assert result["sha256"] == hashlib.sha256(data).hexdigest()
    again = rt.ok("rebuild-index")  # `rebuilt` is true only when the bytes changed
    assert again["rebuilt"] is False and again["sha256"] == result["sha256"]
