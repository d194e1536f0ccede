"""Typed server settings from initializationOptions and `workspace/configuration` (section `echoes`).

Every setting is one `Option` of `OPTIONS`: its key, JSON type, default and range are stated once,
here, and the parser, the editors' settings schemas and the docs are checked against them. Bad
values are reported and replaced by defaults, never fatal.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ..engine.codes import CODES, SEVERITIES
from ..engine.findings import DEFAULT_LIMIT, Policy

SECTION = "echoes"


@dataclass(frozen=True)
class Settings:
    python: Optional[str] = None
    timeout: float = 30.0
    debounce_ms: int = 150
    severity: Tuple[Tuple[str, str], ...] = ()
    secrets: bool = True
    exclude: Tuple[str, ...] = ()
    agent: str = "echoes-lsp"
    poll_interval: float = 2.0
    max_per_document: int = DEFAULT_LIMIT
    hydrate_on_save: bool = True
    hint_block_text: bool = True
    hint_deprecated: bool = True
    errors: Tuple[str, ...] = field(default=(), compare=False)

    def policy(self) -> Policy:
        return Policy(severity=self.severity, secrets=self.secrets)


DEFAULTS = Settings()


def _same(value: Any, errors: List[str]) -> Any:
    return value


def _python(value: str, errors: List[str]) -> Optional[str]:
    return value.strip() or None


def _severity(value: Mapping[str, Any], errors: List[str]) -> Tuple[Tuple[str, str], ...]:
    """Code → level pairs; each unknown code or level is named, the valid ones are kept."""
    pairs = []
    for code, level in value.items():
        code_name = str(code).upper()
        if code_name not in CODES:
            errors.append(f"echoes.diagnostics.severity: unknown code {code!r}")
        elif not isinstance(level, str) or level.lower() not in SEVERITIES:
            errors.append(
                f"echoes.diagnostics.severity.{code_name} must be one of " + ", ".join(SEVERITIES)
            )
        else:
            pairs.append((code_name, level.lower()))
    return tuple(sorted(pairs))


@dataclass(frozen=True)
class Option:
    """One server setting, as a client sends it and as an editor's settings schema describes it."""

    key: str  # dotted, under the section `echoes`
    attr: str  # the `Settings` field it sets
    kind: str  # JSON Schema type: string, number, integer, boolean, array (of strings), object
    default: Any  # the default as a client would send it; parses to the `Settings` default
    must: str  # the rule, in the words of the warning for a bad value
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    exclusive_minimum: bool = False  # `minimum` itself is refused
    non_empty: bool = False  # a string must hold more than spaces
    convert: Callable[[Any, List[str]], Any] = _same  # accepted JSON value → `Settings` value

    @property
    def name(self) -> str:
        return f"{SECTION}.{self.key}"

    def accepts(self, value: Any) -> bool:
        """Whether `value` has this option's JSON type and lies in its range."""
        if self.kind in ("number", "integer"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return False
            if self.kind == "integer" and not isinstance(value, int):
                return False
            if self.minimum is not None:
                if value < self.minimum or (self.exclusive_minimum and value == self.minimum):
                    return False
            return self.maximum is None or value <= self.maximum
        if self.kind == "string":
            return isinstance(value, str) and (not self.non_empty or bool(value.strip()))
        if self.kind == "boolean":
            return isinstance(value, bool)
        if self.kind == "array":
            return isinstance(value, list) and all(isinstance(item, str) for item in value)
        return isinstance(value, Mapping)


OPTIONS: Tuple[Option, ...] = (
    Option("runtime.python", "python", "string", "", "a string", convert=_python),
    Option(
        "runtime.timeout",
        "timeout",
        "number",
        30,
        "a number of seconds between 0 and 600",
        minimum=0,
        maximum=600,
        exclusive_minimum=True,
        convert=lambda value, errors: float(value),
    ),
    Option(
        "diagnostics.debounce",
        "debounce_ms",
        "number",
        150,
        "milliseconds between 0 and 10000",
        minimum=0,
        maximum=10000,
        convert=lambda value, errors: int(value),
    ),
    Option(
        "diagnostics.severity",
        "severity",
        "object",
        {},
        "an object of code → level",
        convert=_severity,
    ),
    Option("secrets.enabled", "secrets", "boolean", True, "true or false"),
    Option(
        "exclude",
        "exclude",
        "array",
        [],
        "a list of glob strings",
        convert=lambda value, errors: tuple(value),
    ),
    Option(
        "agent",
        "agent",
        "string",
        "echoes-lsp",
        "a non-empty string",
        non_empty=True,
        convert=lambda value, errors: value.strip(),
    ),
    Option(
        "watch.pollInterval",
        "poll_interval",
        "number",
        2,
        "seconds between 0 and 3600 (0 = off)",
        minimum=0,
        maximum=3600,
        convert=lambda value, errors: float(value),
    ),
    Option(
        "diagnostics.maxPerDocument",
        "max_per_document",
        "integer",
        DEFAULT_LIMIT,
        "a whole number from 0 (no limit) to 1000000",
        minimum=0,
        maximum=1_000_000,
    ),
    Option("index.hydrateOnSave", "hydrate_on_save", "boolean", True, "true or false"),
    Option("inlayHints.blockText", "hint_block_text", "boolean", True, "true or false"),
    Option("inlayHints.deprecated", "hint_deprecated", "boolean", True, "true or false"),
)


def _section(raw: Any) -> Mapping[str, Any]:
    """Accept both `{"echoes": {...}}` and the bare section, nested or dotted keys."""
    if not isinstance(raw, Mapping):
        return {}
    if SECTION in raw and isinstance(raw[SECTION], Mapping):
        raw = raw[SECTION]
    flat: Dict[str, Any] = {}
    for key, value in raw.items():
        name = str(key)
        if name.startswith(SECTION + "."):
            name = name[len(SECTION) + 1 :]
        flat[name] = value
    return flat


def _get(data: Mapping[str, Any], dotted: str) -> Any:
    if dotted in data:
        return data[dotted]
    current: Any = data
    for part in dotted.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def parse_settings(raw: Any, base: Optional[Settings] = None) -> Settings:
    """Typed settings from a client's JSON; each bad value is named in `errors`.

    A key that is not sent keeps its value from `base`; a bad value is replaced by the default,
    as the warning that names it says."""
    data = _section(raw)
    errors: List[str] = []
    changes: Dict[str, Any] = {}
    for option in OPTIONS:
        value = _get(data, option.key)
        if value is None:
            continue
        if option.accepts(value):
            changes[option.attr] = option.convert(value, errors)
        else:
            errors.append(f"{option.name} must be {option.must}")
            changes[option.attr] = getattr(DEFAULTS, option.attr)
    return replace(base or DEFAULTS, errors=tuple(errors), **changes)
