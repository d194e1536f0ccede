"""`make test` leaves out the suites that drive a real editor, and CI still runs every one of them
on its own, after `make test` (see docs/testing.md)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[2]
CI_SCRIPT = ROOT / ".ci" / "run"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def editor_suites() -> List[str]:
    found = re.search(r"^EDITOR_SUITES := (.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert found, "the Makefile names no EDITOR_SUITES"
    return found.group(1).split()


def pytest_command(target: str) -> str:
    """The pytest command line that `make TARGET` would run (a dry run: nothing is run)."""
    dry = subprocess.run(
        ["make", "-n", "-C", str(ROOT), target],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert dry.returncode == 0, dry.stderr
    commands = [line for line in dry.stdout.splitlines() if " -m pytest " in line]
    assert len(commands) == 1, dry.stdout
    return commands[0]


def ci_commands() -> List[str]:
    lines = CI_SCRIPT.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_make_test_runs_every_test_but_the_editor_suites() -> None:
    command = pytest_command("test").split()
    ignored = [word.split("=", 1)[1] for word in command if word.startswith("--ignore=")]
    assert sorted(ignored) == sorted(editor_suites())
    # No path argument: pytest collects all of `testpaths` (tests/) but the ignored suites.
    arguments = command[command.index("pytest") + 1 :]
    assert not [word for word in arguments if word.startswith("tests")], arguments


@pytest.mark.parametrize("suite", editor_suites())
def test_each_editor_suite_has_a_target_that_ci_runs_after_make_test(suite: str) -> None:
    assert sorted((ROOT / suite).glob("test_*.py")), f"{suite} holds no tests"
    target = "test-" + Path(suite).name
    assert pytest_command(target).split()[-2:] == ["-q", suite]
    commands = ci_commands()
    assert "make test" in commands and f"make {target}" in commands, commands
    assert commands.index(f"make {target}") > commands.index("make test")
