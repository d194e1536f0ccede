"""`guarded`: an unexpected exception is logged with its traceback, counted, and answered with an
LSP error (re-raised as itself under ECHOES_LSP_STRICT=1); refusals become LSP errors."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, List

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInternalError

from echoes_lsp.engine.refusal import Refusal
from echoes_lsp.server.echoes_server import INTERNAL_ERROR, EchoesServer
from echoes_lsp.server.guard import guarded
from echoes_lsp.server.lsp_convert import request_failed

SECRET_TEXT = "the text of a document, which an answer must never quote"


class Wire:
    """The bytes the server writes to its client."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass

    def messages(self) -> List[Any]:
        found = []
        for chunk in self.data.split(b"Content-Length: ")[1:]:
            body = chunk.split(b"\r\n\r\n", 1)[1]
            found.append(json.loads(body))
        return found


def server(strict: bool) -> EchoesServer:
    ls = EchoesServer()
    ls.strict = strict
    return ls


def broken(ls: EchoesServer, params: Any) -> Any:
    raise ValueError(SECRET_TEXT)


async def broken_async(ls: EchoesServer, params: Any) -> Any:
    await asyncio.sleep(0)
    raise KeyError(SECRET_TEXT)


def test_request_failure_is_logged_counted_and_answered(caplog: pytest.LogCaptureFixture) -> None:
    ls = server(strict=False)
    with caplog.at_level(logging.ERROR, logger="echoes_lsp"):
        with pytest.raises(JsonRpcInternalError) as raised:
            guarded(broken, "textDocument/hover")(ls, None)
    assert ls.failures == 1
    message = raised.value.message
    assert message.startswith(INTERNAL_ERROR)
    assert "textDocument/hover" in message and "ValueError" in message
    assert SECRET_TEXT not in message
    records = [r for r in caplog.records if r.name == "echoes_lsp"]
    assert records and records[-1].exc_info is not None  # the traceback is in the log
    assert records[-1].exc_info[0] is ValueError


async def test_async_request_failure_is_answered() -> None:
    ls = server(strict=False)
    with pytest.raises(JsonRpcInternalError) as raised:
        await guarded(broken_async, "textDocument/references")(ls, None)
    assert "KeyError" in raised.value.message and SECRET_TEXT not in raised.value.message
    assert ls.failures == 1


def test_strict_mode_re_raises_the_exception_itself() -> None:
    ls = server(strict=True)
    with pytest.raises(ValueError, match="document"):
        guarded(broken, "textDocument/hover")(ls, None)
    assert ls.failures == 1


async def test_strict_mode_re_raises_from_async_handlers() -> None:
    ls = server(strict=True)
    with pytest.raises(KeyError):
        await guarded(broken_async, "textDocument/references")(ls, None)
    assert ls.failures == 1


def test_notification_failure_is_shown_once_and_not_raised() -> None:
    ls = server(strict=False)
    wire = Wire()
    ls.protocol.set_writer(wire)
    assert guarded(broken, "textDocument/didOpen", notification=True)(ls, None) is None
    assert ls.failures == 1
    shown = [m for m in wire.messages() if m.get("method") == "window/showMessage"]
    assert len(shown) == 1
    text = shown[0]["params"]["message"]
    assert text.startswith(INTERNAL_ERROR) and "textDocument/didOpen" in text
    assert SECRET_TEXT not in text


def test_refusals_and_deliberate_errors_are_not_failures() -> None:
    ls = server(strict=True)

    def refuses(ls: EchoesServer, params: Any) -> Any:
        raise Refusal("place the cursor on a link")

    def declines(ls: EchoesServer, params: Any) -> Any:
        raise request_failed("no EchoesVault workspace here")

    with pytest.raises(JsonRpcException) as refused:
        guarded(refuses, "textDocument/rename")(ls, None)
    assert refused.value.message == "place the cursor on a link"
    with pytest.raises(JsonRpcException) as declined:
        guarded(declines, "echoes.status")(ls, None)
    assert declined.value.message == "no EchoesVault workspace here"
    assert ls.failures == 0


def test_answers_pass_through() -> None:
    ls = server(strict=True)
    assert guarded(lambda ls, params: params, "textDocument/hover")(ls, 42) == 42
    assert ls.failures == 0
