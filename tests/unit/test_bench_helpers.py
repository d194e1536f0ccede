"""The pure parts of the benchmarks that compare servers: what they read from /proc, the client's
copy of an edited document, and the bytes sent for a result passed through as JSON text. The
comparison itself downloads its peer from npm, so no test runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import lsp_bench  # noqa: E402
import peer_bench  # noqa: E402
import process_memory  # noqa: E402


def test_cpu_seconds_are_counted_after_a_command_name_with_spaces_and_parentheses() -> None:
    # Fields 14 and 15 (utime 250, stime 50) at 100 ticks a second; the name holds ") S 1 2 ".
    stat = "4242 (node ) S 1 2 (x)) S 1 4242 4242 0 -1 4194304 900 0 3 0 250 50 7 9 20 0 11 0\n"
    assert process_memory.stat_cpu_seconds(stat, 100) == 3.0


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_cpu_seconds_of_a_live_process_match_what_the_kernel_reports_to_it() -> None:
    sum(index * index for index in range(2_000_000))
    read = process_memory.cpu_seconds(os.getpid())
    own = os.times()
    assert read is not None
    # The same kernel counters, read a moment apart, in ticks of 1/100 s.
    assert abs(read - (own.user + own.system)) <= 0.05
    assert process_memory.cpu_seconds(2**22 + 12345) is None


@pytest.mark.parametrize(
    ("line", "expected"),
    [(0, "new\none\ntwo\n"), (1, "one\nnew\ntwo\n"), (2, "one\ntwo\nnew\n")],
)
def test_the_client_copy_of_a_document_gets_the_line_the_change_inserted(
    line: int, expected: str
) -> None:
    assert lsp_bench.insert_at_line("one\ntwo\n", line, "new\n") == expected


def test_ratios_read_as_multiples_of_the_peer() -> None:
    assert peer_bench.ratio(5.0, 20.0) == "0.25x"
    assert peer_bench.ratio(30.0, 20.0) == "1.50x"
    assert peer_bench.ratio(25.0, 56_491.3) == "0.00044x"
    assert peer_bench.ratio(None, 20.0) == "n/a"
    assert peer_bench.ratio(5.0, 0.0) == "n/a"


def test_samples_alternate_which_server_goes_first() -> None:
    first, second = object(), object()
    benches: List[Any] = [first, second]
    assert [peer_bench.order(benches, index)[0] for index in range(4)] == [
        first,
        second,
        first,
        second,
    ]


def test_the_peer_is_given_the_markdown_files_outside_hidden_folders(tmp_path: Path) -> None:
    for name in ("a.md", "notes/b.md", "notes/c.txt", ".git/d.md", "node_modules/e.md"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# x\n", encoding="utf-8")
    found = sorted(peer_bench.uri_path(uri) for uri in peer_bench.markdown_files(tmp_path))
    assert found == [tmp_path / "a.md", tmp_path / "notes" / "b.md"]


class Collected:
    """A stream that keeps what is written to it, as the server's stdin would carry it."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data


def test_a_raw_json_result_is_framed_by_its_length_in_bytes() -> None:
    client = lsp_bench.LanguageClient("t", "1", protocol_cls=peer_bench.RawResultProtocol)
    stream = Collected()
    client.protocol.set_writer(stream)
    tokens = '[{"type": "inline", "content": "Caf\u00e9 \u2014 d\u00e9j\u00e0"}]'
    client.protocol._send_response(7, peer_bench.RawJson(tokens))
    header, _, body = stream.data.partition(b"\r\n\r\n")
    assert header == b"Content-Length: %d" % len(body)
    assert json.loads(body) == {"jsonrpc": "2.0", "id": 7, "result": json.loads(tokens)}


def test_any_other_result_is_encoded_by_the_client_library() -> None:
    client = lsp_bench.LanguageClient("t", "1", protocol_cls=peer_bench.RawResultProtocol)
    stream = Collected()
    client.protocol.set_writer(stream)
    client.protocol._send_response(8, {"found": True, "uri": None})
    body = stream.data.partition(b"\r\n\r\n")[2]
    assert json.loads(body)["result"] == {"found": True, "uri": None}


def test_help_needs_no_network(tmp_path: Path) -> None:
    # A copy of the scripts, so that no earlier install is found, and no npm on the PATH.
    for script in BENCH.glob("*.py"):
        (tmp_path / script.name).write_bytes(script.read_bytes())
    shown = subprocess.run(
        [sys.executable, str(tmp_path / "peer_bench.py"), "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PATH="/nonexistent"),
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "--sizes" in shown.stdout
    assert not (tmp_path / ".peer").exists()
