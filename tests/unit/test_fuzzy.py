"""The fuzzy scorer: tier order, folding, and the index agreeing with one-by-one scoring."""

from __future__ import annotations

import unicodedata
from typing import List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from echoes_lsp.engine.fuzzy import (
    EXACT,
    PREFIX,
    SUBSEQUENCE,
    SUBSTRING,
    SUMMARY_WORD,
    WORD,
    Matcher,
    NameIndex,
    fold,
)


def test_tiers_are_ordered() -> None:
    matcher = Matcher("auth")
    exact = matcher.name("auth")
    prefix = matcher.name("authentication")
    word = matcher.name("legacy-auth")
    inner = matcher.name("oauth")
    spread = matcher.name("a-unit-test-helper")
    summary = matcher.summary("oidc auth flow")
    assert exact == EXACT
    assert exact > prefix > word > inner > spread > summary > 0
    assert PREFIX <= prefix < EXACT
    assert WORD - 200 <= word < PREFIX
    assert SUBSTRING - 200 <= inner < WORD - 200
    assert SUBSEQUENCE < spread < SUBSTRING - 200
    assert summary <= SUMMARY_WORD < SUBSEQUENCE
    assert matcher.name("sessions") == 0


def test_shorter_names_and_earlier_matches_win() -> None:
    matcher = Matcher("tok")
    assert matcher.name("token") > matcher.name("token-rotation")
    assert matcher.name("a-token") > matcher.name("aaaaaaa-token")


def test_case_and_unicode_normalization() -> None:
    decomposed = unicodedata.normalize("NFD", "Café")
    assert Matcher(decomposed).name(fold("café-notes")) >= PREFIX
    assert Matcher("CAFÉ").name(fold("Café")) == EXACT
    assert Matcher("straße").name(fold("STRASSE")) == EXACT  # case folding, not lower()


def test_spaces_match_dashes_and_underscores() -> None:
    assert Matcher("token rotation").name("token-rotation") == EXACT
    assert Matcher("token rotation").name("token_rotation") == EXACT
    assert Matcher("rotation plan").summary("a rotation plan for keys") > 0
    assert Matcher("keys rotation").summary("a rotation plan for keys") > 0
    assert Matcher("ab").summary("ab ab ab") == 0  # too short to search prose


def index_of(names: List[str], summaries: List[str]) -> NameIndex:
    return NameIndex([fold(n) for n in names], [fold(s) for s in summaries])


def test_index_search_orders_by_tier_then_display_order() -> None:
    names = ["sessions", "oauth", "a-unit-test-helper", "legacy-auth", "authentication", "auth"]
    summaries = ["Uses auth tokens.", "", "", "", "", ""]
    found, more = index_of(names, summaries).search("auth", 10)
    assert [names[i] for _score, i in found] == [
        "auth",
        "authentication",
        "legacy-auth",
        "oauth",
        "a-unit-test-helper",  # letters in order
        "sessions",  # only the summary matches
    ]
    assert not more


def test_single_characters_match_prefixes_and_word_starts_only() -> None:
    names = ["topic", "a-topic", "stop", "tt"]
    found, _more = index_of(names, [""] * 4).search("t", 10)
    assert sorted(names[i] for _s, i in found) == ["a-topic", "topic", "tt"]
    assert Matcher("t").name("stop") == 0


def test_index_caps_and_reports_more() -> None:
    names = [f"topic-{n:05d}" for n in range(1000)]
    index = index_of(names, [""] * len(names))
    found, more = index.search("topic", 50)
    assert len(found) == 50 and more
    assert [i for _s, i in found] == list(range(50))
    found, more = index.search("", 20)
    assert [i for _s, i in found] == list(range(20)) and more
    found, more = index.search("topic-00999", 50)
    assert found[0] == (EXACT, 999)


names = st.lists(
    st.text(alphabet="abcdeé-_ ", min_size=1, max_size=12).map(lambda s: s.strip() or "x"),
    min_size=1,
    max_size=40,
)
summaries = st.text(alphabet="abcde ", max_size=30)
queries = st.text(alphabet="abcdeé- ", min_size=1, max_size=5)


@settings(max_examples=400, deadline=None)
@given(names=names, summary_list=st.lists(summaries, min_size=40, max_size=40), query=queries)
def test_index_agrees_with_scoring_one_by_one(
    names: List[str], summary_list: List[str], query: str
) -> None:
    folded = [fold(n) for n in names]
    folded_summaries = [fold(s) for s in summary_list[: len(names)]]
    matcher = Matcher(query)
    expected: List[Tuple[int, int]] = []
    for index, (name, summary) in enumerate(zip(folded, folded_summaries)):
        score = matcher.score(name, summary)
        if score:
            expected.append((score, index))
    expected.sort(key=lambda pair: (-pair[0], pair[1]))
    found, more = NameIndex(folded, folded_summaries).search(query, 1000)
    assert not more
    if matcher:
        assert found == expected
    # A capped search returns the best of the full ranking.
    capped, more = NameIndex(folded, folded_summaries).search(query, 3)
    if matcher:
        assert capped == expected[:3]
        if len(expected) > 3:
            assert more


def test_index_matches_summaries_holding_every_word_of_the_query() -> None:
    names = ["alpha", "beta", "gamma", "delta"]
    summaries = ["a rotation plan for keys", "keys only", "a plan", "keys, and a later rotation"]
    found, more = index_of(names, summaries).search("keys rotation", 10)
    assert [names[i] for _score, i in found] == ["alpha", "delta"]
    assert not more
