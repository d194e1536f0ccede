"""The settings table (`echoes_lsp.server.client_settings.OPTIONS`) and the parser agree: each option's default
parses to the `Settings` default, its range and type are enforced at their exact bounds, and a
bad value is named and changes nothing."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Dict, List

import pytest

from echoes_lsp.server.client_settings import OPTIONS, Option, Settings, parse_settings


def nested(key: str, value: Any) -> Dict[str, Any]:
    """`{"echoes": {"a": {"b": value}}}` for key `a.b`, as a client sends it."""
    tree: Dict[str, Any] = {}
    node = tree
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return {"echoes": tree}


def test_every_settings_field_has_one_option() -> None:
    attrs = [option.attr for option in OPTIONS]
    assert sorted(attrs) == sorted(f.name for f in fields(Settings) if f.name != "errors")
    assert len({option.key for option in OPTIONS}) == len(OPTIONS)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.key)
def test_the_documented_default_is_the_server_default(option: Option) -> None:
    parsed = parse_settings(nested(option.key, option.default), Settings(**changed(option)))
    assert parsed.errors == ()
    assert getattr(parsed, option.attr) == getattr(Settings(), option.attr)


def changed(option: Option) -> Dict[str, Any]:
    """A `Settings` field set away from its default, so that parsing the default must reset it."""
    others: Dict[str, Any] = {
        "python": "/usr/bin/python3",
        "timeout": 5.0,
        "debounce_ms": 7,
        "severity": (("EV300", "error"),),
        "secrets": False,
        "exclude": ("raw/**",),
        "agent": "other",
        "poll_interval": 9.0,
        "max_per_document": 3,
        "hydrate_on_save": False,
        "hint_block_text": False,
        "hint_deprecated": False,
    }
    return {option.attr: others[option.attr]}


def bounds(option: Option) -> List[Any]:
    """(value, accepted) pairs at the edges of a numeric option's range."""
    step = 1 if option.kind == "integer" else 0.5
    cases = []
    if option.minimum is not None:
        cases.append((option.minimum, not option.exclusive_minimum))
        cases.append((option.minimum - step, False))
        cases.append((option.minimum + step, True))
    if option.maximum is not None:
        cases.append((option.maximum, True))
        cases.append((option.maximum + step, False))
    return cases


NUMERIC = [option for option in OPTIONS if option.kind in ("number", "integer")]


@pytest.mark.parametrize("option", NUMERIC, ids=lambda option: option.key)
def test_numeric_ranges_are_enforced_at_their_bounds(option: Option) -> None:
    assert option.minimum is not None and option.maximum is not None, "every number is bounded"
    for value, accepted in bounds(option):
        if option.kind == "integer":
            value = int(value)
        parsed = parse_settings(nested(option.key, value))
        assert (parsed.errors == ()) is accepted, (value, parsed.errors)
        if accepted:
            assert getattr(parsed, option.attr) == option.convert(value, [])
        else:
            assert parsed.errors == (f"{option.name} must be {option.must}",)
            assert getattr(parsed, option.attr) == getattr(Settings(), option.attr)


WRONG_TYPE = {
    "string": 3,
    "number": "3",
    "integer": 3.5,
    "boolean": "yes",
    "array": "raw/**",
    "object": ["EV300"],
}


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.key)
def test_a_value_of_the_wrong_type_is_named_and_replaced_by_the_default(option: Option) -> None:
    """Also on top of an earlier value: the warning says that the default is used."""
    base = Settings(**changed(option))
    for bad in (WRONG_TYPE[option.kind], True if option.kind != "boolean" else 1):
        parsed = parse_settings(nested(option.key, bad), base)
        assert parsed.errors == (f"{option.name} must be {option.must}",), bad
        assert getattr(parsed, option.attr) == getattr(Settings(), option.attr)
        assert getattr(base, option.attr) != getattr(Settings(), option.attr)


def test_dotted_keys_and_the_bare_section_are_read() -> None:
    assert parse_settings({"echoes.diagnostics.maxPerDocument": 5}).max_per_document == 5
    assert parse_settings({"diagnostics": {"maxPerDocument": 6}}).max_per_document == 6
    assert parse_settings({"echoes": {"diagnostics.maxPerDocument": 7}}).max_per_document == 7


def test_an_update_keeps_the_keys_it_does_not_send() -> None:
    first = parse_settings({"echoes": {"agent": "vscode", "watch": {"pollInterval": 0}}})
    second = parse_settings({"echoes": {"diagnostics": {"maxPerDocument": 0}}}, first)
    assert (second.agent, second.poll_interval, second.max_per_document) == ("vscode", 0.0, 0)


def test_the_severity_map_names_each_bad_entry_and_keeps_the_rest() -> None:
    parsed = parse_settings(
        {"echoes": {"diagnostics": {"severity": {"ev300": "ERROR", "EV999": "off", "EV301": 1}}}}
    )
    assert parsed.severity == (("EV300", "error"),)
    assert parsed.errors == (
        "echoes.diagnostics.severity: unknown code 'EV999'",
        "echoes.diagnostics.severity.EV301 must be one of error, warning, information, hint, off",
    )


def test_strings_are_trimmed_and_an_empty_python_is_the_servers_own() -> None:
    parsed = parse_settings({"echoes": {"runtime": {"python": "  "}, "agent": " vim "}})
    assert (parsed.python, parsed.agent) == (None, "vim")
    assert parse_settings({"echoes": {"agent": "  "}}).errors == (
        "echoes.agent must be a non-empty string",
    )
