"""A small, fast fuzzy scorer for page names and summaries.

Tiers, best first: the name is the query; the name starts with the query; the query starts a word
of the name; the query occurs in the name; the query's characters occur in the name in order (a
subsequence); the query occurs in the summary (at a word start, anywhere, or word by word).
Matching is case-insensitive (case folding after NFC). Within a tier, shorter names and earlier
matches win. Scores are positive integers, 0 means no match, and every score of a tier is higher
than every score of the tiers below it, so a search may stop after the first tiers that fill the
list.

`Matcher` scores one string at a time. `NameIndex` answers a whole query over many names at C
speed: prefix matches come from a sorted list by bisection, and the other tiers from regular
expressions run over all names (or summaries) joined into one text, a slice of names at a time, so
that a caller on the event loop can let other requests in between two slices (`NameIndex.steps`).
A query is cut to `MAX_QUERY` characters first.
"""

from __future__ import annotations

import heapq
import re
from array import array
from bisect import bisect_left, bisect_right
from typing import (
    Any,
    Callable,
    Dict,
    Generator,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
)

from ..runtime import echoes_vault as rules

EXACT = 6000
PREFIX = 5000  # + up to 400 for short names
WORD = 4000  # + up to 400, - up to 200
SUBSTRING = 3000  # + up to 400, - up to 200
SUBSEQUENCE = 1500  # + up to 999
SUMMARY_WORD = 1000  # - up to 400
SUMMARY = 500  # - up to 250
SUMMARY_WORDS = 200
# Shorter queries match too much prose to be useful against summaries.
SUMMARY_MIN_QUERY = 3
BOUNDARIES = frozenset(" -_./#()[]:,+")
_SCALE = 1 << 24  # scores and positions packed into one integer for C-speed selection
# The weaker tiers stop after this many matches per tier (a multiple of the list size).
BUDGET_FACTOR = 4
MIN_BUDGET = 400
# A query is cut to this many characters. No page name is longer (a file name holds at most 255
# bytes), nor is a valid summary (160 characters), so the cut loses no match; a query of 100,000
# characters would otherwise cost seconds to compile and run.
MAX_QUERY = 256
# Names (or summaries) a sliced search covers between two turns of the event loop.
SLICE = 2000
# Items a sliced sort sorts, or merges, between two turns.
SORT_SLICE = 5000
_BOUNDARY_CLASS = re.escape("".join(sorted(BOUNDARIES)))

T = TypeVar("T")
Result = Tuple[List[Tuple[int, int]], bool]
Steps = Generator[None, None, T]


def fold(text: str) -> str:
    """The form both sides are compared in (the text itself when it is already in that form, so
    that a vault of lowercase names keeps one string per name)."""
    folded = rules.nfc(text).casefold()
    return text if folded == text else folded


def _short_bonus(length: int) -> int:
    return max(0, 400 - length * 4)


def prefix_score(name: str, query: str) -> int:
    return EXACT if len(name) == len(query) else PREFIX + _short_bonus(len(name))


def inner_score(name: str, position: int) -> int:
    """A match of the query at `position` > 0 of `name`."""
    tier = WORD if name[position - 1] in BOUNDARIES else SUBSTRING
    return tier + _short_bonus(len(name)) - min(position, 200)


def subsequence_score(name: str, start: int, end: int, letters: int) -> int:
    """Compact matches that begin at a word start score higher."""
    spread = max(0, end - start - letters)
    bonus = 600 - min(spread, 60) * 8
    if start == 0 or name[start - 1] in BOUNDARIES:
        bonus += 300
    bonus += _short_bonus(len(name)) // 4 - min(start, 50)
    return SUBSEQUENCE + max(1, min(999, bonus))


def summary_score(position: int, before: str) -> int:
    """A match at `position` of a summary, after the character `before` ("" at its start)."""
    if position == 0 or before in BOUNDARIES:
        return SUMMARY_WORD - min(position, 400)
    return SUMMARY - min(position, 250)


def sorted_steps(
    items: Sequence[T], key: Callable[[T], Any], size: int = SORT_SLICE
) -> Steps[List[T]]:
    """`sorted(items, key=key)` a slice at a time: runs of `size` items are sorted, then merged,
    yielding after each run and after each `size` items merged (50,000 page names sort in about
    50 ms in one piece)."""
    runs = []
    for start in range(0, len(items), size):
        runs.append(sorted(items[start : start + size], key=key))
        yield
    if len(runs) < 2:
        return runs[0] if runs else []
    merged: List[T] = []
    for item in heapq.merge(*runs, key=key):
        merged.append(item)
        if len(merged) % size == 0:
            yield
    return merged


def finish(steps: Steps[T]) -> T:
    """Run a sliced search (see `NameIndex.steps`) to its end without giving way."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


class Matcher:
    """One query, compiled once and applied to many candidates (already folded)."""

    def __init__(self, query: str) -> None:
        folded = fold(query[:MAX_QUERY]).replace("\n", " ").strip()
        self.query = folded
        self.words = tuple(folded.split())
        # Page names write spaces as `-` or `_` as often as not.
        self.variants: Tuple[str, ...] = (
            (folded, folded.replace(" ", "-"), folded.replace(" ", "_"))
            if " " in folded
            else (folded,)
        )
        letters = [ch for ch in folded if not ch.isspace()]
        self.letters = len(letters)
        # `a[^\nb]*b[^\nc]*c`: each gap stops at the next letter, so matching never backtracks
        # within a gap and finds the leftmost, most compact occurrence from each start.
        parts = [re.escape(letters[0])] if letters else []
        for ch in letters[1:]:
            parts.append(f"[^\n{re.escape(ch)}]*{re.escape(ch)}")
        self.pattern: Optional[re.Pattern[str]] = re.compile("".join(parts)) if parts else None

    def __bool__(self) -> bool:
        return bool(self.query)

    def name(self, name: str) -> int:
        """Score of a folded name; 0 when it does not match. Agrees with `NameIndex.search`."""
        if not self.query:
            return 1
        best = 0
        for variant in self.variants:
            position = name.find(variant)
            if position == 0:
                return prefix_score(name, variant)
            while position > 0:
                if len(variant) > 1 or name[position - 1] in BOUNDARIES:
                    best = max(best, inner_score(name, position))
                position = name.find(variant, position + 1)
        if best or self.pattern is None or self.letters < 2:
            return best
        match = self.pattern.search(name)
        if match is None:
            return 0
        return subsequence_score(name, match.start(), match.end(), self.letters)

    def summary(self, summary: str) -> int:
        """Score of a folded summary (the weaker signal); 0 when it does not match."""
        query = self.query
        if len(query) < SUMMARY_MIN_QUERY or not summary:
            return 0
        position = summary.find(query)
        if position >= 0:
            return summary_score(position, summary[position - 1] if position else "")
        if len(self.words) > 1 and all(word in summary for word in self.words):
            return SUMMARY_WORDS
        return 0

    def score(self, name: str, summary: str = "") -> int:
        """Best of the name score and the (lower-weighted) summary score."""
        best = self.name(name)
        if best:
            return best
        return self.summary(summary)


def _overlapping(
    pattern: re.Pattern[str], text: str, start: int, end: int
) -> Iterator[re.Match[str]]:
    """Every match of a literal pattern in `text[start:end]`, overlapping ones included. A search
    for a literal runs at the regex engine's fast prefix speed, which a zero-width look-ahead
    would not."""
    match = pattern.search(text, start, end)
    while match is not None:
        yield match
        match = pattern.search(text, match.start() + 1, end)


Region = Tuple[int, int, int]


def _regions(starts: Sequence[int], length: int, size: int) -> Iterator[Region]:
    """(first item, start, end) of each run of `size` items of a text that joins them with line
    breaks, whose items begin at `starts`: the slices a search covers one at a time."""
    count = len(starts)
    for first in range(0, count, size):
        after = first + size
        yield first, starts[first], starts[after] - 1 if after < count else length


def _walk(
    pattern: re.Pattern[str],
    blob: str,
    starts: Sequence[int],
    region: Region,
    overlapping: bool = False,
) -> Iterator[Tuple[int, int]]:
    """(offset, item index) of each match in one region; matches come in text order, so the item
    holding each is found by bisection from the last one's. `overlapping` also finds matches that
    begin inside an earlier one (each search resumes one character after the last match began)."""
    index, start, end = region
    matches = (
        _overlapping(pattern, blob, start, end)
        if overlapping
        else pattern.finditer(blob, start, end)
    )
    for match in matches:
        offset = match.start()
        index = bisect_right(starts, offset, index) - 1
        yield offset, index


class _Found:
    """The scores a search has found so far, by item index, and what it may still spend: the
    weaker tiers each stop after a budget of matches."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.budget = max(limit * BUDGET_FACTOR, MIN_BUDGET)
        self.scores: Dict[int, int] = {}
        self.spent = 0
        self.skipped = False  # a tier stopped early: more may match than are returned

    def offer(self, index: int, value: int) -> None:
        if value > self.scores.get(index, 0):
            self.scores[index] = value

    def offer_weak(self, index: int, value: int) -> None:
        """A match of a weaker tier for an item not found yet, within the tier's budget."""
        if index in self.scores:
            return
        if self.spent >= self.budget:
            self.skipped = True
            return
        self.spent += 1
        self.scores[index] = value

    def full(self) -> bool:
        """Whether the list is full, so that a weaker tier would add nothing shown."""
        if len(self.scores) >= self.limit:
            self.skipped = True
            return True
        return False

    def best(self) -> Result:
        top = _SCALE - 1
        packed = [value * _SCALE + (top - index) for index, value in self.scores.items()]
        best = heapq.nlargest(self.limit, packed)
        more = len(packed) > self.limit or self.skipped
        return [(key // _SCALE, top - key % _SCALE) for key in best], more


def _starts(items: Sequence[str]) -> array[int]:
    """Where each item begins in the items joined by line breaks. The integers an index keeps
    one per name are packed in arrays: 8 bytes each, not the 40 of an int and its list slot."""
    starts = array("q")
    offset = 0
    for item in items:
        starts.append(offset)
        offset += len(item) + 1
    return starts


class NameIndex:
    """Folded names and summaries, in display order, searchable as a whole. The summaries are
    kept joined only (each page's own string would double their memory)."""

    def __init__(self, names: Sequence[str], summaries: Sequence[str]) -> None:
        finish(self._fill(names, summaries, max(1, len(names))))

    @classmethod
    def made(
        cls, names: Sequence[str], summaries: Sequence[str], size: int = SLICE
    ) -> Steps[NameIndex]:
        """An index made a slice of `size` names at a time (50,000 take about 50 ms)."""
        index = cls.__new__(cls)
        yield from index._fill(names, summaries, size)
        return index

    def _fill(self, names: Sequence[str], summaries: Sequence[str], size: int) -> Steps[None]:
        """Names come folded; summaries are folded here, a slice at a time."""
        # Newlines never occur in folded names; summaries are one line by the protocol, and any
        # stray line break is flattened so offsets stay one item per line.
        self.names: List[str] = []
        folded: List[str] = []
        for start in range(0, len(names), size):
            self.names.extend(name.replace("\n", " ") for name in names[start : start + size])
            folded.extend(
                fold(summary).replace("\n", " ") for summary in summaries[start : start + size]
            )
            yield
        self.blob = "\n".join(self.names)
        self.starts = _starts(self.names)
        self.summary_blob = "\n".join(folded)
        self.summary_starts = _starts(folded)
        # The names in order, for prefixes by bisection: made by the first search that needs
        # them, as a step of its own.
        self.sorted_names: List[str] = []
        self.prefix_keys: array[int] = array("q")
        self._sorted = False

    def __len__(self) -> int:
        return len(self.names)

    def set_summary(self, index: int, summary: str) -> None:
        """A page's summary changed; its name and place did not. The joined summaries and their
        starts are made anew: a search under way keeps the ones it started with."""
        blob, starts = self.summary_blob, self.summary_starts
        begin = starts[index]
        end = starts[index + 1] - 1 if index + 1 < len(starts) else len(blob)
        text = fold(summary).replace("\n", " ")
        shift = len(text) - (end - begin)
        self.summary_blob = blob[:begin] + text + blob[end:]
        self.summary_starts = starts[: index + 1] + array(
            "q", (start + shift for start in starts[index + 1 :])
        )

    def sort_steps(self) -> Steps[None]:
        """Sort the names for prefix search, unless a search already has."""
        if not self._sorted:
            yield from self._sort()

    def _sort(self) -> Steps[None]:
        names = self.names
        order = yield from sorted_steps(range(len(names)), names.__getitem__)
        self.sorted_names = [names[index] for index in order]
        yield
        # Within the prefix tier: shorter names first, then display order.
        self.prefix_keys = array(
            "q", [min(len(names[index]), 100) * _SCALE + index for index in order]
        )
        self._sorted = True

    def _prefix(self, query: str) -> Tuple[int, int]:
        low = bisect_left(self.sorted_names, query)
        high = bisect_right(self.sorted_names, query + "\U0010ffff", low)
        return low, high

    def search(self, query: str, limit: int) -> Result:
        """`steps` run to the end at once."""
        return finish(self.steps(query, limit))

    def steps(self, query: str, limit: int, size: int = SLICE) -> Steps[Result]:
        """[(score, index)] of the best `limit` matches, best first (ties in display order), and
        whether more may match than were returned; as a generator that yields after each slice
        of `size` names or summaries, so that a caller on the event loop can give way there.

        Tiers are searched best first, and a lower tier only while the list is not full. The
        weaker tiers (inside a name, letters in order, summaries) each stop after a budget of
        matches in display order, so a query that matches nearly every page costs no more than
        one that matches a few hundred; the answer is then marked as possibly incomplete.
        """
        matcher = Matcher(query)
        if not matcher.query:
            count = min(limit, len(self.names))
            return [(1, index) for index in range(count)], len(self.names) > limit
        yield from self.sort_steps()
        found = _Found(limit)
        crowded = self._prefixes(matcher, found)
        if crowded is not None:
            return crowded
        for variant in matcher.variants:
            yield from self._inside(variant, found, size)
        if matcher.pattern is not None and matcher.letters > 1 and not found.full():
            yield from self._letters(matcher, found, size)
        if len(matcher.query) >= SUMMARY_MIN_QUERY and not found.full():
            yield from self._summaries(matcher, found, size)
        return found.best()

    def _prefixes(self, matcher: Matcher, found: _Found) -> Optional[Result]:
        """Tier 1: prefixes (exact matches are the shortest of them). Returns the whole answer
        when the query itself begins more names than the list holds."""
        names = self.names
        for variant in matcher.variants:
            low, high = self._prefix(variant)
            if high - low > found.limit and variant is matcher.query:
                keys = heapq.nsmallest(found.limit, self.prefix_keys[low:high])
                chosen = [key % _SCALE for key in keys]
                return [(prefix_score(names[i], variant), i) for i in chosen], True
            for key in self.prefix_keys[low:high]:
                index = key % _SCALE
                found.offer(index, prefix_score(names[index], variant))
        return None

    def _inside(self, variant: str, found: _Found, size: int) -> Iterator[None]:
        """Tier 2: the query at a word start inside a name, then (two or more characters only,
        and within the budget) anywhere inside it."""
        if len(variant) == 1:
            pattern = re.compile(f"(?<=[{_BOUNDARY_CLASS}]){re.escape(variant)}")
            overlaps = False
        else:
            pattern = re.compile(re.escape(variant))
            # Occurrences of a query that can overlap itself (`--` twice in `a---`) are all
            # found: the later one may begin a word and score higher.
            overlaps = any(variant[:k] == variant[-k:] for k in range(1, len(variant)))
        names, starts = self.names, self.starts
        found.spent = 0
        for region in _regions(starts, len(self.blob), size):
            for offset, index in _walk(pattern, self.blob, starts, region, overlaps):
                position = offset - starts[index]
                if position == 0:
                    continue
                value = inner_score(names[index], position)
                if value < WORD - 200:
                    found.offer_weak(index, value)
                else:
                    found.offer(index, value)
            yield

    def _letters(self, matcher: Matcher, found: _Found, size: int) -> Iterator[None]:
        """Tier 3: the letters in order."""
        assert matcher.pattern is not None
        names, starts = self.names, self.starts
        found.spent = 0
        for first, start, end in _regions(starts, len(self.blob), size):
            for match in matcher.pattern.finditer(self.blob, start, end):
                index = bisect_right(starts, match.start(), first) - 1
                begin = starts[index]
                found.offer_weak(
                    index,
                    subsequence_score(
                        names[index], match.start() - begin, match.end() - begin, matcher.letters
                    ),
                )
                if found.spent >= found.budget:
                    found.skipped = True
                    return
            yield

    def _summaries(self, matcher: Matcher, found: _Found, size: int) -> Iterator[None]:
        """Tier 4: the query in a summary, then (for several words) summaries holding every
        word."""
        blob = self.summary_blob  # with its starts: a change of a summary makes new ones
        starts = self.summary_starts
        pattern = re.compile(re.escape(matcher.query))
        found.spent = 0
        for region in _regions(starts, len(blob), size):
            for offset, index in _walk(pattern, blob, starts, region):
                position = offset - starts[index]
                before = blob[offset - 1] if position else ""
                found.offer_weak(index, summary_score(position, before))
                if found.spent >= found.budget:
                    found.skipped = True
                    return
            yield
        if len(matcher.words) < 2 or found.full():
            return
        yield from self._every_word(matcher.words, blob, starts, found, size)

    @staticmethod
    def _every_word(
        words: Sequence[str], blob: str, starts: Sequence[int], found: _Found, size: int
    ) -> Iterator[None]:
        """The summaries holding every word, in display order, until the budget is spent. A
        literal search finds the lines holding the longest word (the next search begins on the
        next line), and the others are looked for in those lines only: one pass over the
        summaries, not one per word, which stops with the budget."""
        first, *others = sorted(words, key=len, reverse=True)
        pattern = re.compile(re.escape(first))
        for first_item, start, end in _regions(starts, len(blob), size):
            match = pattern.search(blob, start, end)
            while match is not None:
                begin = max(start, blob.rfind("\n", start, match.start()) + 1)
                stop = blob.find("\n", match.end(), end)
                if stop == -1:
                    stop = end
                line = blob[begin:stop]
                if all(word in line for word in others):
                    found.offer_weak(bisect_right(starts, begin, first_item) - 1, SUMMARY_WORDS)
                    if found.spent >= found.budget:
                        found.skipped = True
                        return
                match = pattern.search(blob, stop + 1, end)  # on the next line
            yield
