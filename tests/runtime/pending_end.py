"""An `end` that took effect and was then killed: its journal on disk, nothing else yet. Shared
by the runtime's, `check`'s and the server's tests of what the next writer makes of it."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

from .file_ops import hooked, is_at, read_log

PAGE = "---\ntype: note\nstack: []\nstatus: active\nsummary: {}\n---\n\n# Notes\n\n{}\n"
RUNTIME = Path(__file__).resolve().parents[2] / "runtime" / "echoes_vault.py"


def new_project(root: Path) -> Path:
    """A Git repository at `root` with an initialized vault holding the page `notes.md`."""
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([sys.executable, str(RUNTIME), "--workspace", str(root), "init"],
                   check=True, capture_output=True)  # fmt: skip
    runtime_json(root, "upsert", "--payload", "-",
                 payload={"filename": "notes.md", "content": PAGE.format("Notes.", "First.")})  # fmt: skip
    return root


def runtime_json(workspace: Path, *args: str, payload: Any = None) -> Dict[str, Any]:
    """One command of the workspace's project runtime, which must succeed; its JSON."""
    done = subprocess.run(
        [sys.executable, str(workspace / ".echoes-vault/echoes_vault.py"), "--workspace",
         str(workspace), *args],
        input=json.dumps(payload).encode() if payload is not None else b"",
        capture_output=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def end_killed_after_its_journal(workspace: Path, scratch: Path, name: str, text: str) -> None:
    """An `end` replacing the page `name` with `text`, SIGKILLed just after its journal was
    placed (the change is found by running the same `end` on a copy first)."""
    item = {"filename": name, "content": text,
            "expectedSha256": runtime_json(workspace, "hash", name)["sha256"]}  # fmt: skip
    payload = scratch / "end.json"
    payload.write_text(json.dumps({"dailySummary": "- The session.", "pages": [item]}))
    args = ["end", "--confirm-explicit-user-end", "--payload", str(payload)]

    def run(root: Path, **plan: Any) -> subprocess.CompletedProcess:
        program = [str(root / ".echoes-vault/echoes_vault.py"), "--workspace", str(root), *args]
        command = hooked(sys.executable, program, str(root), **plan)
        return subprocess.run(command, capture_output=True, check=False, timeout=60)

    probe = scratch / "probe"
    shutil.copytree(workspace, probe, symlinks=True)
    assert run(probe, log=str(scratch / "log.json")).returncode == 0
    changes = read_log(str(scratch / "log.json"))
    journal = next(n for n, c in enumerate(changes) if is_at(c, "os.rename", "end-journal.json"))
    assert run(workspace, kill=journal + 1).returncode == -signal.SIGKILL
    assert (workspace / ".echoes-vault/end-journal.json").exists()
