"""After `exit` has closed standard output, a late notification is dropped quietly: pygls would
otherwise report the failed write with another write, without end."""

from __future__ import annotations

import io
import logging

import pytest

from echoes_lsp.server.app import build_server
from echoes_lsp.server.transport import StdoutEndpoint


def test_a_notification_after_the_output_closed_is_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = build_server()
    stream = io.BytesIO()
    endpoint = StdoutEndpoint(stream)
    server.protocol.set_writer(endpoint)
    server.protocol.notify("echoes/statusChanged", {"ready": True})
    assert b"echoes/statusChanged" in stream.getvalue()
    endpoint.close()
    with caplog.at_level(logging.ERROR):
        server.protocol.notify("echoes/statusChanged", {"ready": True})
        server.protocol.notify("echoes/statusChanged", {"ready": False})
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
