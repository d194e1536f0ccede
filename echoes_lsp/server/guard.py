"""`guarded`: what every LSP handler does with an exception it did not mean to raise.

A refusal meant for the person (`engine.refusal.Refusal`) becomes an LSP error with its
sentence, and an LSP error raised on purpose passes through. Anything else is a bug: it is logged
with its traceback and counted on the server; a request is answered with an internal error
(-32603) that says which feature failed, and a notification, having no answer, is reported by a
message. With ECHOES_LSP_STRICT=1 (set by the test suite) the exception itself is re-raised after
that, so pygls answers with its type, text and traceback and a broken handler fails the test.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable

from pygls.exceptions import JsonRpcException, JsonRpcInternalError

from ..engine.refusal import Refusal
from .echoes_server import EchoesServer
from .lsp_convert import request_failed

Handler = Callable[..., Any]


def failed(ls: EchoesServer, name: str, notification: bool, error: Exception) -> None:
    """Turn an exception raised by handler `name` into its answer (see the module docstring);
    returns None only for a notification's unexpected failure outside strict mode."""
    if isinstance(error, Refusal):
        raise request_failed(str(error)) from error
    if isinstance(error, JsonRpcException):
        raise error
    message = ls.report_failure(name, error, show=notification or ls.strict)
    if ls.strict:
        raise error
    if notification:
        return None
    raise JsonRpcInternalError(message) from error


def guarded(handler: Handler, name: str, notification: bool = False) -> Handler:
    """`handler` (sync or async, taking the server first) with failures answered as above."""
    if asyncio.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def run_async(ls: EchoesServer, *args: Any) -> Any:
            try:
                return await handler(ls, *args)
            except Exception as error:
                return failed(ls, name, notification, error)

        return run_async

    @functools.wraps(handler)
    def run(ls: EchoesServer, *args: Any) -> Any:
        try:
            return handler(ls, *args)
        except Exception as error:
            return failed(ls, name, notification, error)

    return run
