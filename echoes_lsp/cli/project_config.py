"""Project configuration for `echoes-lsp check`: `[tool.echoes-lsp]` and `.echoes-lsp.toml`.

Precedence, highest first: command-line flags, `.echoes-lsp.toml`, `[tool.echoes-lsp]` in
`pyproject.toml`, built-in defaults. Each key is taken from the highest source that sets it; the
`severity` table is merged code by code.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Tuple

from ..engine.codes import CODES, SEVERITIES
from ..runtime import echoes_vault as rules

PROJECT_FILE = ".echoes-lsp.toml"
PYPROJECT = "pyproject.toml"
# A settings file larger than this is refused rather than parsed.
SETTINGS_LIMIT = 4 * 1024 * 1024
# TOML's strings and comments, whose brackets do not nest: what is left is what the parser
# recurses on (it has no depth limit, like `json`). A string never closed runs to the end of its
# line (or of the file): every match that begins succeeds, so the scan is linear.
TOML_TEXT = re.compile(
    "|".join(
        (
            r'"""[\s\S]*?(?:"""|\Z)',  # multi-line basic string
            r"'''[\s\S]*?(?:'''|\Z)",  # multi-line literal string
            r'"[^"\\\n]*(?:\\.[^"\\\n]*)*\\?(?:"|$)',  # basic string
            r"'[^'\n]*(?:'|$)",  # literal string
            r"#[^\n]*",  # comment
        )
    ),
    re.MULTILINE,
)
FAIL_LEVELS = ("error", "warning", "information", "hint")
KEYS = ("select", "ignore", "fail-on", "exclude", "severity", "secrets")


class ConfigError(Exception):
    """A configuration file is unreadable or holds a bad value (exit code 2)."""


class CheckConfig(NamedTuple):
    """Settings for one workspace, with the source each key came from."""

    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    fail_on: str = "error"
    exclude: Tuple[str, ...] = ()
    severity: Tuple[Tuple[str, str], ...] = ()
    secrets: bool = True
    sources: Tuple[str, ...] = ()


def split_list(value: str) -> List[str]:
    """`EV3, EV402` → `["EV3", "EV402"]`."""
    return [part.strip() for part in value.split(",") if part.strip()]


def check_selectors(selectors: List[str], where: str) -> Tuple[str, ...]:
    """Upper-cased selectors; each must name at least one known code (`EV`, `EV3`, `EV300`)."""
    result = []
    for selector in selectors:
        upper = selector.strip().upper()
        if not upper:
            continue
        if not any(code.startswith(upper) for code in CODES):
            raise ConfigError(f"{where}: {selector!r} is not a diagnostic code or code prefix")
        result.append(upper)
    return tuple(result)


def _string_list(value: Any, where: str) -> List[str]:
    if isinstance(value, str):
        return split_list(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    raise ConfigError(f"{where} must be a list of strings")


def _selectors(value: Any, name: str) -> Tuple[str, ...]:
    return check_selectors(_string_list(value, name), name)


def _fail_on(value: Any, name: str) -> str:
    if not isinstance(value, str) or value.lower() not in FAIL_LEVELS:
        raise ConfigError(f"{name} must be one of {', '.join(FAIL_LEVELS)}")
    return value.lower()


def _exclude(value: Any, name: str) -> Tuple[str, ...]:
    return tuple(_string_list(value, name))


def _severity(value: Any, name: str) -> Dict[str, str]:
    """`code = level` pairs, codes upper-cased and levels lower-cased."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name} must be a table of code = level")
    levels: Dict[str, str] = {}
    for code, level in value.items():
        upper = str(code).upper()
        if upper not in CODES:
            raise ConfigError(f"{name}: unknown code {code!r}")
        if not isinstance(level, str) or level.lower() not in SEVERITIES:
            raise ConfigError(f"{name}.{upper} must be one of {', '.join(SEVERITIES)}")
        levels[upper] = level.lower()
    return levels


def _secrets(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be true or false")
    return value


# Each key of a table: the `CheckConfig` field it sets and the check that reads its value.
_KEY_READERS: Dict[str, Tuple[str, Callable[[Any, str], Any]]] = {
    "select": ("select", _selectors),
    "ignore": ("ignore", _selectors),
    "fail-on": ("fail_on", _fail_on),
    "exclude": ("exclude", _exclude),
    "severity": ("severity", _severity),
    "secrets": ("secrets", _secrets),
}


def parse_table(table: Mapping[str, Any], where: str) -> Dict[str, Any]:
    """Validated values of one `[tool.echoes-lsp]`-style table, keyed like `CheckConfig` fields."""
    values: Dict[str, Any] = {}
    for key, value in table.items():
        known = _KEY_READERS.get(key)
        if known is None:
            raise ConfigError(f"{where}: unknown key `{key}` (known: {', '.join(KEYS)})")
        field, read = known
        values[field] = read(value, f"{where}: `{key}`")
    return values


def _read_toml(path: str) -> Optional[Dict[str, Any]]:
    """A settings file's tables, read within the limits: at most SETTINGS_LIMIT bytes, arrays
    and tables nested at most `rules.JSON_DEPTH_LIMIT` levels (the runtime's rule)."""
    try:
        data = rules.read_bytes(path, limit=SETTINGS_LIMIT)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read: {error.strerror or error}") from error
    if len(data) > SETTINGS_LIMIT:
        raise ConfigError(f"{path}: larger than {SETTINGS_LIMIT // (1024 * 1024)} MiB, not read")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from error
    problem = rules.nesting_problem(TOML_TEXT.sub("", text))
    if problem is not None:
        raise ConfigError(f"{path}: not read: {problem}")
    # imported once a file exists: a project without one does not pay for the TOML parser
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.9 and 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from error
    except RecursionError as error:  # a last guard: the scan above refuses such nesting
        raise ConfigError(f"{path}: not read: it nests too deeply") from error


def file_layers(workspace: str) -> List[Tuple[str, Dict[str, Any]]]:
    """(source, values) of each project file at the workspace root, lowest precedence first."""
    layers: List[Tuple[str, Dict[str, Any]]] = []
    pyproject = os.path.join(workspace, PYPROJECT)
    data = _read_toml(pyproject)
    if data is not None:
        tool = data.get("tool")
        table = tool.get("echoes-lsp") if isinstance(tool, Mapping) else None
        if table is not None:
            if not isinstance(table, Mapping):
                raise ConfigError(f"{pyproject}: [tool.echoes-lsp] must be a table")
            layers.append((pyproject, parse_table(table, f"{pyproject} [tool.echoes-lsp]")))
    project = os.path.join(workspace, PROJECT_FILE)
    data = _read_toml(project)
    if data is not None:
        layers.append((project, parse_table(data, project)))
    return layers


def resolve(workspace: str, flags: Mapping[str, Any], isolated: bool = False) -> CheckConfig:
    """Merge defaults, project files (unless `isolated`) and command-line flags (set keys only)."""
    layers = [] if isolated else file_layers(workspace)
    layers.append(("command line", {k: v for k, v in flags.items() if v is not None}))
    merged: Dict[str, Any] = {}
    severity: Dict[str, str] = {}
    sources: List[str] = []
    for source, values in layers:
        if values and source != "command line":
            sources.append(source)
        for key, value in values.items():
            if key == "severity":
                severity.update(value)
            else:
                merged[key] = value
    merged["severity"] = tuple(sorted(severity.items()))
    return CheckConfig(sources=tuple(sources), **merged)
