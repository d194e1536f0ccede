"""`:EchoesSave`: the hash-checked save through the runtime, and the refused stale save."""

from __future__ import annotations

import hashlib
from typing import Any, Dict, List

import pytest

from .harness import NvimRun, codes, contents, scenario_run


def saves(run: NvimRun) -> List[Dict[str, Any]]:
    return [c for c in run["commands"] if c["command"] == "echoes.savePage"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> NvimRun:
    return scenario_run(tmp_path_factory, "save")


@pytest.fixture(scope="module")
def stale(tmp_path_factory: pytest.TempPathFactory) -> NvimRun:
    return scenario_run(tmp_path_factory, "stale")


@pytest.fixture(scope="module")
def actions(tmp_path_factory: pytest.TempPathFactory) -> NvimRun:
    return scenario_run(tmp_path_factory, "stale_actions")


def test_save_writes_through_the_runtime(saved: NvimRun) -> None:
    saved.ok()
    page = saved.page("session-tokens.md")
    assert saved["modified_before"] is True
    assert contents(page) == saved["buffer"] + "\n"
    assert "Logout revokes every token." in contents(page)
    # The runtime regenerated the index from the new summary: a plain write would not.
    assert "Session storage, token lifetime, rotation and revocation." in saved["index_after"]
    assert "Session storage, token lifetime and rotation." in saved["index_before"]
    assert any(
        n["message"] == "EchoesVault: updated session-tokens.md" for n in saved["notifications"]
    )


def test_save_result_follows_the_contract(saved: NvimRun) -> None:
    [save] = saves(saved)
    page = saved.page("session-tokens.md")
    assert save["argument"] == {"uri": page.as_uri()}
    assert save["error"] is None
    result = save["result"]
    assert result["ok"] is True
    assert result["action"] == "updated"
    assert result["page"] == str(page)
    assert result["uri"] == page.as_uri()
    assert result["sha256"] == hashlib.sha256(page.read_bytes()).hexdigest()
    assert result["indexChanged"] is True, "the summary changed"


def test_save_reloads_the_buffer_clean(saved: NvimRun) -> None:
    assert saved["modified_after"] is False
    assert saved["diagnostics"] == []


def test_stale_save_is_refused(stale: NvimRun) -> None:
    refused = stale["refused"]
    # Nothing was written: the disk still holds the other writer's version.
    assert refused["disk"] == stale["behind"]
    assert "Edited in Neovim." not in refused["disk"]
    assert refused["modified"] is True
    assert "EV701" in codes(refused["diagnostics"])


def test_stale_save_is_an_ev701_error(stale: NvimRun) -> None:
    refused = saves(stale)[0]
    assert "confirmOverwrite" not in refused["argument"]
    assert refused["result"] is None
    assert "EV701" in refused["error"]["message"]


def test_stale_save_offers_overwrite_only_on_request(stale: NvimRun) -> None:
    first = stale["selects"][0]
    assert "EV701" in first["prompt"]
    assert first["items"][0] == "Overwrite the disk version with this buffer"
    assert first["chosen"] == "Cancel (keep both as they are)"
    # Each refusal (the cancelled save, then the save that led to the overwrite) is reported
    # once: the server's message, not repeated by the plugin.
    refusals = [s for s in stale["selects"] if "EV701" in s["prompt"]]
    ev701 = [n for n in stale["notifications"] if "EV701" in n["message"]]
    assert len(refusals) == 2
    assert len(ev701) == len(refusals), ev701
    # Only the save after the explicit choice carries confirmOverwrite.
    assert [c["argument"].get("confirmOverwrite") for c in saves(stale)] == [None, None, True]


def test_confirmed_overwrite_replaces_the_disk_version(stale: NvimRun) -> None:
    stale.ok()
    done = stale["overwritten"]
    assert done["disk"] == done["buffer"] + "\n"
    assert "Edited in Neovim." in done["disk"]
    assert "changed by another writer" not in done["disk"]
    assert done["modified"] is False
    assert "EV701" not in codes(done["diagnostics"])


def test_ev701_code_actions_with_neovim_defaults(actions: NvimRun) -> None:
    """`window/showDocument` opens the disk version; `window/showMessageRequest` asks before an
    overwrite (answered through vim.ui.select, as Neovim's default handler does)."""
    actions.ok()
    assert {
        "Open the disk version beside the buffer",
        "Overwrite the disk version with this buffer (asks to confirm)",
        "Reload the disk version (discard buffer changes)",
    } <= set(actions["action_titles"])
    assert "Refresh tokens rotate weekly." in actions["disk_version"]["text"]
    declined = actions["declined"]
    assert "Refresh tokens rotate weekly." in declined["disk"]
    assert declined["modified"] is True
    prompts = [s for s in actions["selects"] if s["chosen"] and isinstance(s["chosen"], dict)]
    assert [s["chosen"]["title"] for s in prompts] == ["Cancel", "Overwrite"]
    confirmed = actions["confirmed"]
    assert confirmed["disk"] == confirmed["buffer"] + "\n"
    assert "Edited in Neovim." in confirmed["disk"]
    assert confirmed["modified"] is False
    assert "EV701" not in codes(confirmed["diagnostics"])
