"""The frame reader splits a byte stream the same way whatever the size of its reads."""

from __future__ import annotations

import json
from typing import Any, List

import pytest

from echoes_lsp.server.transport import MAX_BODY, BadFrame, FrameParser, Item, Message


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\nContent-Type: x\r\n\r\n" % len(body) + body


def parse(stream: bytes, size: int) -> List[Item]:
    parser = FrameParser()
    items: List[Item] = []
    for start in range(0, len(stream), size):
        items.extend(parser.feed(stream[start : start + size]))
    return items + parser.finish()


GOOD = [{"id": n, "text": "Content-Length: 3 inside a string\n" * n} for n in range(4)]
STREAM = (
    frame(GOOD[0])
    + b"Content-Length: abc\r\n\r\n{}"
    + frame(GOOD[1])
    + b'Content-Length: 400\r\n\r\n{"id": 9}'
    + frame(GOOD[2])
    + b"junk\r\n\r\n"
    + b"content-length:   7\r\n\r\n{bad: 1"
    + frame(GOOD[3])
)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, len(STREAM)])
def test_reads_of_any_size_give_the_same_frames(size: int) -> None:
    items = parse(STREAM, size)
    assert [item.data for item in items if isinstance(item, Message)] == GOOD
    bad = [item for item in items if isinstance(item, BadFrame)]
    assert [item.reason for item in bad] == [
        "a Content-Length that is not a non-negative integer",
        "skipped 2 bytes that were not part of a frame",
        "a body shorter than its Content-Length",
        "skipped 8 bytes that were not part of a frame",
        "a body that cannot be decoded: it is not valid JSON (Expecting property name enclosed "
        "in double quotes)",
    ]
    assert [item.undecodable for item in bad] == [False, False, False, False, True]
    assert bad[2].body == b'{"id": 9}'


def test_a_header_split_by_a_short_body_is_recovered() -> None:
    body = json.dumps({"id": 1}).encode()
    # The announced length ends inside the next frame's header, before its line break.
    header = b"Content-Length: %d\r\n\r\n" % (len(body) + 17)
    stream = header + body + frame(GOOD[2])
    parser = FrameParser()
    # The first read ends where the announced body ends; the rest comes later.
    cut = len(header) + len(body) + 17
    items = parser.feed(stream[:cut]) + parser.feed(stream[cut:])
    assert isinstance(items[0], BadFrame) and items[0].body == body
    assert [item.data for item in items if isinstance(item, Message)] == [GOOD[2]]


def test_an_oversized_length_is_refused_without_waiting_for_it() -> None:
    items = parse(b"Content-Length: 99999999999\r\n\r\n{}" + frame(GOOD[1]), 5)
    assert isinstance(items[0], BadFrame) and "over" in items[0].reason
    assert [item.data for item in items if isinstance(item, Message)] == [GOOD[1]]
    just_over = FrameParser().feed(b"Content-Length: %d\r\n\r\n{}" % (MAX_BODY + 1))
    assert just_over == [BadFrame("a Content-Length over 64 MiB")]
    assert FrameParser().feed(b"Content-Length: %d\r\n\r\n{}" % MAX_BODY) == []  # waits
