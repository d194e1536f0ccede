"""Without a server, and outside a vault: one clear message each, no Vim error."""

from __future__ import annotations

import pytest

from .harness import VimRun, scenario_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> VimRun:
    return scenario_run(tmp_path_factory, "no_server")


def test_a_missing_server_is_named_once_with_how_to_install_it(run: VimRun) -> None:
    run.ok()
    said = [line for line in run["messages"] if "is not executable" in line]
    assert said == [
        "EchoesVault: /nonexistent/echoes-lsp is not executable: install the server "
        "(pipx install echoes-lsp) or set g:echoes_lsp_executable"
    ]
    errors = [
        m
        for m in run["messages"]
        if m.startswith("Error detected") or (m[:1] == "E" and m[1:2].isdigit())
    ]
    assert errors == []


def test_a_command_without_a_server_says_so(run: VimRun) -> None:
    assert run["page"]["omnifunc"] == "echoes_lsp#complete"
    assert (
        "EchoesVault: the server did not start for this buffer; :ALEInfo says why"
        in (run["page"]["messages"])
    )


def test_a_markdown_file_outside_the_vault_is_left_alone(run: VimRun) -> None:
    assert run["outside"]["omnifunc"] != "echoes_lsp#complete"
    assert run["outside"]["mapping"] == ""
    assert run["messages"][-1] == "EchoesVault: this buffer is not inside an EchoesVault/ folder"
