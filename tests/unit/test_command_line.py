"""The `echoes-lsp` dispatcher, called in process: help, versions, unknown commands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from echoes_lsp import __version__
from echoes_lsp.__main__ import USAGE, main
from echoes_lsp.runtime.echoes_vault import ENGINE_VERSION, PROTOCOL_VERSION


def test_help_and_no_command(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert main([]) == 2  # a command is needed
    assert capfd.readouterr().out == USAGE * 2


def test_version_names_the_package_the_engine_and_the_protocol(
    capfd: pytest.CaptureFixture[str],
) -> None:
    expected = (
        f"echoes-lsp {__version__} (runtime engine {ENGINE_VERSION}, "
        f"EchoesVault Protocol {PROTOCOL_VERSION})\n"
    )
    assert main(["--version"]) == 0
    assert main(["version"]) == 0
    assert capfd.readouterr().out == expected * 2


def test_each_command_reaches_its_own_code(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["nvim-plugin", "extra"]) == 2
    assert capfd.readouterr().err == "echoes-lsp nvim-plugin takes no arguments\n"
    assert main(["runtime", "--version"]) == 0
    assert PROTOCOL_VERSION in capfd.readouterr().out
    for command in ("init", "serve"):
        with pytest.raises(SystemExit) as stopped:  # argparse ends the process on a bad flag
            main([command, "--no-such-flag"])
        assert stopped.value.code == 2
        assert f"usage: echoes-lsp {command}" in capfd.readouterr().err


def test_an_unknown_command_is_named_with_the_usage(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
    assert capfd.readouterr().err == f"echoes-lsp: unknown command 'frobnicate'\n\n{USAGE}"


def test_check_called_in_process_returns_its_exit_code(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # Run from the command line, `check` ends the process; called with arguments, it returns.
    assert main(["check", str(tmp_path)]) == 2
    assert "no EchoesVault/ folder found" in capfd.readouterr().err


def test_editor_dir_prints_the_folder_of_a_shipped_integration(
    capfd: pytest.CaptureFixture[str],
) -> None:
    assert main(["editor-dir", "nvim"]) == 0
    folder = capfd.readouterr().out.strip()
    assert os.path.isfile(os.path.join(folder, "lsp", "echoes_lsp.lua"))
    assert main(["nvim-plugin"]) == 0
    assert capfd.readouterr().out.strip() == folder
    for wrong in ([], ["notepad"], ["nvim", "extra"]):
        assert main(["editor-dir", *wrong]) == 2
        assert "one of nvim, emacs, vim" in capfd.readouterr().err
