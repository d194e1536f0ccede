"""Run many runtime commands in one process, each with a file of the workspace set to chosen
bytes first, and report every answer that is a traceback or an `internal` error.

`python many_commands.py PLAN`: PLAN is a JSON file with `runtime` (the project runtime, loaded
from its path as it runs from there), `workspace`, `file` (workspace-relative), `contents`
(name -> base64 bytes; `null` removes the file), `commands` (argument lists, each with an
optional payload) and `remove` (files to delete before each command). It prints one JSON list
of problems. Spawning an interpreter per command would cost about 80 ms each; `main()` is meant
to be called in-process and never raises. Stdlib only, like the runtime.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import os
import sys
from typing import Any, Dict, List, Optional, Tuple


def load(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("echoes_vault_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call(runtime: Any, argv: List[str], payload: Optional[str]) -> Tuple[Any, str, str]:
    """(exit code or the exception that escaped, stdout, stderr) of one `main(argv)`."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(payload or ""), out, err
    try:
        code: Any = runtime.main(argv)
    except BaseException as error:  # main() must never raise: report it
        code = f"raised {type(error).__name__}"
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def put(path: str, data: Optional[bytes]) -> None:
    """The file at `path` holding exactly `data` (None: no file), whatever is there now."""
    if os.path.isdir(path) and not os.path.islink(path):
        import shutil

        shutil.rmtree(path)
    elif os.path.lexists(path):
        if data is not None and os.path.getsize(path) == len(data):
            with open(path, "rb") as handle:
                if handle.read() == data:
                    return
        os.unlink(path)
    if data is not None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)


def problem_of(code: Any, out: str, err: str) -> Optional[str]:
    if not isinstance(code, int):
        return str(code)
    if "Traceback" in out or "Traceback" in err:
        return "a traceback"
    if code not in (0, 2):
        return f"exit code {code}"
    if code == 2:
        try:
            answer = json.loads(err.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return f"an error that is not the JSON shape: {err[-300:]!r}"
        if answer.get("code") == "internal":
            return f"internal: {answer.get('error')}"
    return None


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        plan: Dict[str, Any] = json.load(handle)
    runtime = load(plan["runtime"])
    workspace = plan["workspace"]
    target = os.path.join(workspace, plan["file"])
    problems = []
    for name, encoded in plan["contents"].items():
        data = None if encoded is None else base64.b64decode(encoded)
        for item in plan["commands"]:
            for rel in plan.get("remove", []):
                put(os.path.join(workspace, rel), None)
            put(target, data)
            argv = ["--workspace", workspace, *item["argv"]]
            code, out, err = call(runtime, argv, item.get("payload"))
            found = problem_of(code, out, err)
            if found is not None:
                problems.append({"content": name, "argv": item["argv"], "problem": found})
    print(json.dumps(problems))


if __name__ == "__main__":
    main()
