"""The JSON the server writes itself (`lsp_convert.JsonText`): what `json.loads` reads back is
what the items were."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from echoes_lsp.server.lsp_convert import json_ints, json_list


@given(st.lists(st.integers(min_value=0, max_value=10**7)))
def test_integers_small_and_large_read_back_as_themselves(numbers: list) -> None:
    assert json.loads("[" + json_ints(numbers) + "]") == numbers


def test_a_list_of_json_items_is_one_array() -> None:
    assert json.loads(json_list(['{"a":1}', "[2]", '"three"'])) == [{"a": 1}, [2], "three"]
    assert json.loads(json_list(())) == []
