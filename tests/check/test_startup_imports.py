"""What a one-shot `check` imports before it reads the vault: the start-up of every run happens
before the work is split over processes, so each module it does not need is time on the clock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Set

from .conftest import TIMEOUT, base_env, codes_of, json_report

# The TOML parser `echoes_lsp.cli.project_config` imports: the standard library's from Python 3.11, the
# `tomli` dependency before that.
TOML = "tomllib" if sys.version_info >= (3, 11) else "tomli"
# Watch mode, and the TOML parser of a project without configuration files.
UNNEEDED = ("echoes_lsp.cli.watch", TOML)


def imported_by_check(cwd: Path) -> Set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "echoes_lsp", "check", "--format", "json"],
        cwd=str(cwd),
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_a_check_without_configuration_imports_no_unneeded_module(workspace: Path) -> None:
    loaded = imported_by_check(workspace)
    assert "echoes_lsp.cli.checker" in loaded  # the listing holds the command's own imports
    assert not loaded.intersection(UNNEEDED), sorted(loaded.intersection(UNNEEDED))


def test_a_configuration_file_is_still_read(workspace: Path) -> None:
    assert "EV600" in codes_of(json_report(cwd=workspace))  # the setting below changes this
    (workspace / ".echoes-lsp.toml").write_text("secrets = false\n", encoding="utf-8")
    assert TOML in imported_by_check(workspace)
    assert "EV600" not in codes_of(json_report(cwd=workspace))
