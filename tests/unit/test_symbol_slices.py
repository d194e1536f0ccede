"""Page search in slices: a long query is cut, and the search gives way to the event loop after
every slice of names, with the same answer as a search done at once (workspace/symbol)."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Generator, List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from echoes_lsp.engine.catalog import CARD_SLICE, catalog, catalog_steps, prepare_steps
from echoes_lsp.engine.fuzzy import MAX_QUERY, Matcher, NameIndex, finish, fold, sorted_steps
from echoes_lsp.engine.link_targets import page_search, search_pages
from echoes_lsp.engine.vault import Vault
from echoes_lsp.server.echoes_server import sliced

from .helpers import make_vault, page


def count_steps(steps: Generator[None, None, object]) -> Tuple[int, object]:
    """How many times a sliced computation gave way, and its answer."""
    count = 0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return count, done.value
        count += 1


def topic_index(count: int) -> NameIndex:
    """An index whose names are sorted already (the first search sorts them, as a step)."""
    names = [f"topic-{number:05d}" for number in range(count)]
    summaries = [f"about subject {number}" for number in range(count)]
    index = NameIndex(names, summaries)
    assert count_steps(index.steps("t", 1))[0] == 2  # the names sorted, then keyed
    return index


def test_a_query_is_cut_to_its_documented_length() -> None:
    assert len(Matcher("a" * 100_000).query) == MAX_QUERY
    # What is left is searched: the first characters name a page, the rest is cut away.
    index = topic_index(10)
    query = "topic-00003" + " " * (MAX_QUERY - 11) + "and then a great deal more" * 4000
    found, _more = index.search(query, 10)
    assert [index.names[i] for _score, i in found] == ["topic-00003"]


def test_every_tier_gives_way_after_each_slice_of_names() -> None:
    # A query that matches nothing runs tier 2 (inside names), tier 3 (letters in order) and
    # tier 4 (summaries), each over every name: one step per slice of each.
    index = topic_index(1000)
    for size in (1000, 300, 100, 7):
        steps, (found, more) = count_steps(index.steps("zqx", 100, size))  # type: ignore[misc]
        assert found == [] and not more
        assert steps == 3 * math.ceil(1000 / size), size


def test_a_search_of_several_words_gives_way_while_it_intersects_summaries() -> None:
    index = topic_index(1000)
    # Tier 2 for each of three variants (`zq xw`, `zq-xw`, `zq_xw`), tier 3, the summaries
    # holding the query, then the summaries holding its longest word (searched for the others).
    steps, _answer = count_steps(index.steps("subject zq", 2000, 100))
    assert steps == (3 + 1 + 1 + 1) * 10


names = st.lists(
    st.text(alphabet="abcdeé-_ ", min_size=1, max_size=12).map(lambda s: s.strip() or "x"),
    min_size=1,
    max_size=40,
)
summaries = st.lists(st.text(alphabet="abcde ", max_size=30), min_size=40, max_size=40)
queries = st.text(alphabet="abcdeé- ", min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(names=names, summary_list=summaries, query=queries, size=st.integers(1, 5))
def test_a_sliced_search_answers_what_a_whole_search_answers(
    names: List[str], summary_list: List[str], query: str, size: int
) -> None:
    index = NameIndex([fold(n) for n in names], [fold(s) for s in summary_list[: len(names)]])
    for limit in (1000, 3):
        whole = finish(index.steps(query, limit, size=len(names)))
        assert finish(index.steps(query, limit, size)) == whole


@settings(max_examples=200, deadline=None)
@given(items=st.lists(st.tuples(st.integers(0, 5), st.text(max_size=3))), size=st.integers(1, 7))
def test_a_sliced_sort_sorts_as_sorted_does(items: List[Tuple[int, str]], size: int) -> None:
    steps, result = count_steps(sorted_steps(items, key=lambda item: item[0], size=size))
    assert result == sorted(items, key=lambda item: item[0])  # stable, too
    runs = math.ceil(len(items) / size)
    assert steps == runs + (len(items) // size if runs > 1 else 0)


def test_the_first_catalog_gives_way_while_it_makes_cards(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {f"topic-{n:03d}": page(f"Subject {n}.") for n in range(250)})
    steps, made = count_steps(catalog_steps(vault, size=50))
    assert steps == 250 // 50 + 2  # and once each after the cards are sorted and at the end
    assert [card.stem for card in made.cards] == [f"topic-{n:03d}" for n in range(250)]  # type: ignore[attr-defined]
    assert count_steps(catalog_steps(vault, size=50))[0] == 0  # up to date: nothing to make


def first_listed(vault: Vault) -> str:
    """The page whose card a catalog makes first."""
    return next(iter(vault.by_key.values()))[0]


def test_changes_made_while_the_catalog_is_made_are_applied_next(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {f"topic-{n:03d}": page(f"Subject {n}.") for n in range(100)})
    path = first_listed(vault)
    steps = catalog_steps(vault, size=10)
    next(steps)  # the cards of the first ten pages listed are made
    vault.open(path, page("A new summary."))
    vault.remove(str(tmp_path / "EchoesVault" / "pages" / "topic-099.md"))
    finish(steps)
    cards = {card.path: card for card in catalog(vault).cards}
    assert cards[path].summary == "A new summary."
    assert str(tmp_path / "EchoesVault" / "pages" / "topic-099.md") not in cards


def test_a_catalog_overtaken_by_another_refresh_is_made_again(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {f"topic-{n:03d}": page(f"Subject {n}.") for n in range(100)})
    path = first_listed(vault)
    slow = catalog_steps(vault, size=10)
    next(slow)  # the cards of the first ten pages listed are made
    vault.open(path, page("A new summary."))
    assert catalog(vault).by_path[path].summary == "A new summary."  # the change is taken
    finish(slow)  # its card of that page was made before the change
    assert catalog(vault).by_path[path].summary == "A new summary."


def test_the_server_runs_the_search_letting_other_tasks_in_after_each_slice(
    tmp_path: Path,
) -> None:
    vault = make_vault(tmp_path, {f"topic-{n:03d}": page(f"Subject {n}.") for n in range(300)})
    expected = search_pages([vault], "zqx")
    slices, _answer = count_steps(page_search([vault], "zqx", size=50))
    turns: List[str] = []

    async def other_requests() -> None:
        while True:
            turns.append("other")
            await asyncio.sleep(0)

    async def both() -> object:
        task = asyncio.ensure_future(other_requests())
        await asyncio.sleep(0)
        turns.clear()
        answer = await sliced(page_search([vault], "zqx", size=50))
        task.cancel()
        return answer

    assert asyncio.run(both()) == expected
    assert slices > 3
    assert len(turns) >= slices


def test_an_index_made_while_a_summary_changed_is_not_kept(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {f"topic-{n:03d}": page(f"Subject {n}.") for n in range(100)})
    search = catalog(vault).search_steps("zzz", 10, size=10)
    next(search)  # the index holds the summaries of the first ten cards
    path = str(tmp_path / "EchoesVault" / "pages" / "topic-003.md")
    vault.open(path, page("A freshly written summary."))
    assert catalog(vault).by_path[path].summary == "A freshly written summary."
    finish(search)
    found, _more = catalog(vault).search("freshly written", 10)
    assert [card.stem for _score, card in found] == ["topic-003"]


def test_a_catalog_asked_for_while_its_first_cards_are_made_has_every_card(
    tmp_path: Path,
) -> None:
    vault = make_vault(tmp_path, {f"topic-{n:03d}": page(f"Subject {n}.") for n in range(100)})
    slow = catalog_steps(vault, size=10)
    next(slow)  # ten cards made, none in place yet, and nothing marked since
    assert len(catalog(vault).cards) == 100
    finish(slow)
    assert len(catalog(vault).cards) == 100


def test_preparing_leaves_nothing_for_the_first_search_to_make(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {f"topic-{n:03d}": page(f"Subject {n}.") for n in range(300)})
    assert count_steps(prepare_steps(vault))[0] > 300 // CARD_SLICE  # made in slices
    made = catalog(vault)
    assert count_steps(catalog_steps(vault))[0] == 0
    assert count_steps(made.index_steps())[0] == 0
    assert count_steps(made.index().sort_steps())[0] == 0  # its names sorted for prefixes


@settings(max_examples=200, deadline=None)
@given(
    summary_list=st.lists(st.text(alphabet="abcDE \n", max_size=12), min_size=1, max_size=12),
    data=st.data(),
)
def test_a_summary_changed_in_place_is_searched_as_a_new_index_would(
    summary_list: List[str], data: st.DataObject
) -> None:
    names = [f"name-{number}" for number in range(len(summary_list))]
    index = NameIndex(names, summary_list)
    position = data.draw(st.integers(0, len(summary_list) - 1))
    new = data.draw(st.text(alphabet="abcDE \n", max_size=20))
    index.set_summary(position, new)
    changed = summary_list[:position] + [new] + summary_list[position + 1 :]
    fresh = NameIndex(names, changed)
    assert (index.summary_blob, list(index.summary_starts)) == (
        fresh.summary_blob,
        list(fresh.summary_starts),
    )
    for query in ("abc", "de ", new.strip()[:4] or "abc"):
        assert index.search(query, 20) == fresh.search(query, 20)
