"""`echoes.addBlockId`: the command a block completion carries when the chosen block has no id
yet. It adds ` ^id` at the end of the block in the target page, never over a change it has not
seen:

- a page on disk (or open and unmodified) is written through the runtime's `upsert` with
  `expectedSha256` set to the hash of the text the completion was built from, so a page that
  changed since (an agent's write, another editor) is refused by the runtime, under its lock;
- a page open with unsaved changes gets the edit in its buffer (`workspace/applyEdit`, pinned
  to the buffer's version) where the client applies edits, and is refused otherwise.

Every refusal says why in a message and writes nothing; the link just inserted then shows EV303
until the person acts.
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Sequence

from lsprotocol import types

from ...engine.block_refs import line_id
from ...engine.completion_candidates import NewBlockId, Snapshot
from ...engine.vault import buffer_hash, disk_hash, read_text, starts_with_bom, without_bom
from ...runtime import echoes_vault as rules
from ..echoes_server import EchoesServer
from ..lsp_convert import path_to_uri, request_failed, shown
from ..model_sync import resync
from ..vault_folder import Folder
from .document_context import locate

ADD_BLOCK_ID = "echoes.addBlockId"
NAME = re.compile(r"[A-Za-z0-9-]+")
# The runtime's error codes for a marker it does not write under (the vault is read-only).
READ_ONLY_CODES = ("unsupported-protocol", "not-initialized")


def snapshot(ls: EchoesServer, path: str) -> Optional[Snapshot]:
    """The text a block completion is built from: the open buffer, else the disk; with the
    runtime's hash of the file that text is (or, for a buffer, would be once saved)."""
    buffer = ls.document_text(path_to_uri(path))
    if buffer is not None:
        return Snapshot(without_bom(buffer), buffer_hash(buffer, starts_with_bom(path)))
    text, _error = read_text(path)
    if text is None:
        return None
    return Snapshot(without_bom(text), rules.text_sha256(text))


def command_for(new_block: NewBlockId, target_uri: str) -> types.Command:
    """The command a completion item runs after inserting a fresh id (`target_uri` is the URI
    of `new_block.path`, made once for all the items of a list)."""
    return types.Command(
        title=f"Add ^{new_block.name} to {os.path.basename(new_block.path)}",
        command=ADD_BLOCK_ID,
        # Positional (a list of five values is serialized at half the cost of an object, and
        # a list holds up to 200 of them): see `Request`.
        arguments=[
            target_uri,
            new_block.line,
            new_block.name,
            new_block.sha256,
            new_block.line_sha256,
        ],
    )


class Request:
    """The checked arguments of one `echoes.addBlockId`: the target page's URI, the 0-based line
    that gets the id, the id, the runtime's hash of the text the completion was built from, and
    the hash of that line (checked when the id goes into an open buffer)."""

    def __init__(self, args: Sequence[Any]) -> None:
        if len(args) != 5:
            raise request_failed("expected [uri, line, id, sha256, lineSha256]")
        uri, line, name, sha256, line_sha256 = args
        self.uri = _string(uri, "uri")
        self.name = _string(name, "id")
        self.sha256 = _string(sha256, "sha256")
        self.line_sha256 = _string(line_sha256, "lineSha256")
        if isinstance(line, bool) or not isinstance(line, int) or line < 0:
            raise request_failed("argument `line` must be a line number (0 or more)")
        self.line = line
        if not NAME.fullmatch(self.name):
            raise request_failed(f"`{self.name}` is not a block id (letters, digits and `-`)")


def _string(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise request_failed(f"argument `{name}` must be a non-empty string")
    return value


def refuse(ls: EchoesServer, request: Request, path: str, why: str, code: str) -> Exception:
    """Show why the id was not added (nothing was written), and the error to answer with."""
    message = f"Block id ^{request.name} not added to {os.path.basename(path)}: {why}"
    ls.show(message, types.MessageType.Warning)
    return shown(request_failed(message, {"code": code}))


def with_id(lines: List[str], line: int, name: str) -> str:
    """The text with ` ^name` at the end of `line`."""
    changed = list(lines)
    changed[line] = changed[line].rstrip() + " ^" + name
    return "\n".join(changed)


async def add_block_id(ls: EchoesServer, args: Sequence[Any]) -> Dict[str, Any]:
    request = Request(args)
    located = locate(ls, request.uri)
    if located is None or not located[0].vault.is_page(located[1]):
        raise request_failed(f"{request.uri!r} is not a knowledge page of an EchoesVault")
    folder, path = located
    if not folder.writable:
        reason = folder.vault.read_only_reason or "the vault is read-only"
        raise refuse(ls, request, path, f"EV700 {reason}; nothing was written", "read-only")
    uri = path_to_uri(path)
    buffer = ls.document_text(uri)
    if buffer is not None and buffer_hash(buffer, starts_with_bom(path)) != disk_hash(path):
        return await _edit_buffer(ls, request, uri, path, without_bom(buffer))
    return await _write_page(ls, folder, request, uri, path, buffer is not None)


async def _write_page(
    ls: EchoesServer, folder: Folder, request: Request, uri: str, path: str, is_open: bool
) -> Dict[str, Any]:
    """Upsert the page with the id added, checked against the hash the completion saw."""
    text, error = read_text(path)
    if text is None:
        raise refuse(ls, request, path, f"it cannot be read ({error})", "unreadable")
    lines = without_bom(text).split("\n")
    if request.line >= len(lines):
        raise refuse(ls, request, path, _CHANGED, "stale-hash")
    payload = {
        "filename": os.path.basename(path),
        "content": with_id(lines, request.line, request.name),
        "expectedSha256": request.sha256,
    }
    try:
        result = await ls.run_runtime(folder, ["upsert", "--payload", "-"], payload, quiet=True)
    except Exception as failure:
        raise _refused_write(ls, request, path, failure) from failure
    if is_open:
        # The editor reloads an unmodified buffer from the disk: that text is its new base.
        written = result.get("sha256") if isinstance(result, dict) else None
        ls.save_safety.written(uri, written or disk_hash(path))
        ls.publish(uri)
    await resync(ls, folder)
    return {"ok": True, "uri": uri, "id": request.name, "line": request.line, "written": "page"}


_CHANGED = (
    "the page changed since its blocks were listed; nothing was written. Complete the link "
    "again to pick the block from the current text"
)


def _refused_write(ls: EchoesServer, request: Request, path: str, failure: Exception) -> Exception:
    """The runtime refused the upsert: say why (a stale hash, an invalid page, a secret...).
    Only `stale-hash` means the page changed since the list; any other code is the runtime's
    own reason, told as it is."""
    data = getattr(failure, "data", None)
    code = data.get("code") if isinstance(data, dict) else None
    if code == "stale-hash":
        return refuse(ls, request, path, _CHANGED, "stale-hash")
    detail = getattr(failure, "message", str(failure))
    if code in READ_ONLY_CODES:
        # The marker changed since the server read it: the vault is read-only now.
        detail = f"EV700 {detail}"
    return refuse(ls, request, path, f"{detail} (nothing was written)", str(code or "refused"))


async def _edit_buffer(
    ls: EchoesServer, request: Request, uri: str, path: str, text: str
) -> Dict[str, Any]:
    """Add the id to an open buffer with unsaved changes, through the client."""
    if not ls.support.apply_edit:
        why = "it is open with unsaved changes and this editor takes no edits from the server; "
        raise refuse(ls, request, path, why + "save it, then complete the link again", "dirty")
    lines = text.split("\n")
    if (
        request.line >= len(lines)
        or rules.text_sha256(lines[request.line]) != request.line_sha256
        or _id_taken(lines, request.name)
    ):
        raise refuse(ls, request, path, _CHANGED.replace("page", "buffer", 1), "stale-buffer")
    document = ls.open_document(uri)
    line_text = lines[request.line]
    kept = len(line_text.rstrip())
    position_start = types.Position(request.line, ls.columns.to_client(line_text, kept))
    position_end = types.Position(request.line, ls.columns.to_client(line_text, len(line_text)))
    edit = types.TextEdit(types.Range(position_start, position_end), " ^" + request.name)
    versioned = types.OptionalVersionedTextDocumentIdentifier(
        uri=uri, version=getattr(document, "version", None)
    )
    workspace_edit = (
        types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(versioned, [edit])])
        if ls.support.document_changes
        else types.WorkspaceEdit(changes={uri: [edit]})
    )
    params = types.ApplyWorkspaceEditParams(edit=workspace_edit, label=f"Add ^{request.name}")
    try:
        answer = await ls.workspace_apply_edit_async(params)
    except Exception as error:
        why = f"the editor did not apply the edit ({error}); nothing was changed"
        raise refuse(ls, request, path, why, "not-applied") from error
    if not answer.applied:
        why = answer.failure_reason or "the editor did not apply the edit"
        raise refuse(ls, request, path, f"{why}; nothing was changed", "not-applied")
    return {"ok": True, "uri": uri, "id": request.name, "line": request.line, "written": "buffer"}


def _id_taken(lines: List[str], name: str) -> bool:
    """Whether a line of the text already ends with this id (compared without case)."""
    wanted = name.casefold()
    for line in lines:
        found = line_id(line)
        if found is not None and found.casefold() == wanted:
            return True
    return False
