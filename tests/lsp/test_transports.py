"""`echoes-lsp serve --tcp` and `--ws` answer `initialize` like the stdio server."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict

import pytest

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(flag: str, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "echoes_lsp", "serve", flag, f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def connect(port: int, deadline: float) -> socket.socket:
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def read_message(stream: Any) -> Dict[str, Any]:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise AssertionError("connection closed before a response")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value.strip())
    return json.loads(stream.read(length))  # type: ignore[no-any-return]


def test_tcp_transport(tmp_path: Path) -> None:
    port = free_port()
    server = start("--tcp", port)
    try:
        with connect(port, time.monotonic() + 20) as connection:
            body = json.dumps(INITIALIZE).encode("utf-8")
            connection.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            reply = read_message(connection.makefile("rb"))
        assert reply["id"] == 1
        assert reply["result"]["serverInfo"]["name"] == "echoes-lsp"
        assert "executeCommandProvider" in reply["result"]["capabilities"]
    finally:
        server.kill()
        server.wait(10)


def test_websocket_transport() -> None:
    websockets = pytest.importorskip("websockets.asyncio.client")
    port = free_port()
    server = start("--ws", port)

    async def exchange() -> Dict[str, Any]:
        deadline = time.monotonic() + 20
        while True:
            try:
                async with websockets.connect(f"ws://127.0.0.1:{port}") as connection:
                    await connection.send(json.dumps(INITIALIZE))
                    return json.loads(await asyncio.wait_for(connection.recv(), 20))  # type: ignore[no-any-return]
            except OSError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)

    try:
        reply = asyncio.run(exchange())
        assert reply["id"] == 1
        assert reply["result"]["serverInfo"]["name"] == "echoes-lsp"
    finally:
        server.kill()
        server.wait(10)


def test_bad_address_is_a_usage_error() -> None:
    process = subprocess.run(
        [sys.executable, "-m", "echoes_lsp", "serve", "--tcp", "no-port"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert process.returncode == 2
    assert "HOST:PORT" in process.stderr
