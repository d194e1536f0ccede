"""The built wheel, shared by the packaging tests: `ECHOES_WHEEL` when set (the release workflow
tests the wheel it publishes), else one built from this checkout with `python -m build`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300


def clean_env(**extra: str) -> Dict[str, str]:
    """The environment of a process that must not see this checkout or its virtual environment."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Path, str]:
    """(wheel, output of the build: empty when the wheel was given)."""
    given = os.environ.get("ECHOES_WHEEL")
    if given:
        return Path(given).resolve(), ""
    out = tmp_path_factory.mktemp("wheel")
    # Byte-compiling left on, so that no warning comes from this machine's settings.
    env = clean_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    build = subprocess.run(
        # The sdist first, then the wheel from it: as a release builds it, and no stale `build/`
        # folder of the checkout can add files.
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        check=False,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,) = out.glob("echoes_lsp-*-py3-none-any.whl")
    return wheel, build.stdout + build.stderr


def lsp_initialize(
    command: List[str], cwd: Path, env: Optional[Dict[str, str]] = None
) -> Dict[str, Any]:
    """Starts `command` (a server over stdio), sends `initialize`, returns the result, stops it."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    # A server that never answers is killed, so the read below ends (and the test fails).
    watchdog = threading.Timer(120, process.kill)
    watchdog.start()
    try:
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": cwd.as_uri(), "capabilities": {}},
            }
        ).encode()
        process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        process.stdin.flush()
        headers = b""
        while not headers.endswith(b"\r\n\r\n"):
            byte = process.stdout.read(1)
            assert byte, (
                f"the server closed its output: {process.communicate(timeout=10)[1][-2000:]!r}"
            )
            headers += byte
        length = int(headers.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        message: Dict[str, Any] = json.loads(process.stdout.read(length))
        assert message.get("id") == 1, message
        return message["result"]
    finally:
        watchdog.cancel()
        process.kill()
        process.communicate(timeout=30)
