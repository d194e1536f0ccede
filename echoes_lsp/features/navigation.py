"""Navigation and completion handlers: thin translations between LSP types and the pure functions
of `completion.py` and `navigation.py`.

Completion, hover, go-to-definition, references, document links, document and workspace symbols,
code lens ("N backlinks"), rename with prepareRename, and link updates when a page file is renamed
in the editor (`workspace/willRenameFiles`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from lsprotocol import types
from lsprotocol.converters import get_converter

from .. import completion as completing
from ..lsp_util import Columns, make_range, path_to_uri, request_failed, uri_to_path
from ..markdown import Link, Structure
from ..navigation import (
    Place,
    Refusal,
    Section,
    Subject,
    TextChange,
    backlink_sources,
    check_new_name,
    declaration,
    definition,
    hover_markdown,
    link_at,
    outline,
    page_search,
    references,
    rename_changes,
    resolve,
    structure_for,
    subject_at,
    title_of,
    title_place,
)
from ..runtime import echoes_vault as rules
from ..state import EchoesServer, Folder, sliced
from ..vault import PAGE, Entry, Vault, read_text
from . import Command, Feature

log = logging.getLogger("echoes_lsp")

REFERENCES_COMMAND = "echoes.references"
TRIGGERS = ["[", "#", "^", "|", ":", " "]
PAGES_GLOB = "**/EchoesVault/pages/*.md"
LOAD_WAIT = 10.0
SYMBOL_WAIT = 2.0
LENS_REFRESH_DELAY = 0.5
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

KINDS = {
    completing.PAGE: types.CompletionItemKind.File,
    completing.ASSET_KIND: types.CompletionItemKind.File,
    completing.HEADING: types.CompletionItemKind.Reference,
    completing.BLOCK: types.CompletionItemKind.Reference,
    completing.ALIAS: types.CompletionItemKind.Text,
    completing.KEY: types.CompletionItemKind.Property,
    completing.VALUE: types.CompletionItemKind.Value,
}


# -- documents and positions ----------------------------------------------------------------------


@dataclass
class Doc:
    """A vault file as the request sees it: the open buffer, else the disk."""

    uri: str
    path: str
    folder: Folder
    text: str
    lines: List[str]
    entry: Optional[Entry]
    structure: Structure

    @property
    def vault(self) -> Vault:
        return self.folder.vault

    @property
    def is_page(self) -> bool:
        return self.vault.is_page(self.path)


def open_documents(ls: EchoesServer) -> Dict[str, Tuple[str, Optional[int]]]:
    """Path → (uri, version) of every open document."""
    found: Dict[str, Tuple[str, Optional[int]]] = {}
    for uri, document in list(ls.workspace.text_documents.items()):
        path = uri_to_path(uri)
        if path:
            found[path] = (uri, document.version)
    return found


def load(ls: EchoesServer, uri: str) -> Optional[Doc]:
    located = ls.locate(uri)
    if located is None:
        return None
    folder, path = located
    text = ls.document_text(uri)
    if text is None:
        if not os.path.isfile(path):
            return None
        text, _error = read_text(path)
        if text is None:
            return None
    entry = folder.vault.entry(path)
    structure = structure_for(folder.vault, path, text) or Structure([], [], [])
    return Doc(uri, path, folder, text, text.split("\n"), entry, structure)


def cursor(ls: EchoesServer, doc: Doc, position: types.Position) -> Optional[Tuple[int, int]]:
    """(line, code-point column) of a client position; None when it is outside the text."""
    if position.line < 0 or position.line >= len(doc.lines):
        return None
    return position.line, ls.columns.from_client(doc.lines[position.line], position.character)


class Ranges:
    """Engine places → LSP ranges, reading a file's lines only when its columns need converting."""

    def __init__(self, ls: EchoesServer) -> None:
        self.ls = ls
        self.opened = open_documents(ls)
        self.vaults = [folder.vault for folder in ls.folders.values()]
        self.cache: Dict[str, Optional[List[str]]] = {}

    def lines(self, path: str) -> Optional[List[str]]:
        if path in self.cache:
            return self.cache[path]
        lines: Optional[List[str]]
        opened = self.opened.get(path)
        if opened is not None:
            text = self.ls.document_text(opened[0])
            lines = text.split("\n") if text is not None else None
        else:
            entry = None
            for vault in self.vaults:
                entry = vault.entries.get(path)
                if entry is not None:
                    break
            known_ascii = entry is not None and entry.parsed and entry.ascii and entry.text_hash
            if self.ls.columns.encoding == "utf-32" or known_ascii:
                lines = None
            else:
                text, _error = read_text(path)
                lines = text.split("\n") if text is not None else None
        self.cache[path] = lines
        return lines

    def range(self, place: Place) -> types.Range:
        lines = self.lines(place.path)
        if lines is None:
            return types.Range(
                start=types.Position(line=place.line, character=place.start),
                end=types.Position(line=place.end_line, character=place.end),
            )
        return make_range(
            lines, self.ls.columns, place.line, place.start, place.end_line, place.end
        )

    def uri(self, path: str) -> str:
        return file_uri(path)

    def location(self, place: Place) -> types.Location:
        return types.Location(uri=self.uri(place.path), range=self.range(place))

    def structure_reader(self, vault: Vault) -> Callable[[Entry], Optional[Structure]]:
        """An open file's structure as its buffer has it (edits may not be analysed yet)."""

        def structure_of(entry: Entry) -> Optional[Structure]:
            opened = self.opened.get(entry.path)
            if opened is None:
                return entry.structure
            return structure_for(vault, entry.path, self.ls.document_text(opened[0]))

        return structure_of

    def open_in(self, vault: Vault) -> List[str]:
        return [path for path in self.opened if vault.rel(path) is not None]


@functools.lru_cache(maxsize=1 << 16)
def file_uri(path: str) -> str:
    """`path_to_uri`, remembered: reference lists name the same files again and again."""
    return path_to_uri(path)


def link_range(ls: EchoesServer, doc: Doc, link: Link) -> types.Range:
    return make_range(doc.lines, ls.columns, link.line, link.start, link.line, link.end)


async def ready(folder: Folder, timeout: float = LOAD_WAIT) -> None:
    """Wait until the whole vault is parsed; past the timeout, parse the rest now."""
    if folder.loaded.is_set():
        return
    try:
        await asyncio.wait_for(folder.loaded.wait(), timeout)
    except asyncio.TimeoutError:
        folder.vault.complete()


def capability(ls: EchoesServer, path: str, default: Any = None) -> Any:
    """A client capability by dotted attribute path (`text_document.definition.link_support`)."""
    value: Any = ls.client_capabilities
    for name in path.split("."):
        value = getattr(value, name, None)
        if value is None:
            return default
    return value


# -- completion ------------------------------------------------------------------------------------


def completion_item(
    ls: EchoesServer, line_text: str, line: int, candidate: completing.Candidate, tags: bool
) -> types.CompletionItem:
    start = ls.columns.to_client(line_text, candidate.start)
    end = ls.columns.to_client(line_text, candidate.end)
    return types.CompletionItem(
        label=candidate.label,
        kind=KINDS.get(candidate.kind, types.CompletionItemKind.Text),
        detail=rules.mask_secrets(candidate.detail) if candidate.detail else candidate.detail,
        documentation=(
            types.MarkupContent(
                kind=types.MarkupKind.Markdown, value=rules.mask_secrets(candidate.documentation)
            )
            if candidate.documentation
            else None
        ),
        sort_text=candidate.sort_text,
        filter_text=candidate.filter_text,
        text_edit=types.TextEdit(
            range=types.Range(
                start=types.Position(line=line, character=start),
                end=types.Position(line=line, character=end),
            ),
            new_text=candidate.new_text,
        ),
        tags=[types.CompletionItemTag.Deprecated] if candidate.deprecated and tags else None,
        deprecated=True if candidate.deprecated else None,
    )


async def complete(
    ls: EchoesServer, params: types.CompletionParams
) -> Optional[types.CompletionList]:
    doc = load(ls, params.text_document.uri)
    if doc is None:
        return None
    if not doc.folder.loaded.is_set():
        # Names and summaries come from the whole vault: right after start-up, wait for its
        # parse, then read the buffer again, as it may have changed meanwhile.
        await ready(doc.folder)
        doc = load(ls, params.text_document.uri)
        if doc is None:
            return None
    where = cursor(ls, doc, params.position)
    if where is None:
        return None
    line, column = where
    found = completing.complete(
        doc.vault, doc.text, line, column, doc.is_page, own=doc.structure, lines_of=ls.lines_of
    )
    if found is None:
        return None
    tags = bool(capability(ls, "text_document.completion.completion_item.tag_support"))
    line_text = doc.lines[line]
    return types.CompletionList(
        is_incomplete=found.incomplete,
        items=[completion_item(ls, line_text, line, item, tags) for item in found.items],
    )


# -- hover, definition, document links -------------------------------------------------------------


def link_under_cursor(
    ls: EchoesServer, uri: str, position: types.Position
) -> Optional[Tuple[Doc, Link]]:
    """The open document and the link the cursor is on, if any."""
    doc = load(ls, uri)
    if doc is None:
        return None
    where = cursor(ls, doc, position)
    if where is None:
        return None
    link = link_at(doc.structure, *where)
    return (doc, link) if link is not None else None


def hover(ls: EchoesServer, params: types.HoverParams) -> Optional[types.Hover]:
    found = link_under_cursor(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    doc, link = found
    target = resolve(doc.vault, doc.entry, link, doc.structure)
    return types.Hover(
        contents=types.MarkupContent(
            # a page's preview may quote credential-shaped text: shown masked, never as written
            kind=types.MarkupKind.Markdown,
            value=rules.mask_secrets(hover_markdown(doc.vault, target)),
        ),
        range=link_range(ls, doc, link),
    )


def goto_definition(
    ls: EchoesServer, params: types.DefinitionParams
) -> Optional[Union[List[types.LocationLink], List[types.Location]]]:
    under = link_under_cursor(ls, params.text_document.uri, params.position)
    if under is None:
        return None
    doc, link = under
    found = definition(resolve(doc.vault, doc.entry, link, doc.structure))
    if found is None:
        return None
    whole, selection = found
    ranges = Ranges(ls)
    if doc.path in (whole.path, selection.path):
        ranges.cache[doc.path] = doc.lines
    if capability(ls, "text_document.definition.link_support"):
        return [
            types.LocationLink(
                target_uri=ranges.uri(whole.path),
                target_range=ranges.range(whole),
                target_selection_range=ranges.range(selection),
                origin_selection_range=link_range(ls, doc, link),
            )
        ]
    return [ranges.location(selection)]


def document_links(
    ls: EchoesServer, params: types.DocumentLinkParams
) -> Optional[List[types.DocumentLink]]:
    doc = load(ls, params.text_document.uri)
    if doc is None:
        return None
    found: List[types.DocumentLink] = []
    tooltips = bool(capability(ls, "text_document.document_link.tooltip_support"))
    for link in doc.structure.links:
        target = resolve(doc.vault, doc.entry, link, doc.structure)
        place = definition(target)
        if place is None:
            continue
        uri = path_to_uri(place[1].path)
        if target.heading is not None or target.block is not None:
            uri += f"#L{place[1].line + 1}"  # opens at the heading or block line
        tooltip = None
        if not tooltips:
            pass
        elif target.page is not None:
            tooltip = target.page.info.summary if target.page.info is not None else None
        elif target.asset is not None:
            tooltip = doc.vault.rel(target.asset)
        found.append(
            types.DocumentLink(range=link_range(ls, doc, link), target=uri, tooltip=tooltip)
        )
    return found


# -- references and code lens ---------------------------------------------------------------------


async def find_references(
    ls: EchoesServer, uri: str, position: types.Position, include_declaration: bool
) -> Optional[List[types.Location]]:
    doc = load(ls, uri)
    if doc is None:
        return None
    where = cursor(ls, doc, position)
    if where is None:
        return None
    await ready(doc.folder)
    doc.entry = doc.vault.entry(doc.path)
    subject = subject_at(doc.vault, doc.entry, doc.structure, *where)
    if subject is None:
        return None
    return locate_references(ls, doc.vault, subject, include_declaration)


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


def lens_title(count: int) -> str:
    return f"{count} backlink" + ("" if count == 1 else "s")


async def code_lenses(
    ls: EchoesServer, params: types.CodeLensParams
) -> Optional[List[types.CodeLens]]:
    doc = load(ls, params.text_document.uri)
    if doc is None or doc.entry is None or doc.entry.kind != PAGE:
        return None
    await ready(doc.folder)
    entry = doc.vault.entry(doc.path)
    if entry is None:
        return None
    count = len(backlink_sources(doc.vault, entry))
    title = title_of(doc.structure)
    place = title_place(entry, doc.structure)
    line_text = doc.lines[place.line] if place.line < len(doc.lines) else ""
    position = types.Position(
        line=place.line, character=ls.columns.to_client(line_text, title.start if title else 0)
    )
    return [
        types.CodeLens(
            range=make_range(doc.lines, ls.columns, place.line, place.start, place.line, place.end),
            command=types.Command(
                title=lens_title(count),
                command=REFERENCES_COMMAND,
                arguments=[
                    {
                        "uri": doc.uri,
                        "position": {"line": position.line, "character": position.character},
                    }
                ],
            ),
        )
    ]


# -- symbols ---------------------------------------------------------------------------------------


def section_symbols(
    ls: EchoesServer, lines: Sequence[str], sections: Sequence[Section]
) -> List[types.DocumentSymbol]:
    symbols = []
    for section in sections:
        heading = section.heading
        end_line = min(section.end_line, max(0, len(lines) - 1))
        symbols.append(
            types.DocumentSymbol(
                name=heading.text or "#" * heading.level,
                detail="#" * heading.level,
                kind=types.SymbolKind.String,
                range=make_range(
                    lines, ls.columns, heading.line, 0, end_line, len(lines[end_line])
                ),
                selection_range=make_range(
                    lines, ls.columns, heading.line, heading.start, heading.line, heading.end
                ),
                children=section_symbols(ls, lines, section.children),
            )
        )
    return symbols


def flat_symbols(
    ls: EchoesServer,
    uri: str,
    lines: Sequence[str],
    sections: Sequence[Section],
    parent: Optional[str],
) -> List[types.SymbolInformation]:
    found = []
    for section in sections:
        heading = section.heading
        name = heading.text or "#" * heading.level
        end_line = min(section.end_line, max(0, len(lines) - 1))
        found.append(
            types.SymbolInformation(
                name=name,
                kind=types.SymbolKind.String,
                location=types.Location(
                    uri=uri,
                    range=make_range(
                        lines, ls.columns, heading.line, 0, end_line, len(lines[end_line])
                    ),
                ),
                container_name=parent,
            )
        )
        found.extend(flat_symbols(ls, uri, lines, section.children, name))
    return found


def document_symbols(
    ls: EchoesServer, params: types.DocumentSymbolParams
) -> Optional[Union[List[types.DocumentSymbol], List[types.SymbolInformation]]]:
    doc = load(ls, params.text_document.uri)
    if doc is None:
        return None
    sections = outline(doc.structure, len(doc.lines))
    if capability(ls, "text_document.document_symbol.hierarchical_document_symbol_support"):
        return section_symbols(ls, doc.lines, sections)
    return flat_symbols(ls, doc.uri, doc.lines, sections, None)


async def workspace_symbols(
    ls: EchoesServer, params: types.WorkspaceSymbolParams
) -> List[types.SymbolInformation]:
    folders = list(ls.folders.values())
    for folder in folders:
        if not folder.loaded.is_set():
            try:
                await asyncio.wait_for(folder.loaded.wait(), SYMBOL_WAIT)
            except asyncio.TimeoutError:
                pass
    # Sliced: a long query over a large vault never holds other requests for long.
    cards = await sliced(page_search([folder.vault for folder in folders], params.query or ""))
    tags = bool(capability(ls, "workspace.symbol.tag_support"))
    return [
        types.SymbolInformation(
            name=card.stem,
            kind=types.SymbolKind.File,
            location=types.Location(
                uri=file_uri(card.path),
                range=types.Range(
                    start=types.Position(line=card.title_line, character=0),
                    end=types.Position(line=card.title_line, character=0),
                ),
            ),
            container_name=card.summary or None,
            tags=[types.SymbolTag.Deprecated] if card.deprecated and tags else None,
            deprecated=True if card.deprecated and not tags else None,
        )
        for card in cards
    ]


# -- rename ----------------------------------------------------------------------------------------


def rename_target(doc: Doc, columns: Columns, line: int, column: int) -> Tuple[Entry, types.Range]:
    """The page a rename at this position renames, and the span the editor highlights."""
    link = link_at(doc.structure, line, column)
    if link is not None:
        if link.is_asset:
            raise Refusal("assets are renamed in the file explorer; this renames pages only")
        if not link.page_stem:
            raise Refusal(
                "this link points into its own page; rename the page from its title or from a "
                "[[link]] that names it"
            )
        page = doc.vault.page(link.page_stem)
        if page is None:
            raise Refusal(f"there is no page named {link.page_stem!r} to rename")
        start = link.target_start + len(link.target) - len(link.target.rsplit("/", 1)[-1].lstrip())
        return page, make_range(doc.lines, columns, line, start, line, link.target_end)
    title = title_of(doc.structure)
    if (
        doc.entry is not None
        and doc.entry.kind == PAGE
        and title is not None
        and title.line == line
    ):
        return doc.entry, make_range(doc.lines, columns, line, title.start, line, title.end)
    raise Refusal(
        "place the cursor on a [[link]] to a page, or on a page's title (its first # heading), "
        "to rename that page"
    )


def text_edits(
    ranges: Ranges, changes: Dict[str, List[TextChange]]
) -> List[Tuple[str, Optional[int], List[types.TextEdit]]]:
    """(uri, version of the open document or None, edits) per file."""
    result = []
    for path in sorted(changes):
        opened = ranges.opened.get(path)
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


def document_edits(
    ranges: Ranges, changes: Dict[str, List[TextChange]]
) -> List[types.TextDocumentEdit]:
    return [
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=list(edits),
        )
        for uri, version, edits in text_edits(ranges, changes)
    ]


def supports_file_rename(ls: EchoesServer) -> bool:
    """Resource operations only travel in `documentChanges`, so a client that lists `rename`
    among them accepts both (Neovim does not set `documentChanges` but applies them)."""
    operations = capability(ls, "workspace.workspace_edit.resource_operations", []) or []
    return types.ResourceOperationKind.Rename in operations or "rename" in operations


def supports_document_changes(ls: EchoesServer) -> bool:
    return bool(
        capability(ls, "workspace.workspace_edit.document_changes")
    ) or supports_file_rename(ls)


def settled(answer: asyncio.Future[Any]) -> None:
    """Consume the outcome of a request whose answer does not matter (a refused refresh)."""
    if not answer.cancelled() and answer.exception() is not None:
        log.debug("client refused a request: %s", answer.exception())


def follow_lenses(ls: EchoesServer, folder: Folder) -> None:
    """Ask the client to refresh code lenses after the link graph of this vault changes."""
    if folder.lenses_followed or not capability(ls, "workspace.code_lens.refresh_support"):
        return
    folder.lenses_followed = True
    folder.vault.listeners.append(lambda _path: schedule_lens_refresh(ls))


def schedule_lens_refresh(ls: EchoesServer) -> None:
    """One refresh request per burst of changes."""
    if ls.lens_timer is not None:
        return
    try:
        ls.lens_timer = asyncio.get_event_loop().call_later(LENS_REFRESH_DELAY, refresh_lenses, ls)
    except RuntimeError:
        pass


def refresh_lenses(ls: EchoesServer) -> None:
    ls.lens_timer = None
    try:
        answer = ls.workspace_code_lens_refresh(None)
    except Exception:
        log.exception("codeLens refresh failed")
        return
    if isinstance(answer, asyncio.Future):
        answer.add_done_callback(settled)


async def on_references(
    ls: EchoesServer, params: types.ReferenceParams
) -> Optional[List[types.Location]]:
    return await find_references(
        ls, params.text_document.uri, params.position, params.context.include_declaration
    )


async def on_code_lens(ls: EchoesServer, params: types.CodeLensParams) -> Any:
    located = ls.locate(params.text_document.uri)
    if located is None:
        return None
    follow_lenses(ls, located[0])
    return await code_lenses(ls, params)


async def references_command(ls: EchoesServer, *args: Any) -> Any:
    """`{uri, position}` → the Locations of the references there (for code lenses)."""
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
    found = await find_references(ls, argument["uri"], position, False)
    return get_converter().unstructure(found or [])


def rename_place(ls: EchoesServer, uri: str, position: types.Position) -> Tuple[Doc, int, int]:
    """The document and (line, column) a rename starts from, or a Refusal saying why not."""
    doc = load(ls, uri)
    if doc is None:
        raise Refusal("this file is not part of an EchoesVault")
    where = cursor(ls, doc, position)
    if where is None:
        raise Refusal("the position is outside the document")
    return doc, where[0], where[1]


def on_prepare_rename(
    ls: EchoesServer, params: types.PrepareRenameParams
) -> Optional[types.PrepareRenamePlaceholder]:
    doc, line, column = rename_place(ls, params.text_document.uri, params.position)
    page, span = rename_target(doc, ls.columns, line, column)
    return types.PrepareRenamePlaceholder(range=span, placeholder=page.stem)


async def on_rename(ls: EchoesServer, params: types.RenameParams) -> Optional[types.WorkspaceEdit]:
    if not supports_file_rename(ls):
        raise Refusal(
            "renaming a page renames its file, and this editor does not accept file renames "
            "in workspace edits (workspaceEdit.resourceOperations lacks `rename`); rename the "
            "file in the file explorer instead, and its links are updated"
        )
    doc, line, column = rename_place(ls, params.text_document.uri, params.position)
    await ready(doc.folder)
    doc.entry = doc.vault.entry(doc.path)
    page, _span = rename_target(doc, ls.columns, line, column)
    return rename_edit(ls, doc.folder, page, params.new_name)


def rename_edit(
    ls: EchoesServer, folder: Folder, page: Entry, new_name: str
) -> types.WorkspaceEdit:
    vault = folder.vault
    new_stem = check_new_name(vault, page, new_name)
    ranges = Ranges(ls)
    changes = rename_changes(
        vault,
        page.key,
        new_stem,
        structure_of=ranges.structure_reader(vault),
        extra_sources=ranges.open_in(vault),
    )
    old_uri = path_to_uri(page.path)
    new_path = os.path.join(os.path.dirname(page.path), new_stem + ".md")
    new_uri = path_to_uri(new_path)
    operations: List[Union[types.TextDocumentEdit, types.RenameFile]] = list(
        document_edits(ranges, changes)
    )
    operations.append(
        types.RenameFile(
            old_uri=old_uri,
            new_uri=new_uri,
            options=types.RenameFileOptions(overwrite=False, ignore_if_exists=False),
        )
    )
    ls.renames.expect(page.path, new_path)
    return types.WorkspaceEdit(document_changes=operations)


async def will_rename(
    ls: EchoesServer, params: types.RenameFilesParams
) -> Optional[types.WorkspaceEdit]:
    """Links to pages the editor is about to rename, updated to the new names."""
    combined: Dict[str, List[TextChange]] = {}
    ranges = Ranges(ls)
    for item in params.files:
        located = ls.locate(item.old_uri, create=False)
        new = uri_to_path(item.new_uri)
        if located is None or new is None or ls.renames.claim(located[1], new):
            continue
        folder, old = located
        vault = folder.vault
        await ready(folder)
        page = vault.entry(old)
        if page is None or page.kind != PAGE:
            continue
        if not vault.is_page(new):
            ls.show(
                f"{page.rel} is moving out of pages/ (or is no longer a .md file); links to it "
                "are left as they are",
                types.MessageType.Warning,
            )
            continue
        name = os.path.basename(new)
        try:
            new_stem = check_new_name(vault, page, name)
        except Refusal as refusal:
            if rules.nfc(name[:-3] if name.endswith(".md") else name) != page.stem:
                ls.show(
                    f"links to {page.stem} are not updated: {refusal}", types.MessageType.Warning
                )
            continue
        found = rename_changes(
            vault,
            page.key,
            new_stem,
            structure_of=ranges.structure_reader(vault),
            extra_sources=ranges.open_in(vault),
        )
        for path, edits in found.items():
            combined.setdefault(path, []).extend(edits)
    if not combined:
        return None
    if supports_document_changes(ls):
        return types.WorkspaceEdit(document_changes=list(document_edits(ranges, combined)))
    return types.WorkspaceEdit(
        changes={uri: edits for uri, _version, edits in text_edits(ranges, combined)}
    )


FEATURES = [
    Feature(
        types.TEXT_DOCUMENT_COMPLETION,
        complete,
        types.CompletionOptions(trigger_characters=TRIGGERS, resolve_provider=False),
    ),
    Feature(types.TEXT_DOCUMENT_HOVER, hover),
    Feature(types.TEXT_DOCUMENT_DEFINITION, goto_definition),
    Feature(types.TEXT_DOCUMENT_REFERENCES, on_references),
    Feature(
        types.TEXT_DOCUMENT_DOCUMENT_LINK,
        document_links,
        types.DocumentLinkOptions(resolve_provider=False),
    ),
    Feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, document_symbols),
    Feature(types.WORKSPACE_SYMBOL, workspace_symbols),
    Feature(
        types.TEXT_DOCUMENT_CODE_LENS, on_code_lens, types.CodeLensOptions(resolve_provider=False)
    ),
    Feature(types.TEXT_DOCUMENT_PREPARE_RENAME, on_prepare_rename),
    Feature(types.TEXT_DOCUMENT_RENAME, on_rename),
    Feature(types.WORKSPACE_WILL_RENAME_FILES, will_rename, RENAME_FILTERS),
]
COMMANDS = [Command(REFERENCES_COMMAND, references_command)]
