"""Navigation over the vault model: what a link points at, who links to a page, page outlines,
page search, and the text changes a page rename needs.

Everything here works on engine coordinates (0-based lines, code-point columns, file paths) so it
can be tested without a server; `server/features/navigation.py` turns the results into LSP types.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..runtime import echoes_vault as rules
from .catalog import Card, catalog_steps, make_card
from .completion_candidates import page_documentation
from .findings import replacement
from .fuzzy import SLICE, Steps, finish
from .markdown import BlockId, Heading, Link, Structure, heading_key, scan
from .refusal import Refusal
from .vault import DAILY, LEGACY_DAILY, PAGE, Entry, Vault

SYMBOL_LIMIT = 100
PREVIEW_LINES = 6
# Characters that would end or split a `[[target]]`, so a page renamed to contain one could no
# longer be linked to.
LINK_BREAKERS = "[]|#^\n\r"


@functools.lru_cache(maxsize=1 << 16)
def stem_key(stem: str) -> str:
    """`page_key` of a link's page name, cached: the same names recur across a vault."""
    return rules.page_key(stem)


@dataclass(frozen=True)
class Place:
    """A span in a file: 0-based lines, code-point columns."""

    path: str
    line: int
    start: int
    end_line: int
    end: int


# -- the structure of the text being edited -------------------------------------------------------


def text_structure(text: str, is_page: bool) -> Structure:
    """Links, headings and block ids of a buffer; a page's frontmatter is skipped."""
    body = 0
    if is_page:
        frontmatter = rules.parse_frontmatter(text.split("\n"))
        if frontmatter is not None:
            body = frontmatter.body_line
    return scan(text, body)


def structure_for(vault: Vault, path: str, text: Optional[str]) -> Optional[Structure]:
    """The structure of `path` as `text` (the buffer) has it; the model's when they agree."""
    entry = vault.entry(path)
    is_page = vault.is_page(path)
    if text is None:
        return entry.structure if entry is not None else None
    if entry is not None and entry.structure is not None:
        overlay = vault.overlays.get(entry.path)
        if overlay is not None and (overlay is text or overlay == text):
            return entry.structure
        if (
            overlay is None
            and entry.text_hash is not None
            and rules.text_sha256(text) == entry.text_hash
        ):
            return entry.structure
    if entry is not None and entry.kind not in (PAGE, DAILY, LEGACY_DAILY):
        return Structure([], [], [])
    return text_structure(text, is_page)


def link_at(structure: Structure, line: int, column: int) -> Optional[Link]:
    """The link under the cursor; a cursor just after `]]` still counts."""
    touching: Optional[Link] = None
    for link in structure.links:
        if link.line != line:
            continue
        if link.start <= column < link.end:
            return link
        if column == link.end:
            touching = link
    return touching


def heading_at(structure: Structure, line: int) -> Optional[Heading]:
    return next((h for h in structure.headings if h.line == line), None)


def block_at(structure: Structure, line: int) -> Optional[BlockId]:
    return next((b for b in structure.blocks if b.line == line), None)


def title_of(structure: Optional[Structure]) -> Optional[Heading]:
    """The page title: its first level-1 heading."""
    if structure is None:
        return None
    return next((h for h in structure.headings if h.level == 1), None)


def title_place(entry: Entry, structure: Optional[Structure] = None) -> Place:
    """Where a page "is": its title line, else the top of the file."""
    title = title_of(structure if structure is not None else entry.structure)
    if title is None:
        return Place(entry.path, 0, 0, 0, 0)
    return Place(entry.path, title.line, title.start, title.line, title.end)


# -- what a link points at ------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    link: Link
    stem: str
    page: Optional[Entry] = None
    structure: Optional[Structure] = None
    heading: Optional[Heading] = None
    block: Optional[BlockId] = None
    asset: Optional[str] = None
    missing: Optional[str] = None  # "page", "heading", "block" or "asset"


_TARGET_KEYS: Dict[str, str] = {}


def target_key(link: Link) -> str:
    """The page key named by a link's target ("" for `[[#heading]]`), cached by target text."""
    key = _TARGET_KEYS.get(link.target)
    if key is None:
        stem = link.page_stem
        key = stem_key(stem) if stem else ""
        if len(_TARGET_KEYS) >= 1 << 16:
            _TARGET_KEYS.clear()
        _TARGET_KEYS[link.target] = key
    return key


def link_key(link: Link, source: Optional[Entry]) -> Optional[str]:
    """The page key a link points at (`[[#h]]` points at its own page)."""
    if link.embed and link.is_asset:
        return None
    key = target_key(link)
    if key:
        return key
    if source is not None and source.kind == PAGE:
        return source.key
    return None


def resolve(
    vault: Vault, source: Optional[Entry], link: Link, own: Optional[Structure] = None
) -> Target:
    """Resolve a link written in `source` (whose current structure is `own`)."""
    if link.is_asset:
        holders = vault.assets.get(rules.nfc(link.target).casefold())
        if not holders:
            return Target(link, link.target, missing="asset")
        return Target(link, link.target, asset=holders[0])
    stem = link.page_stem
    if not stem:
        if source is None or source.kind != PAGE:
            return Target(link, stem, missing="page")
        page: Optional[Entry] = source
        structure = own if own is not None else source.structure
    else:
        page = vault.page(stem)
        if page is None:
            return Target(link, stem, missing="page")
        structure = own if (page is source and own is not None) else page.structure
    assert page is not None
    if link.heading:
        wanted = heading_key(link.heading)
        found = next(
            (h for h in (structure.headings if structure else []) if heading_key(h.text) == wanted),
            None,
        )
        return Target(
            link, stem, page, structure, heading=found, missing=None if found else "heading"
        )
    if link.block is not None:
        block = next(
            (b for b in (structure.blocks if structure else []) if b.name == link.block), None
        )
        return Target(link, stem, page, structure, block=block, missing=None if block else "block")
    return Target(link, stem, page, structure)


def definition(target: Target) -> Optional[Tuple[Place, Place]]:
    """(target range, selection range) of a resolved link, or None when it resolves nowhere."""
    if target.asset is not None:
        place = Place(target.asset, 0, 0, 0, 0)
        return place, place
    page = target.page
    if page is None:
        return None
    if target.heading is not None:
        h = target.heading
        place = Place(page.path, h.line, h.start, h.line, h.end)
        return place, place
    if target.block is not None:
        b = target.block
        return Place(page.path, b.line, 0, b.line, b.end), Place(
            page.path, b.line, b.start, b.line, b.end
        )
    place = title_place(page, target.structure)
    return place, place


# -- hover -----------------------------------------------------------------------------------------


def _preview(lines: Sequence[str]) -> List[str]:
    kept = list(lines)
    while kept and not kept[0].strip():
        kept.pop(0)
    kept = kept[:PREVIEW_LINES]
    while kept and not kept[-1].strip():
        kept.pop()
    fences = sum(1 for line in kept if line.lstrip().startswith(("```", "~~~")))
    if fences % 2:
        kept.append("```")
    return kept


def page_summary_markdown(vault: Vault, page: Entry) -> str:
    """Name, summary, type/status/stack, deprecation and the first body lines of a page."""
    card = make_card(page)
    parts = [f"**{page.stem}**" + (f" — {card.summary}" if card.summary else "")]
    facts = page_documentation(card).replace("⚠️ **Deprecated**", "").strip()
    if facts:
        parts.append(facts)
    if page.deprecated:
        found = replacement(vault, page)
        if found is not None:
            parts.append(f"> ⚠️ **Deprecated.** Use [[{found.stem}]] instead.")
        else:
            parts.append("> ⚠️ **Deprecated.** It names no replacement page.")
    preview = _preview(vault.preview(page))
    if preview:
        parts.append("---\n\n" + "\n".join(preview))
    return "\n\n".join(parts)


def hover_markdown(vault: Vault, target: Target) -> str:
    link = target.link
    if target.missing == "asset":
        return f"**No such asset**: `{link.target}` is not in `{rules.ASSETS_DIR}/`."
    if target.asset is not None:
        rel = vault.rel(target.asset) or target.asset
        return f"**Asset** `{rules.VAULT_DIR}/{rel}`"
    if target.missing == "page" or target.page is None:
        if not target.stem:
            return "**No such page**: only a knowledge page can link to its own headings."
        return (
            f"**No such page**: `{target.stem}` does not exist in `{rules.PAGES_DIR}/` "
            f"(looked up as `{rules.page_key(target.stem)}`)."
        )
    text = page_summary_markdown(vault, target.page)
    if target.missing == "heading":
        text = f"⚠️ Heading `{link.heading}` not found in `{target.page.stem}`.\n\n" + text
    elif target.missing == "block":
        text = f"⚠️ Block `^{link.block}` not found in `{target.page.stem}`.\n\n" + text
    elif target.heading is not None:
        text = (
            f"§ `{'#' * target.heading.level} {target.heading.text}` — line {target.heading.line + 1}\n\n"
            + text
        )
    elif target.block is not None:
        text = f"§ block `^{target.block.name}` — line {target.block.line + 1}\n\n" + text
    return text


# -- references ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subject:
    """What references are asked for: a page, or one of its headings or blocks."""

    key: str
    heading: Optional[str] = None
    block: Optional[str] = None


def subject_at(
    vault: Vault, entry: Optional[Entry], structure: Structure, line: int, column: int
) -> Optional[Subject]:
    """On a link: its target (the heading or block when on the `#…` part). On a heading or a
    `^block` of a page: that heading or block (the title stands for the page). Elsewhere in a
    page: the page."""
    link = link_at(structure, line, column)
    if link is not None:
        key = link_key(link, entry)
        if key is None:
            return None
        on_anchor = (
            link.anchor_start <= column <= link.anchor_end and link.anchor_end > link.anchor_start
        )
        if on_anchor and link.heading:
            return Subject(key, heading=link.heading)
        if on_anchor and link.block is not None:
            return Subject(key, block=link.block)
        return Subject(key)
    if entry is None or entry.kind != PAGE:
        return None
    heading = heading_at(structure, line)
    if heading is not None and heading is not title_of(structure):
        return Subject(entry.key, heading=heading.text)
    block = block_at(structure, line)
    if block is not None and column >= block.start:
        return Subject(entry.key, block=block.name)
    return Subject(entry.key)


def names_subject(link: Link, subject: Subject) -> bool:
    """Whether a link to the subject's page also names the subject's heading or block."""
    if subject.heading is not None:
        return link.heading is not None and heading_key(link.heading) == heading_key(
            subject.heading
        )
    if subject.block is not None:
        return link.block == subject.block
    return True


def links_by_key(structure: Structure, source: Entry) -> Dict[str, List[Link]]:
    """A file's page links grouped by the page key they name, kept on the structure (a re-parse
    makes a new one), so repeated reference queries touch only their links."""
    context = source.key if source.kind == PAGE else ""
    if structure.grouped is None:
        structure.grouped = {}
    grouped = structure.grouped.get(context)
    if grouped is None:
        grouped = {}
        for link in structure.links:
            key = link_key(link, source)
            if key is not None:
                grouped.setdefault(key, []).append(link)
        structure.grouped[context] = grouped
    return grouped


def references(
    vault: Vault,
    subject: Subject,
    structure_of: Optional[Callable[[Entry], Optional[Structure]]] = None,
    extra_sources: Iterable[str] = (),
) -> List[Place]:
    """Every link to the subject, found through the reverse index (no vault scan).

    `structure_of` may supply a newer structure for a file (an unsaved buffer); `extra_sources`
    adds files whose buffers may link to the subject although the model does not know it yet.
    """
    sources = set(vault.backlinks.get(subject.key, {})) | set(extra_sources)
    found: List[Tuple[str, Place]] = []
    for path in sources:
        source = vault.entries.get(path) or vault.entry(path)
        if source is None:
            continue
        vault.ensure(source)
        structure = structure_of(source) if structure_of is not None else source.structure
        if structure is None:
            continue
        for link in links_by_key(structure, source).get(subject.key, ()):
            if names_subject(link, subject):
                found.append((source.rel, Place(path, link.line, link.start, link.line, link.end)))
    found.sort(key=lambda item: (item[0], item[1].line, item[1].start))
    return [place for _rel, place in found]


def declaration(vault: Vault, subject: Subject) -> Optional[Place]:
    """Where the subject itself is: the page's title, or the heading / block line."""
    page = vault.page(subject.key)
    if page is None:
        return None
    structure = page.structure
    if subject.heading is not None and structure is not None:
        wanted = heading_key(subject.heading)
        for h in structure.headings:
            if heading_key(h.text) == wanted:
                return Place(page.path, h.line, h.start, h.line, h.end)
        return None
    if subject.block is not None and structure is not None:
        for b in structure.blocks:
            if b.name == subject.block:
                return Place(page.path, b.line, b.start, b.line, b.end)
        return None
    return title_place(page)


def backlink_sources(vault: Vault, entry: Entry) -> List[str]:
    """Files other than the page itself that link to it."""
    return sorted(path for path in vault.backlinks.get(entry.key, {}) if path != entry.path)


# -- outline and page search ----------------------------------------------------------------------


@dataclass
class Section:
    heading: Heading
    end_line: int
    children: List[Section] = field(default_factory=list)


def outline(structure: Structure, line_count: int) -> List[Section]:
    """Headings as a tree; each section runs until the next heading of the same or higher rank."""
    roots: List[Section] = []
    stack: List[Section] = []
    last = max(0, line_count - 1)
    for heading in structure.headings:
        section = Section(heading, last)
        while stack and stack[-1].heading.level >= heading.level:
            closed = stack.pop()
            closed.end_line = max(closed.heading.line, heading.line - 1)
        if stack:
            stack[-1].children.append(section)
        else:
            roots.append(section)
        stack.append(section)
    return roots


def search_pages(vaults: Sequence[Vault], query: str, limit: int = SYMBOL_LIMIT) -> List[Card]:
    """Pages of all vaults ranked by name, then summary; an empty query lists the first `limit`."""
    return finish(page_search(vaults, query, limit))


def page_search(
    vaults: Sequence[Vault], query: str, limit: int = SYMBOL_LIMIT, size: int = SLICE
) -> Steps[List[Card]]:
    """`search_pages`, yielding after each slice of `size` pages searched or cards made, so that
    the workspace symbol request lets other requests in between (see `fuzzy.NameIndex.steps`)."""
    found: List[Tuple[int, Tuple[bool, str, str], Card]] = []
    for vault in vaults:
        pages = yield from catalog_steps(vault)
        ranked, _more = yield from pages.search_steps(query, limit, size)
        found.extend((score, card.order, card) for score, card in ranked)
    if len(vaults) > 1:
        found.sort(key=lambda item: (-item[0], item[1]))
    return [card for _score, _order, card in found[:limit]]


# -- rename ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextChange:
    """Replace columns `start`..`end` of `line` with `new_text`."""

    line: int
    start: int
    end: int
    new_text: str


def stem_columns(link: Link) -> Tuple[int, int]:
    """Columns of the page-name part of a link target (no folder, no `.md`)."""
    target = link.target
    segment = target.rsplit("/", 1)[-1]
    lead = len(segment) - len(segment.lstrip())
    start = link.target_start + (len(target) - len(segment)) + lead
    return start, start + len(link.page_stem)


def check_new_name(vault: Vault, page: Entry, new_name: str) -> str:
    """The new stem for `page`, or a Refusal saying why the name cannot be used."""
    try:
        filename = rules.normalize_page_name(new_name)
    except rules.EchoesError as error:
        raise Refusal(f"invalid page name: {error}") from error
    stem = filename[:-3]
    broken = sorted({ch for ch in stem if ch in LINK_BREAKERS})
    if broken:
        shown = " ".join(repr(ch)[1:-1] for ch in broken)
        raise Refusal(f"page name {stem!r} cannot be linked to: it contains {shown}")
    if stem == page.stem:
        raise Refusal(f"the page is already named {stem!r}")
    key = rules.page_key(stem)
    if key != page.key:
        others = [p for p in vault.by_key.get(key, []) if p != page.path]
        if others:
            rel = vault.entries[others[0]].rel
            raise Refusal(
                f"cannot rename to {stem!r}: it collides with {rel} (page names must differ after "
                "NFC normalization and case folding)"
            )
        if os.path.lexists(os.path.join(os.path.dirname(page.path), filename)):
            raise Refusal(f"cannot rename to {stem!r}: {filename} already exists in pages/")
    return stem


def rename_changes(
    vault: Vault,
    key: str,
    new_stem: str,
    structure_of: Optional[Callable[[Entry], Optional[Structure]]] = None,
    extra_sources: Iterable[str] = (),
) -> Dict[str, List[TextChange]]:
    """Per file, the changes that make every link to page `key` name `new_stem` instead. Only the
    name part changes: folders, `.md`, anchors, aliases and the `!` of embeds are kept."""
    changes: Dict[str, List[TextChange]] = {}
    sources = set(vault.backlinks.get(key, {})) | set(extra_sources)
    for path in sorted(sources):
        source = vault.entry(path)
        if source is None:
            continue
        structure = structure_of(source) if structure_of is not None else source.structure
        if structure is None:
            continue
        edits = []
        for link in structure.links:
            if link.is_asset or not link.page_stem or stem_key(link.page_stem) != key:
                continue
            start, end = stem_columns(link)
            edits.append(TextChange(link.line, start, end, new_stem))
        if edits:
            changes[path] = edits
    return changes
