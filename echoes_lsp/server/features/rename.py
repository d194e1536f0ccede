"""`textDocument/prepareRename` and `textDocument/rename` (a page renamed from a link to it or
from its title: its file and every link to it), and `workspace/willRenameFiles` (the links to a
page the editor itself is renaming)."""

from __future__ import annotations

import os
import shlex
from typing import Dict, List, Optional, Tuple, Union

from lsprotocol import types

from ...engine.link_targets import (
    Place,
    TextChange,
    check_new_name,
    link_at,
    rename_changes,
    title_of,
)
from ...engine.refusal import Refusal
from ...engine.vault import PAGE, Entry, Vault
from ...runtime import echoes_vault as rules
from ..echoes_server import EchoesServer
from ..lsp_convert import path_to_uri, uri_to_path
from ..vault_folder import Folder
from . import Feature
from .document_context import (
    DocumentPosition,
    Ranges,
    VaultDocument,
    file_uri,
    load_document,
    locate,
    wait_for_index,
)

PAGES_GLOB = "**/EchoesVault/pages/*.md"
RENAME_FILTERS = types.FileOperationRegistrationOptions(
    filters=[
        types.FileOperationFilter(
            scheme="file",
            pattern=types.FileOperationPattern(
                glob=PAGES_GLOB, matches=types.FileOperationPatternKind.File
            ),
        )
    ]
)
Changes = Dict[str, List[TextChange]]


def rename_target(document: VaultDocument, line: int, column: int) -> Tuple[Entry, types.Range]:
    """The page a rename at this position renames, and the span the editor highlights."""
    link = link_at(document.structure, line, column)
    if link is not None:
        if link.is_asset:
            raise Refusal("assets are renamed in the file explorer; this renames pages only")
        if not link.page_stem:
            raise Refusal(
                "this link points into its own page; rename the page from its title or from a "
                "[[link]] that names it"
            )
        page = document.vault.page(link.page_stem)
        if page is None:
            raise Refusal(f"there is no page named {link.page_stem!r} to rename")
        start = link.target_start + len(link.target) - len(link.target.rsplit("/", 1)[-1].lstrip())
        return page, document.range(line, start, line, link.target_end)
    title = title_of(document.structure)
    entry = document.entry
    if entry is not None and entry.kind == PAGE and title is not None and title.line == line:
        return entry, document.range(line, title.start, line, title.end)
    raise Refusal(
        "place the cursor on a [[link]] to a page, or on a page's title (its first # heading), "
        "to rename that page"
    )


def text_edits(
    ranges: Ranges, changes: Changes
) -> List[Tuple[str, Optional[int], List[types.TextEdit]]]:
    """(uri, version of the open document or None, edits) per file."""
    result = []
    for path in sorted(changes):
        opened = ranges.opened(path)
        edits = [
            types.TextEdit(
                range=ranges.range(Place(path, change.line, change.start, change.line, change.end)),
                new_text=change.new_text,
            )
            for change in changes[path]
        ]
        result.append(
            (
                file_uri(path) if opened is None else opened[0],
                opened[1] if opened else None,
                edits,
            )
        )
    return result


def document_edits(ranges: Ranges, changes: Changes) -> List[types.TextDocumentEdit]:
    return [
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=list(edits),
        )
        for uri, version, edits in text_edits(ranges, changes)
    ]


def workspace_edit(ls: EchoesServer, ranges: Ranges, changes: Changes) -> types.WorkspaceEdit:
    """Text edits in the shape the client declared: versioned `documentChanges`, else `changes`."""
    if ls.support.document_changes:
        return types.WorkspaceEdit(document_changes=list(document_edits(ranges, changes)))
    return types.WorkspaceEdit(
        changes={uri: edits for uri, _version, edits in text_edits(ranges, changes)}
    )


def rename_place(ls: EchoesServer, uri: str, position: types.Position) -> DocumentPosition:
    """The document and (line, column) a rename starts from, or a Refusal saying why not."""
    document = load_document(ls, uri)
    if document is None:
        raise Refusal("this file is not part of an EchoesVault")
    where = document.cursor(position)
    if where is None:
        raise Refusal("the position is outside the document")
    return DocumentPosition(document, *where)


def on_prepare_rename(
    ls: EchoesServer, params: types.PrepareRenameParams
) -> Optional[types.PrepareRenamePlaceholder]:
    at = rename_place(ls, params.text_document.uri, params.position)
    page, span = rename_target(at.document, at.line, at.column)
    return types.PrepareRenamePlaceholder(range=span, placeholder=page.stem)


async def on_rename(ls: EchoesServer, params: types.RenameParams) -> Optional[types.WorkspaceEdit]:
    at = rename_place(ls, params.text_document.uri, params.position)
    await wait_for_index(at.document.folder)
    page, _span = rename_target(at.document.with_fresh_entry(), at.line, at.column)
    return rename_edit(ls, at.document.folder, page, params.new_name)


def link_changes(ranges: Ranges, vault: Vault, page: Entry, new_stem: str) -> Changes:
    """The edits of every link to `page` that renaming it to `new_stem` needs."""
    return rename_changes(
        vault,
        page.key,
        new_stem,
        structure_of=ranges.structure_reader(vault),
        extra_sources=ranges.open_in(vault),
    )


def rename_edit(
    ls: EchoesServer, folder: Folder, page: Entry, new_name: str
) -> types.WorkspaceEdit:
    vault = folder.vault
    new_stem = check_new_name(vault, page, new_name)
    ranges = Ranges(ls)
    changes = link_changes(ranges, vault, page, new_stem)
    new_path = os.path.join(os.path.dirname(page.path), new_stem + ".md")
    if not ls.support.rename_files:
        ls.show(move_by_hand(folder, page.path, new_path, len(changes)), types.MessageType.Warning)
        return workspace_edit(ls, ranges, changes)
    operations: List[Union[types.TextDocumentEdit, types.RenameFile]] = list(
        document_edits(ranges, changes)
    )
    operations.append(
        types.RenameFile(
            old_uri=path_to_uri(page.path),
            new_uri=path_to_uri(new_path),
            options=types.RenameFileOptions(overwrite=False, ignore_if_exists=False),
        )
    )
    ls.renames.expect(page.path, new_path)
    return types.WorkspaceEdit(document_changes=operations)


def move_by_hand(folder: Folder, old: str, new: str, files: int) -> str:
    """What to tell a person whose editor cannot rename files: the links are edited, the file is
    theirs to move (the runtime has no rename command)."""
    old_rel = os.path.relpath(old, folder.workspace)
    new_rel = os.path.relpath(new, folder.workspace)
    if files:
        links = f"the links in {files} file{'s' if files != 1 else ''} are updated"
        after = " Until then those links point at a page that does not exist."
    else:
        links, after = "no link needed changing", ""
    return (
        f"Renaming {os.path.basename(old)} to {os.path.basename(new)}: {links}, but this editor "
        "cannot rename files for a language server, so move the file yourself: "
        f"git mv {shlex.quote(old_rel)} {shlex.quote(new_rel)} (or rename it in a file manager)."
        + after
    )


def stem_after_move(ls: EchoesServer, vault: Vault, page: Entry, new: str) -> Optional[str]:
    """The page's new stem when the editor moves its file to `new`; None (with a warning where
    the person should know) when its links are to stay as they are."""
    if not vault.is_page(new):
        ls.show(
            f"{page.rel} is moving out of pages/ (or is no longer a .md file); links to it "
            "are left as they are",
            types.MessageType.Warning,
        )
        return None
    name = os.path.basename(new)
    try:
        return check_new_name(vault, page, name)
    except Refusal as refusal:
        if rules.nfc(name[:-3] if name.endswith(".md") else name) != page.stem:
            ls.show(f"links to {page.stem} are not updated: {refusal}", types.MessageType.Warning)
        return None


async def moved_page_changes(ls: EchoesServer, ranges: Ranges, item: types.FileRename) -> Changes:
    """The link edits one file rename of the editor needs (none for a rename this server asked
    for, or for a file that is not a page)."""
    located = locate(ls, item.old_uri, create=False)
    new = uri_to_path(item.new_uri)
    if located is None or new is None or ls.renames.claim(located[1], new):
        return {}
    folder, old = located
    await wait_for_index(folder)
    page = folder.vault.entry(old)
    if page is None or page.kind != PAGE:
        return {}
    new_stem = stem_after_move(ls, folder.vault, page, new)
    if new_stem is None:
        return {}
    return link_changes(ranges, folder.vault, page, new_stem)


async def will_rename(
    ls: EchoesServer, params: types.RenameFilesParams
) -> Optional[types.WorkspaceEdit]:
    """Links to pages the editor is about to rename, updated to the new names."""
    combined: Changes = {}
    ranges = Ranges(ls)
    for item in params.files:
        for path, edits in (await moved_page_changes(ls, ranges, item)).items():
            combined.setdefault(path, []).extend(edits)
    if not combined:
        return None
    return workspace_edit(ls, ranges, combined)


FEATURES = [
    Feature(types.TEXT_DOCUMENT_PREPARE_RENAME, on_prepare_rename),
    Feature(types.TEXT_DOCUMENT_RENAME, on_rename),
    Feature(types.WORKSPACE_WILL_RENAME_FILES, will_rename, RENAME_FILTERS),
]
