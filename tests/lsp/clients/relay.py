"""Relay LSP between an editor and echoes-lsp, logging every message: how the captured
`initialize` parameters in this folder were recorded.

    ECHOES_RELAY_LOG=/tmp/lsp.jsonl python relay.py      # as the editor's server command

Each line of the log is `{"dir": "c2s" | "s2c", "msg": <the JSON-RPC message>}`. The server run is
`echoes-lsp serve` unless ECHOES_RELAY_SERVER names another command line.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
from typing import IO, Dict, Optional

LOG = os.environ.get("ECHOES_RELAY_LOG", "lsp-relay.jsonl")
SERVER = shlex.split(os.environ.get("ECHOES_RELAY_SERVER", "echoes-lsp serve"))
lock = threading.Lock()


def record(direction: str, body: bytes) -> None:
    try:
        message = json.loads(body)
    except ValueError:
        message = {"unreadable": body.decode("utf-8", "replace")}
    with lock, open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps({"dir": direction, "msg": message}) + "\n")


def read_frame(source: IO[bytes]) -> Optional[bytes]:
    """One message's body, or None at the end of the stream."""
    headers: Dict[str, str] = {}
    while True:
        line = source.readline()
        if not line:
            return None
        if not line.strip():
            break
        name, _, value = line.decode("ascii").partition(":")
        headers[name.strip().lower()] = value.strip()
    return source.read(int(headers.get("content-length", "0")))


def pump(source: IO[bytes], sink: IO[bytes], direction: str) -> None:
    while True:
        body = read_frame(source)
        if body is None:
            sink.close()
            return
        record(direction, body)
        sink.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sink.flush()


def main() -> int:
    server = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    threading.Thread(target=pump, args=(sys.stdin.buffer, server.stdin, "c2s"), daemon=True).start()
    pump(server.stdout, sys.stdout.buffer, "s2c")
    return server.wait()


if __name__ == "__main__":
    sys.exit(main())
