"""Save through EchoesVault from Emacs: the hash-checked upsert, the buffer reverted clean, and a
page changed on disk by another writer refused (EV701) until the person chooses to overwrite."""

from __future__ import annotations

import hashlib

import pytest

from .harness import EmacsRun, messages, scenario_run

STALE_PROMPT = "EV701: session-tokens.md changed on disk since it was opened. What now? "
OVERWRITE = "Overwrite the disk version with this buffer"
CANCEL = "Cancel (keep both as they are)"
SERVER_EV701 = (
    "EV701: session-tokens.md changed on disk since it was opened; nothing was written. "
    "Reload the disk version, or confirm an overwrite."
)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> EmacsRun:
    return scenario_run(tmp_path_factory, "save")


@pytest.fixture(scope="module")
def stale(tmp_path_factory: pytest.TempPathFactory) -> EmacsRun:
    return scenario_run(tmp_path_factory, "stale")


@pytest.fixture(scope="module")
def reloaded(tmp_path_factory: pytest.TempPathFactory) -> EmacsRun:
    return scenario_run(tmp_path_factory, "stale-reload")


@pytest.fixture(scope="module")
def actions(tmp_path_factory: pytest.TempPathFactory) -> EmacsRun:
    return scenario_run(tmp_path_factory, "stale-actions")


def test_save_writes_through_the_runtime_and_reverts_the_buffer(saved: EmacsRun) -> None:
    saved.ok()
    state = saved["saved"]
    assert saved["modified_before"] is True
    assert state["modified"] is False
    assert state["disk"] == state["buffer"]
    assert "Logout revokes every token." in state["disk"]
    assert state["diagnostics"] == []
    # The runtime regenerated the index from the new summary: a plain write would not.
    assert "Session storage, token lifetime and rotation." in saved["index_before"]
    assert "Session storage, token lifetime, rotation and revocation." in saved["index_after"]


def test_save_answers_with_the_runtimes_result(saved: EmacsRun) -> None:
    result = saved["result"]
    page = saved.page("session-tokens.md")
    assert result["ok"] is True
    assert result["action"] == "updated"
    assert result["page"] == str(page)
    assert result["indexChanged"] is True
    assert result["sha256"] == hashlib.sha256(saved["saved"]["disk"].encode("utf-8")).hexdigest()


def test_the_code_actions_save_also_reverts_the_buffer(saved: EmacsRun) -> None:
    state = saved["action_saved"]
    assert "Saved by the code action." in state["disk"]
    assert state["disk"] == state["buffer"]
    assert state["modified"] is False
    assert saved["save_messages"] == ["EchoesVault: updated session-tokens.md"] * 3


def test_the_save_command_on_newer_eglots_path_also_reverts_the_buffer(saved: EmacsRun) -> None:
    """Newer eglot runs a code action's command through `eglot-execute` (eglot 1.9 does not
    have it): the integration's method is called here as that eglot would call it."""
    state = saved["execute_saved"]
    assert "Saved as newer eglot runs a command." in state["disk"]
    assert state["disk"] == state["buffer"]
    assert state["modified"] is False


def test_a_page_the_runtime_creates_reaches_the_open_buffer(saved: EmacsRun) -> None:
    """eglot 1.9's file watcher misses a replace by rename (how the runtime writes): the
    integration declines it, so no watcher is registered and the server polls the vault."""
    assert saved["file_watches"] == 0
    assert saved["codes_before_create"] == ["EV300"]
    assert saved["codes_after_create"] == []


def test_a_stale_save_writes_nothing_and_marks_ev701(stale: EmacsRun) -> None:
    stale.ok()
    refused = stale["refused"]
    assert "changed by another writer" in stale["behind"]
    assert refused["disk"] == stale["behind"]
    assert "Edited in Emacs." not in refused["disk"]
    assert refused["modified"] is True
    assert "EV701" in refused["diagnostics"]


def test_the_refusal_reaches_the_person_and_offers_the_choices(stale: EmacsRun) -> None:
    assert messages(stale, SERVER_EV701)[0] == f"[eglot] Server reports (type=1): {SERVER_EV701}"
    first = stale["questions"][0]
    assert first["prompt"] == STALE_PROMPT
    assert first["choices"] == [
        OVERWRITE,
        "Compare with the disk version (diff)",
        "Reload the disk version (discard buffer changes)",
        CANCEL,
    ]
    assert messages(stale, "save cancelled") == [
        "EchoesVault: save cancelled; session-tokens.md on disk was not changed"
    ]


def test_overwrite_only_after_the_explicit_choice(stale: EmacsRun) -> None:
    assert [q["answer"] for q in stale["questions"]] == [CANCEL, OVERWRITE]
    done = stale["overwritten"]
    assert stale["result"]["action"] == "updated"
    assert done["disk"] == done["buffer"]
    assert "Edited in Emacs." in done["disk"]
    assert "changed by another writer" not in done["disk"]
    assert done["modified"] is False
    assert "EV701" not in done["diagnostics"]


def test_after_a_refusal_compare_shows_both_versions_and_reload_takes_the_disk_one(
    reloaded: EmacsRun,
) -> None:
    reloaded.ok()
    diff = reloaded["diff"]
    assert "-Refresh tokens rotate daily (changed by another writer)." in diff
    assert "+Edited in Emacs." in diff
    compared = reloaded["compared"]
    assert compared["disk"] == reloaded["behind"]
    assert compared["modified"] is True
    done = reloaded["reloaded"]
    assert done["disk"] == reloaded["behind"] == done["buffer"]
    assert done["modified"] is False
    assert done["diagnostics"] == []


def test_ev701_code_actions_open_the_disk_version_and_overwrite_on_yes(actions: EmacsRun) -> None:
    """The "Overwrite ... (asks to confirm)" action is asked by Emacs itself (eglot declares no
    `window/showMessageRequest`); "Open the disk version" opens it read-only."""
    actions.ok()
    assert {
        "Reload the disk version (discard buffer changes)",
        "Open the disk version beside the buffer",
        "Overwrite the disk version with this buffer (asks to confirm)",
    } <= set(actions["action_titles"])
    disk = actions["disk_version"]
    assert disk["text"] == actions["behind"]
    assert disk["read_only"] is True
    declined = actions["declined"]
    assert declined["disk"] == actions["behind"]
    assert declined["modified"] is True
    confirms = [q for q in actions["questions"] if q["kind"] == "yes-or-no-p"]
    assert [q["answer"] for q in confirms] == ["no", "yes"]
    assert confirms[0]["prompt"].startswith("session-tokens.md changed on disk. Overwrite")
    confirmed = actions["confirmed"]
    assert "Edited in Emacs." in confirmed["disk"]
    assert confirmed["disk"] == confirmed["buffer"]
    assert confirmed["modified"] is False
    assert "EV701" not in confirmed["diagnostics"]
