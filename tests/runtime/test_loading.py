"""The runtime loads the way other tools load a single file: `spec_from_file_location` and
`exec_module`, without the module ever being registered in `sys.modules`.

The reference runtime's own test suite loads the runtime under test this way, so a runtime that
needs its module in `sys.modules` (as `dataclasses` does for string annotations) cannot even be
tested by it. The check runs under the suite's interpreter and under every other Python 3.9 or
newer found on this machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from .conftest import RUNTIME

# Loads the file given as the first argument as a module that is never put in `sys.modules`,
# then runs rules from both halves of it on real text.
LOADER = """\
import importlib.util, json, sys
name = "echoes_runtime_loaded_from_a_path"
spec = importlib.util.spec_from_file_location(name, sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
valid = module.analyze_page(sys.argv[2])
invalid = module.analyze_page(sys.argv[3])
first = invalid.problems[0]
print(json.dumps({
    "registered": name in sys.modules,
    "python": list(sys.version_info[:2]),
    "engine": module.ENGINE_VERSION,
    "valid": valid.valid,
    "summary": valid.summary,
    "codes": sorted({p.code for p in invalid.problems}),
    "equal": first == module.Problem(first.code, first.message, first.line, first.start,
                                     first.end_line, first.end),
    "index": module.render_index([("b", "Second."), ("a", "First.")]),
}))
"""

VALID = "---\ntype: decision\nstack: [python]\nstatus: active\nsummary: Loaded by path.\n---\n"
INVALID = "---\ntype: decision\n---\nNo other field.\n"


def other_interpreters() -> List[str]:
    """Every other working Python 3.9 or newer here: `python3.9` … `python3.14` on PATH and
    pyenv's builds (whose shims on PATH run only the versions pyenv has selected), one per
    distinct interpreter."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [shutil.which(f"python3.{minor}") for minor in range(9, 15)]
    candidates += [str(p) for p in sorted(root.glob("versions/*/bin/python3"))]
    seen: Dict[str, str] = {}
    own = os.path.realpath(sys.executable)
    for candidate in candidates:
        if not candidate:
            continue
        try:
            probe = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info >= (3, 9), sys.executable)"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        newer, _, executable = probe.stdout.strip().partition(" ")
        if probe.returncode != 0 or newer != "True":
            continue
        real = os.path.realpath(executable)
        if real != own:
            seen.setdefault(real, candidate)
    return sorted(seen.values())


def load_by_path(python: str) -> Dict[str, object]:
    process = subprocess.run(
        [python, "-I", "-c", LOADER, str(RUNTIME), VALID, INVALID],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout)


def check_loaded(result: Dict[str, object]) -> None:
    assert result["registered"] is False  # the module really was never in sys.modules
    assert result["valid"] is True
    assert result["summary"] == "Loaded by path."
    assert result["codes"] == ["EV104"]  # stack, status and summary are missing
    assert result["equal"] is True
    assert result["index"].endswith("\n- [[a]]: First.\n- [[b]]: Second.\n")  # type: ignore[union-attr]


def test_the_runtime_loads_from_its_path_alone() -> None:
    result = load_by_path(sys.executable)
    assert result["python"] == list(sys.version_info[:2])
    check_loaded(result)


@pytest.mark.parametrize("python", other_interpreters())
def test_the_runtime_loads_from_its_path_alone_on_other_pythons(python: str) -> None:
    check_loaded(load_by_path(python))
