"""Every mutation goes through the project's runtime, run as an argument list with a timeout.

The bundled runtime is used only to bootstrap (`init`) a project that has none.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

from .runtime import echoes_vault as rules

BOOTSTRAP_COMMANDS = ("init", "migrate", "upgrade", "protocol")
DEFAULT_AGENT = "echoes-lsp"


class RuntimeFailure(Exception):
    """The runtime refused or failed. `code` is the runtime's error kind when it gave one."""

    def __init__(self, message: str, code: str = "runtime", exit_code: Optional[int] = None):
        message = rules.mask_secrets(message)  # an older runtime's stderr may quote anything
        super().__init__(message)
        self.message = message
        self.code = code
        self.exit_code = exit_code


class RuntimeCall(NamedTuple):
    workspace: str
    python: Optional[str] = None
    timeout: float = 30.0
    agent: str = DEFAULT_AGENT
    adapter_version: str = ""


def bundled_runtime() -> str:
    return os.path.abspath(rules.__file__)


def project_runtime(workspace: str) -> Optional[str]:
    """`.echoes-vault/echoes_vault.py` when it is a regular file inside the workspace."""
    path = os.path.join(workspace, rules.RUNTIME_DIR, "echoes_vault.py")
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if not stat.S_ISREG(mode):
        return None
    real = os.path.realpath(path)
    if not real.startswith(os.path.realpath(workspace) + os.sep):
        return None
    return path


def runtime_for(workspace: str, command: str) -> str:
    """The project runtime when there is one; the bundled one only to bootstrap."""
    found = project_runtime(workspace)
    if found:
        return found
    if command in BOOTSTRAP_COMMANDS:
        return bundled_runtime()
    raise RuntimeFailure(
        "this project has no EchoesVault runtime (.echoes-vault/echoes_vault.py); "
        "run `echoes-lsp init` in the project (or the editor command `echoes.init`) first",
        "not-initialized",
    )


def build_args(call: RuntimeCall, args: Sequence[str]) -> List[str]:
    from . import __version__

    runtime = runtime_for(call.workspace, args[0])
    return [
        call.python or sys.executable,
        runtime,
        "--workspace",
        call.workspace,
        "--agent",
        call.agent,
        "--adapter-version",
        call.adapter_version or __version__,
        *args,
    ]


def run(call: RuntimeCall, args: Sequence[str], payload: Optional[Dict[str, Any]] = None) -> Any:
    """Run one runtime command. Returns parsed JSON, or the Markdown text for Markdown output."""
    import subprocess  # here: a check that fixes nothing never starts the runtime

    argv = build_args(call, args)
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            cwd=call.workspace,
        )
    except OSError as error:
        raise RuntimeFailure(f"cannot start the runtime: {error}", "spawn") from error
    data = json.dumps(payload, ensure_ascii=False) if payload is not None else None
    try:
        out, err = process.communicate(data, timeout=call.timeout)
    except subprocess.TimeoutExpired as error:
        stop(process)
        raise RuntimeFailure(
            f"the runtime did not answer within {call.timeout:g} s ({args[0]})", "timeout"
        ) from error
    except BaseException:
        stop(process)
        raise
    if process.returncode != 0:
        message, code = _error_of(err, process.returncode)
        raise RuntimeFailure(message, code, process.returncode)
    stripped = out.lstrip()
    if stripped.startswith("{"):
        try:
            return rules.load_json(out, OUTPUT_LIMIT)
        except rules.BadJson:
            pass
    return out


# The runtime's answer is read with the runtime's own bounded reader: a project runtime is a file
# in the repository, and what it prints must not be able to exhaust the server's stack.
OUTPUT_LIMIT = 256 * 1024 * 1024


def warnings_of(result: Any) -> List[str]:
    """The messages of a successful result's `warnings`: what went wrong after the command had
    taken effect, or what it found left by an earlier writer (engine 1.6.0 and later). Each is
    a sentence for people, masked; a result without warnings, or Markdown, has none."""
    found = result.get("warnings") if isinstance(result, dict) else None
    if not isinstance(found, list):
        return []
    messages = []
    for item in found:
        message = item.get("message") if isinstance(item, dict) else item
        if isinstance(message, str) and message:
            messages.append(rules.mask_secrets(message))
    return messages


STOP_GRACE = 3.0  # seconds a terminated runtime has to release its lock before it is killed


def stop(process: Any, grace: float = STOP_GRACE) -> None:
    """Stop a runtime politely: SIGTERM lets it release `.echoes-vault/lock` and remove its
    temporary file; only one that does not exit within `grace` seconds is killed."""
    import subprocess

    if process.poll() is None:
        process.terminate()
        try:
            process.communicate(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            process.kill()
    process.communicate()


def _error_of(stderr: str, exit_code: int) -> tuple[str, str]:
    for line in reversed(stderr.strip().splitlines()):
        try:
            data = rules.load_json(line, OUTPUT_LIMIT)
        except rules.BadJson:
            continue
        if isinstance(data, dict) and "error" in data:
            return str(data["error"]), str(data.get("code") or "runtime")
    text = stderr.strip() or f"the runtime exited with code {exit_code}"
    return text[-2000:], "runtime"


def run_bundled(argv: Sequence[str]) -> int:
    """`echoes-lsp runtime ...`: the bundled runtime, with this Python, in this process' stdio."""
    import subprocess

    process = subprocess.run([sys.executable, bundled_runtime(), *argv], check=False)
    return process.returncode
