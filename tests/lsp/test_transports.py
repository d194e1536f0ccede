"""`echoes-lsp serve --tcp` and `--ws` answer `initialize` like the stdio server, and keep its
rules: a bad frame or message never ends the conversation, every request gets a response, and
`exit` without `shutdown` exits with 1."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, TypeVar

import pytest

T = TypeVar("T")
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


Ask = Callable[..., Awaitable[Dict[str, Any]]]


async def over_websocket(websockets: Any, port: int, exchange: Callable[[Ask], Awaitable[T]]) -> T:
    """Connect (retrying while the server starts) and run `exchange` with an `ask` that sends
    one message and returns the answer (or, with `answered=False`, only sends it)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            async with websockets.connect(f"ws://127.0.0.1:{port}") as connection:

                async def ask(text: str, answered: bool = True) -> Dict[str, Any]:
                    await connection.send(text)
                    if not answered:
                        return {}
                    return json.loads(await asyncio.wait_for(connection.recv(), 20))  # type: ignore[no-any-return]

                return await exchange(ask)
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


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

    async def exchange(ask: Ask) -> Dict[str, Any]:
        return await ask(json.dumps(INITIALIZE))

    try:
        reply = asyncio.run(over_websocket(websockets, port, exchange))
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


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_tcp_resynchronizes_after_a_bad_frame_and_answers_every_request() -> None:
    port = free_port()
    server = start("--tcp", port)
    try:
        with connect(port, time.monotonic() + 20) as connection:
            stream = connection.makefile("rb")
            early = {"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {}}
            connection.sendall(frame(early))
            assert read_message(stream)["error"]["code"] == -32002
            connection.sendall(b"Content-Length: banana\r\n\r\n{}" + frame(INITIALIZE))
            assert read_message(stream)["id"] == 1
            connection.sendall(b"Content-Length: 9\r\n\r\n{not json")
            assert read_message(stream)["error"]["code"] == -32700
            connection.sendall(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert server.wait(20) == 1  # exit without shutdown
    finally:
        server.kill()
        server.wait(10)


def test_websocket_messages_follow_the_same_rules() -> None:
    websockets = pytest.importorskip("websockets.asyncio.client")
    port = free_port()
    server = start("--ws", port)

    async def exchange(ask: Ask) -> Dict[str, Dict[str, Any]]:
        early = {"jsonrpc": "2.0", "id": 7, "method": "shutdown"}
        answers = {
            "early": await ask(json.dumps(early)),
            "broken": await ask("{not json"),
            "initialize": await ask(json.dumps(INITIALIZE)),
        }
        hover = {"jsonrpc": "2.0", "id": 8, "method": "textDocument/hover"}
        answers["typed"] = await ask(json.dumps({**hover, "params": "x"}))
        await ask(json.dumps({"jsonrpc": "2.0", "method": "exit"}), answered=False)
        return answers

    try:
        answers = asyncio.run(over_websocket(websockets, port, exchange))
        assert answers["early"]["error"]["code"] == -32002
        assert answers["broken"]["error"]["code"] == -32700
        assert answers["initialize"]["id"] == 1
        assert answers["typed"]["error"]["code"] == -32602
        assert server.wait(20) == 1
    finally:
        server.kill()
        server.wait(10)
