"""What every document request starts from, written once: the vault and path of a URI
(`locate`), the file as the request sees it (`load_document`), the cursor in code-point columns
(`VaultDocument.cursor`), and engine places turned into LSP ranges (`Ranges`)."""

from __future__ import annotations

import asyncio
import functools
import os
from dataclasses import dataclass, replace
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

from lsprotocol import types

from ...engine.link_targets import Place, structure_for
from ...engine.markdown import Link, Structure
from ...engine.vault import Entry, Vault, read_text
from ..buffers import Buffer
from ..echoes_server import EchoesServer
from ..lsp_convert import Columns, make_range, path_to_uri, uri_problem, uri_to_path
from ..vault_folder import Folder

# How long a request waits for the vault's background indexing before parsing the rest itself.
INDEX_WAIT = 10.0
# A text longer than this is split into lines once per version, not once per request: 30 ms for
# a page of 200,000 lines, which every range request on it would pay.
SPLIT_ONCE = 128 * 1024
_SPLIT: Dict[str, Tuple[str, List[str]]] = {}


def split_lines(path: str, text: str) -> List[str]:
    """`text.split("\n")`, kept for the last few long texts (the same text object: an open
    buffer's text is one object until it is edited). Callers only read the list."""
    if len(text) <= SPLIT_ONCE:
        return text.split("\n")
    known = _SPLIT.get(path)
    if known is not None and known[0] is text:
        return known[1]
    if len(_SPLIT) >= 4:
        _SPLIT.clear()
    lines = text.split("\n")
    _SPLIT[path] = (text, lines)
    return lines


def document_lines(ls: EchoesServer, uri: str, path: str, text: str) -> List[str]:
    """The lines of `text`, the text of the document at `uri`: an open buffer's lines, kept
    across its edits, when it is the buffer's text (after a keystroke all but the edited line
    are the objects the last request saw, which the kept rows of tokens and hints compare and
    look up); else `split_lines`."""
    buffer = ls.open_document(uri)
    if isinstance(buffer, Buffer) and buffer.source is text:
        return buffer.kept_lines(text)
    return split_lines(path, text)


def locate(ls: EchoesServer, uri: str, create: bool = True) -> Optional[Tuple[Folder, str]]:
    """The vault and path of a file a client names by URI, or None, with one log line per URI
    saying why: the URI names no local file (`uri_problem`), the path lies in no vault, or a
    folder on its way is a symbolic link that leads out of the vault. Every handler takes the
    URIs it is sent through here, so none of them is kept or read."""
    problem = uri_problem(uri)
    if problem is not None:
        ls.ignore(uri, problem)
        return None
    path = uri_to_path(uri)
    folder = ls.folder_for_path(path, create)
    if folder is None or path is None:
        ls.ignore(uri, "it is not in an EchoesVault/ folder")
        return None
    if not folder.vault.confines(path):
        ls.ignore(uri, "a symbolic link on its way leads out of the vault")
        return None
    return folder, path


@dataclass(frozen=True)
class VaultDocument:
    """A vault file as one request sees it: the open buffer, else the disk, split into lines,
    with its model entry (None for a file the model does not know) and its links and headings."""

    uri: str
    path: str
    folder: Folder
    text: str
    lines: List[str]
    entry: Optional[Entry]
    structure: Structure
    columns: Columns

    @property
    def vault(self) -> Vault:
        return self.folder.vault

    @property
    def is_page(self) -> bool:
        return self.vault.is_page(self.path)

    def cursor(self, position: types.Position) -> Optional[Tuple[int, int]]:
        """(line, code-point column) of a client position; None when it is outside the text."""
        if position.line < 0 or position.line >= len(self.lines):
            return None
        return position.line, self.columns.from_client(
            self.lines[position.line], position.character
        )

    def range(self, line: int, start: int, end_line: int, end: int) -> types.Range:
        """The LSP range of a span of this document in engine coordinates."""
        return make_range(self.lines, self.columns, line, start, end_line, end)

    def link_range(self, link: Link) -> types.Range:
        return self.range(link.line, link.start, link.line, link.end)

    def with_fresh_entry(self) -> VaultDocument:
        """This document with the model's entry as it is now (after waiting for indexing)."""
        return replace(self, entry=self.vault.entry(self.path))


class DocumentPosition(NamedTuple):
    """A document and a cursor in it (0-based line, code-point column)."""

    document: VaultDocument
    line: int
    column: int


def load_document(ls: EchoesServer, uri: str) -> Optional[VaultDocument]:
    """The vault file at `uri`; None outside every vault, or for a file that cannot be read."""
    located = locate(ls, uri)
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
    return VaultDocument(
        uri, path, folder, text, document_lines(ls, uri, path, text), entry, structure, ls.columns
    )


def load_at(ls: EchoesServer, uri: str, position: types.Position) -> Optional[DocumentPosition]:
    """The document at `uri` and the cursor at `position`; None when either is missing."""
    document = load_document(ls, uri)
    if document is None:
        return None
    where = document.cursor(position)
    if where is None:
        return None
    return DocumentPosition(document, *where)


async def wait_for_index(folder: Folder, timeout: float = INDEX_WAIT) -> None:
    """Wait until the whole vault is parsed; past the timeout, parse the rest now."""
    if folder.loaded.is_set():
        return
    try:
        await asyncio.wait_for(folder.loaded.wait(), timeout)
    except asyncio.TimeoutError:
        folder.vault.complete()


async def wait_for_search(folder: Folder, timeout: float = INDEX_WAIT) -> None:
    """Wait until the whole vault is parsed and its page catalog made (`Folder.searchable`),
    so that a search does not make the catalog a second time; past the timeout, the search
    makes what is missing itself."""
    await wait_for_index(folder, timeout)
    if folder.searchable.is_set():
        return
    try:
        await asyncio.wait_for(folder.searchable.wait(), timeout)
    except asyncio.TimeoutError:
        pass


@functools.lru_cache(maxsize=1 << 16)
def file_uri(path: str) -> str:
    """`path_to_uri`, remembered: reference lists name the same files again and again."""
    return path_to_uri(path)


def open_documents(ls: EchoesServer) -> Dict[str, Tuple[str, Optional[int]]]:
    """Path → (uri, version) of every open document."""
    found: Dict[str, Tuple[str, Optional[int]]] = {}
    for uri, document in list(ls.workspace.text_documents.items()):
        path = uri_to_path(uri)
        if path:
            found[path] = (uri, document.version)
    return found


class Ranges:
    """Engine places → LSP ranges, reading a file's lines only when its columns need converting."""

    def __init__(self, ls: EchoesServer) -> None:
        self.ls = ls
        self._opened = open_documents(ls)
        self._vaults = [folder.vault for folder in ls.folders()]
        self._lines: Dict[str, Optional[List[str]]] = {}

    def opened(self, path: str) -> Optional[Tuple[str, Optional[int]]]:
        """(uri, version) of `path` when it is open."""
        return self._opened.get(path)

    def know(self, document: VaultDocument) -> None:
        """Take the lines of a document already read, rather than reading them again."""
        self._lines[document.path] = document.lines

    def lines(self, path: str) -> Optional[List[str]]:
        """The lines of `path` when its columns need converting, else None."""
        if path not in self._lines:
            opened = self._opened.get(path)
            if opened is not None:
                text = self.ls.document_text(opened[0])
                self._lines[path] = text.split("\n") if text is not None else None
            else:
                self._lines[path] = self.disk_lines(path)
        return self._lines[path]

    def disk_lines(self, path: str) -> Optional[List[str]]:
        """The lines of a file that is not open; None when every column is a code point (the
        client counts in UTF-32, or the model knows the file to be ASCII)."""
        entry = None
        for vault in self._vaults:
            entry = vault.entries.get(path)
            if entry is not None:
                break
        known_ascii = entry is not None and entry.parsed and entry.ascii and entry.text_hash
        if self.ls.columns.encoding == "utf-32" or known_ascii:
            return None
        text, _error = read_text(path)
        return text.split("\n") if text is not None else None

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
            opened = self._opened.get(entry.path)
            if opened is None:
                return entry.structure
            return structure_for(vault, entry.path, self.ls.document_text(opened[0]))

        return structure_of

    def open_in(self, vault: Vault) -> List[str]:
        return [path for path in self._opened if vault.rel(path) is not None]


async def load_analysed(ls: EchoesServer, uri: str) -> Optional[VaultDocument]:
    """`load_document`, after waiting for the analysis of a large open document: its structure
    is then the model's, never a scan of the whole text on the event loop. None when the
    document is not in a vault, or when it keeps changing under the analysis."""
    located = locate(ls, uri)
    if located is None:
        return None
    folder, path = located
    if ls.large_documents.is_large(uri):
        if not await ls.large_documents.settled(folder, uri, path):
            return None
    return load_document(ls, uri)
