"""`:EchoesSave` in Vim + ALE: the hash-checked save through the runtime, the reload that leaves
the buffer clean, and the stale save refused with EV701 until an explicit overwrite."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from .harness import VimRun, contents, scenario_run

STALE_PROMPT = "EV701: session-tokens.md changed on disk since it was opened. What now?"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> VimRun:
    return scenario_run(tmp_path_factory, "save")


@pytest.fixture(scope="module")
def stale(tmp_path_factory: pytest.TempPathFactory) -> VimRun:
    return scenario_run(tmp_path_factory, "stale")


def selects(run: VimRun, prompt: str) -> List[Dict[str, Any]]:
    return [s for s in run["selects"] if s["prompt"] == prompt]


def test_save_writes_the_buffer_through_the_runtime(saved: VimRun) -> None:
    saved.ok()
    page = saved.page("session-tokens.md")
    assert saved["modified_before"] == 1
    assert contents(page) == saved["buffer"] + "\n"
    assert "Logout revokes every token." in contents(page)
    # The runtime regenerated the index from the new summary: a plain :write would not.
    assert "Session storage, token lifetime and rotation." in saved["index_before"]
    assert "Session storage, token lifetime, rotation and revocation." in saved["index_after"]


def test_save_reloads_the_buffer_so_it_is_not_modified(saved: VimRun) -> None:
    assert saved["modified_after"] == 0
    assert saved["same_buffer"] == 1
    assert "EchoesVault: updated session-tokens.md" in saved["messages"]


def test_stale_save_is_refused_and_nothing_is_written(stale: VimRun) -> None:
    refused = stale["refused"]
    assert refused["disk"] == stale["behind"]
    assert "Edited in Vim." not in refused["disk"]
    assert refused["modified"] == 1
    assert "EV701" in refused["codes"]


def test_the_ev701_refusal_reaches_the_user(stale: VimRun) -> None:
    said = [line for line in stale["refused"]["messages"] if line.startswith("EchoesVault: EV701")]
    assert len(said) == 1, stale["refused"]["messages"]
    assert "session-tokens.md changed on disk since it was opened; nothing was written" in said[0]
    first = selects(stale, STALE_PROMPT)[0]
    assert first["items"][0] == "Overwrite the disk version with this buffer"
    assert first["chosen"] == "Cancel (keep both as they are)"
    assert (
        "EchoesVault: save cancelled; session-tokens.md on disk was not changed"
        in stale["refused"]["messages"]
    )


def test_the_overwrite_code_action_asks_in_vim_and_cancel_keeps_the_disk(stale: VimRun) -> None:
    """ALE never answers window/showMessageRequest: the server offers the overwrite as its own
    confirmation, and the plugin asks once more before it."""
    actions = selects(stale, "Code actions:")[-1]
    assert actions["chosen"] == "Overwrite the disk version with this buffer"
    assert {
        "Reload the disk version (discard buffer changes)",
        "Copy the disk version to a file (its path is shown)",
        "Overwrite the disk version with this buffer",
    } <= set(actions["items"])
    [asked] = [s for s in stale["selects"] if s["items"] == ["Overwrite", "Cancel"]]
    assert asked["chosen"] == "Cancel"
    declined = stale["declined"]
    assert declined["disk"] == stale["behind"]
    assert declined["modified"] == 1


def test_the_disk_version_opens_beside_the_buffer_in_diff_mode(stale: VimRun) -> None:
    """ALE has no window/showDocument: the plugin opens the disk version itself."""
    shown = stale["disk_version"]
    assert shown["name"] == f"echoes-disk://{stale.page('session-tokens.md')}"
    assert shown["text"] + "\n" == stale["behind"]
    assert (shown["diff"], shown["page_diff"], shown["modifiable"]) == (1, 1, 0)


def test_an_explicit_overwrite_replaces_the_disk_version(stale: VimRun) -> None:
    stale.ok()
    assert [s["chosen"] for s in selects(stale, STALE_PROMPT)] == [
        "Cancel (keep both as they are)",
        "Overwrite the disk version with this buffer",
    ]
    done = stale["overwritten"]
    assert done["disk"] == done["buffer"] + "\n"
    assert "Edited in Vim." in done["disk"]
    assert "changed by another writer" not in done["disk"]
    assert done["modified"] == 0
    assert "EV701" not in done["codes"]


def test_the_status_reaches_the_statusline(saved: VimRun) -> None:
    assert saved["statusline"] == "EchoesVault: vault healthy, 3 pages"


def test_the_status_card_opens_in_the_preview_window(saved: VimRun) -> None:
    card = saved["status_card"]
    assert card[0] == "## EchoesVault status"
    assert any("**Pages:** 3" in line for line in card), card


@pytest.mark.parametrize("defects", [False, True], ids=["healthy", "invalid-pages"])
def test_the_statusline_names_what_it_counts(
    tmp_path_factory: pytest.TempPathFactory, defects: bool
) -> None:
    """The two counts of the status, named as the VS Code status bar and the Neovim statusline
    name them: problems in open files (the broken link added to the open page) and vault files
    that need attention (the invalid pages of the fixture's defects)."""
    run = scenario_run(tmp_path_factory, "status_counts", defects=defects)
    loaded, edited = run["loaded_status"], run["edited_status"]
    assert loaded["openProblemCount"] == 0 and edited["openProblemCount"] == 1
    if defects:
        assert loaded["issueCount"] == edited["issueCount"] == 2
        assert run["loaded_statusline"] == "EchoesVault: 2 vault files need attention"
        assert run["edited_statusline"] == (
            "EchoesVault: 1 problem in open files · 2 vault files need attention"
        )
    else:
        assert loaded["issueCount"] == edited["issueCount"] == 0
        assert run["loaded_statusline"] == "EchoesVault: vault healthy, 3 pages"
        assert run["edited_statusline"] == "EchoesVault: 1 problem in open files · vault healthy"
