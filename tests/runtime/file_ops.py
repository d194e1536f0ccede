"""A program run with a Python audit hook (PEP 578, stdlib) that acts at a chosen file operation.

Races and crashes happen between two file operations; a test that waits a while before acting
depends on the machine's speed. Here the program itself (the runtime, or `echoes-lsp check`) is
run unchanged through `runpy`, and the hook picks the moment by what the program does:

- `log`: write every file change it makes under `within` (each open for writing, rename, link,
  removal, new directory, rmdir) to a JSON file, in order;
- `kill`: SIGKILL the process just before its change number `kill` (counted from 0);
- `fifo`: replace the file `fifo` by a FIFO just before the program first opens it, as another
  process could between a directory listing and the read that follows it.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

HOOK = r"""
import json, os, runpy, signal, sys

plan = json.loads(sys.argv[1])
within = os.path.join(plan["within"], "")
changes = []
busy = []
WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
CHANGES = {"os.rename", "os.link", "os.remove", "os.mkdir", "os.rmdir", "os.truncate"}


def inside(path, relative_ok):
    if isinstance(path, int):
        return False
    path = os.fsdecode(path)
    if not os.path.isabs(path):
        return relative_ok
    return path.startswith(within)


def changed_paths(event, args):
    if event == "open":
        path, mode, flags = args[0], args[1], args[2] or 0
        writes = (flags & WRITING) or (mode and any(c in str(mode) for c in "wax+"))
        return [path] if writes else []
    if event == "os.mkdir" and os.path.isdir(args[0]):
        return []  # an existing directory: nothing changes
    if event in CHANGES:
        return [a for a in args if isinstance(a, (str, bytes, os.PathLike))]
    return []


def hook(event, args):
    if busy:
        return
    busy.append(True)
    try:
        act(event, args)
    finally:
        busy.pop()


def act(event, args):
    if event == "open" and plan.get("fifo") and args[0] == plan["fifo"]:
        fifo, plan["fifo"] = plan["fifo"], None
        os.unlink(fifo)
        os.mkfifo(fifo)
    paths = changed_paths(event, args)
    if not paths or not any(inside(p, True) for p in paths):
        return
    if plan.get("kill") == len(changes):
        os.kill(os.getpid(), signal.SIGKILL)
    changes.append([event] + [os.fsdecode(p) for p in paths])


def save_log():
    busy.append(True)
    with open(plan["log"], "w") as out:
        json.dump(changes, out)


if plan.get("log"):
    import atexit
    atexit.register(save_log)
sys.addaudithook(hook)
del sys.argv[:2]
if sys.argv[0] == "-m":
    del sys.argv[0]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:
    runpy.run_path(sys.argv[0], run_name="__main__")
"""


def hooked(
    python: str,
    program: Sequence[str],
    within: str,
    log: Optional[str] = None,
    kill: Optional[int] = None,
    fifo: Optional[str] = None,
) -> List[str]:
    """The command line that runs `program` (a script and its arguments, or `-m module ...`)
    with `python` and the hook."""
    plan: Dict[str, Any] = {"within": within, "log": log, "kill": kill, "fifo": fifo}
    return [python, "-c", HOOK, json.dumps(plan), *program]


def read_log(path: str) -> List[Tuple[str, ...]]:
    """The file changes a run logged: (event, path, ...) in the order they were made."""
    with open(path, encoding="utf-8") as log:
        return [tuple(change) for change in json.load(log)]


def is_at(change: Tuple[str, ...], event: str, name: str) -> bool:
    """Whether a logged change is `event` with its last path named `name`."""
    return change[0] == event and os.path.basename(change[-1]) == name
