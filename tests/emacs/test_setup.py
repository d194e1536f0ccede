"""The guide's set-up, as a person copies it, and the settings the integration sends."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from tests.nvim.harness import make_workspace
from tests.test_editor_settings import check_snippet

from .harness import ROOT, EmacsRun, find_emacs, run_emacs, scenario_run

GUIDE = ROOT / "docs" / "editors" / "emacs.md"
SNIPPET_FIRST_LINE = ";; init.el: echoes-lsp for the pages of an EchoesVault (Emacs 28+ with eglot)"


def documented_snippet() -> str:
    blocks = re.findall(r"```elisp\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)
    (block,) = [b for b in blocks if b.startswith(SNIPPET_FIRST_LINE + "\n")]
    return block


def snippet_run(tmp_path: Path, server_dir: Optional[Path]) -> EmacsRun:
    """The snippet, verbatim, as init code, with `PATH` holding only the system and
    `server_dir` (where `echoes-lsp` is, or None for a machine without the server)."""
    emacs = find_emacs()
    workspace = make_workspace(tmp_path, defects=True)
    snippet = tmp_path / "init.el"
    snippet.write_text(documented_snippet(), encoding="utf-8")
    path = "/usr/local/bin:/usr/bin:/bin"
    if server_dir is not None:
        path = f"{server_dir}:{path}"
    else:
        assert shutil.which("echoes-lsp", path=path) is None, "the system has echoes-lsp"
    return run_emacs(
        emacs, "snippet", workspace, {"ECHOES_TEST_SNIPPET": str(snippet), "PATH": path}
    )


def test_the_documented_snippet_starts_the_server_on_vault_pages(tmp_path: Path) -> None:
    here = Path(sys.executable).parent
    if not (here / "echoes-lsp").is_file():
        pytest.fail(f"no echoes-lsp beside {sys.executable}: install the project (make)")
    run = snippet_run(tmp_path, here).ok()
    assert run["loaded"] is True
    assert Path(run["library"]).parent == ROOT / "editors" / "emacs"
    assert run["major_mode"] == "echoes-lsp-page-mode"
    assert run["codes"] == ["EV104", "EV300"]


def test_the_documented_snippet_does_nothing_without_the_server(tmp_path: Path) -> None:
    run = snippet_run(tmp_path, None).ok()
    assert run["loaded"] is False
    assert run["major_mode"] != "echoes-lsp-page-mode"
    assert not [m for m in run["messages"] if "rror" in m], run["messages"]


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> EmacsRun:
    return scenario_run(tmp_path_factory, "settings")


def test_initialization_options_show_every_setting_with_its_default(settings: EmacsRun) -> None:
    check_snippet(settings.ok()["initialization_options"], "echoes-lsp-settings (init options)")


def test_the_configuration_request_is_answered_with_every_setting(settings: EmacsRun) -> None:
    (echoes,) = settings.ok()["configuration"]
    check_snippet({"echoes": echoes}, "echoes-lsp-settings (workspace/configuration)")


def test_editor_dir_prints_the_folder_of_echoes_lsp_el() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "echoes_lsp", "editor-dir", "emacs"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == ROOT / "editors" / "emacs"


def test_echoes_lsp_el_byte_compiles_without_a_warning(tmp_path: Path) -> None:
    """Compiled as package.el compiles an installed package, against Debian's eglot."""
    emacs = find_emacs()
    copy = tmp_path / "echoes-lsp.el"
    shutil.copy(ROOT / "editors" / "emacs" / "echoes-lsp.el", copy)
    done = subprocess.run(
        [emacs, "--batch", "--eval", "(setq byte-compile-error-on-warn t)"]
        + ["-f", "batch-byte-compile", str(copy)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    assert copy.with_suffix(".elc").is_file()
