"""The in-memory vault model: files, page metadata, forward and reverse link indexes, assets.

Discovery only lists files; each file is parsed on first use or by `parse_pending`, so the first
diagnostics of an opened page never wait for the whole vault. Every update touches one file and
returns the page keys whose public face (existence, deprecation, summary, anchors) changed, so
callers can refresh the pages that link to them.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import sys
from functools import lru_cache
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from ..runtime import echoes_vault as rules
from .markdown import CACHED_NAMES, Structure, has_deprecated_callout, scan

MAX_PARSE_BYTES = 16 * 1024 * 1024
# A file linking to more distinct pages than this keeps its link counts (see `Entry.counts`).
LARGE_LINK_KEYS = 1000
# The files that link to one page: a tuple while few (a dict or a set of 17 paths is three to
# four times the size of a tuple, and a large vault has one for nearly every page), a set past
# MANY_SOURCES (a tuple is copied to add or take one file).
Sources = Union[Tuple[str, ...], Set[str]]
MANY_SOURCES = 64
DAILY_LEGACY = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
PREVIEW_LINES = 6

PAGE = "page"
DAILY = "daily"
LEGACY_DAILY = "legacy-daily"
INDEX = "index"
MARKER = "marker"
OTHER_MD = "markdown"
STRAY = "stray"
ASSET = "asset"
RAW = "raw"
OTHER = "other"
READ_KINDS = (PAGE, DAILY, LEGACY_DAILY, INDEX, OTHER_MD, RAW)


def classify(rel: str) -> str:
    """The role of a vault-relative path (forward slashes)."""
    parts = rel.split("/")
    name = parts[-1]
    is_md = name.lower().endswith(".md")
    if len(parts) == 1:
        if name == rules.MARKER_NAME:
            return MARKER
        if name == rules.INDEX_NAME:
            return INDEX
        return OTHER_MD if is_md else OTHER
    top = parts[0]
    if top == rules.PAGES_DIR:
        return PAGE if rules.is_page_path(rel) else STRAY
    if top == rules.DAILY_DIR:
        if len(parts) == 2 and DAILY_LEGACY.match(name):
            return LEGACY_DAILY
        return DAILY if is_md else OTHER
    if top == rules.ASSETS_DIR:
        return ASSET
    if top == rules.RAW_DIR:
        return RAW if is_md else OTHER
    return OTHER_MD if is_md else OTHER


class PublicFacts(NamedTuple):
    """What other pages can see of a page: a change here re-checks its backlinks."""

    deprecated: bool
    summary: Optional[str]
    anchors: str  # see `Structure.anchors`


class Entry:
    """One file of the vault. Slotted: a large vault holds tens of thousands of these, and
    `__slots__` keeps each one at a third of the size an attribute dictionary would give it."""

    __slots__ = (
        "adopted",
        "ascii",
        "body_line",
        "callout",
        "conflicts",
        "counts",
        "digest",
        "field_keys",
        "info",
        "key",
        "kind",
        "linked",
        "parsed",
        "path",
        "preview",
        "read_error",
        "rel_start",
        "replaced_by",
        "secrets",
        "special",
        "stamp_size",
        "stamp_time",
        "stem",
        "structure",
        "symlink",
        "title",
        "title_line",
    )

    def __init__(self, path: str, rel: str, kind: str, symlink: bool = False) -> None:
        self.path = path
        # `rel` is the end of `path`: where it begins is kept, not a second string.
        self.rel_start = len(path) - len(rel)
        self.kind = kind
        self.symlink = symlink
        self.parsed = False
        self.stem = ""
        self.key = ""
        # A closed page keeps its frontmatter's values and problems, not its fields (see
        # `Vault.page_info`): where its body begins and its keys are kept beside them.
        self.info: Optional[rules.PageInfo] = None
        self.body_line = 0
        self.field_keys: Tuple[str, ...] = ()
        self.structure: Optional[Structure] = None
        self.read_error: Optional[str] = None
        # Set when the walk found no file it may read: a FIFO, socket or device, or a directory
        # it cannot list. Such an entry is reported (EV401) and never opened.
        self.special: Optional[str] = None
        self.secrets: Sequence[rules.SecretHit] = ()
        self.conflicts: Sequence[rules.Problem] = ()
        # A page parsed by another process of a parallel check (see `Vault.adopt`), and the
        # stem of its replacement (its first link to another page) as that process found it.
        self.adopted = False
        self.replaced_by: Optional[str] = None
        self.callout = False
        self.preview: Tuple[str, ...] = ()
        self.title: Optional[str] = None
        # the line of the first level-1 heading (0 when there is none)
        self.title_line = 0
        # the runtime's `hash` of the text last parsed, as the 32 bytes its hexadecimal encodes
        self.digest: Optional[bytes] = None
        self.stamp_time: Optional[int] = None
        self.stamp_size = 0
        self.ascii = True
        # Page keys and counts of the links of a file with very many (see `LARGE_LINK_KEYS`),
        # so that an edit changes the backlink index by the difference instead of twice over.
        self.counts: Optional[Dict[str, int]] = None
        # The page keys a closed file links to, each once (a tuple is a third of a dict's size).
        self.linked: Tuple[str, ...] = ()

    def reset(self, stamp: Optional[Tuple[int, int]]) -> None:
        """Forget what the last parse found, before parsing again."""
        self.adopted = False
        self.replaced_by = None
        self.read_error = None
        self.info = None
        self.body_line = 0
        self.field_keys = ()
        self.structure = None
        self.secrets = ()
        self.conflicts = ()
        self.preview = ()
        self.title = None
        self.title_line = 0
        self.stamp = stamp

    def __repr__(self) -> str:
        return f"Entry({self.rel!r}, {self.kind}, parsed={self.parsed})"

    @property
    def stamp(self) -> Optional[Tuple[int, int]]:
        """The modification time (ns) and size of the file when it was last parsed; None when
        it was not read from the disk. Kept in two slots: a tuple would cost 56 bytes a file."""
        return None if self.stamp_time is None else (self.stamp_time, self.stamp_size)

    @stamp.setter
    def stamp(self, value: Optional[Tuple[int, int]]) -> None:
        if value is None:
            self.stamp_time, self.stamp_size = None, 0
        else:
            self.stamp_time, self.stamp_size = value

    @property
    def rel(self) -> str:
        """The path inside the vault, with `/`."""
        rel = self.path[self.rel_start :]
        return rel if os.sep == "/" else rel.replace(os.sep, "/")

    @property
    def text_hash(self) -> Optional[str]:
        """The runtime's `hash` of the text last parsed (None when it was not read)."""
        return None if self.digest is None else self.digest.hex()

    @text_hash.setter
    def text_hash(self, value: Optional[str]) -> None:
        # half the size of the hexadecimal string, for every file of the vault
        self.digest = None if value is None else bytes.fromhex(value)

    @property
    def deprecated(self) -> bool:
        return self.info is not None and self.info.deprecated

    def public_facts(self) -> PublicFacts:
        structure = self.structure
        return PublicFacts(
            self.deprecated,
            self.info.summary if self.info else None,
            structure.anchors if structure else "",
        )


class PageFacts(NamedTuple):
    """What the diagnostics of other files need from a page: whether it was readable, its
    status, summary and problems (for deprecation, the index and validity) and where its body
    begins. A parallel check sends these, not whole parse results, between its processes."""

    read_error: Optional[str]
    status: Optional[str]
    summary: Optional[str]
    problems: Tuple[rules.Problem, ...]
    body_line: int
    replacement: Optional[str] = None

    @classmethod
    def of(cls, entry: Entry, replacement: Optional[str] = None) -> PageFacts:
        """The facts of a parsed page; `replacement` is the stem of the page it names as its
        replacement, if it is deprecated."""
        info = entry.info
        if info is None:
            return cls(entry.read_error, None, None, (), 0)
        return cls(
            None, info.status, info.summary, tuple(info.problems), entry.body_line, replacement
        )


# The folders of the vault's layout, as the runtime's writers name them: none may be a symbolic
# link (`linked_layout`).
LAYOUT = (
    rules.VAULT_DIR,
    *(
        f"{rules.VAULT_DIR}/{name}"
        for name in (rules.PAGES_DIR, rules.DAILY_DIR, rules.ASSETS_DIR, rules.RAW_DIR)
    ),
)


class LinkedFolder(NamedTuple):
    """A folder of the vault's layout that is a symbolic link, and the runtime's sentence."""

    rel: str  # relative to the workspace, such as `EchoesVault/daily`
    path: str
    message: str

    @property
    def is_vault(self) -> bool:
        """Whether the link is `EchoesVault/` itself: then nothing in the vault is read."""
        return self.rel == rules.VAULT_DIR


def linked_layout(workspace: str) -> Optional[LinkedFolder]:
    """The first folder of the vault's layout that is a symbolic link, found by the check the
    runtime's writers make before they write (`check_path`), with its sentence; None when no
    folder of the layout is a link."""
    checked = rules.Workspace(os.path.realpath(workspace))
    for rel in LAYOUT:
        try:
            rules.check_path(checked, rel)
        except rules.EchoesError as error:
            if error.code == "symlink":
                return LinkedFolder(rel, os.path.join(workspace, *rel.split("/")), str(error))
    return None


class Marker(NamedTuple):
    present: bool
    protocol: Optional[str]
    problem: Optional[str]
    line: int = 0

    @property
    def writable(self) -> bool:
        return self.present and self.problem is None


def read_bytes(path: str) -> Tuple[Optional[bytes], Optional[str]]:
    """The bytes of a vault file, or an error sentence for EV401. Every read of a vault file by
    the server and `check` comes here, and from here to the runtime's safe reader: FIFOs,
    sockets and devices are never opened (`lstat` first, then a non-blocking open that does not
    follow links), and a file over MAX_PARSE_BYTES is not read whole."""
    try:
        data = rules.read_bytes(path, limit=MAX_PARSE_BYTES)
    except rules.NotRegularFile as error:
        return None, f"{error.strerror}; it is never opened"
    except OSError as error:
        return None, f"cannot be read: {error.strerror or error}"
    if len(data) > MAX_PARSE_BYTES:
        return None, f"is larger than {MAX_PARSE_BYTES // (1024 * 1024)} MiB and is not analysed"
    return data, None


def decode_text(data: bytes) -> Tuple[Optional[str], Optional[str]]:
    """Text as the runtime reads it (UTF-8, a byte-order mark kept as U+FEFF, newlines
    normalized), or an error sentence for EV401: the one decoder for files and standard input.
    The mark stays so that a page is judged as the runtime judges it (EV100) and hashed as its
    `hash` does."""
    if b"\x00" in data:
        return None, "is a binary file (contains NUL bytes), not UTF-8 text"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"is not valid UTF-8 (byte {error.start})"
    return rules.normalize_newlines(text), None


BOM_BYTES = rules.BOM.encode("utf-8")


def without_bom(text: str) -> str:
    """`text` without a leading byte-order mark, as editors show a file that has one."""
    return text[1:] if text.startswith(rules.BOM) else text


def buffer_hash(buffer: str, bom: bool) -> str:
    """The runtime's `hash` of the file an editor buffer was read from, or that saving it writes,
    the file beginning with a byte-order mark when `bom`. The runtime digests the mark with the
    text; editors drop it from the buffer (one that keeps it is read the same way), so it is put
    back here."""
    text = without_bom(rules.normalize_newlines(buffer))
    return rules.text_sha256(rules.BOM + text if bom else text)


def starts_with_bom(path: str) -> bool:
    """Whether a vault file begins with a UTF-8 byte-order mark (False when it cannot be read)."""
    try:
        return rules.read_bytes(path, size_hint=2, limit=2).startswith(BOM_BYTES)
    except OSError:
        return False


def disk_hash(path: str) -> Optional[str]:
    """The runtime's `hash` of a vault file as it is now, or None when it cannot be read."""
    text, _error = read_text(path)
    return rules.text_sha256(text) if text is not None else None


def read_text(path: str) -> Tuple[Optional[str], Optional[str]]:
    """Decoded, newline-normalized text of a vault file, or an error sentence for EV401."""
    data, error = read_bytes(path)
    if data is None:
        return None, error
    return decode_text(data)


class Analysis(NamedTuple):
    """What parsing one text finds, made from the text alone: a large document is analysed
    in a worker thread and the result installed in the model on the event loop."""

    text_hash: str
    ascii: bool
    secrets: Sequence[rules.SecretHit]
    info: Optional[rules.PageInfo]
    structure: Optional[Structure]
    callout: bool
    preview: Tuple[str, ...]
    title: Optional[str]
    title_line: int
    conflicts: Sequence[rules.Problem]
    counts: Dict[str, int]


class Prepared(NamedTuple):
    """An analysis, and the change to the backlink index it makes against the link counts
    (`base`) the file had when the analysis began."""

    analysis: Analysis
    base: Optional[Dict[str, int]]
    delta: Optional[Dict[str, int]]


def analyse(kind: str, key: str, text: str) -> Analysis:
    """Parse the text of a vault file of this kind (and page key). Pure: safe in a thread."""
    secrets = rules.find_secrets(text)
    info: Optional[rules.PageInfo] = None
    structure: Optional[Structure] = None
    callout = False
    preview: Tuple[str, ...] = ()
    title: Optional[str] = None
    title_line = 0
    conflicts: Sequence[rules.Problem] = ()
    if kind == PAGE:
        info = rules.analyze_page(text)
        body = info.body_line
        structure = scan(text, body)
        lines = text.split("\n")
        callout = has_deprecated_callout(lines, body)
        preview = tuple(lines[body : body + PREVIEW_LINES + 2])
        title, title_line = first_title(structure)
    else:
        if rules.may_hold_conflict_markers(text):
            conflicts = rules.find_conflict_markers(text.split("\n"))
        if kind in (DAILY, LEGACY_DAILY):
            structure = scan(text)
    return Analysis(
        rules.text_sha256(text),
        text.isascii(),
        secrets,
        info,
        structure,
        callout,
        preview,
        title,
        title_line,
        conflicts,
        count_links(structure, key),
    )


def first_title(structure: Structure) -> Tuple[Optional[str], int]:
    """The text and line of the first level-1 heading (None and 0 when there is none)."""
    first = next((h for h in structure.headings if h.level == 1), None)
    return (first.text, first.line) if first is not None else (None, 0)


def prepare(kind: str, key: str, text: str, base: Optional[Dict[str, int]]) -> Prepared:
    """`analyse`, plus the backlink change against `base`. Pure: safe in a thread."""
    analysis = analyse(kind, key, text)
    delta = None if base is None else count_delta(base, analysis.counts)
    return Prepared(analysis, base, delta)


def prepare_file(kind: str, key: str, path: str) -> Optional[Tuple[str, Prepared]]:
    """The text of a file on disk and its `prepare`d analysis; None when it cannot be read
    (its error is found again when it is parsed in place). Safe in a thread."""
    text, _error = read_text(path)
    if text is None:
        return None
    return text, prepare(kind, key, text, None)


def larger_than(paths: Iterable[str], size: int) -> List[str]:
    """The regular files among `paths` with more than `size` bytes (metadata only)."""
    found = []
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size > size:
            found.append(path)
    return found


def count_delta(before: Dict[str, int], after: Dict[str, int]) -> Dict[str, int]:
    """The change of the backlink index from one file's link counts to others: 1 for each page
    key it now links to and did not, -1 for each it no longer links to."""
    delta = dict.fromkeys((key for key in after if key not in before), 1)
    delta.update((key, -1) for key in before if key not in after)
    return delta


def count_links(structure: Optional[Structure], own_key: str) -> Dict[str, int]:
    """Page keys a file links to, with counts (one `page_key` call per distinct target); a
    link to a heading of the file itself counts for `own_key`."""
    counts: Dict[str, int] = {}
    if structure is None:
        return counts
    keys: Dict[str, str] = {}
    for link in structure.links:
        if link.is_asset:
            continue
        stem = link.page_stem
        key = keys.get(stem)
        if key is None:
            key = keys[stem] = sys.intern(key_of(stem)) if stem else own_key
        counts[key] = counts.get(key, 0) + 1
    return counts


# Most pages have the same frontmatter keys, and a few `type`, `status` and `stack` values:
# one tuple per distinct set of keys, and one string per distinct value, is kept.
SHARED_LIMIT = 4096
_FIELD_KEYS: Dict[Tuple[str, ...], Tuple[str, ...]] = {}
_VALUES: Dict[str, str] = {}
# The problems of every closed page that has none: one empty list, never added to (an analysis
# only ever makes its own new list).
NO_PROBLEMS: List[rules.Problem] = []


def _shared(table: Dict[Any, Any], value: Any) -> Any:
    """`value`, or the equal one `table` holds: the first of its kind is kept, until the table
    is full (a vault of odd values on every page shares nothing)."""
    if len(table) >= SHARED_LIMIT:
        return table.get(value, value)
    return table.setdefault(value, value)


def field_keys(info: rules.PageInfo) -> Tuple[str, ...]:
    """The frontmatter keys of a page, in order, as a tuple shared with every page alike."""
    if info.frontmatter is None:
        return ()
    return _shared(_FIELD_KEYS, tuple(info.frontmatter.fields))  # type: ignore[no-any-return]


def shared_value(value: Optional[str]) -> Optional[str]:
    """A frontmatter value as a string shared with every page that has the same one."""
    return None if value is None else _shared(_VALUES, value)


def without_fields(info: rules.PageInfo) -> rules.PageInfo:
    """What a closed page keeps of its analysis: the values and problems, not the frontmatter
    block (five field records a page, a sixth of a large vault's memory). The values of
    `type`, `status` and `stack` recur across pages and are shared, as is an empty list of
    problems."""
    return rules.PageInfo(
        None,
        shared_value(info.type),
        shared_value(info.stack),
        shared_value(info.status),
        info.summary,
        info.problems or NO_PROBLEMS,
    )


def _disk_text(path: str) -> str:
    return read_text(path)[0] or ""


@lru_cache(maxsize=CACHED_NAMES)
def key_of(stem: str) -> str:
    """`page_key` of a link target, memoized: the same targets recur across a vault."""
    return rules.page_key(stem)


def read_marker(vault_root: str) -> Marker:
    path = os.path.join(vault_root, rules.MARKER_NAME)
    if not os.path.exists(path):
        return Marker(False, None, "marker `.echoes-vault.json` is missing")
    data, error = read_bytes(path)
    if data is None:
        return Marker(True, None, f"marker {error}")
    try:
        raw = rules.normalize_newlines(data.decode("utf-8"))
    except UnicodeDecodeError as problem:
        return Marker(True, None, f"marker is not valid UTF-8 (byte {problem.start})")
    line = next((i for i, text in enumerate(raw.split("\n")) if "protocolVersion" in text), 0)
    try:
        data = rules.load_json(raw, rules.MARKER_LIMIT)
    except rules.BadJson as why:
        return Marker(True, None, f"marker cannot be read: {why}", line)
    version = data.get("protocolVersion") if isinstance(data, dict) else None
    if version != rules.PROTOCOL_VERSION:
        return Marker(
            True,
            version if isinstance(version, str) else None,
            f"protocolVersion {version!r} is not supported (this tool writes "
            f"{rules.PROTOCOL_VERSION})",
            line,
        )
    return Marker(True, version, None, line)


def _keep_closed(entry: Entry, found: Analysis) -> None:
    """Shrink the analysis of a file no editor holds open: no preview, no fields, and (see
    `Structure.closed`) only the link keys and anchors of its structure."""
    # read again from the disk when shown (see `Vault.preview` and `Vault.title`)
    entry.preview = ()
    entry.title = None
    if found.info is not None:
        entry.info = without_fields(found.info)
    structure = found.structure
    if structure is None or not (structure.links or structure.headings or structure.blocks):
        return
    if entry.counts is None:
        entry.linked = tuple(found.counts)
    entry.structure = Structure.closed(structure, entry.path, _disk_text, entry.body_line)


def _parse_for_batch(entry: Entry, text: str) -> None:
    """The parse of a lean model (one batch check): no hash, and structures scanned later, only
    when a diagnostic needs them."""
    entry.text_hash = None
    entry.ascii = text.isascii()
    entry.secrets = rules.find_secrets(text)
    if entry.kind == PAGE:
        entry.info = rules.analyze_page(text)
        body = entry.body_line = entry.info.body_line
        entry.field_keys = field_keys(entry.info)
        # A batch check scans a page only when one of its links may need a diagnostic or
        # another page links to one of its anchors; it shows no previews or titles, and
        # reads the callout of deprecated pages only.
        entry.structure = Structure.deferred(text, body)
        entry.callout = entry.deprecated and has_deprecated_callout(
            text.split("\n", body + 12)[: body + 12], body
        )
        return
    if rules.may_hold_conflict_markers(text):
        entry.conflicts = rules.find_conflict_markers(text.split("\n"))
    if entry.kind in (DAILY, LEGACY_DAILY):
        # a batch check locates a daily entry's links only when one needs a diagnostic
        entry.structure = Structure.deferred(text)


class Vault:
    """One `EchoesVault/` directory."""

    def __init__(
        self,
        workspace: str,
        exclude: Iterable[str] = (),
        *,
        lean: bool = False,
    ) -> None:
        """`lean` builds a model for one batch check: no backlink index (`dependents` finds
        nothing), no text hashes and no stamps; diagnostics are the same."""
        self.workspace = os.path.abspath(workspace)
        self.lean = lean
        self.root = os.path.join(self.workspace, rules.VAULT_DIR)
        # Where the vault is on disk when no symbolic link leads elsewhere (see `confines`).
        self.real_root = os.path.join(os.path.realpath(self.workspace), rules.VAULT_DIR)
        self.exclude = tuple(exclude)
        self.entries: Dict[str, Entry] = {}
        self.by_key: Dict[str, List[str]] = {}
        # For each page key, the files that link to it (see `Sources`).
        self.backlinks: Dict[str, Sources] = {}
        self.assets: Dict[str, List[str]] = {}
        self.overlays: Dict[str, str] = {}
        self.marker = Marker(False, None, None)
        # Versions an interrupted `end`'s roll-forward kept aside rather than write over a
        # changed page (and journals it could not read): (workspace-relative path, file name),
        # from the runtime's `kept_versions`. EV702 reports each until a person deletes it.
        self.kept: Tuple[Tuple[str, str], ...] = ()
        self.kept_dir = os.path.join(self.workspace, rules.RUNTIME_DIR, rules.KEPT_DIR)
        # A folder of the layout that is a symbolic link: the runtime refuses to write through
        # it, so the vault is read-only; a linked `EchoesVault/` is not read at all.
        self.linked: Optional[LinkedFolder] = None
        self.pending: Set[str] = set()
        # paths the walk found unreadable or not regular (see `Entry.special`), until registered
        self.special_files: Dict[str, str] = {}
        # Bumped on every model change, so derived views (completion lists) can be cached;
        # listeners hear which file changed (None: possibly all of them).
        self.generation = 0
        self.listeners: List[Callable[[Optional[str]], None]] = []
        self._answers: Dict[str, Dict[str, Any]] = {}
        self._answers_generation = -1

    def cached_answers(self, name: str) -> Dict[str, Any]:
        """A named store of answers about the model as it is now; emptied by any change to the
        model."""
        if self._answers_generation != self.generation:
            self._answers.clear()
            self._answers_generation = self.generation
        return self._answers.setdefault(name, {})

    def _changed(self, path: Optional[str] = None) -> None:
        self.generation += 1
        for listener in self.listeners:
            listener(path)

    # -- discovery ------------------------------------------------------------------------------

    def hides(self, rel: str) -> bool:
        """The exclusion rule for one step of a path: a dot file or folder (`.obsidian/`, editor
        swap files; the marker at the vault root excepted), or a match of an `exclude` pattern.
        `walk` applies it to each file and folder on the way down."""
        if rel.startswith(".", rel.rfind("/") + 1) and rel != rules.MARKER_NAME:
            return True
        return bool(self.exclude) and any(fnmatch.fnmatch(rel, pattern) for pattern in self.exclude)

    def excluded(self, rel: str) -> bool:
        """Whether the model leaves out this vault-relative path: `hides` holds for it or for a
        folder above it (so a file event and a scan of the disk agree)."""
        end = rel.find("/")
        while end != -1:
            if self.hides(rel[:end]):
                return True
            end = rel.find("/", end + 1)
        return self.hides(rel)

    def is_page(self, path: str) -> bool:
        """Whether `path` is, or would be once written, a knowledge page of this vault."""
        rel = self.rel(path)
        return rel is not None and rules.is_page_path(rel)

    def rel(self, path: str) -> Optional[str]:
        """Vault-relative path with `/`, or None when outside the vault."""
        absolute = os.path.abspath(path)
        if absolute != self.root and not absolute.startswith(self.root + os.sep):
            return None
        return os.path.relpath(absolute, self.root).replace(os.sep, "/")

    @property
    def reads_nothing(self) -> bool:
        """Whether `EchoesVault/` is a symbolic link: nothing it leads to is read or served."""
        return self.linked is not None and self.linked.is_vault

    @property
    def writable(self) -> bool:
        """Whether this tool may write (through the runtime): a supported marker, and no
        folder of the layout is a symbolic link."""
        return self.marker.writable and self.linked is None

    @property
    def read_only_reason(self) -> Optional[str]:
        if self.linked is not None:
            return self.linked.message
        return self.marker.problem

    def confines(self, path: str) -> bool:
        """Whether `path`, inside the vault by its name, stays inside it on disk: no folder on
        its way (the vault's own folder included) is a symbolic link that leads elsewhere. The
        file itself may be a link: it is reported (EV503), never followed."""
        if path == self.workspace:
            return True
        real = os.path.realpath(path if path == self.root else os.path.dirname(path))
        return real == self.real_root or real.startswith(self.real_root + os.sep)

    def walk(self, top: Optional[str] = None) -> Iterator[Tuple[str, str, bool]]:
        """(path, rel, is_symlink) of every file in the vault (or in its folder `top`) that is
        not `excluded`."""
        start = self.root if top is None else top
        prefix = "" if top is None else (self.rel(top) or "") + "/"
        stack: List[Tuple[str, str]] = [(start, prefix)]
        while stack:
            directory, prefix = stack.pop()
            try:
                iterator = os.scandir(directory)
            except OSError as error:
                if prefix:  # a folder inside the vault that cannot be listed is reported
                    self.special_files[directory] = (
                        f"is a directory that cannot be read: {error.strerror or error}"
                    )
                    yield directory, prefix.rstrip("/"), False
                continue
            with iterator:
                for item in iterator:
                    rel = prefix + item.name
                    if self.hides(rel):
                        continue
                    try:
                        if item.is_symlink():
                            yield item.path, rel, True
                        elif item.is_dir(follow_symlinks=False):
                            stack.append((item.path, rel + "/"))
                        else:
                            if not item.is_file(follow_symlinks=False):
                                mode = item.stat(follow_symlinks=False).st_mode
                                self.special_files[item.path] = (
                                    f"is {rules.file_kind(mode)}, not a regular file; "
                                    "it is never opened"
                                )
                            yield item.path, rel, False
                    except OSError:
                        continue

    def load(self) -> None:
        """Discover every file. Parsing happens lazily or through `parse_pending`."""
        self.entries.clear()
        self.by_key.clear()
        self.backlinks.clear()
        self.assets.clear()
        self.pending.clear()
        self._changed()
        self.linked = linked_layout(self.workspace)
        if self.reads_nothing:
            self.marker = Marker(False, None, None)
            return
        self.marker = read_marker(self.root)
        self.kept = tuple(rules.kept_versions(self.workspace))
        if not os.path.isdir(self.root):
            return
        for path, rel, symlink in self.walk():
            self._register(path, rel, symlink)

    def read_kept(self) -> bool:
        """Read the kept versions again; whether they changed."""
        kept = tuple(rules.kept_versions(self.workspace))
        if kept == self.kept:
            return False
        self.kept = kept
        self._changed()
        return True

    def _register(self, path: str, rel: str, symlink: bool) -> Entry:
        kind = classify(rel)
        entry = Entry(path, rel, kind, symlink=symlink)
        self.entries[path] = entry
        self._changed(path)
        special = self.special_files.pop(path, None)
        if special is not None:
            entry.special = entry.read_error = special
            entry.parsed = True
            return entry
        if kind == PAGE:
            stem = rules.nfc(rel.split("/")[-1][:-3])
            # interned: the backlink index holds the same key string once for every link
            entry.key = sys.intern(rules.page_key(stem))
            # a name that is its own key (lowercase, as most are) keeps one string for both
            entry.stem = entry.key if stem == entry.key else stem
            holders = self.by_key.setdefault(entry.key, [])
            holders.append(path)
            # Colliding pages: links resolve to the first by path, whatever the discovery order.
            holders.sort()
        elif kind == ASSET:
            for name in self._asset_names(rel):
                self.assets.setdefault(name, []).append(path)
        if kind in READ_KINDS and not symlink:
            self.pending.add(path)
        else:
            entry.parsed = True
        return entry

    @staticmethod
    def _asset_names(rel: str) -> Tuple[str, ...]:
        inside = rel.split("/", 1)[1] if "/" in rel else rel
        base = inside.rsplit("/", 1)[-1]
        names = {
            rules.nfc(rel).casefold(),
            rules.nfc(inside).casefold(),
            rules.nfc(base).casefold(),
        }
        return tuple(names)

    # -- parsing --------------------------------------------------------------------------------

    def parse_pending(self, limit: Optional[int] = None) -> int:
        """Parse up to `limit` unparsed files; returns how many remain."""
        count = 0
        while self.pending and (limit is None or count < limit):
            self.ensure(self.entries[self.pending.pop()])
            count += 1
        if not self.pending:
            # An emptied set keeps the table it grew to (megabytes for a large vault).
            self.pending = set()
        return len(self.pending)

    def complete(self) -> None:
        self.parse_pending()

    def ensure(self, entry: Entry) -> Entry:
        if not entry.parsed:
            self.pending.discard(entry.path)
            self._parse(entry, self.overlays.get(entry.path))
        return entry

    def adopt(self, path: str, facts: PageFacts) -> None:
        """Take a page parsed elsewhere as parsed here: its facts stand in for the parse, and
        its links, headings and block ids are read from the file only if they are ever needed.
        Only a lean model (a batch check) adopts pages: it keeps no backlinks or hashes."""
        if not self.lean:
            raise ValueError("only a lean vault model can adopt pages parsed elsewhere")
        entry = self.entries[path]
        self.pending.discard(path)
        self._changed(path)
        entry.parsed = True
        entry.adopted = True
        entry.replaced_by = facts.replacement
        entry.read_error = facts.read_error
        entry.secrets = ()
        entry.conflicts = ()
        if facts.read_error is not None:
            entry.info = None
            entry.structure = None
            return
        entry.info = rules.PageInfo(
            None, None, None, facts.status, facts.summary, list(facts.problems)
        )
        entry.body_line = facts.body_line
        entry.structure = Structure.deferred(lambda: read_text(path)[0] or "", facts.body_line)

    def reparse(self, path: str) -> None:
        """Parse a file again from disk (after an `adopt` whose diagnostics must be made here)."""
        entry = self.entries[path]
        entry.parsed = False
        self.ensure(entry)

    def _parse(
        self, entry: Entry, text: Optional[str], prepared: Optional[Prepared] = None
    ) -> None:
        """Parse a file (`text`, else its text on disk) into its entry, replacing what the
        last parse found."""
        self._changed(entry.path)
        # A prepared analysis carries the backlink change against the counts it started from;
        # when the file was parsed again meanwhile, its links are unlinked and linked in full.
        delta = (
            prepared.delta
            if prepared is not None and entry.parsed and prepared.base is entry.counts
            else None
        )
        if not self.lean and delta is None:
            self._unlink(entry)
        entry.parsed = True
        entry.reset(None if self.lean else stamp_of(entry.path))
        if text is None:
            text, entry.read_error = read_text(entry.path)
        if text is None:
            entry.text_hash = None
        elif self.lean:
            _parse_for_batch(entry, text)
        else:
            found = (
                prepared.analysis if prepared is not None else analyse(entry.kind, entry.key, text)
            )
            self._install(entry, found, delta)

    def _install(self, entry: Entry, found: Analysis, delta: Optional[Dict[str, int]]) -> None:
        """Put an analysis into the model: the entry's results and its links in the backlink
        index (by `delta` when the analysis was prepared against the entry's current counts)."""
        entry.text_hash = found.text_hash
        entry.ascii = found.ascii
        # an empty tuple is shared; an empty list is 56 bytes per file
        entry.secrets = found.secrets or ()
        entry.info = found.info
        if found.info is not None:
            entry.body_line = found.info.body_line
            entry.field_keys = field_keys(found.info)
        entry.structure = found.structure
        entry.callout = found.callout
        entry.preview = found.preview
        entry.title = found.title
        entry.title_line = found.title_line
        entry.conflicts = found.conflicts or ()
        self._shift(entry.path, found.counts if delta is None else delta)
        entry.counts = found.counts if len(found.counts) > LARGE_LINK_KEYS else None
        if entry.path not in self.overlays:
            _keep_closed(entry, found)

    @staticmethod
    def link_keys(entry: Entry) -> Iterable[str]:
        """The page keys this file links to, each once."""
        if entry.counts is not None:
            return entry.counts
        if entry.linked:
            return entry.linked
        return count_links(entry.structure, entry.key)

    def _shift(self, path: str, changes: Dict[str, int]) -> None:
        """Make this file a source of the page keys with a positive change in the backlink
        index, and no longer one of those with a negative change."""
        for key, change in changes.items():
            if change > 0:
                self._add_source(key, path)
            elif change < 0:
                self._drop_source(key, path)

    def _add_source(self, key: str, path: str) -> None:
        """Add a file that is not yet a source of `key` (its links were taken out first)."""
        backlinks = self.backlinks
        sources = backlinks.get(key, ())
        if isinstance(sources, set):
            sources.add(path)
        elif len(sources) < MANY_SOURCES:
            backlinks[key] = (*sources, path)
        else:
            backlinks[key] = {*sources, path}

    def _drop_source(self, key: str, path: str) -> None:
        backlinks = self.backlinks
        sources = backlinks.get(key, ())
        if path not in sources:
            return
        if isinstance(sources, set):
            sources.remove(path)
        else:
            sources = tuple(source for source in sources if source != path)
            backlinks[key] = sources
        if not sources:
            del backlinks[key]

    def _unlink(self, entry: Entry) -> None:
        self._shift(entry.path, dict.fromkeys(self.link_keys(entry), -1))
        entry.counts = None
        entry.linked = ()

    # -- updates --------------------------------------------------------------------------------

    def _public_facts(self, key: str) -> Optional[PublicFacts]:
        paths = self.by_key.get(key)
        if not paths:
            return None
        return self.ensure(self.entries[paths[0]]).public_facts()

    def _changed_keys(self, key: str, before: Optional[PublicFacts]) -> Set[str]:
        return {key} if key and self._public_facts(key) != before else set()

    def describe(self, path: str) -> Optional[Tuple[str, str]]:
        """The kind and page key a file of the vault has (None outside it or excluded)."""
        rel = self.rel(path)
        if rel is None or rel == "." or self.excluded(rel):
            return None
        kind = classify(rel)
        return kind, rules.page_key(rules.nfc(rel.split("/")[-1][:-3])) if kind == PAGE else ""

    def update(
        self, path: str, text: Optional[str] = None, prepared: Optional[Prepared] = None
    ) -> Set[str]:
        """A file was created or changed (from disk when `text` is None). Returns changed keys.
        `prepared`, when given, is the analysis of `text` (made by `prepare`)."""
        path = os.path.abspath(path)
        if text is None:
            text = self.overlays.get(path)
        rel = self.rel(path)
        if rel is None or rel == "." or self.excluded(rel) or self.reads_nothing:
            return set()
        if f"{rules.VAULT_DIR}/{rel}" in LAYOUT:
            self.linked = linked_layout(self.workspace)
        if rel == rules.MARKER_NAME:
            self.marker = read_marker(self.root)
            return set()
        entry = self.entries.get(path)
        if entry is None:
            if text is None and not os.path.lexists(path):
                return set()
            symlink = os.path.islink(path)
            if text is None and not symlink and os.path.isdir(path):
                return self._add_tree(path)
            key = (
                rules.page_key(rules.nfc(rel.split("/")[-1][:-3])) if classify(rel) == PAGE else ""
            )
            before = self._public_facts(key) if key else None
            entry = self._register(path, rel, symlink)
            if not entry.parsed:
                self.pending.discard(path)
                self._parse(entry, text, prepared)
            return self._changed_keys(key, before) if key else set()
        if entry.kind not in READ_KINDS or entry.symlink:
            return set()
        before = self._public_facts(entry.key) if entry.key else None
        self._parse(entry, text, prepared)
        return self._changed_keys(entry.key, before)

    def _add_tree(self, directory: str) -> Set[str]:
        changed: Set[str] = set()
        for path, rel, symlink in self.walk(directory):
            if path in self.special_files and os.path.isdir(path):
                # A folder that cannot be listed is reported as found, never walked again.
                if path not in self.entries:
                    self._register(path, rel, symlink)
                continue
            changed |= self.update(path)
        return changed

    def remove(self, path: str) -> Set[str]:
        """A file (or a folder of files) was deleted. Returns changed keys."""
        path = os.path.abspath(path)
        rel = self.rel(path)
        if rel == rules.MARKER_NAME:
            self.marker = read_marker(self.root)
            return set()
        if f"{rules.VAULT_DIR}/{rel}" in LAYOUT:
            self.linked = linked_layout(self.workspace)
        targets = (
            [path]
            if path in self.entries
            else [p for p in self.entries if p.startswith(path.rstrip(os.sep) + os.sep)]
        )
        changed: Set[str] = set()
        for target in targets:
            entry = self._forget(target)
            if entry.kind == PAGE:
                changed.add(entry.key)
        return changed

    def _forget(self, path: str) -> Entry:
        """Take one file out of the model: its entry, links, page name and asset names."""
        self._changed(path)
        entry = self.entries.pop(path)
        self.pending.discard(path)
        self.overlays.pop(path, None)
        self._unlink(entry)
        if entry.kind == PAGE:
            paths = self.by_key.get(entry.key, [])
            if path in paths:
                paths.remove(path)
            if not paths:
                self.by_key.pop(entry.key, None)
        elif entry.kind == ASSET:
            for name in self._asset_names(entry.rel):
                holders = self.assets.get(name, [])
                if path in holders:
                    holders.remove(path)
                if not holders:
                    self.assets.pop(name, None)
        return entry

    def rename(self, old: str, new: str) -> Set[str]:
        return self.remove(old) | self.update(new)

    def open(self, path: str, text: str, prepared: Optional[Prepared] = None) -> Set[str]:
        path = os.path.abspath(path)
        self.overlays[path] = text
        return self.update(path, text, prepared)

    def close(self, path: str) -> Set[str]:
        path = os.path.abspath(path)
        self.overlays.pop(path, None)
        if not os.path.lexists(path):
            return self.remove(path)
        return self.update(path)

    def stat_changes(self, top: Optional[str] = None) -> List[Tuple[str, bool]]:
        """(path, deleted) for files whose stat differs from when they were parsed, plus new
        files: in the whole vault, or in its folder `top` (an existing folder, not a link).
        Reads only metadata and never mutates the model, so it may run in a thread."""
        known = dict(list(self.entries.items()))
        if top is not None:
            inside = top.rstrip(os.sep) + os.sep
            known = {path: entry for path, entry in known.items() if path.startswith(inside)}
        changes: List[Tuple[str, bool]] = []
        seen: Set[str] = set()
        if self.reads_nothing:
            return []
        if not os.path.isdir(self.root):
            return [(path, True) for path in known]
        for path, _rel, _symlink in self.walk(top):
            seen.add(path)
            entry = known.get(path)
            if entry is None:
                changes.append((path, False))
            elif entry.parsed and entry.kind in READ_KINDS and not entry.symlink:
                if stamp_of(path) != entry.stamp:
                    changes.append((path, False))
        # An open buffer that was not on disk when it was parsed (a new, unsaved page) has not
        # changed by still not being there.
        changes.extend(
            (path, True)
            for path, entry in known.items()
            if path not in seen and not (path in self.overlays and entry.stamp is None)
        )
        marker = os.path.join(self.root, rules.MARKER_NAME)
        if top is None and read_marker(self.root) != self.marker:
            changes.append((marker, False))
        if top is None and tuple(rules.kept_versions(self.workspace)) != self.kept:
            changes.append((self.kept_dir, False))
        return changes

    # -- queries --------------------------------------------------------------------------------

    def page(self, stem_or_key: str) -> Optional[Entry]:
        paths = self.by_key.get(key_of(stem_or_key))
        return self.ensure(self.entries[paths[0]]) if paths else None

    def listed_page(self, stem_or_key: str) -> Optional[Entry]:
        """The page a link names, parsed or not (for what the listing alone tells)."""
        paths = self.by_key.get(key_of(stem_or_key))
        return self.entries[paths[0]] if paths else None

    def preview(self, entry: Entry) -> Tuple[str, ...]:
        """The first lines of a page's body: kept for an open page, read from the disk for a
        closed one (hovers need a few of them; a large vault would hold them all)."""
        if entry.preview or entry.info is None or entry.path in self.overlays:
            return entry.preview
        text, _error = read_text(entry.path)
        if text is None:
            return ()
        body = entry.body_line
        return tuple(text.split("\n", body + PREVIEW_LINES + 2)[body : body + PREVIEW_LINES + 2])

    def title(self, entry: Entry) -> Optional[str]:
        """A page's first level-1 heading: kept for an open page, read from the disk for a
        closed one (only `[[page|` completion shows it; a large vault would hold them all)."""
        if entry.title is not None or entry.info is None or entry.path in self.overlays:
            return entry.title
        text, _error = read_text(entry.path)
        if text is None:
            return None
        return first_title(scan(text, entry.body_line))[0]

    def page_info(self, entry: Entry) -> Optional[rules.PageInfo]:
        """A page's whole analysis, frontmatter fields included: kept for an open page, made
        again from the disk for a closed one (only a page's own diagnostics need the fields'
        positions, and only for a placeholder summary or a deprecated page)."""
        info = entry.info
        if info is None or info.frontmatter is not None or entry.path in self.overlays:
            return info
        text, _error = read_text(entry.path)
        return rules.analyze_page(text) if text is not None else info

    def pages(self) -> List[Entry]:
        return [self.entries[paths[0]] for paths in self.by_key.values()]

    def entry(self, path: str) -> Optional[Entry]:
        found = self.entries.get(os.path.abspath(path))
        return self.ensure(found) if found else None

    def dependents(self, keys: Iterable[str]) -> Set[str]:
        """Paths of files that link to any of these page keys."""
        found: Set[str] = set()
        for key in keys:
            found.update(self.backlinks.get(key, {}))
        return found

    def asset_exists(self, target: str) -> bool:
        return rules.nfc(target).casefold() in self.assets

    def snapshot(self) -> Dict[str, object]:
        """Comparable state, used to prove incremental updates equal a full rebuild."""
        self.complete()
        return {
            "files": {
                e.rel: (
                    e.kind,
                    e.key,
                    e.text_hash,
                    e.read_error,
                    tuple(e.info.problems) if e.info else None,
                    e.public_facts() if e.kind == PAGE else None,
                    tuple(e.structure.links) if e.structure else None,
                )
                for e in self.entries.values()
            },
            "by_key": {k: sorted(v) for k, v in self.by_key.items() if v},
            "backlinks": {k: sorted(v) for k, v in self.backlinks.items() if v},
            "assets": {k: sorted(v) for k, v in self.assets.items() if v},
        }


def stamp_of(path: str) -> Optional[Tuple[int, int]]:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def find_workspace(path: str) -> Optional[str]:
    """The nearest directory at or above `path` that holds `EchoesVault/`."""
    current = os.path.realpath(path)
    if os.path.isfile(current) or not os.path.exists(current):
        current = os.path.dirname(current)
    while True:
        if os.path.basename(current) == rules.VAULT_DIR:
            return os.path.dirname(current)
        if os.path.isdir(os.path.join(current, rules.VAULT_DIR)):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
