"""Helpers for the navigation and completion tests: positions in client units, requests with
timeouts, and pages written into the session's workspace."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional, TypeVar

from lsprotocol import types

from .conftest import WAIT, Session, capabilities

T = TypeVar("T")

PAGE_HEAD = "---\ntype: note\nstack: []\nstatus: active\nsummary: {summary}\n---\n\n"


def encoding(session: Session) -> str:
    """The position encoding the server negotiates: Neovim offers UTF-8 first, VS Code UTF-16."""
    return "utf-8" if session.kind == "neovim" else "utf-16"


def units(session: Session, text: str) -> int:
    """Length of `text` in the session's position units."""
    if encoding(session) == "utf-8":
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2


def position(session: Session, line_text: str, line: int, column: int) -> types.Position:
    """A position from a code-point column."""
    return types.Position(line=line, character=units(session, line_text[:column]))


def after(session: Session, text: str, needle: str, line: Optional[int] = None) -> types.Position:
    """The position just after the first `needle` in `text` (on `line` if given)."""
    lines = text.split("\n")
    numbers = [line] if line is not None else range(len(lines))
    for number in numbers:
        found = lines[number].find(needle)
        if found >= 0:
            return position(session, lines[number], number, found + len(needle))
    raise AssertionError(f"{needle!r} not in text")


def at(session: Session, text: str, needle: str, offset: int = 0) -> types.Position:
    """The position `offset` code points into the first `needle` in `text`."""
    for number, line_text in enumerate(text.split("\n")):
        found = line_text.find(needle)
        if found >= 0:
            return position(session, line_text, number, found + offset)
    raise AssertionError(f"{needle!r} not in text")


def covered(session: Session, text: str, span: types.Range) -> str:
    """The text a single-line range covers."""
    assert span.start.line == span.end.line
    line_text = text.split("\n")[span.start.line]
    if encoding(session) == "utf-8":
        data = line_text.encode("utf-8")
        return data[span.start.character : span.end.character].decode("utf-8")
    data = line_text.encode("utf-16-le")
    return data[span.start.character * 2 : span.end.character * 2].decode("utf-16-le")


async def request(awaitable: Awaitable[T], timeout: float = WAIT) -> T:
    return await asyncio.wait_for(awaitable, timeout)


def write_page(session: Session, stem: str, body: str, summary: str = "A test page.") -> Path:
    path = session.page(f"{stem}.md")
    path.write_text(PAGE_HEAD.format(summary=summary) + body, encoding="utf-8")
    return path


def notify_created(session: Session, *paths: Path) -> None:
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=path.resolve().as_uri(), type=types.FileChangeType.Created)
                for path in paths
            ]
        )
    )


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def labels(items: Any) -> list:
    return [item.label for item in items]


async def start_with(
    client: Any, workspace: Path, kind: str, adjust: Callable[[types.ClientCapabilities], None]
) -> Session:
    """Initialize `client` with `kind`'s capabilities changed by `adjust` (for fallbacks)."""
    caps = capabilities(kind)
    adjust(caps)
    await request(
        client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=workspace.resolve().as_uri(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=workspace.resolve().as_uri(), name="vault")
                ],
            )
        )
    )
    return Session(client, workspace, kind)
