"""A message nested too deep to decode gets one -32700 answer, and the conversation goes on, over
stdio, TCP and WebSocket. A 2 KB frame of 1,000 nested arrays used to end `serve` with a
RecursionError, and over TCP and WebSocket no later message was answered."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Dict

import pytest

from .test_transports import (
    INITIALIZE,
    Ask,
    connect,
    free_port,
    over_websocket,
    read_message,
    start,
)
from .test_wire import Wire, frame, hover, wire  # noqa: F401  (`wire` is a fixture)

DEEP = {
    "params-1000": b'{"jsonrpc": "2.0", "id": 41, "method": "textDocument/hover", "params": '
    + b"[" * 1000
    + b"]" * 1000
    + b"}",
    "body-100000": b"[" * 100_000 + b"]" * 100_000,
    "unclosed-100000": b'{"a": ' * 100_000,
}


def raw_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize("case", sorted(DEEP))
def test_stdio_answers_a_deep_message_once_and_goes_on(wire: Wire, case: str) -> None:  # noqa: F811
    wire.initialize()
    wire.write(raw_frame(DEEP[case]) + frame(hover(7)))
    error = wire.response(None)["error"]
    assert error["code"] == -32700, error
    assert error["message"].startswith("a body that cannot be decoded: it"), error
    assert "deeper than 64 levels" in error["message"], error
    assert wire.response(7) == {"jsonrpc": "2.0", "id": 7, "result": None}
    wire.send(hover(8))
    assert wire.response(8)["result"] is None
    assert wire.process.poll() is None
    assert b"Traceback" not in (wire.workspace / "server.log").read_bytes()


def answer(stream: Any) -> Dict[str, Any]:
    """The next response, past the notifications sent meanwhile."""
    message = read_message(stream)
    while "method" in message:
        message = read_message(stream)
    return message


def test_tcp_answers_a_deep_message_once_and_goes_on() -> None:
    port = free_port()
    server = start("--tcp", port)
    try:
        with connect(port, time.monotonic() + 20) as connection:
            stream = connection.makefile("rb")
            connection.sendall(frame(INITIALIZE))
            assert answer(stream)["id"] == 1
            for case in sorted(DEEP):
                connection.sendall(raw_frame(DEEP[case]))
                assert answer(stream)["error"]["code"] == -32700, case
            connection.sendall(frame(hover(9)))
            assert answer(stream) == {"jsonrpc": "2.0", "id": 9, "result": None}
        assert server.poll() is None
    finally:
        server.kill()
        server.wait(10)


def test_websocket_answers_a_deep_message_once_and_goes_on() -> None:
    websockets = pytest.importorskip("websockets.asyncio.client")
    port = free_port()
    server = start("--ws", port)

    async def exchange(ask: Ask) -> Dict[str, Any]:
        answers: Dict[str, Any] = {"initialize": await ask(json.dumps(INITIALIZE))}
        answers["deep"] = await ask(DEEP["params-1000"].decode())
        after = await ask(json.dumps(hover(9)))
        while "method" in after:  # notifications sent meanwhile
            after = await ask(None)
        answers["after"] = after
        return answers

    try:
        answers = asyncio.run(over_websocket(websockets, port, exchange))
        assert answers["initialize"]["id"] == 1
        assert answers["deep"]["error"]["code"] == -32700
        assert answers["after"] == {"jsonrpc": "2.0", "id": 9, "result": None}
        assert server.poll() is None
    finally:
        server.kill()
        server.wait(10)
