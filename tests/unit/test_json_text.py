"""The JSON the server writes itself (`lsp_convert.JsonText`): what `json.loads` reads back is
what the items were."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from echoes_lsp.server.lsp_convert import hint_json, hint_pieces, int_texts, json_ints, json_list


@given(st.lists(st.integers(min_value=0, max_value=10**7)))
def test_integers_small_and_large_read_back_as_themselves(numbers: list) -> None:
    assert json.loads("[" + json_ints(numbers) + "]") == numbers


def test_a_list_of_json_items_is_one_array() -> None:
    assert json.loads(json_list(['{"a":1}', "[2]", '"three"'])) == [{"a": 1}, [2], "three"]
    assert json.loads(json_list(())) == []


LABELS = st.text(st.sampled_from(list('ab "\\\t\u2028é😀\n')), max_size=12)


@given(
    st.lists(st.tuples(st.integers(min_value=0, max_value=10**6), LABELS), min_size=1, max_size=4),
    st.sampled_from([0, 7, 4095, 4096, 123_456]),
)
def test_a_lines_hints_joined_by_its_number_read_back_as_inlay_hints(
    hints: list, line: int
) -> None:
    # a row's JSON is kept without its line number, which each answer puts in
    [number] = int_texts([line])
    written = json_list([number.join(hint_pieces(hints))])
    expected = [
        {"position": {"line": line, "character": c}, "label": label, "paddingLeft": True}
        for c, label in hints
    ]
    assert json.loads(written) == expected
    assert json.loads(json_list(hint_json(line, c, label) for c, label in hints)) == expected
