"""`:EchoesStatus`, `:EchoesSearch`, the statusline, `:EchoesAppend` and `:EchoesEnd`."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import NvimRun, scenario_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> NvimRun:
    return scenario_run(tmp_path_factory, "commands")


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> NvimRun:
    return scenario_run(tmp_path_factory, "journal")


def test_status_notification_and_statusline(run: NvimRun) -> None:
    status = run["status_notification"]
    assert status["workspace"] == run.workspace.as_uri()
    assert status["integrity"] == "healthy"
    assert status["issueCount"] == 0
    assert status["pages"] == 3
    assert run["statusline"] == "Echoes: vault healthy (3 pages)"


def test_status_card_in_a_float(run: NvimRun) -> None:
    [status] = [c for c in run["commands"] if c["command"] == "echoes.status"]
    assert status["argument"] == {"workspace": run.workspace.as_uri(), "format": "card"}
    assert status["result"]["ok"] is True
    assert status["result"]["markdown"].startswith("## EchoesVault status")
    card = run["status_card"]
    assert card[0] == "## EchoesVault status"
    assert any("Integrity" in line and "healthy" in line for line in card)


def test_search_fills_the_quickfix_list(run: NvimRun) -> None:
    run.ok()
    assert run["quickfix_title"] == "EchoesVault search: token"
    hits = {(Path(item["file"]).name, item["lnum"]) for item in run["quickfix"]}
    assert ("session-tokens.md", 12) in hits  # `## Token lifetime`
    assert ("auth-architecture.md", 10) in hits
    pages = run.workspace / "EchoesVault" / "pages"
    for item in run["quickfix"]:
        lines = Path(item["file"]).read_text(encoding="utf-8").split("\n")
        assert lines[item["lnum"] - 1] == item["text"]
        assert Path(item["file"]).parent == pages
    assert run["quickfix_open"] is True


def test_append_text_and_range(journal: NvimRun) -> None:
    texts = [entry["text"] for entry in journal["appended"]]
    assert len(texts) == 3
    assert any("Decided to keep repositories thin." in t for t in texts)
    assert any(
        "Queries live in repositories; services never open connections themselves.\n"
        "See [[auth-architecture]] for who may call them." in t
        for t in texts
    )
    assert all("scratchpad" in Path(e["file"]).name for e in journal["appended"])
    appends = [c for c in journal["commands"] if c["command"] == "echoes.append"]
    # `v` then `eee` on "Queries live in repositories;": exactly the selected characters.
    assert appends[2]["argument"]["entry"] == "Queries live in"
    assert appends[0]["argument"]["entry"] == "Decided to keep repositories thin."
    assert all(Path(c["result"]["dailyLog"]).is_file() for c in appends)


def test_end_asks_for_summary_and_confirmation(journal: NvimRun) -> None:
    journal.ok()
    assert [i["prompt"] for i in journal["inputs"]] == ["Daily summary: ", "Daily summary: "]
    assert [s["chosen"] for s in journal["selects"]] == ["No", "Yes, end and save the session"]
    assert journal["after_decline"] == 3, "declining writes nothing"
    [end] = [c for c in journal["commands"] if c["command"] == "echoes.endSession"]
    assert end["argument"]["confirmExplicitUserEnd"] is True
    assert end["argument"]["dailySummary"] == "Repository layer decisions recorded."
    assert end["result"]["ok"] is True
    sessions = [e for e in journal["after_end"] if "-session-" in Path(e["file"]).name]
    assert len(sessions) == 1
    assert "Repository layer decisions recorded." in sessions[0]["text"]


@pytest.mark.parametrize("defects", [False, True], ids=["healthy", "invalid-pages"])
def test_the_statusline_names_what_it_counts(
    tmp_path_factory: pytest.TempPathFactory, defects: bool
) -> None:
    """The two counts of the status, each named as the VS Code status bar names them: problems
    in open files (the broken link added to the open page) and vault files that need attention
    (the invalid pages of the fixture's defects), never a bare "issues"."""
    run = scenario_run(tmp_path_factory, "status_counts", defects=defects).ok()
    loaded, edited = run["loaded_status"], run["edited_status"]
    assert loaded["openProblemCount"] == 0 and edited["openProblemCount"] == 1
    if defects:
        assert loaded["issueCount"] == edited["issueCount"] == 2
        assert run["loaded_statusline"] == "Echoes: 2 vault files need attention"
        assert run["edited_statusline"] == (
            "Echoes: 1 problem in open files · 2 vault files need attention"
        )
    else:
        assert loaded["issueCount"] == edited["issueCount"] == 0
        assert run["loaded_statusline"] == "Echoes: vault healthy (3 pages)"
        assert run["edited_statusline"] == "Echoes: 1 problem in open files · vault healthy"
