"""Diagnostics and quick fixes as Neovim receives and applies them."""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Tuple

import pytest

from .harness import NvimRun, codes, scenario_run

CONTRACT_COMMANDS = {
    "echoes.init",
    "echoes.status",
    "echoes.start",
    "echoes.search",
    "echoes.append",
    "echoes.savePage",
    "echoes.rebuildIndex",
    "echoes.hydrate",
    "echoes.endSession",
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> NvimRun:
    return scenario_run(tmp_path_factory, "defects", defects=True)


def test_scenario_completes(run: NvimRun) -> None:
    run.ok()


def test_known_defects_have_exact_codes_and_ranges(run: NvimRun) -> None:
    found = [
        (d["code"], d["lnum"], d["col"], d["end_lnum"], d["end_col"], d["severity"])
        for d in run["diagnostics"]
    ]
    # missing-fields.md: `status` and `summary` missing (at the closing `---`, line 4), and a
    # link to a page that does not exist (`[[no-such-page]]`, line 8, the target only).
    assert sorted(found) == [
        ("EV104", 3, 0, 3, 3, 1),
        ("EV104", 3, 0, 3, 3, 1),
        ("EV300", 7, 21, 7, 33, 2),
    ], run.explain()
    messages = sorted(d["message"] for d in run["diagnostics"])
    assert any("`status`" in m for m in messages) and any("`summary`" in m for m in messages)
    assert any("no-such-page" in m for m in messages)
    assert {d["source"] for d in run["diagnostics"]} == {"echoes"}


def test_each_diagnostic_arrives_once(run: NvimRun) -> None:
    """Push only: no second (pull) namespace holding copies or stale leftovers."""
    namespaces = {d["namespace"] for d in run["diagnostics"] + run["after_fix"]}
    assert len(namespaces) == 1, namespaces
    after = [(d["code"], d["lnum"], d["col"]) for d in run["after_fix"]]
    assert len(after) == len(set(after)), after


def test_quick_fix_inserts_the_missing_fields(run: NvimRun) -> None:
    assert "Insert the missing frontmatter fields" in run["fix_titles"]
    text = run["fixed_text"]
    frontmatter = text.split("---")[1]
    keys = [line.split(":")[0] for line in frontmatter.strip().splitlines()]
    assert keys == ["type", "stack", "status", "summary"], text
    assert text.endswith("This page links to [[no-such-page]] and to [[session-tokens]].")
    assert run["fixed_modified"] is True
    # The inserted placeholder summary is reported until replaced (EV202), and the broken link is
    # left, two lines further down.
    assert [(d["code"], d["lnum"], d["col"]) for d in run["after_fix"]] == [
        ("EV202", 4, 9),
        ("EV300", 9, 21),
    ]


def test_quick_fix_joins_the_summary(run: NvimRun) -> None:
    assert "summary: A summary folded over two lines.\n" in run["joined_text"]
    assert "EV201" not in codes(run["joined_diagnostics"])


def test_client_configuration(run: NvimRun) -> None:
    client = run["client"]
    assert client["root_dir"] == str(run.workspace), "root is the directory holding EchoesVault/"
    assert {"[", "#", "^", "|"} <= set(client["trigger_characters"])
    assert CONTRACT_COMMANDS <= set(client["commands"])
    if sys.platform.startswith("linux"):
        # Neovim 0.11 does not offer dynamic file watching on Linux: the server polls instead.
        assert client["watched_files_dynamic"] is False
        assert client["watched_files_registered"] is False


def diagnostic_set(items: List[Dict[str, Any]]) -> List[Tuple[str, int, int]]:
    return sorted((d["code"], d["lnum"], d["col"]) for d in items)


@pytest.mark.parametrize("keep_pull", [False, True], ids=["plugin-config", "neovim-defaults"])
def test_diagnostics_stay_single_and_current_after_an_edit(
    tmp_path_factory: pytest.TempPathFactory, keep_pull: bool
) -> None:
    """Each diagnostic once, at its current place after an edit: with the plugin's config (which
    keeps Neovim from pulling), and with Neovim's defaults (Neovim 0.11 pulls whenever a server
    offers pull diagnostics; the server must not offer them to a client it pushes to)."""
    run = scenario_run(
        tmp_path_factory,
        "default_diagnostics",
        defects=True,
        env={"ECHOES_TEST_KEEP_PULL": "1" if keep_pull else "0"},
    ).ok()
    assert diagnostic_set(run["before"]) == [("EV104", 3, 0), ("EV104", 3, 0), ("EV300", 7, 21)]
    assert diagnostic_set(run["after"]) == [("EV104", 3, 0), ("EV104", 3, 0), ("EV300", 9, 21)]
    assert len({d["namespace"] for d in run["before"] + run["after"]}) == 1
