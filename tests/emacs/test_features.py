"""What a person sees in Emacs + eglot on a page with defects: the diagnostics, the status, `[[`
completion, definition, hover and a quick fix, all through `editors/emacs/echoes-lsp.el`."""

from __future__ import annotations

import pytest

from .harness import EmacsRun, scenario_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> EmacsRun:
    return scenario_run(tmp_path_factory, "features", defects=True)


def test_scenario_completes(run: EmacsRun) -> None:
    run.ok()


def test_a_vault_page_opens_in_the_page_mode_with_the_echoes_server(run: EmacsRun) -> None:
    assert run["major_mode"] == "echoes-lsp-page-mode"
    assert run["server_class"] == "echoes-lsp-server"
    # Rooted where EchoesVault/ is, not in the pages folder the file is in.
    assert run["root"] == str(run.workspace) + "/"


def test_diagnostics_arrive_with_their_codes(run: EmacsRun) -> None:
    # missing-fields.md: `status` and `summary` missing (EV104), a link to no page (EV300).
    assert run["codes"] == ["EV104", "EV300"]


def test_the_status_shows_in_the_mode_line_and_as_a_card(run: EmacsRun) -> None:
    # Two invalid pages among the defects (missing-fields.md, folded-summary.md).
    assert run["mode_line"] == " attention (2 issues)"
    card = run["status_card"]
    assert card.startswith("## EchoesVault status")
    assert "EV104" in card and "missing-fields.md" in card


def test_double_bracket_completion_offers_pages(run: EmacsRun) -> None:
    assert run["completion_prefix"] == "sess"
    assert run["completions"] == ["session-tokens"]


def test_definition_of_a_link_is_the_page(run: EmacsRun) -> None:
    assert run["definitions"] == [
        {"file": str(run.page("session-tokens.md")), "line": 8},
    ]


def test_hover_on_a_link_shows_the_pages_summary(run: EmacsRun) -> None:
    assert "Session storage, token lifetime and rotation." in run["hover"]
    assert "session-tokens" in run["hover"]


def test_hover_is_plain_text_when_emacs_has_no_markdown_mode(run: EmacsRun) -> None:
    """Without markdown-mode, eglot 1.9 declares only `plaintext` for hover: Markdown markup
    would reach the person as raw asterisks and backticks."""
    assert run["major_mode_parent"] == "text-mode"
    assert "**" not in run["hover"] and "`" not in run["hover"]


def test_a_quick_fix_is_offered_and_applied(run: EmacsRun) -> None:
    assert run["action_titles"][0] == "Insert the missing frontmatter fields"
    after = run["after_action"]
    assert after.startswith("---\ntype: note\nstack: []\nstatus: active\nsummary: ")
    assert "EV104" not in run["codes_after_action"]
    assert "EV300" in run["codes_after_action"]
