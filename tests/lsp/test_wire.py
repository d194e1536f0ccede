"""The server over raw stdio: bytes written by hand, frames good and bad.

One bad frame must never end the conversation, and every request gets an answer: -32602 for
params that do not fit their type, -32002 before `initialize`, and `exit` ends the process with 1
unless `shutdown` came first.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

WAIT = 30.0


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def hover(msg_id: int, params: Any = None) -> Dict[str, Any]:
    if params is None:
        params = {
            "textDocument": {"uri": "file:///nowhere/page.md"},
            "position": {"line": 0, "character": 0},
        }
    return {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover", "params": params}


class Wire:
    """A server process and a thread that splits what it writes into messages."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.stderr = (workspace / "server.log").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "echoes_lsp", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        self.messages: queue.Queue[Optional[Dict[str, Any]]] = queue.Queue()
        self.seen: List[Dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            self.messages.put(json.loads(stream.read(length)))

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        self.write(frame(message))

    def response(self, msg_id: Any) -> Dict[str, Any]:
        """The response with this id (None: an error without an id); notifications are kept."""
        for message in self.seen:
            if "method" not in message and message.get("id") == msg_id:
                self.seen.remove(message)
                return message
        while True:
            try:
                message = self.messages.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"no response to {msg_id!r} within {WAIT} s") from None
            if message is None:
                raise AssertionError(f"the server closed its output before answering {msg_id!r}")
            if "method" not in message and message.get("id") == msg_id:
                return message
            self.seen.append(message)

    def initialize(self) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": self.workspace.as_uri(),
                    "capabilities": {},
                },
            }
        )
        assert "result" in self.response(1)

    def exit_code(self) -> int:
        return self.process.wait(WAIT)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(WAIT)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self.stderr.close()


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[Wire]:
    connection = Wire(tmp_path)
    try:
        yield connection
    finally:
        connection.close()


BODY = json.dumps(hover(5)).encode("utf-8")
BAD_FRAMES = {
    "non-numeric length": b"Content-Length: abc\r\n\r\n" + BODY,
    "negative length": b"Content-Length: -12\r\n\r\n" + BODY,
    "missing length": b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + BODY,
    "empty length": b"Content-Length:\r\n\r\n" + BODY,
    "huge length": b"Content-Length: 99999999999999\r\n\r\n" + BODY,
    "body a little short": b"Content-Length: %d\r\n\r\n" % (len(BODY) + 30) + BODY,
    "body far too short": b"Content-Length: %d\r\n\r\n" % (len(BODY) + 5000) + BODY,
    "body too long": b"Content-Length: %d\r\n\r\n" % (len(BODY) - 7) + BODY,
    "invalid JSON": b"Content-Length: 9\r\n\r\n{not json",
    "garbage between frames": b"\x00\xff hello\r\n\r\n\r\n",
    "header without a blank line": b"Content-Length: 20\r\n" + BODY[:20],
}


@pytest.mark.parametrize("together", [True, False], ids=["one-write", "two-writes"])
@pytest.mark.parametrize("bad", list(BAD_FRAMES), ids=list(BAD_FRAMES))
def test_one_bad_frame_never_ends_the_conversation(wire: Wire, bad: str, together: bool) -> None:
    wire.initialize()
    if together:
        wire.write(BAD_FRAMES[bad] + frame(hover(7)))
    else:
        wire.write(BAD_FRAMES[bad])
        wire.send(hover(7))
    assert wire.response(7) == {"jsonrpc": "2.0", "id": 7, "result": None}
    wire.send(hover(8))
    assert wire.response(8)["result"] is None


@pytest.mark.parametrize("bad", ["body a little short", "body far too short"])
def test_a_request_in_a_short_frame_is_answered(wire: Wire, bad: str) -> None:
    wire.initialize()
    wire.write(BAD_FRAMES[bad] + frame(hover(7)))
    assert wire.response(5)["error"]["code"] == -32600
    assert wire.response(7)["result"] is None


def test_invalid_json_is_a_parse_error(wire: Wire) -> None:
    wire.initialize()
    wire.write(BAD_FRAMES["invalid JSON"])
    assert wire.response(None)["error"]["code"] == -32700
    wire.send([1, 2])
    assert wire.response(None)["error"]["code"] == -32600
    wire.send({"jsonrpc": "1.0", "id": 9, "method": "textDocument/hover", "params": {}})
    assert wire.response(9)["error"]["code"] == -32600
    wire.send({"jsonrpc": "2.0", "id": 11, "method": 5, "params": {}})
    assert wire.response(11)["error"]["code"] == -32600  # a method is a string
    wire.send(hover(10))
    assert wire.response(10)["result"] is None


POSITION_URI = {"uri": "file:///nowhere/page.md"}
ILL_TYPED = {
    "params a string": "hello",
    "params null": "null",
    "line a string": {"textDocument": POSITION_URI, "position": {"line": "3", "character": 0}},
    "negative line": {"textDocument": POSITION_URI, "position": {"line": -1, "character": 0}},
    "negative character": {"textDocument": POSITION_URI, "position": {"line": 0, "character": -4}},
    "character a float": {"textDocument": POSITION_URI, "position": {"line": 0, "character": 1.5}},
    "position missing": {"textDocument": POSITION_URI},
    "textDocument a number": {"textDocument": 3, "position": {"line": 0, "character": 0}},
}


@pytest.mark.parametrize("case", list(ILL_TYPED), ids=list(ILL_TYPED))
def test_ill_typed_params_get_invalid_params(wire: Wire, case: str) -> None:
    wire.initialize()
    params = ILL_TYPED[case]
    message = hover(20)
    message["params"] = None if params == "null" else params
    wire.send(message)
    error = wire.response(20)["error"]
    assert error["code"] == -32602
    assert "textDocument/hover" in error["message"]
    wire.send(hover(21))
    assert wire.response(21)["result"] is None


def test_params_missing_from_a_request_that_needs_them(wire: Wire) -> None:
    wire.initialize()
    wire.send({"jsonrpc": "2.0", "id": 30, "method": "textDocument/completion"})
    assert wire.response(30)["error"]["code"] == -32602


def test_requests_before_initialize_get_server_not_initialized(wire: Wire) -> None:
    wire.send(hover(2))
    assert wire.response(2)["error"]["code"] == -32002
    wire.send({"jsonrpc": "2.0", "id": "s", "method": "shutdown"})
    assert wire.response("s")["error"]["code"] == -32002
    # A notification before initialize is dropped, and the conversation goes on.
    wire.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": "x", "languageId": "md", "version": 1, "text": ""}},
        }
    )
    wire.initialize()
    wire.send(hover(3))
    assert wire.response(3)["result"] is None


def test_exit_without_shutdown_exits_with_1(wire: Wire) -> None:
    wire.initialize()
    wire.send({"jsonrpc": "2.0", "method": "exit"})
    assert wire.exit_code() == 1


def test_exit_before_initialize_exits_with_1(wire: Wire) -> None:
    wire.send({"jsonrpc": "2.0", "method": "exit"})
    assert wire.exit_code() == 1


def test_exit_after_shutdown_exits_with_0(wire: Wire) -> None:
    wire.initialize()
    wire.send({"jsonrpc": "2.0", "id": 40, "method": "shutdown"})
    assert wire.response(40) == {"jsonrpc": "2.0", "id": 40, "result": None}
    wire.send(hover(41))
    assert wire.response(41)["error"]["code"] == -32600
    wire.send({"jsonrpc": "2.0", "method": "exit"})
    assert wire.exit_code() == 0
