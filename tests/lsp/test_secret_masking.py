"""The server never shows a credential: diagnostics name its kind, hovers and completion mask it,
and its logs (even at debug level, where whole documents are logged) mask it (issue 12, item 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

from lsprotocol import types

from tests.runtime.test_s17_secrets import SHAPES

from .conftest import WAIT, Session, copy_vault
from .nav_helpers import PAGE_HEAD, after, at, doc, request

TOKEN = SHAPES["GitHub token"]
KEYS = PAGE_HEAD.format(summary=f"Deploy key {TOKEN} for CI.") + f"# Keys\n\nUse {TOKEN} here.\n"
USES = PAGE_HEAD.format(summary="Links to the keys page.") + "# Uses\n\nSee [[keys]] and [[ke\n"


async def test_hover_completion_and_diagnostics_never_show_the_value(session: Session) -> None:
    keys = session.page("keys.md")
    keys.write_text(KEYS, encoding="utf-8")
    keys_uri = session.open(keys)
    found = await session.diagnostics(keys_uri, lambda items: any(d.code == "EV600" for d in items))
    secrets = [d for d in found if d.code == "EV600"]
    assert secrets and all("GitHub token" in d.message for d in secrets)
    assert all(TOKEN not in d.message for d in found)

    uses = session.page("uses.md")
    uses_uri = session.open(uses, USES)
    hover = await request(
        session.client.text_document_hover_async(
            types.HoverParams(
                text_document=doc(uses_uri), position=at(session, USES, "[[keys]]", 3)
            )
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "Use " + "*" * len(TOKEN) + " here." in hover.contents.value
    assert TOKEN not in hover.contents.value

    result = await request(
        session.client.text_document_completion_async(
            types.CompletionParams(
                text_document=doc(uses_uri),
                position=after(session, USES, "and [[ke"),
                context=types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked),
            )
        )
    )
    assert result is not None
    entry = next(i for i in result.items if i.label == "keys")
    shown = json.dumps(session.client.protocol._converter.unstructure(entry))
    assert TOKEN not in shown and TOKEN[-12:] not in shown


def _frame(message: Dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_debug_logs_mask_the_value(tmp_path: Path) -> None:
    workspace = copy_vault("lsp-vault", tmp_path)
    log_file = tmp_path / "server.log"
    root = workspace.resolve().as_uri()
    pages = workspace / "EchoesVault" / "pages"
    keys_uri = (pages / "keys.md").resolve().as_uri()
    uses_uri = (pages / "uses.md").resolve().as_uri()

    def opened(uri: str, text: str) -> Dict[str, Any]:
        item = {"uri": uri, "languageId": "markdown", "version": 1, "text": text}
        return {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": item},
        }

    link = USES.split("\n").index("See [[keys]] and [[ke")
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": root, "capabilities": {},
                    "workspaceFolders": [{"uri": root, "name": "vault"}]}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        opened(keys_uri, KEYS),
        opened(uses_uri, USES),
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
         "params": {"textDocument": {"uri": uses_uri}, "position": {"line": link, "character": 7}}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]  # fmt: skip
    process = subprocess.run(
        [sys.executable, "-m", "echoes_lsp", "serve", "--log-level", "DEBUG",
         "--log-file", str(log_file)],
        input=b"".join(_frame(m) for m in messages),
        capture_output=True,
        timeout=WAIT * 2,
    )  # fmt: skip
    logged = log_file.read_text(encoding="utf-8")
    assert '"id": 2' in logged and "# Keys" in logged, logged[-3000:]  # the hover answer
    assert "*" * len(TOKEN) in logged
    assert TOKEN not in logged and TOKEN not in process.stderr.decode("utf-8", "replace")


def test_the_log_formatter_masks_any_record() -> None:
    """Defence in depth for log lines no handler chose to mask (tracebacks, library records)."""
    import logging

    from echoes_lsp.server.app import MaskingFormatter

    record = logging.LogRecord("pygls", logging.DEBUG, __file__, 1, "body %s", (KEYS,), None)
    line = MaskingFormatter(logging.BASIC_FORMAT).format(record)
    assert TOKEN not in line and "*" * len(TOKEN) in line


def test_a_runtime_failure_never_carries_the_value(tmp_path: Path) -> None:
    """An older project runtime may print anything on stderr; the server's error carries it masked
    (it reaches the editor as the error of a command, and its notifications)."""
    from echoes_lsp.runtime_client import RuntimeCall, RuntimeFailure, run

    runtime = tmp_path / ".echoes-vault" / "echoes_vault.py"
    runtime.parent.mkdir()
    runtime.write_text(
        "import sys\nsys.stderr.write('Traceback: token " + TOKEN + " rejected\\n')\nsys.exit(1)\n"
    )
    try:
        run(RuntimeCall(str(tmp_path)), ["append", "--payload", "-"], {"entry": "- x"})
    except RuntimeFailure as failure:
        assert TOKEN not in failure.message and TOKEN not in str(failure)
        assert "*" * len(TOKEN) in failure.message
    else:
        raise AssertionError("the runtime failed, so must the call")
