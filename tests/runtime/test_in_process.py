"""`main()` called in-process with text streams that have no `.buffer` (output captured in
memory): it returns an exit code and writes the same JSON, never raises."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import List, Tuple

from echoes_lsp.runtime import echoes_vault as ev

from .conftest import make_repo, page


def call(args: List[str], stdin: str = "") -> Tuple[int, str, str]:
    """main() with in-memory text streams (set here, in the test body, where pytest's own
    capture does not replace them)."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        code = ev.main(args)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def test_main_returns_codes_with_in_memory_streams(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    workspace = ["--workspace", str(root)]
    code, out, err = call([*workspace, "init"])
    assert code == 0 and err == "" and json.loads(out)["ok"] is True
    # the project runtime is now a copy of this file: the next calls are relayed through it
    code, out, err = call([*workspace, "status"])
    assert code == 0 and err == "" and json.loads(out)["vault"] == str(root / "EchoesVault")
    payload = json.dumps({"filename": "p.md", "content": page("In memory.")})
    code, out, err = call([*workspace, "upsert", "--payload", "-"], payload)
    assert code == 0 and json.loads(out)["action"] == "created", err
    code, out, err = call([*workspace, "hash", "missing"])
    assert code == 2 and out == ""
    assert json.loads(err)["code"] == "not-found"


def test_main_errors_and_help_in_memory(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    code, out, err = call(["--workspace", str(root), "search", "x"])
    assert code == 2 and out == "" and json.loads(err)["code"] == "not-initialized"
    code, out, err = call(["--workspace", str(root), "bogus"])
    assert code == 2 and json.loads(err)["code"] == "usage"
    code, out, err = call(["--help"])
    assert code == 0 and "usage:" in out and err == ""
