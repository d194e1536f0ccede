"""workspace/symbol over raw stdio: a query of 100,000 characters is cut to its documented length,
and a request sent right behind a long search is answered before it, since the search gives way
after every slice of pages (the unit tests in tests/unit/test_symbol_slices.py count the slices).

Both requests are written in one write, so the order of the answers does not depend on timing:
the server handles one message per turn of its event loop, and a search done in one piece would
answer the first request before it even reads the second.
"""

from __future__ import annotations

import queue
import shutil
from pathlib import Path
from typing import Any, Dict, List

from echoes_lsp.engine.fuzzy import MAX_QUERY, SLICE

from .conftest import FIXTURES
from .test_wire import WAIT, Wire, frame

PAGES = 3 * SLICE


def symbols(msg_id: int, query: str) -> Dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "workspace/symbol",
        "params": {"query": query},
    }


def big_vault(tmp_path: Path) -> Path:
    workspace = tmp_path / "big"
    shutil.copytree(FIXTURES / "lsp-vault", workspace)
    pages = workspace / "EchoesVault" / "pages"
    for number in range(PAGES):
        (pages / f"topic-{number:05d}.md").write_text(
            f"---\ntype: note\nstack: []\nstatus: active\nsummary: Generated note {number}.\n"
            f"---\n\n# Topic {number}\n",
            encoding="utf-8",
        )
    return workspace


def wait_until_indexed(wire: Wire) -> None:
    """Until the server reports the vault indexed (`echoes/statusChanged` with `ready`)."""
    while True:
        for message in wire.seen:
            params = message.get("params") or {}
            if message.get("method") == "echoes/statusChanged" and params.get("ready"):
                return
        try:
            message = wire.messages.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError("the vault was not indexed in time") from None
        assert message is not None, "the server closed its output"
        wire.seen.append(message)


def answer_order(wire: Wire, ids: List[int]) -> List[int]:
    """The ids of these requests in the order the server answered them."""
    order: List[int] = [
        message["id"]
        for message in wire.seen
        if "method" not in message and message.get("id") in ids
    ]
    while len(order) < len(ids):
        message = wire.messages.get(timeout=WAIT)
        assert message is not None, "the server closed its output"
        wire.seen.append(message)
        if "method" not in message and message.get("id") in ids:
            order.append(message["id"])
    return order


def names(wire: Wire, msg_id: int) -> List[str]:
    response = wire.response(msg_id)
    assert "result" in response, response
    return [item["name"] for item in response["result"]]


def test_a_long_query_is_cut_and_does_not_hold_the_next_request(tmp_path: Path) -> None:
    wire = Wire(big_vault(tmp_path))
    try:
        wire.initialize()
        wire.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        wait_until_indexed(wire)
        wire.send(symbols(2, ""))  # the page catalog is made before the requests below
        assert len(names(wire, 2)) == 100
        # The first MAX_QUERY characters name a page; the rest is cut away.
        long_query = "sessions" + " " * (MAX_QUERY - 8) + "q" * 100_000
        wire.write(frame(symbols(3, long_query)) + frame(symbols(4, "topic")))
        assert answer_order(wire, [3, 4]) == [4, 3]
        assert "sessions" in names(wire, 3)
        assert len(names(wire, 4)) == 100
    finally:
        wire.close()
