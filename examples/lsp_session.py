"""A scripted language-server session: what an editor sees when it opens a page of a vault.

Starts `echoes-lsp serve` over stdio with a real LSP client, opens one page, prints the diagnostics
the server publishes, then types `[[sett` and prints the completion items it offers.

    python examples/lsp_session.py WORKSPACE PAGE
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import List

from lsprotocol import types
from pygls.lsp.client import LanguageClient

SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


async def session(workspace: Path, page: Path) -> List[str]:
    """Run the session and return the lines it prints."""
    client = LanguageClient("echoes-demo", "1")
    published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    await client.start_io(sys.executable, "-m", "echoes_lsp", "serve")
    out: List[str] = []
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="demo")],
            )
        )
        client.initialized(types.InitializedParams())
        text = page.read_text(encoding="utf-8")
        uri = page.as_uri()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=text
                )
            )
        )
        while True:
            params = await asyncio.wait_for(published.get(), 30)
            if params.uri == uri:
                break
        out.append(f"textDocument/publishDiagnostics for {page.name}:")
        for item in params.diagnostics:
            start = item.range.start
            severity = SEVERITY.get(int(item.severity or 1), "?")
            out.append(
                f"  {start.line + 1}:{start.character + 1} {item.code} [{severity}] {item.message}"
            )
        # Type `[[sett` on a new last line and ask for completion there.
        line = len(text.split("\n")) - 1
        typed = "[[sett"
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=line, character=0),
                            end=types.Position(line=line, character=0),
                        ),
                        text=typed,
                    )
                ],
            )
        )
        result = await asyncio.wait_for(
            client.text_document_completion_async(
                types.CompletionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=line, character=len(typed)),
                )
            ),
            30,
        )
        items = result.items if isinstance(result, types.CompletionList) else (result or [])
        out.append(f"\ntextDocument/completion after typing {typed!r}:")
        for item in items[:5]:
            flag = " (deprecated)" if item.tags or item.deprecated else ""
            out.append(f"  {item.label}{flag} — {item.detail or ''}")
        await asyncio.wait_for(client.shutdown_async(None), 30)
        client.exit(None)
    finally:
        await client.stop()
    return out


def main(argv: List[str]) -> int:
    workspace, page = Path(argv[0]).resolve(), Path(argv[1]).resolve()
    print("\n".join(asyncio.run(session(workspace, page))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
