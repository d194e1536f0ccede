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
from typing import Any, Awaitable, Callable, Dict, Optional, TypeVar

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
    one message and returns the next message received (or, with `answered=False`, only sends
    it; with None, only receives)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            async with websockets.connect(f"ws://127.0.0.1:{port}") as connection:

                async def ask(text: Optional[str], answered: bool = True) -> Dict[str, Any]:
                    if text is not None:  # None: the next message, sending nothing
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


PAGE = "---\ntype: note\nstack: []\nstatus: active\nsummary: Folds.\n---\n\n# Title\n\nText.\n"


def page_messages(root: Path) -> Dict[str, Any]:
    """`initialize` for a vault in `root`, and the messages that open one page of it and ask
    for its folding ranges (an answer the server writes as JSON text of its own)."""
    page = root / "EchoesVault" / "pages" / "folds.md"
    page.parent.mkdir(parents=True)
    page.write_text(PAGE, encoding="utf-8")
    uri = page.as_uri()
    document = {"uri": uri, "languageId": "markdown", "version": 1, "text": PAGE}
    return {
        "initialize": {**INITIALIZE, "params": {"capabilities": {}, "rootUri": root.as_uri()}},
        "initialized": {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        "open": {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": document},
        },
        "folds": {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "textDocument/foldingRange",
            "params": {"textDocument": {"uri": uri}},
        },
    }


# The page's frontmatter (lines 0-5, imports) and its section (lines 7-9, region).
FOLDS = [
    {"startLine": 0, "endLine": 5, "startCharacter": 3, "endCharacter": 3, "kind": "imports"},
    {"startLine": 7, "endLine": 9, "startCharacter": 7, "endCharacter": 5, "kind": "region"},
]


def test_an_answer_written_as_json_text_crosses_tcp_whole(tmp_path: Path) -> None:
    messages = page_messages(tmp_path)
    port = free_port()
    server = start("--tcp", port)
    try:
        with connect(port, time.monotonic() + 20) as connection:
            stream = connection.makefile("rb")
            for name in ("initialize", "initialized", "open", "folds"):
                connection.sendall(frame(messages[name]))
            answer = read_message(stream)
            while answer.get("id") != 2:  # the initialize answer, notifications
                answer = read_message(stream)
        assert answer == {"id": 2, "jsonrpc": "2.0", "result": FOLDS}
    finally:
        server.kill()
        server.wait(10)


def test_an_answer_written_as_json_text_is_one_websocket_message(tmp_path: Path) -> None:
    websockets = pytest.importorskip("websockets.asyncio.client")
    messages = page_messages(tmp_path)
    port = free_port()
    server = start("--ws", port)

    async def exchange(ask: Ask) -> Dict[str, Any]:
        await ask(json.dumps(messages["initialize"]))
        for name in ("initialized", "open"):
            await ask(json.dumps(messages[name]), answered=False)
        answer = await ask(json.dumps(messages["folds"]))
        while answer.get("id") != 2:  # notifications sent meanwhile
            answer = await ask(None)
        return answer

    try:
        answer = asyncio.run(over_websocket(websockets, port, exchange))
        assert answer == {"id": 2, "jsonrpc": "2.0", "result": FOLDS}
    finally:
        server.kill()
        server.wait(10)
