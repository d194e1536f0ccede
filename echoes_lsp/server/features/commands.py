"""`workspace/executeCommand`: thin calls to the project runtime, plus the hash-checked save."""

from __future__ import annotations

import functools
import os
import tempfile
from typing import Any, Awaitable, Callable, Dict, Optional, Tuple

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from ...engine.vault import Vault, disk_hash, read_bytes
from ...runtime import echoes_vault as rules
from ..echoes_server import EchoesServer
from ..lsp_convert import path_to_uri, request_failed, shown, uri_to_path
from ..model_sync import resync
from ..save_safety import refused_as_stale
from ..vault_folder import Folder, card_line
from . import Command
from .block_ids import ADD_BLOCK_ID, add_block_id
from .document_context import locate

INIT = "echoes.init"
STATUS = "echoes.status"
START = "echoes.start"
SEARCH = "echoes.search"
APPEND = "echoes.append"
SAVE = "echoes.savePage"
REBUILD = "echoes.rebuildIndex"
HYDRATE = "echoes.hydrate"
END = "echoes.endSession"
CREATE = "echoes.createPage"
DISK = "echoes.showDiskVersion"
# The EV701 code action that overwrites without a question, for clients that cannot be asked.
OVERWRITE_TITLE = "Overwrite the disk version with this buffer"
Handler = Callable[..., Awaitable[Any]]


def options(args: Any) -> Dict[str, Any]:
    """The first argument as an object; a bare string is taken as the main value."""
    if isinstance(args, (list, tuple)):
        if not args:
            return {}
        first = args[0]
    else:
        first = args
    if isinstance(first, dict):
        return first
    if isinstance(first, str):
        return {"value": first}
    if first is None:
        return {}
    raise request_failed("command arguments must be one JSON object")


def text_arg(opts: Dict[str, Any], name: str, required: bool = True) -> Optional[str]:
    value = opts.get(name, opts.get("value") if required else None)
    if value is None:
        if required:
            raise request_failed(f"missing argument `{name}`")
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise request_failed(f"argument `{name}` must be a non-empty string")
    return value


def int_arg(opts: Dict[str, Any], name: str, default: int) -> int:
    value = opts.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise request_failed(f"argument `{name}` must be an integer")
    return value


def markdown(result: Any) -> Any:
    return {"ok": True, "markdown": result} if isinstance(result, str) else result


def workspace_for_init(ls: EchoesServer, opts: Dict[str, Any]) -> str:
    raw = opts.get("workspace")
    if isinstance(raw, str) and raw:
        path = uri_to_path(raw) if "://" in raw else raw
        if path and os.path.isdir(path):
            return os.path.abspath(path)
        raise request_failed(f"workspace {raw} is not a directory")
    folders = ls.folders()
    if folders:
        return folders[0].workspace
    for folder in ls.workspace.folders.values():
        path = uri_to_path(folder.uri)
        if path:
            return path
    if ls.workspace.root_path:
        return ls.workspace.root_path
    raise request_failed("no workspace folder to initialize")


def page_to_save(ls: EchoesServer, uri: str) -> Tuple[Folder, str, str]:
    """The vault, path and buffer text of the open page a checked save writes."""
    located = locate(ls, uri)
    if located is None:
        raise request_failed(f"{uri!r} is not inside an EchoesVault")
    folder, path = located
    if not folder.vault.is_page(path):
        raise request_failed("only knowledge pages (EchoesVault/pages/*.md) are saved this way")
    text = ls.document_text(uri)
    if text is None:
        raise request_failed(f"{uri} is not open; nothing to save")
    return folder, path, text


async def overwrite_confirmed(ls: EchoesServer, path: str, confirm: Any) -> bool:
    """Whether the person knowingly replaces the disk version: `confirmOverwrite` is true, or
    "ask" and they answered Overwrite (Cancel refuses the save). A client that cannot be asked
    (no `window.showMessage` capability: ALE never answers) is refused with how to confirm."""
    if confirm == "ask":
        if not ls.support.message_requests:
            raise cannot_ask(path)
        choice = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=f"{os.path.basename(path)} changed on disk. Overwrite the disk version "
                "with your buffer?",
                actions=[types.MessageActionItem("Overwrite"), types.MessageActionItem("Cancel")],
            )
        )
        if not (choice and choice.title == "Overwrite"):
            raise request_failed("save cancelled; the disk version was kept", {"code": "cancelled"})
        return True
    if not isinstance(confirm, bool):
        raise request_failed('`confirmOverwrite` must be true, false or "ask"')
    return confirm


def cannot_ask(path: str) -> JsonRpcException:
    """The refusal of an overwrite that was to be confirmed in a question the client cannot
    show: nothing is written, and the message names the two ways to confirm."""
    return request_failed(
        f"{os.path.basename(path)} was not saved: this editor cannot answer a question "
        "(window/showMessageRequest), so the overwrite was not confirmed and the disk version "
        f'was kept. To overwrite it, choose the code action "{OVERWRITE_TITLE}" or run '
        f"{SAVE} with `confirmOverwrite: true`.",
        {"code": "confirmation-unavailable"},
    )


def refused_save(
    ls: EchoesServer, uri: str, path: str, error: Exception
) -> Optional[JsonRpcException]:
    """Tell the person why a checked save failed. A disk that changed meanwhile marks the page
    EV701 and gives the error to answer with; any other failure is answered as it is (None)."""
    detail = getattr(error, "message", str(error))
    if refused_as_stale(error):
        ls.save_safety.refused(uri, path)
        ls.publish(uri)
        message = (
            f"EV701: {os.path.basename(path)} changed on disk since it was opened; nothing "
            "was written. Reload the disk version, or confirm an overwrite."
        )
        ls.show(message, types.MessageType.Error)
        return shown(request_failed(f"{message} ({detail})", {"code": "EV701"}))
    if not getattr(error, "shown", False):
        ls.show(f"Save through EchoesVault failed: {detail}", types.MessageType.Error)
        if isinstance(error, JsonRpcException):
            shown(error)
    return None


async def save_page(ls: EchoesServer, opts: Dict[str, Any]) -> Dict[str, Any]:
    """Upsert the buffer with the hash it was based on; never overwrite a concurrent change."""
    uri = text_arg(opts, "uri")
    assert uri is not None
    folder, path, text = page_to_save(ls, uri)
    if await overwrite_confirmed(ls, path, opts.get("confirmOverwrite", False)):
        # Explicit confirmation: the current disk version is knowingly replaced.
        ls.save_safety.overwrite_confirmed(uri, path)
    payload = ls.save_safety.upsert_payload(uri, path, text)
    try:
        result = await ls.run_runtime(folder, ["upsert", "--payload", "-"], payload, quiet=True)
    except Exception as error:
        answer = refused_save(ls, uri, path, error)
        if answer is not None:
            raise answer from error
        raise
    written = result.get("sha256") if isinstance(result, dict) else disk_hash(path)
    ls.save_safety.written(uri, written)
    changed = folder.vault.open(path, text)
    ls.publish(uri)
    ls.after_change(folder, changed)
    await resync(ls, folder)
    if isinstance(result, dict):
        result = dict(result)
        result["uri"] = uri
    return result  # type: ignore[no-any-return]


def reported(name: str, handler: Handler) -> Handler:
    """`handler`, with its every refusal also shown to the user, exactly once."""

    @functools.wraps(handler)
    async def run(ls: EchoesServer, *args: Any) -> Any:
        try:
            return await handler(ls, *args)
        except JsonRpcException as error:
            if not getattr(error, "shown", False):
                ls.show(f"{name}: {error.message}", types.MessageType.Error)
            raise

    return run


async def init(ls: EchoesServer, *args: Any) -> Any:
    opts = options(args)
    workspace = workspace_for_init(ls, opts)
    existing = ls.folder_for_path(workspace, create=False)
    folder = existing or Folder(workspace, Vault(workspace))
    result = await ls.run_runtime(folder, ["init"], mutating=False)
    folder = ls.add_folder(workspace)
    folder.vault.load()
    ls.scheduler.spawn(ls.finish_loading(folder))
    return result


def with_editor_line(card: str, line: str) -> str:
    """The runtime's card with what the editor counts under its integrity line (at the end of a
    card that has none)."""
    lines = card.split("\n")
    at = next((n for n, text in enumerate(lines) if "**Integrity:**" in text), None)
    if at is None:
        return f"{card.rstrip()}\n\n{line}\n"
    return "\n".join([*lines[: at + 1], "", line, *lines[at + 1 :]])


async def status(ls: EchoesServer, *args: Any) -> Any:
    opts = options(args)
    folder = ls.default_folder(opts.get("workspace"))
    fmt = opts.get("format", "json")
    if fmt not in ("json", "card"):
        raise request_failed("`format` must be json or card")
    result = await ls.run_runtime(folder, ["status", "--format", fmt], mutating=False)
    editor = folder.status(ls.open_problems(folder))
    if isinstance(result, str):
        return markdown(with_editor_line(result, card_line(editor)))
    if isinstance(result, dict):
        result["editor"] = {k: editor[k] for k in ("issueCount", "openProblemCount")}
    return result


async def start(ls: EchoesServer, *args: Any) -> Any:
    opts = options(args)
    folder = ls.default_folder(opts.get("workspace"))
    recent = int_arg(opts, "recent", 3)
    result = await ls.run_runtime(folder, ["start", "--recent", str(recent)])
    await resync(ls, folder)
    return markdown(result)


async def search(ls: EchoesServer, *args: Any) -> Any:
    opts = options(args)
    folder = ls.default_folder(opts.get("workspace"))
    query = text_arg(opts, "query")
    limit = int_arg(opts, "limit", 100)
    assert query is not None
    result = await ls.run_runtime(folder, ["search", query, "--limit", str(limit)], mutating=False)
    if isinstance(result, dict):
        for item in result.get("results", []):
            if isinstance(item, dict) and isinstance(item.get("file"), str):
                item["uri"] = path_to_uri(os.path.join(folder.workspace, item["file"]))
    return result


async def append(ls: EchoesServer, *args: Any) -> Any:
    opts = options(args)
    folder = ls.default_folder(opts.get("workspace"))
    entry = text_arg(opts, "entry")
    payload: Dict[str, Any] = {"entry": entry}
    agent = opts.get("agent") or ls.settings.agent
    payload["agent"] = agent
    result = await ls.run_runtime(folder, ["append", "--payload", "-"], payload)
    await resync(ls, folder)
    if isinstance(result, dict) and isinstance(result.get("dailyLog"), str):
        result["uri"] = path_to_uri(result["dailyLog"])
    return result


async def save(ls: EchoesServer, *args: Any) -> Any:
    return await save_page(ls, options(args))


async def rebuild(ls: EchoesServer, *args: Any) -> Any:
    folder = ls.default_folder(options(args).get("workspace"))
    result = await ls.run_runtime(folder, ["rebuild-index"])
    await resync(ls, folder)
    ls.refresh_paths([os.path.join(folder.vault.root, rules.INDEX_NAME)])
    return result


async def hydrate(ls: EchoesServer, *args: Any) -> Any:
    folder = ls.default_folder(options(args).get("workspace"))
    result = await ls.run_runtime(folder, ["hydrate"])
    await resync(ls, folder)
    return result


async def end(ls: EchoesServer, *args: Any) -> Any:
    opts = options(args)
    if opts.get("confirmExplicitUserEnd") is not True:
        raise request_failed(
            "ending the session needs an explicit user request: pass "
            "`confirmExplicitUserEnd: true` only after the user asked to end or save it",
            {"code": "confirmation-required"},
        )
    folder = ls.default_folder(opts.get("workspace"))
    payload: Dict[str, Any] = {"dailySummary": text_arg(opts, "dailySummary")}
    payload["agent"] = opts.get("agent") or ls.settings.agent
    if "pages" in opts:
        payload["pages"] = opts["pages"]
    result = await ls.run_runtime(
        folder, ["end", "--confirm-explicit-user-end", "--payload", "-"], payload
    )
    await resync(ls, folder)
    return result


async def create(ls: EchoesServer, *args: Any) -> Any:
    opts = options(args)
    folder = ls.default_folder(opts.get("workspace"))
    name = text_arg(opts, "name")
    assert name is not None
    from ...engine.page_fixes import new_page_text

    try:
        filename = rules.normalize_page_name(name)
    except rules.EchoesError as error:
        raise request_failed(str(error)) from error
    content = opts.get("content") or new_page_text(filename[:-3])
    result = await ls.run_runtime(
        folder, ["upsert", "--payload", "-"], {"filename": filename, "content": content}
    )
    await resync(ls, folder)
    if isinstance(result, dict) and isinstance(result.get("page"), str):
        result["uri"] = path_to_uri(result["page"])
        if opts.get("open", False):
            await show_or_name(ls, result["page"], "The new page is")
    return result


async def show_disk(ls: EchoesServer, *args: Any) -> Any:
    opts = options(args)
    uri = text_arg(opts, "uri") or ""
    # Only a file of a vault: never any file the client names.
    located = locate(ls, uri)
    path = located[1] if located is not None else None
    if not path or not os.path.isfile(path):
        raise request_failed(f"{uri!r} is not a file of an EchoesVault on disk")
    data, error = read_bytes(path)
    if data is None:
        raise request_failed(f"{uri} {error}")
    text = rules.normalize_newlines(data.decode("utf-8", "replace"))
    directory = tempfile.mkdtemp(prefix="echoes-disk-")
    copy = os.path.join(directory, "disk-" + os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as handle:
        handle.write(text)
    shown_in_editor = await show_or_name(
        ls, copy, f"The disk version of {os.path.basename(path)} is copied to"
    )
    return {
        "ok": True,
        "uri": path_to_uri(copy),
        "path": copy,
        "shown": shown_in_editor,
        "text": text,
    }


async def show_or_name(ls: EchoesServer, path: str, what: str) -> bool:
    """Open `path` in the editor (`window/showDocument`) when the client can; otherwise, or when
    it does not confirm (eglot 1.9 answers null), name the file in a message. Whether it opened."""
    opened = False
    if ls.support.show_document:
        try:
            answer = await ls.window_show_document_async(
                types.ShowDocumentParams(uri=path_to_uri(path), take_focus=True)
            )
            opened = bool(getattr(answer, "success", False))
        except Exception as error:
            ls.log(f"window/showDocument failed: {error}")
    if not opened:
        ls.show(f"{what} {path}", types.MessageType.Info)
    return opened


async def block_id(ls: EchoesServer, *args: Any) -> Any:
    arguments = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    return await add_block_id(ls, list(arguments))


COMMANDS = [
    Command(name, reported(name, handler))
    for name, handler in (
        (INIT, init),
        (STATUS, status),
        (START, start),
        (SEARCH, search),
        (APPEND, append),
        (SAVE, save),
        (REBUILD, rebuild),
        (HYDRATE, hydrate),
        (END, end),
        (CREATE, create),
        (DISK, show_disk),
        (ADD_BLOCK_ID, block_id),
    )
]
