"""`textDocument/references` and the backlink code lenses ("N backlinks"), whose command
`echoes.references` answers the references of the page they sit on. Lenses are refreshed (at
most twice a second, by the scheduler) after the link graph changes."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, List, Optional, Tuple

from lsprotocol import types
from lsprotocol.converters import get_converter

from ...engine.link_targets import (
    Subject,
    backlink_sources,
    declaration,
    references,
    subject_at,
    title_of,
    title_place,
)
from ...engine.vault import PAGE, Vault
from ..echoes_server import EchoesServer
from ..lsp_convert import request_failed
from ..vault_folder import Folder
from . import Command, Feature
from .document_context import Ranges, load_at, load_document, locate, wait_for_index

log = logging.getLogger("echoes_lsp")
REFERENCES_COMMAND = "echoes.references"


async def find_references(
    ls: EchoesServer, uri: str, position: types.Position, include_declaration: bool
) -> Optional[List[types.Location]]:
    at = load_at(ls, uri, position)
    if at is None:
        return None
    await wait_for_index(at.document.folder)
    document = at.document.with_fresh_entry()
    subject = subject_at(document.vault, document.entry, document.structure, at.line, at.column)
    if subject is None:
        return None
    return locate_references(ls, document.vault, subject, include_declaration)


def locate_references(
    ls: EchoesServer, vault: Vault, subject: Subject, include_declaration: bool
) -> List[types.Location]:
    ranges = Ranges(ls)
    places = references(
        vault,
        subject,
        structure_of=ranges.structure_reader(vault),
        extra_sources=ranges.open_in(vault),
    )
    if include_declaration:
        own = declaration(vault, subject)
        if own is not None:
            places.insert(0, own)
    return [ranges.location(place) for place in places]


async def on_references(
    ls: EchoesServer, params: types.ReferenceParams
) -> Optional[List[types.Location]]:
    return await find_references(
        ls, params.text_document.uri, params.position, params.context.include_declaration
    )


def lens_title(count: int) -> str:
    return f"{count} backlink" + ("" if count == 1 else "s")


async def code_lenses(
    ls: EchoesServer, params: types.CodeLensParams
) -> Optional[List[types.CodeLens]]:
    document = load_document(ls, params.text_document.uri)
    if document is None or document.entry is None or document.entry.kind != PAGE:
        return None
    await wait_for_index(document.folder)
    entry = document.vault.entry(document.path)
    if entry is None:
        return None
    count = len(backlink_sources(document.vault, entry))
    title = title_of(document.structure)
    place = title_place(entry, document.structure)
    line_text = document.lines[place.line] if place.line < len(document.lines) else ""
    position = types.Position(
        line=place.line, character=ls.columns.to_client(line_text, title.start if title else 0)
    )
    return [
        types.CodeLens(
            range=document.range(place.line, place.start, place.line, place.end),
            command=types.Command(
                title=lens_title(count),
                command=REFERENCES_COMMAND,
                arguments=[
                    {
                        "uri": document.uri,
                        "position": {"line": position.line, "character": position.character},
                    }
                ],
            ),
        )
    ]


async def on_code_lens(ls: EchoesServer, params: types.CodeLensParams) -> Any:
    located = locate(ls, params.text_document.uri)
    if located is None:
        return None
    follow_lenses(ls, located[0])
    return await code_lenses(ls, params)


def follow_lenses(ls: EchoesServer, folder: Folder) -> None:
    """Ask the client to refresh code lenses after the link graph of this vault changes."""
    if ls.capability("workspace.code_lens.refresh_support"):
        folder.follow_lenses(lambda _path: ls.scheduler.lens_refresh_soon(lambda: refresh(ls)))


def refresh(ls: EchoesServer) -> None:
    """Ask the client for fresh code lenses."""
    try:
        answer = ls.workspace_code_lens_refresh(None)
    except Exception:
        log.exception("codeLens refresh failed")
        return
    if isinstance(answer, asyncio.Future):
        answer.add_done_callback(settled)


def settled(answer: asyncio.Future[Any]) -> None:
    """Consume the outcome of a request whose answer does not matter (a refused refresh)."""
    if not answer.cancelled() and answer.exception() is not None:
        log.debug("client refused a request: %s", answer.exception())


def command_position(args: Any) -> Tuple[str, types.Position]:
    """The `{uri, position}` argument of `echoes.references`, however the client wrapped it."""
    argument = args[0] if args and isinstance(args[0], dict) else None
    if isinstance(args, (list, tuple)) and len(args) == 1 and isinstance(args[0], list):
        argument = args[0][0] if args[0] and isinstance(args[0][0], dict) else None
    if argument is None or not isinstance(argument.get("uri"), str):
        raise request_failed(f"{REFERENCES_COMMAND} takes one argument {{uri, position}}")
    raw = argument.get("position") or {}
    try:
        position = types.Position(
            line=int(raw.get("line", 0)), character=int(raw.get("character", 0))
        )
    except (TypeError, ValueError, AttributeError) as error:
        raise request_failed("`position` must be {line, character}") from error
    return argument["uri"], position


async def references_command(ls: EchoesServer, *args: Any) -> Any:
    """`{uri, position}` → the Locations of the references there (for code lenses)."""
    uri, position = command_position(args)
    found = await find_references(ls, uri, position, False)
    return get_converter().unstructure(found or [])


FEATURES = [
    Feature(types.TEXT_DOCUMENT_REFERENCES, on_references),
    Feature(
        types.TEXT_DOCUMENT_CODE_LENS, on_code_lens, types.CodeLensOptions(resolve_provider=False)
    ),
]
COMMANDS = [Command(REFERENCES_COMMAND, references_command)]
