"""The server's end of the wire: frames read from a byte stream, and the JSON-RPC rules checked
before a message reaches pygls.

pygls 2.1's reader loses its place after one malformed frame (a bad `Content-Length` makes it read
the next header as part of a body, forever), and it drops a request whose params do not fit their
type without answering. Here a bad frame is answered or dropped and reading resumes at the next
`Content-Length` header; every request gets a response.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import re
import sys
import threading
from dataclasses import dataclass
from typing import Any, Awaitable, BinaryIO, Callable, Coroutine, Dict, List, Optional, Set, Union

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCResponseMessage
from pygls.server import JsonRPCServer

from ..runtime import echoes_vault as rules
from .lsp_convert import JsonText

log = logging.getLogger("echoes_lsp")

# A body larger than this is refused: the largest page the server analyses is 16 MiB, and JSON
# escaping can at most double it.
MAX_BODY = 64 * 1024 * 1024
MAX_HEADER = 8 * 1024
READ_SIZE = 1024 * 1024

HEADER_NAME = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
# A Content-Length header ended by a raw line break. Valid JSON can never hold one (a string
# cannot contain a raw line break, and outside strings there are no letters), so finding it inside
# a body proves that the body was shorter than announced and the next frame has begun.
HEADER_IN_BODY = re.compile(rb"content-length[ \t]*:[^\"\r\n]*\r?\n", re.IGNORECASE)
PARTIAL_VALUE = re.compile(rb"[ \t]*[0-9]*\r?")
NAME = b"content-length:"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002


@dataclass(frozen=True)
class Message:
    """One well-framed body, decoded from JSON."""

    data: Any


@dataclass(frozen=True)
class BadFrame:
    """Bytes that were not a valid frame; `body` holds a broken body, to find a request id in.
    `undecodable`: a whole body that is no JSON value the server reads (answered with -32700)."""

    reason: str
    body: bytes = b""
    undecodable: bool = False


def decode(body: Union[bytes, str]) -> Item:
    """A message from a whole body: its JSON value, or why it cannot be decoded. The runtime's
    bounded reader: at most MAX_BODY bytes nested at most `rules.JSON_DEPTH_LIMIT` levels, so no
    message can exhaust the stack (the standard parser recurses). Half a surrogate pair in a
    string is kept: the server copes with such text (an editor can send it)."""
    try:
        return Message(rules.load_json(body, MAX_BODY, whole_text=False))
    except rules.BadJson as why:
        raw = body.encode("utf-8", "replace") if isinstance(body, str) else body
        return BadFrame(f"a body that cannot be decoded: {why}", raw, undecodable=True)


Item = Union[Message, BadFrame]


def _header_start(tail: bytes) -> bool:
    """Whether `tail` (the end of a body) could be the beginning of a Content-Length header."""
    lowered = tail.lower()
    if len(lowered) <= len(NAME):
        return NAME.startswith(lowered)
    return lowered.startswith(NAME) and PARTIAL_VALUE.fullmatch(lowered[len(NAME) :]) is not None


class FrameParser:
    """Splits a byte stream into frames (`Content-Length: N`, headers, a blank line, N bytes).

    Bytes before a Content-Length header are skipped and reported once. A header block with a
    missing, non-numeric, negative or oversized length is reported and skipped. A body cut short
    by the next frame's header is reported, and the next frame is read from that header on.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._length: Optional[int] = None
        self._skipped = 0
        self._scanned = 0

    def feed(self, data: bytes) -> List[Item]:
        """Add bytes; return every frame they complete, in order."""
        self._buffer += data
        items: List[Item] = []
        while True:
            waiting = self._length is None
            item = self._step()
            if item is not None:
                items.append(item)
            elif not (waiting and self._length is not None):
                return items

    def finish(self) -> List[Item]:
        """The end of the stream: whatever was left is reported."""
        items: List[Item] = []
        if self._length is not None:
            items.append(BadFrame("the stream ended inside a body", bytes(self._buffer)))
        elif self._skipped or self._buffer.strip():
            items.append(
                BadFrame(f"{self._skipped + len(self._buffer)} trailing bytes were no frame")
            )
        self._buffer.clear()
        self._length = None
        self._skipped = 0
        return items

    def _skip(self, count: int) -> None:
        self._skipped += count
        del self._buffer[:count]

    def _report_skipped(self) -> Optional[BadFrame]:
        if not self._skipped:
            return None
        count, self._skipped = self._skipped, 0
        return BadFrame(f"skipped {count} bytes that were not part of a frame")

    def _step(self) -> Optional[Item]:
        if self._length is None:
            return self._header()
        return self._body(self._length)

    def _header(self) -> Optional[Item]:
        block = self._header_block()
        if block is None or isinstance(block, BadFrame):
            return block
        length = _content_length(block)
        if isinstance(length, BadFrame):
            return length
        self._length = length
        self._scanned = 0
        return None

    def _header_block(self) -> Union[BadFrame, bytes, None]:
        """The next header block, taken from the buffer once complete (None until then), or a
        report of the bytes skipped before it or of a block too long to be one."""
        buffer = self._buffer
        match = HEADER_NAME.search(buffer)
        if match is None:
            # Keep a tail that may be the start of a header split across reads.
            self._skip(max(0, len(buffer) - len(NAME)))
            return None
        if match.start():
            self._skip(match.start())
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(buffer) > MAX_HEADER:
                self._skip(len(NAME))
                return BadFrame("a header block longer than 8 KiB")
            return None
        skipped = self._report_skipped()
        if skipped is not None:
            return skipped
        block = bytes(buffer[:end])
        del buffer[: end + 4]
        return block

    def _body(self, length: int) -> Optional[Item]:
        buffer = self._buffer
        window = min(len(buffer), length + MAX_HEADER)
        start = max(0, self._scanned - MAX_HEADER)
        # Compact JSON has no raw line break: the regular expression runs only when one is there.
        if buffer.find(b"\n", start, window) >= 0:
            match = HEADER_IN_BODY.search(buffer, start, window)
            if match is not None and match.start() < length:
                return self._cut(match.start(), "a body shorter than its Content-Length")
        self._scanned = window
        if len(buffer) < length:
            return None
        body = bytes(buffer[:length])
        del buffer[:length]
        self._length = None
        item = decode(body)
        if isinstance(item, Message):
            return item
        for size in range(min(len(body), len(NAME) + 24), 0, -1):
            if _header_start(body[-size:]):
                # The announced length ran into the next frame's header: read on from there.
                self._buffer[0:0] = body[-size:]
                return BadFrame("a body shorter than its Content-Length", body[:-size])
        return item

    def _cut(self, at: int, reason: str) -> BadFrame:
        body = bytes(self._buffer[:at])
        del self._buffer[:at]
        self._length = None
        return BadFrame(reason, body)


def _content_length(block: bytes) -> Union[int, BadFrame]:
    """The body length a header block announces (its last Content-Length header counts), or why
    it announces none that can be read."""
    length: Optional[int] = None
    problem: Optional[str] = None
    for line in block.split(b"\r\n"):
        found = list(HEADER_NAME.finditer(line))
        if not found:
            continue
        value = line[found[-1].end() :].strip()
        if value.isdigit():
            length, problem = int(value), None
        else:
            length, problem = None, "a Content-Length that is not a non-negative integer"
    if problem is not None or length is None:
        return BadFrame(problem or "a header block without Content-Length")
    if length > MAX_BODY:
        return BadFrame(f"a Content-Length over {MAX_BODY // (1024 * 1024)} MiB")
    return length


def request_id(body: bytes) -> Any:
    """The id of the request a broken body held, when it can be read (else None)."""
    item = decode(body)
    if not isinstance(item, Message):
        return None
    data = item.data
    if isinstance(data, dict) and "method" in data and valid_id(data.get("id")):
        return data["id"]
    return None


def valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def strict_position(value: Any, _cls: Any) -> types.Position:
    """Positions are unsigned integers: a string or a float is refused, not converted."""
    if not isinstance(value, dict):
        raise TypeError("a Position must be an object")
    numbers: List[int] = []
    for name in ("line", "character"):
        number = value.get(name)
        if not isinstance(number, int) or isinstance(number, bool):
            raise TypeError(f"Position.{name} must be an integer")
        numbers.append(number)
    return types.Position(line=numbers[0], character=numbers[1])


def lenient_show_document(obj: Any, _type: Any) -> types.ShowDocumentResult:
    """A client's answer to `window/showDocument`, read as "not shown" unless it says it was:
    eglot 1.9 answers `null`, which the strict type would reject with a logged traceback."""
    success = obj.get("success") if isinstance(obj, dict) else False
    return types.ShowDocumentResult(success=success is True)


def strict_converter(factory: Callable[[], cattrs.Converter]) -> Callable[[], cattrs.Converter]:
    def make() -> cattrs.Converter:
        converter = factory()
        converter.register_structure_hook(types.Position, strict_position)
        converter.register_structure_hook(types.ShowDocumentResult, lenient_show_document)
        return converter

    return make


class EchoesProtocol(LanguageServerProtocol):
    """pygls's protocol, but a `JsonText` result is written as it is rather than encoded."""

    def __init__(self, server: Any, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self._writes: Set[asyncio.Future[Any]] = set()

    def _send_data(self, data: Any) -> None:
        if isinstance(data, JsonRPCResponseMessage) and isinstance(data.result, JsonText):
            self._write_body(
                f'{{"id":{json.dumps(data.id)},"jsonrpc":"2.0","result":{data.result}}}'
            )
        else:
            super()._send_data(data)

    def _write_body(self, body: str) -> None:
        """What pygls does with the JSON text of a message: headers, UTF-8, the writer."""
        if self.writer is None:
            log.error("no output to write a response to")
            return
        encoded = body.encode(self.CHARSET)
        if self._include_headers:
            header = (
                f"Content-Length: {len(encoded)}\r\n"
                f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            )
            encoded = header.encode(self.CHARSET) + encoded
        written = self.writer.write(encoded)
        if inspect.isawaitable(written):  # a WebSocket's writer: the send is a task
            task = asyncio.ensure_future(written)
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)


def describe(error: BaseException) -> str:
    """Where params did not fit their type, without repeating any value that was sent."""
    cause = error.__cause__ or error
    if isinstance(cause, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(cause)[:3])
    return type(cause).__name__


def _is_request(data: Dict[str, Any]) -> bool:
    """A request has an id and a method; a response has an id only, a notification no id."""
    return "id" in data and "method" in data


class Conversation:
    """The JSON-RPC and LSP rules pygls leaves unchecked: a response for every request (-32600,
    -32602, -32002, -32700), nothing before `initialize` but `exit`, no request after
    `shutdown`."""

    def __init__(self, protocol: JsonRPCProtocol) -> None:
        self.protocol = protocol
        self.initialize_seen = False
        self.shutdown_seen = False

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        # pygls's own writer path: it adds the headers and reports a broken pipe.
        self.protocol._send_data(
            types.ResponseErrorMessage(
                id=msg_id, error=types.ResponseError(code=code, message=message)
            )
        )

    def receive(self, item: Item) -> None:
        if isinstance(item, BadFrame):
            log.warning("dropped a malformed frame: %s", item.reason)
            if item.body:
                msg_id = request_id(item.body)
                if msg_id is not None:
                    self.send_error(msg_id, INVALID_REQUEST, f"malformed frame: {item.reason}")
                elif item.undecodable:
                    self.send_error(None, PARSE_ERROR, item.reason)
            return
        self.message(item.data)

    def message(self, data: Any) -> None:
        """One decoded message: answered or dropped when it breaks a rule, else handed to pygls."""
        if self._malformed(data) or self._out_of_turn(data):
            return
        is_request = _is_request(data)
        method = data.get("method")
        try:
            structured = self.protocol.structure_message(data)
        except JsonRpcException as error:
            self.refuse(data, is_request, error)
            return
        if is_request and method == types.INITIALIZE:
            self.initialize_seen = True
        if is_request and method == types.SHUTDOWN:
            self.shutdown_seen = True
        self.protocol.handle_message(structured)

    def _malformed(self, data: Any) -> bool:
        """Whether a message is no JSON-RPC 2.0 object with a usable id (a request among them is
        answered with -32600, the rest dropped)."""
        if not isinstance(data, dict):
            self.send_error(None, INVALID_REQUEST, "a message must be a JSON object")
            return True
        if "id" in data and not valid_id(data["id"]):
            self.send_error(None, INVALID_REQUEST, "the id must be an integer or a string")
            return True
        method = data.get("method")
        if data.get("jsonrpc") == "2.0" and ("method" not in data or isinstance(method, str)):
            return False
        if _is_request(data):
            self.send_error(data["id"], INVALID_REQUEST, "not a JSON-RPC 2.0 request")
        else:
            log.warning("dropped a message that is not JSON-RPC 2.0")
        return True

    def _out_of_turn(self, data: Dict[str, Any]) -> bool:
        """Whether a message is out of turn: a request other than `initialize` or a notification
        other than `exit` before `initialize`, a request after `shutdown`. A request is answered,
        a notification dropped."""
        method = data.get("method")
        is_request = _is_request(data)
        if not self.initialize_seen:
            if is_request and method != types.INITIALIZE:
                self.send_error(data["id"], SERVER_NOT_INITIALIZED, "the server is not initialized")
                return True
            if "id" not in data and method != types.EXIT:
                log.warning("dropped %s before initialize", method)
                return True
        if self.shutdown_seen and is_request:
            self.send_error(data["id"], INVALID_REQUEST, "the server is shutting down")
            return True
        return False

    def refuse(self, data: Dict[str, Any], is_request: bool, error: JsonRpcException) -> None:
        method = data.get("method")
        if is_request:
            self.send_error(
                data["id"], INVALID_PARAMS, f"invalid params for {method}: {describe(error)}"
            )
        elif "id" in data:
            # A response we cannot read: fail the request that waits for it rather than hang it.
            self.protocol.handle_message(
                types.ResponseErrorMessage(  # type: ignore[arg-type]  # its id may be None
                    id=data["id"],
                    error=types.ResponseError(code=INVALID_PARAMS, message=describe(error)),
                )
            )
        else:
            log.warning("dropped %s with invalid params: %s", method, describe(error))


def stream_chunks(stream: BinaryIO) -> Callable[[], Awaitable[bytes]]:
    """Chunks of `stream`, read by a daemon thread so that exit never waits on a blocked read.

    The thread reads the file descriptor itself: a daemon thread holding `sys.stdin`'s buffer
    lock at interpreter shutdown aborts the process."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=4)
    try:
        fd: Optional[int] = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None

    def read() -> bytes:
        if fd is not None:
            return os.read(fd, READ_SIZE)
        reader = getattr(stream, "read1", stream.read)
        return bytes(reader(READ_SIZE))

    def pump() -> None:
        while True:
            try:
                chunk = read()
            except OSError:
                chunk = b""
            try:
                asyncio.run_coroutine_threadsafe(queue.put(chunk), loop).result()
            except RuntimeError:  # the loop has closed
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="echoes-stdin", daemon=True).start()
    return queue.get


def deliver(conversation: Conversation, item: Item) -> Optional[int]:
    """Hand one item to the conversation; the process's exit code once `exit` ends it."""
    try:
        conversation.receive(item)
    except SystemExit as stop:  # pygls's `exit` handler ends the process this way
        return stop.code if isinstance(stop.code, int) else 1
    except BrokenPipeError:
        raise
    except Exception:
        log.exception("a message could not be handled")
        if isinstance(item, Message) and isinstance(item.data, dict):
            data = item.data
            if "method" in data and valid_id(data.get("id")):
                conversation.send_error(data["id"], INTERNAL_ERROR, "internal error")
    return None


async def converse(protocol: JsonRPCProtocol, read: Callable[[], Awaitable[bytes]]) -> int:
    """Read and dispatch messages until `exit` or the end of input; returns the exit code
    (`exit` after `shutdown`: 0, `exit` without it: 1, the input closed: 0)."""
    parser = FrameParser()
    conversation = Conversation(protocol)
    while True:
        chunk = await read()
        items = parser.feed(chunk) if chunk else parser.finish()
        for item in items:
            code = deliver(conversation, item)
            if code is not None:
                return code
            # One turn of the event loop after each message, as when each was read on its own:
            # the tasks a message started (the vault's indexing after `initialized`) run before
            # the next message of the same read is handled.
            await asyncio.sleep(0)
        if not chunk:
            return 0


async def converse_messages(
    protocol: JsonRPCProtocol, receive: Callable[[], Awaitable[Optional[Union[str, bytes]]]]
) -> int:
    """`converse` for a transport that carries whole messages (a WebSocket): no framing, the
    same rules for every message. `receive` gives None when the connection closes."""
    conversation = Conversation(protocol)
    while True:
        data = await receive()
        if data is None:
            return 0
        code = deliver(conversation, decode(data))
        if code is not None:
            return code
        await asyncio.sleep(0)


def run_until_done(server: JsonRPCServer, main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run a transport's conversation to its end; the exit code, and the server shut down
    however it ended."""
    try:
        return asyncio.run(main())
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
        return 1
    except KeyboardInterrupt:
        return 1
    finally:
        server.shutdown()


def stream_reader_chunks(reader: asyncio.StreamReader) -> Callable[[], Awaitable[bytes]]:
    async def read() -> bytes:
        try:
            return await reader.read(READ_SIZE)
        except (ConnectionError, OSError):
            return b""

    return read


def run_tcp(server: JsonRPCServer, host: str, port: int) -> int:
    """Serve one client over TCP with this module's reader, as pygls serves one: the process
    ends with the conversation."""

    async def main() -> int:
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[int] = loop.create_future()

        async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if ended.done():
                writer.close()
                return
            server.protocol.set_writer(writer)  # type: ignore[arg-type]
            try:
                code = await converse(server.protocol, stream_reader_chunks(reader))
            except BrokenPipeError:
                code = 1
            finally:
                writer.close()
            if not ended.done():
                ended.set_result(code)

        listener = await asyncio.start_server(connected, host, port)
        log.info("serving on %s:%s", host, port)
        async with listener:
            return await ended

    return run_until_done(server, main)


def run_websocket(server: JsonRPCServer, host: str, port: int) -> int:
    """Serve one client over a WebSocket (one JSON-RPC message per WebSocket message) with the
    rules of `Conversation`; needs the `websockets` package."""
    from pygls.io_ import WebSocketWriter
    from websockets.asyncio.server import ServerConnection, serve
    from websockets.exceptions import ConnectionClosed

    async def main() -> int:
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[int] = loop.create_future()

        async def connected(websocket: ServerConnection) -> None:
            if ended.done():
                await websocket.close()
                return
            server.protocol.set_writer(WebSocketWriter(websocket), include_headers=False)

            async def receive() -> Optional[Union[str, bytes]]:
                try:
                    return await websocket.recv()
                except ConnectionClosed:
                    return None

            try:
                code = await converse_messages(server.protocol, receive)
            finally:
                await websocket.close()
            if not ended.done():
                ended.set_result(code)

        async with serve(connected, host, port):
            log.info("serving WebSocket on %s:%s", host, port)
            return await ended

    return run_until_done(server, main)


class StdoutEndpoint:
    """pygls's writer interface over standard output. `exit` closes it; a notification that a
    timer sends while the process winds down (a status update) is then dropped. pygls would
    report the failed write to the client, fail to write that report too, and report that,
    without end, logging each failure to standard error until the pipe was full."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.closed = False

    def close(self) -> None:
        self.closed = True
        self._stream.close()

    def write(self, data: bytes) -> None:
        if self.closed:
            log.debug("dropped %d bytes written after the output was closed", len(data))
            return
        self._stream.write(data)
        self._stream.flush()


def run_stdio(
    server: JsonRPCServer, stdin: Optional[BinaryIO] = None, stdout: Optional[BinaryIO] = None
) -> int:
    """Serve over stdin/stdout with this module's reader; returns the process's exit code."""
    server.protocol.set_writer(StdoutEndpoint(stdout or sys.stdout.buffer))

    async def main() -> int:
        return await converse(server.protocol, stream_chunks(stdin or sys.stdin.buffer))

    return run_until_done(server, main)
