"""The language server's setup point and entry point.

`build_server` registers the handlers that `features/` lists, each wrapped in
`guard.guarded`, on the server object of `echoes_server.py`. The features import that object; nothing
below this module imports it, so there is no import cycle.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import List, Sequence

from lsprotocol import types

from ..runtime import echoes_vault as rules
from .echoes_server import EchoesServer
from .features import (
    actions,
    commands,
    completion,
    diagnostics,
    document_sync,
    file_events,
    inlay_hints,
    lifecycle,
    links,
    references,
    rename,
    semantic_tokens,
    structure,
    symbols,
)
from .guard import guarded
from .transport import run_stdio, run_tcp, run_websocket


def is_notification(method: str) -> bool:
    """Whether an LSP method is a notification (lsprotocol lists no response type for it)."""
    return types.METHOD_TO_TYPES[method][1] is None


# Every LSP feature's handlers, one module per feature.
FEATURE_MODULES = (
    lifecycle,
    document_sync,
    file_events,
    diagnostics,
    completion,
    links,
    references,
    symbols,
    structure,
    rename,
    actions,
    semantic_tokens,
    inlay_hints,
)
COMMAND_MODULES = (commands, references)


def build_server() -> EchoesServer:
    server = EchoesServer()
    for module in FEATURE_MODULES:
        for method, handler, options in module.FEATURES:
            server.feature(method, options)(guarded(handler, method, is_notification(method)))
    for module in COMMAND_MODULES:
        for name, handler in module.COMMANDS:
            server.command(name)(guarded(handler, name))
    return server


class MaskingFormatter(logging.Formatter):
    """Log lines with credential-shaped text masked: at debug level pygls logs whole documents."""

    def format(self, record: logging.LogRecord) -> str:
        return rules.mask_secrets(super().format(record))


def serve(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="echoes-lsp serve", description="EchoesVault language server"
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (default)")
    group.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket")
    group.add_argument("--ws", metavar="HOST:PORT", help="listen on a WebSocket")
    parser.add_argument("--log-file", help="write server logs to this file")
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args(list(argv))
    handlers: List[logging.Handler] = []
    if args.log_file:
        handlers.append(logging.FileHandler(args.log_file, encoding="utf-8"))
    else:
        handlers.append(logging.StreamHandler(sys.stderr))
    for handler in handlers:
        handler.setFormatter(MaskingFormatter(logging.BASIC_FORMAT))
    logging.basicConfig(level=args.log_level.upper(), handlers=handlers)
    server = build_server()
    if args.tcp or args.ws:
        address = args.tcp or args.ws
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            parser.error(f"expected HOST:PORT, got {address!r}")
        if args.tcp:
            return run_tcp(server, host, int(port))
        try:
            import websockets  # noqa: F401
        except ImportError:
            sys.stderr.write(
                "echoes-lsp serve --ws needs the `websockets` package: "
                "pip install 'echoes-lsp[ws]'\n"
            )
            return 2
        return run_websocket(server, host, int(port))
    return run_stdio(server)
