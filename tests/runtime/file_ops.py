"""Run a program with a Python audit hook (PEP 578, stdlib) that acts at a chosen file operation.

Races and crashes happen between two file operations; a test that waits a while before acting
depends on the machine's speed. Run as a script, this file runs the program (the runtime, or
`echoes-lsp check` with `-m echoes_lsp`) unchanged through `runpy`, and its hook picks the moment
by what the program does:

- `log`: write every file change it makes under `within` (each open for writing, rename, link,
  removal, new directory, rmdir) to a JSON file, in order;
- `kill`: SIGKILL the process just before its change number `kill` (counted from 0);
- `term`: SIGTERM it just before its change number `term`, as a client that gives up does;
- `fifo`: replace the file `fifo` by a FIFO just before the program first opens it, as another
  process could between a directory listing and the read that follows it;
- `fail`: make every write of the file named `fail["name"]` fail, through the temporary file the
  runtime writes it with: `fail["how"]` is `fsize` (the process's file-size limit, RLIMIT_FSIZE,
  is 0 while it writes: EFBIG, "File too large") or `full` (the file system is filled to its last
  byte by the file `fail["filler"]` while it writes: ENOSPC). The limit or the filler goes at
  the program's next file operation.

Stdlib only and Python 3.9, like the runtime it runs.
"""

from __future__ import annotations

import errno
import json
import os
import runpy
import signal
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

SCRIPT = os.path.abspath(__file__)
WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
CHANGES = {"os.rename", "os.link", "os.remove", "os.mkdir", "os.rmdir", "os.truncate"}


def hooked(
    python: str,
    program: Sequence[str],
    within: str,
    log: Optional[str] = None,
    kill: Optional[int] = None,
    fifo: Optional[str] = None,
    term: Optional[int] = None,
    fail: Optional[Dict[str, str]] = None,
) -> List[str]:
    """The command line that runs `program` (a script and its arguments, or `-m module ...`)
    with `python` under the hook."""
    plan: Dict[str, Any] = {
        "within": within, "log": log, "kill": kill, "fifo": fifo, "term": term, "fail": fail
    }  # fmt: skip
    return [python, SCRIPT, json.dumps(plan), *program]


def read_log(path: str) -> List[Tuple[str, ...]]:
    """The file changes a run logged: (event, path, ...) in the order they were made."""
    with open(path, encoding="utf-8") as log:
        return [tuple(change) for change in json.load(log)]


def is_at(change: Tuple[str, ...], event: str, name: str) -> bool:
    """Whether a logged change is `event` with its last path named `name`."""
    return change[0] == event and os.path.basename(change[-1]) == name


def changed_paths(event: str, args: Tuple[Any, ...]) -> List[Any]:
    """The paths a file operation changes; none for a read or an existing directory."""
    if event == "open":
        mode, flags = args[1], args[2] or 0
        writes = (flags & WRITING) or (mode and any(c in str(mode) for c in "wax+"))
        return [args[0]] if writes and not isinstance(args[0], int) else []
    if event == "os.mkdir" and os.path.isdir(args[0]):
        return []
    if event in CHANGES:
        return [a for a in args if isinstance(a, (str, bytes, os.PathLike))]
    return []


class Hook:
    """The audit hook: the plan, and the changes seen so far."""

    def __init__(self, plan: Dict[str, Any]) -> None:
        self.plan = plan
        self.within = os.path.join(plan["within"], "")
        self.changes: List[List[str]] = []
        self.busy = False  # the hook's own file operations are not the program's
        self.undo: Optional[Callable[[], None]] = None  # ends a `fail` at the next operation

    def __call__(self, event: str, args: Tuple[Any, ...]) -> None:
        if self.busy:
            return
        self.busy = True
        try:
            self.act(event, args)
        finally:
            self.busy = False

    def inside(self, path: Any) -> bool:
        path = os.fsdecode(path)
        return not os.path.isabs(path) or path.startswith(self.within)

    def act(self, event: str, args: Tuple[Any, ...]) -> None:
        if self.undo is not None and not (event == "open" and self.failing(args)):
            self.undo()
            self.undo = None
        fail = self.plan.get("fail")
        if fail and event == "open" and self.failing(args) and self.undo is None:
            self.undo = start_failure(fail)
        fifo = self.plan.get("fifo")
        if event == "open" and fifo and args[0] == fifo:
            self.plan["fifo"] = None
            os.unlink(fifo)
            os.mkfifo(fifo)
        paths = changed_paths(event, args)
        if not any(self.inside(path) for path in paths):
            return
        if self.plan.get("kill") == len(self.changes):
            os.kill(os.getpid(), signal.SIGKILL)
        if self.plan.get("term") == len(self.changes):
            self.plan["term"] = None
            os.kill(os.getpid(), signal.SIGTERM)
        self.changes.append([event, *(os.fsdecode(path) for path in paths)])

    def failing(self, args: Tuple[Any, ...]) -> bool:
        """Whether an open is of the temporary file the `fail` target is written through."""
        fail = self.plan.get("fail")
        if not fail or isinstance(args[0], int) or not changed_paths("open", args):
            return False
        name = os.path.basename(os.fsdecode(args[0]))
        return name.startswith(f".{fail['name']}.") and name.endswith(".echoes-tmp")

    def save(self) -> None:
        self.busy = True
        with open(self.plan["log"], "w", encoding="utf-8") as out:
            json.dump(self.changes, out)


def start_failure(fail: Dict[str, str]) -> Callable[[], None]:
    """Make the next writes fail as `fail` says; the function that ends it."""
    if fail["how"] == "fsize":
        import resource

        limits = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, limits[1]))  # writes fail with EFBIG
        return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, limits)
    filler = fail["filler"]
    with open(filler, "wb", buffering=0) as out:
        chunk = b"\0" * 65536
        try:
            while True:
                out.write(chunk)
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
        try:  # the last bytes a 64 KiB write did not fit
            while True:
                out.write(b"\0")
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
    return lambda: os.unlink(filler)


def main() -> None:
    """`file_ops.py PLAN SCRIPT ARGS...` or `file_ops.py PLAN -m MODULE ARGS...`."""
    hook = Hook(json.loads(sys.argv[1]))
    if hook.plan.get("log"):
        import atexit

        atexit.register(hook.save)
    del sys.argv[:2]
    sys.addaudithook(hook)
    if sys.argv[0] == "-m":
        del sys.argv[0]
        sys.path[0] = os.getcwd()  # as `python -m` has it
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))  # as `python SCRIPT` has it
        runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
