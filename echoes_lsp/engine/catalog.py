"""Derived, cached views of a vault for completion and symbol search.

A `Catalog` holds one `Card` per page (its name and frontmatter, folded for matching), the vault's
frontmatter vocabulary (how often each `type`, `status`, `stack` item and key is used) and its
assets. It is rebuilt when the vault's generation counter moves, and the rebuild reuses every card
whose page was not re-parsed, so a keystroke in one page costs one card, not ten thousand. The
first build makes every card (about 20 µs each); `catalog_steps` makes them a slice at a time, so
a request on the event loop can let others in between.
"""

from __future__ import annotations

import weakref
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, List, Optional, Set, Tuple

from ..runtime import echoes_vault as rules
from .fuzzy import SLICE, NameIndex, Steps, finish, fold, sorted_steps
from .vault import ASSET, PAGE, Entry, Vault

# Cards a sliced refresh makes between two turns of the event loop (each takes 20-50 µs).
CARD_SLICE = 250


@dataclass(frozen=True)
class Card:
    """What completion and symbol search show of one page. Slotted: one per page. It keeps the
    page's entry and the analysis it was made from, and reads what they hold through them
    rather than copying it (a copy of each field would cost 60 bytes a page)."""

    __slots__ = ("deprecated", "entry", "folded", "info")

    entry: Entry
    info: Optional[rules.PageInfo]  # identity marks the card current (see `Catalog._patch`)
    folded: str  # the name, folded for matching
    deprecated: bool

    @property
    def stem(self) -> str:
        return self.entry.stem

    @property
    def key(self) -> str:
        return self.entry.key

    @property
    def path(self) -> str:
        return self.entry.path

    @property
    def summary(self) -> str:
        return (self.info.summary or "") if self.info is not None else ""

    @property
    def type(self) -> Optional[str]:
        return self.info.type if self.info is not None else None

    @property
    def status(self) -> Optional[str]:
        return self.info.status if self.info is not None else None

    @property
    def stack(self) -> Tuple[str, ...]:
        return stack_items(self.info.stack) if self.info is not None else ()

    @property
    def title_line(self) -> int:
        return self.entry.title_line

    @property
    def field_keys(self) -> Tuple[str, ...]:
        return self.entry.field_keys

    @property
    def order(self) -> Tuple[bool, str, str]:
        """Where the card sorts: current pages first, then by folded name and name (made when
        asked: a tuple on every card would cost 60 bytes a page)."""
        return (self.deprecated, self.folded, self.stem)

    def same_place(self, other: Card) -> bool:
        """Whether `other` sorts and is named exactly like this card."""
        return self.order == other.order and self.key == other.key


@lru_cache(maxsize=1024)
def stack_items(raw: Optional[str]) -> Tuple[str, ...]:
    """Items of a `stack` value: `[a, b]`, a bare scalar, or indented `- a` lines. Remembered:
    most pages name one of a few stacks, and their cards then share one tuple."""
    if raw is None:
        return ()
    text = raw.strip()
    pieces: List[str]
    if text.startswith("["):
        inner = text[1:-1] if text.endswith("]") else text[1:]
        pieces = inner.split(",")
    elif "\n" in text or text.startswith("-"):
        pieces = [
            line.strip()[1:] if line.strip().startswith("-") else line for line in text.split("\n")
        ]
    else:
        pieces = [text]
    items: List[str] = []
    for piece in pieces:
        value, error = rules.parse_scalar(piece)
        if error is None and value and value.strip() and value.strip() not in items:
            items.append(value.strip())
    return tuple(items)


def make_card(entry: Entry) -> Card:
    return Card(entry, entry.info, fold(entry.stem), entry.deprecated)


class Catalog:
    """Cards in display order (current pages alphabetically, then deprecated ones).

    The catalog listens to its vault: a re-parsed page whose name, summary and deprecation are
    unchanged only swaps its card; anything else rebuilds the order and the search index.
    """

    def __init__(self) -> None:
        self.generation = -1
        self.cards: List[Card] = []
        self.by_path: Dict[str, Card] = {}
        self.position: Dict[str, int] = {}
        self.dirty: Set[str] = set()
        self.everything = True
        # Refreshes finished so far: a sliced refresh that another one overtook starts over.
        self.refreshes = 0
        # Changes of the cards so far: an index made meanwhile is not kept.
        self.revision = 0
        # Sliced refreshes under way (see `refresh_steps`).
        self.running = 0
        self._index: Optional[NameIndex] = None
        self._vocabulary: Optional[Dict[str, List[Tuple[str, int]]]] = None
        self._assets: Optional[List[Tuple[str, str]]] = None

    def mark(self, path: Optional[str]) -> None:
        """A vault listener: remember what changed until the next query."""
        if path is None:
            self.everything = True
        elif not self.everything:
            self.dirty.add(path)

    def refresh(self, vault: Vault) -> None:
        finish(self.refresh_steps(vault))

    def refresh_steps(self, vault: Vault, size: int = CARD_SLICE) -> Steps[None]:
        """Bring the catalog up to date with the model, yielding after each `size` cards made.
        The model may change while it yields: those changes are marked as they happen and
        applied by the next refresh, which the generation left behind asks for."""
        generation = vault.generation
        refreshes = self.refreshes
        dirty, everything = self.dirty, self.everything
        self.dirty, self.everything = set(), False
        # A refresh under way took the marks it applies, and its cards are not in place yet:
        # one that begins meanwhile cannot patch them, so it makes (or reuses) every card.
        everything = everything or self.running > 0
        self.running += 1
        try:
            if everything or not self._patch(vault, dirty):
                yield from self._rebuild(vault, size)
        finally:
            self.running -= 1
        if self.refreshes != refreshes:
            # Another refresh ran meanwhile and took the marks made since this one began.
            self.everything = True
        self.refreshes += 1
        self.generation = generation

    def _patch(self, vault: Vault, dirty: Set[str]) -> bool:
        """Apply changes that keep every card in place; False when a rebuild is needed."""
        replaced: List[Tuple[int, Card]] = []
        for path in dirty:
            entry = vault.entries.get(path)
            old = self.by_path.get(path)
            if entry is None or entry.kind != PAGE:
                if old is not None:
                    return False
                self._assets = None
                continue
            paths = vault.by_key.get(entry.key)
            if old is None or not paths or paths[0] != path:
                return False
            if old.info is entry.info and old.stem == entry.stem:
                continue
            card = make_card(entry)
            if not card.same_place(old):
                return False
            replaced.append((self.position[path], card))
        for position, card in replaced:
            if self._index is not None and card.summary != self.cards[position].summary:
                self._index.set_summary(position, card.summary)
            self.cards[position] = card
            self.by_path[card.path] = card
        if replaced:
            self._vocabulary = None
            self.revision += 1
        return True

    def _rebuild(self, vault: Vault, size: int) -> Steps[None]:
        previous = self.by_path
        current: Dict[str, Card] = {}
        entries = vault.entries
        made = 0
        for path in [paths[0] for paths in vault.by_key.values() if paths]:
            entry = entries.get(path)
            if entry is None:
                continue  # removed while earlier cards were made
            card = previous.get(entry.path)
            if card is None or card.info is not entry.info or card.stem != entry.stem:
                card = make_card(entry)
                made += 1
                if made % size == 0:
                    yield
            current[entry.path] = card
        cards = yield from sorted_steps(list(current.values()), key=lambda card: card.order)
        self.by_path = current
        self.cards = cards
        self.revision += 1
        self.position = {card.path: index for index, card in enumerate(self.cards)}
        self._index = None
        self._vocabulary = None
        self._assets = None
        yield

    def index(self) -> NameIndex:
        return finish(self.index_steps())

    def index_steps(self, size: int = SLICE) -> Steps[NameIndex]:
        """The search index of the cards, made a slice of `size` names at a time when it is
        missing. One made while the cards changed is used by its search, and not kept."""
        if self._index is not None:
            return self._index
        revision = self.revision
        cards = self.cards
        made = yield from NameIndex.made(
            [card.folded for card in cards], [card.summary for card in cards], size
        )
        if self.revision == revision:
            self._index = made
        return made

    def search(self, query: str, limit: int) -> Tuple[List[Tuple[int, Card]], bool]:
        """The best `limit` cards for a query, with their scores, and whether there are more."""
        return finish(self.search_steps(query, limit))

    def search_steps(
        self, query: str, limit: int, size: int = SLICE
    ) -> Steps[Tuple[List[Tuple[int, Card]], bool]]:
        """`search`, yielding after each slice of `size` names (see `NameIndex.steps`). The
        cards are the ones the search began with: a rebuild meanwhile makes a new list."""
        cards = self.cards
        index = yield from self.index_steps(size)
        found, more = yield from index.steps(query, limit, size)
        return [(score, cards[index]) for score, index in found], more

    def vocabulary(self) -> Dict[str, List[Tuple[str, int]]]:
        """`type`, `status`, `stack` values and frontmatter `keys`, most used first."""
        if self._vocabulary is None:
            counts: Dict[str, Counter] = {
                "type": Counter(),
                "status": Counter(),
                "stack": Counter(),
                "keys": Counter(),
            }
            for card in self.cards:
                if card.type:
                    counts["type"][card.type.strip()] += 1
                if card.status:
                    counts["status"][card.status.strip()] += 1
                counts["stack"].update(card.stack)
                counts["keys"].update(card.field_keys)
            self._vocabulary = {
                name: sorted(counter.items(), key=lambda item: (-item[1], item[0].casefold()))
                for name, counter in counts.items()
            }
        return self._vocabulary

    def assets(self, vault: Vault) -> List[Tuple[str, str]]:
        """(link text, path) of every asset: the bare file name when it is unique, else the path
        inside `assets/`."""
        if self._assets is None:
            found: List[Tuple[str, str]] = []
            for entry in vault.entries.values():
                if entry.kind != ASSET or entry.symlink:
                    continue
                inside = entry.rel.split("/", 1)[1] if "/" in entry.rel else entry.rel
                base = inside.rsplit("/", 1)[-1]
                holders = vault.assets.get(rules.nfc(base).casefold(), [])
                found.append((base if len(holders) <= 1 else inside, entry.path))
            self._assets = sorted(found, key=lambda item: (item[0].casefold(), item[0]))
        return self._assets


_CATALOGS: weakref.WeakKeyDictionary[Vault, Catalog] = weakref.WeakKeyDictionary()


def catalog(vault: Vault) -> Catalog:
    """The vault's catalog, brought up to date with its model."""
    return finish(catalog_steps(vault))


def prepare_steps(vault: Vault) -> Steps[None]:
    """Bring the vault's catalog and its search index (its names sorted) up to date, a slice at
    a time: the server does it once indexing ends, so that the first `[[` or symbol search
    finds them made (at 100,000 pages they take seconds)."""
    found = yield from catalog_steps(vault)
    index = yield from found.index_steps()
    yield from index.sort_steps()


def catalog_steps(vault: Vault, size: int = CARD_SLICE) -> Steps[Catalog]:
    """`catalog`, yielding after each `size` cards it makes."""
    found = _CATALOGS.get(vault)
    if found is None:
        found = _CATALOGS[vault] = Catalog()
        vault.listeners.append(found.mark)
    if found.generation != vault.generation:
        yield from found.refresh_steps(vault, size)
    return found
