"""The settings tables of `echoes-lsp check`, read in process: names, case and bad values."""

from __future__ import annotations

import pytest

from echoes_lsp.cli.project_config import ConfigError, parse_table


def test_each_key_sets_its_field_with_codes_and_levels_in_one_case() -> None:
    values = parse_table(
        {
            "select": "ev3, EV402",
            "ignore": ["ev311"],
            "fail-on": "Warning",
            "exclude": "daily/*, raw/*",
            "severity": {"ev300": "Error"},
            "secrets": False,
        },
        "settings",
    )
    assert values == {
        "select": ("EV3", "EV402"),
        "ignore": ("EV311",),
        "fail_on": "warning",
        "exclude": ("daily/*", "raw/*"),
        "severity": {"EV300": "error"},
        "secrets": False,
    }


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"colour": True}, "settings: unknown key `colour` (known: select, ignore,"),
        ({"fail-on": "sometimes"}, "settings: `fail-on` must be one of error, warning,"),
        ({"severity": {"EV999": "error"}}, "settings: `severity`: unknown code 'EV999'"),
        ({"severity": {"EV300": "loud"}}, "settings: `severity`.EV300 must be one of"),
        ({"secrets": "no"}, "settings: `secrets` must be true or false"),
        ({"exclude": [1]}, "settings: `exclude` must be a list of strings"),
    ],
)
def test_bad_values_name_the_key(table: dict, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_table(table, "settings")
    assert str(raised.value).startswith(message)
