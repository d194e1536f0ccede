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
expressions run over all names (or summaries) joined into one text.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_left, bisect_right
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

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


def summary_score(summary: str, position: int) -> int:
    if position == 0 or summary[position - 1] in BOUNDARIES:
        return SUMMARY_WORD - min(position, 400)
    return SUMMARY - min(position, 250)


class Matcher:
    """One query, compiled once and applied to many candidates (already folded)."""

    def __init__(self, query: str) -> None:
        folded = fold(query).strip()
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
            return summary_score(summary, position)
        if len(self.words) > 1 and all(word in summary for word in self.words):
            return SUMMARY_WORDS
        return 0

    def score(self, name: str, summary: str = "") -> int:
        """Best of the name score and the (lower-weighted) summary score."""
        best = self.name(name)
        if best:
            return best
        return self.summary(summary)


def _overlapping(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """Every match of a literal pattern, overlapping ones included. A search for a literal runs
    at the regex engine's fast prefix speed, which a zero-width look-ahead would not."""
    match = pattern.search(text)
    while match is not None:
        yield match
        match = pattern.search(text, match.start() + 1)


def _starts(items: Sequence[str]) -> List[int]:
    starts = []
    offset = 0
    for item in items:
        starts.append(offset)
        offset += len(item) + 1
    return starts


class NameIndex:
    """Folded names and summaries, in display order, searchable as a whole."""

    def __init__(self, names: Sequence[str], summaries: Sequence[str]) -> None:
        # Newlines never occur in folded names; summaries are one line by the protocol, and any
        # stray line break is flattened so offsets stay one item per line.
        self.names = [name.replace("\n", " ") for name in names]
        self.summaries = [summary.replace("\n", " ") for summary in summaries]
        self.blob = "\n".join(self.names)
        self.starts = _starts(self.names)
        self._summary_blob: Optional[str] = None
        self.summary_starts: List[int] = []
        order = sorted(range(len(self.names)), key=lambda index: self.names[index])
        self.sorted_names = [self.names[index] for index in order]
        # Within the prefix tier: shorter names first, then display order.
        self.prefix_keys = [min(len(self.names[index]), 100) * _SCALE + index for index in order]

    def __len__(self) -> int:
        return len(self.names)

    def set_summary(self, index: int, summary: str) -> None:
        """A page's summary changed; its name and place did not."""
        self.summaries[index] = summary.replace("\n", " ")
        self._summary_blob = None

    @property
    def summary_blob(self) -> str:
        if self._summary_blob is None:
            self._summary_blob = "\n".join(self.summaries)
            self.summary_starts = _starts(self.summaries)
        return self._summary_blob

    def _prefix(self, query: str) -> Tuple[int, int]:
        low = bisect_left(self.sorted_names, query)
        high = bisect_right(self.sorted_names, query + "\U0010ffff", low)
        return low, high

    def search(self, query: str, limit: int) -> Tuple[List[Tuple[int, int]], bool]:
        """[(score, index)] of the best `limit` matches, best first (ties in display order), and
        whether more may match than were returned.

        Tiers are searched best first, and a lower tier only while the list is not full. The
        weaker tiers (inside a name, letters in order, summaries) each stop after a budget of
        matches in display order, so a query that matches nearly every page costs no more than
        one that matches a few hundred; the answer is then marked as possibly incomplete.
        """
        matcher = Matcher(query)
        if not matcher.query:
            count = min(limit, len(self.names))
            return [(1, index) for index in range(count)], len(self.names) > limit
        crowded = self._crowded_prefix(matcher.query, limit)
        if crowded is not None:
            return crowded, True
        budget = max(limit * BUDGET_FACTOR, MIN_BUDGET)
        scores: Dict[int, int] = {}
        self._add_prefixes(matcher, scores)
        skipped = self._add_inner_matches(matcher, scores, budget)
        if matcher.pattern is not None and matcher.letters > 1:
            skipped = (
                self._add_subsequences(matcher.pattern, matcher.letters, scores, budget, limit)
                or skipped
            )
        if len(matcher.query) >= SUMMARY_MIN_QUERY:
            if len(scores) >= limit:
                skipped = True
            else:
                skipped = self._add_summaries(matcher, scores, budget, limit) or skipped
        return _best(scores, limit, skipped)

    def _crowded_prefix(self, query: str, limit: int) -> Optional[List[Tuple[int, int]]]:
        """The answer when more names start with the query than the list holds: the shortest of
        them fill it and outrank every other tier, so nothing else need be searched."""
        low, high = self._prefix(query)
        if high - low <= limit:
            return None
        keys = heapq.nsmallest(limit, self.prefix_keys[low:high])
        return [(prefix_score(self.names[i], query), i) for i in (key % _SCALE for key in keys)]

    def _add_prefixes(self, matcher: Matcher, scores: Dict[int, int]) -> None:
        """Tier 1: prefixes (exact matches are the shortest of them)."""
        for variant in matcher.variants:
            low, high = self._prefix(variant)
            for key in self.prefix_keys[low:high]:
                index = key % _SCALE
                _keep_best(scores, index, prefix_score(self.names[index], variant))

    def _add_inner_matches(self, matcher: Matcher, scores: Dict[int, int], budget: int) -> bool:
        """Tier 2: the query at a word start inside a name, then (two or more characters only,
        and within the budget) anywhere inside it. True when the budget cut the search short."""
        skipped = False
        for variant in matcher.variants:
            if len(variant) == 1:
                self._add_word_starts(variant, scores)
            else:
                skipped = self._add_substrings(variant, scores, budget) or skipped
        return skipped

    def _add_word_starts(self, letter: str, scores: Dict[int, int]) -> None:
        """A single character matches only where a word of the name begins."""
        boundary = re.escape("".join(sorted(BOUNDARIES)))
        for offset, index in self._walk(f"(?<=[{boundary}]){re.escape(letter)}", self.blob):
            _keep_best(scores, index, inner_score(self.names[index], offset - self.starts[index]))

    def _add_substrings(self, variant: str, scores: Dict[int, int], budget: int) -> bool:
        """Matches at a word start always count; matches inside a word count while the budget
        lasts (True when it ran out)."""
        skipped = False
        found = 0
        # Occurrences of a query that can overlap itself (`--` twice in `a---`) are all
        # found: the later one may begin a word and score higher.
        overlaps = any(variant[:k] == variant[-k:] for k in range(1, len(variant)))
        for offset, index in self._walk(re.escape(variant), self.blob, overlaps):
            position = offset - self.starts[index]
            if position == 0:
                continue
            value = inner_score(self.names[index], position)
            if value < WORD - 200:
                if index in scores:
                    continue
                if found >= budget:
                    skipped = True
                    continue
                found += 1
            _keep_best(scores, index, value)
        return skipped

    def _add_subsequences(
        self,
        pattern: re.Pattern[str],
        letters: int,
        scores: Dict[int, int],
        budget: int,
        limit: int,
    ) -> bool:
        """Tier 3: the letters in order, for names no better tier found. True when the list was
        already full or the budget cut the search short."""
        if len(scores) >= limit:
            return True
        found = 0
        for match in pattern.finditer(self.blob):
            index = bisect_right(self.starts, match.start()) - 1
            if index in scores:
                continue
            start = self.starts[index]
            scores[index] = subsequence_score(
                self.names[index], match.start() - start, match.end() - start, letters
            )
            found += 1
            if found >= budget:
                return True
        return False

    def _walk(
        self, pattern: str, blob: str, overlapping: bool = False
    ) -> Iterator[Tuple[int, int]]:
        """(offset, name index) of each match; matches come in text order, so the name holding
        each is found by walking forward. `overlapping` also finds matches that begin inside
        an earlier one (each search resumes one character after the last match began)."""
        starts = self.starts
        last = len(starts) - 1
        index = 0
        for match in (
            _overlapping(re.compile(pattern), blob) if overlapping else re.finditer(pattern, blob)
        ):
            offset = match.start()
            while index < last and starts[index + 1] <= offset:
                index += 1
            yield offset, index

    def _add_summaries(
        self, matcher: Matcher, scores: Dict[int, int], budget: int, limit: int
    ) -> bool:
        """Tier 4: add summary matches; True when the budget cut the search short."""
        found = self._add_summary_phrases(matcher.query, scores, budget)
        if found >= budget:
            return True
        if len(matcher.words) <= 1:
            return False
        if len(scores) >= limit:
            return True
        for index in sorted(self._summaries_with_every_word(matcher.words)):
            if index not in scores:
                scores[index] = SUMMARY_WORDS
                found += 1
                if found >= budget:
                    return True
        return False

    def _add_summary_phrases(self, query: str, scores: Dict[int, int], budget: int) -> int:
        """Summaries holding the whole query, until the budget is spent; how many were added."""
        blob = self.summary_blob
        starts = self.summary_starts
        found = 0
        for match in re.finditer(re.escape(query), blob):
            index = bisect_right(starts, match.start()) - 1
            if index in scores:
                continue
            scores[index] = summary_score(self.summaries[index], match.start() - starts[index])
            found += 1
            if found >= budget:
                break
        return found

    def _summaries_with_every_word(self, words: Sequence[str]) -> Set[int]:
        """Lines holding every word: intersect the lines of each word (literal searches)."""
        blob = self.summary_blob
        starts = self.summary_starts
        common: Optional[Set[int]] = None
        for word in sorted(words, key=len, reverse=True):
            lines: Set[int] = set()
            for match in re.finditer(re.escape(word), blob):
                lines.add(bisect_right(starts, match.start()) - 1)
            common = lines if common is None else common & lines
            if not common:
                break
        return common or set()


def _keep_best(scores: Dict[int, int], index: int, value: int) -> None:
    """A name keeps the best score any tier gave it."""
    if value > scores.get(index, 0):
        scores[index] = value


def _best(scores: Dict[int, int], limit: int, skipped: bool) -> Tuple[List[Tuple[int, int]], bool]:
    """The best `limit` of `scores`, best first with ties in display order (scores and indexes
    packed into one integer so the selection runs at C speed), and whether more may match."""
    top = _SCALE - 1
    packed = [value * _SCALE + (top - index) for index, value in scores.items()]
    best = heapq.nlargest(limit, packed)
    more = len(packed) > limit or skipped
    return [(key // _SCALE, top - key % _SCALE) for key in best], more
