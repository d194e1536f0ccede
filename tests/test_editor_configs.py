"""The Helix and Zed snippets: well-formed, only documented keys, and accepted by the real server.

Neither editor runs here (Debian 12 has no Helix package; Zed is a desktop application), so each
test starts `echoes-lsp serve` exactly as the snippet tells the editor to, hands over the
snippet's settings the way that editor does (as `initializationOptions`, and as the answer to
`workspace/configuration` looked up by section), and checks the diagnostics of a page.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities, make_test_lsp_client

from tests.nvim.harness import make_workspace

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project supports 3.9 and 3.10, where `tomli` (a dependency there) is the same parser
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
HELIX = ROOT / "editors" / "helix" / "languages.toml"
ZED = ROOT / "editors" / "zed"
WAIT = 30.0

# Keys documented for Helix's languages.toml (book/src/languages.md).
HELIX_SERVER_KEYS = {
    "command",
    "args",
    "config",
    "timeout",
    "environment",
    "required-root-patterns",
}
HELIX_LANGUAGE_KEYS = {
    "name",
    "language-id",
    "scope",
    "injection-regex",
    "file-types",
    "shebangs",
    "roots",
    "comment-tokens",
    "block-comment-tokens",
    "auto-format",
    "diagnostic-severity",
    "grammar",
    "formatter",
    "soft-wrap",
    "text-width",
    "workspace-lsp-roots",
    "persistent-diagnostic-sources",
    "path-completion",
    "word-completion",
    "language-servers",
    "indent",
    "debugger",
    "auto-pairs",
    "rulers",
}
ZED_LSP_KEYS = {"binary", "initialization_options", "settings", "enable_lsp_tasks", "fetch"}
ZED_BINARY_KEYS = {"path", "arguments", "env", "ignore_system_version"}


def server_path() -> List[str]:
    """PATH as an editor started from this environment sees it (the venv's scripts first)."""
    return [str(Path(sys.executable).parent), *os.environ.get("PATH", "").split(os.pathsep)]


def resolve(command: str) -> str:
    found = shutil.which(command, path=os.pathsep.join(server_path()))
    assert found, f"{command} is not on PATH: install the package (pip install -e .)"
    return found


def section(config: Any, name: Optional[str]) -> Any:
    """Look a dotted section up in a settings object, as Helix and Zed answer
    `workspace/configuration`."""
    if not name:
        return config
    for part in name.split("."):
        if not isinstance(config, dict) or part not in config:
            return None
        config = config[part]
    return config


def settled(items: List[types.Diagnostic], ev300: types.DiagnosticSeverity) -> bool:
    """The defective page's findings are all there, EV300 with the severity the settings ask."""
    found = {str(d.code): d.severity for d in items}
    return "EV104" in found and found.get("EV300") == ev300


async def diagnostics_with(
    command: List[str],
    init_options: Any,
    settings: Any,
    workspace: Path,
    ev300: types.DiagnosticSeverity,
) -> Dict[str, Any]:
    """Run the server as the editor would; return the severities of a defective page's codes and
    the messages the server showed, once EV300 has the expected severity. The test client answers
    `workspace/configuration` by looking the dotted section up in `settings`, as Helix and Zed do."""

    def factory() -> LanguageClient:
        client = make_test_lsp_client()

        @client.feature("echoes/statusChanged")
        def status(params: Any) -> None:
            pass

        return client

    config = ClientServerConfig(
        server_command=command, client_factory=factory, server_env={**os.environ}
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    client.set_configuration(settings)
    try:
        await asyncio.wait_for(
            client.initialize_session(
                types.InitializeParams(
                    capabilities=client_capabilities("neovim@v0.11.0"),
                    root_uri=workspace.as_uri(),
                    workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
                    initialization_options=init_options,
                )
            ),
            WAIT,
        )
        page = workspace / "EchoesVault" / "pages" / "missing-fields.md"
        uri = page.as_uri()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=page.read_text("utf-8")
                )
            )
        )
        # A publication made before the configuration's round trip may carry the default
        # severity: wait for the one with the expected severity (none means a timeout).
        deadline = asyncio.get_event_loop().time() + WAIT
        while not settled(client.diagnostics.get(uri, []), ev300):
            assert asyncio.get_event_loop().time() < deadline, client.diagnostics.get(uri)
            await asyncio.sleep(0.05)
        items = client.diagnostics[uri]
        await asyncio.wait_for(client.shutdown_session(), WAIT)
    finally:
        # The server always ends, also when the test failed half-way.
        server = getattr(client, "_server", None)
        if server is not None and server.returncode is None:
            server.kill()
        await client.stop()
    return {
        "severity": {str(d.code): d.severity for d in items},
        "shown": [m.message for m in client.messages],
    }


def settings_errors(shown: List[str]) -> List[str]:
    return [message for message in shown if "settings" in message]


# -- Helix ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def helix() -> Dict[str, Any]:
    with HELIX.open("rb") as handle:
        data: Dict[str, Any] = tomllib.load(handle)
    return data


def test_helix_snippet_uses_documented_keys(helix: Dict[str, Any]) -> None:
    server = helix["language-server"]["echoes-lsp"]
    assert set(server) <= HELIX_SERVER_KEYS, set(server) - HELIX_SERVER_KEYS
    assert server["command"] == "echoes-lsp"
    assert server["args"] == ["serve"]
    assert server["required-root-patterns"] == ["EchoesVault"]
    [markdown] = [language for language in helix["language"] if language["name"] == "markdown"]
    assert set(markdown) <= HELIX_LANGUAGE_KEYS, set(markdown) - HELIX_LANGUAGE_KEYS
    assert "EchoesVault" in markdown["roots"]
    assert "echoes-lsp" in markdown["language-servers"]
    assert "marksman" in markdown["language-servers"], "combined with marksman"
    assert set(server["config"]) == {"echoes"}


async def test_helix_config_is_accepted_by_the_server(
    helix: Dict[str, Any], tmp_path: Path
) -> None:
    workspace = make_workspace(tmp_path, defects=True)
    server = helix["language-server"]["echoes-lsp"]
    command = [resolve(server["command"]), *server["args"]]
    # Helix sends `config` as initializationOptions and answers workspace/configuration from it.
    result = await diagnostics_with(
        command, server["config"], server["config"], workspace, types.DiagnosticSeverity.Warning
    )
    assert settings_errors(result["shown"]) == []
    assert result["severity"]["EV300"] == types.DiagnosticSeverity.Warning

    changed = copy.deepcopy(server["config"])
    changed["echoes"]["diagnostics"]["severity"] = {"EV300": "error"}
    result = await diagnostics_with(
        command, changed, changed, workspace, types.DiagnosticSeverity.Error
    )
    assert result["severity"]["EV300"] == types.DiagnosticSeverity.Error


# -- Zed ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def zed() -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads((ZED / "settings.json").read_text(encoding="utf-8"))
    return data


def test_zed_settings_and_extension_agree(zed: Dict[str, Any]) -> None:
    [server_id] = zed["lsp"].keys()
    lsp = zed["lsp"][server_id]
    assert set(lsp) <= ZED_LSP_KEYS
    assert set(lsp["binary"]) <= ZED_BINARY_KEYS
    assert lsp["binary"] == {"path": "echoes-lsp", "arguments": ["serve"]}
    assert zed["languages"]["Markdown"]["language_servers"] == [server_id, "..."]

    with (ZED / "extension" / "extension.toml").open("rb") as handle:
        manifest = tomllib.load(handle)
    assert manifest["schema_version"] == 1
    assert manifest["id"] == server_id
    assert manifest["language_servers"][server_id]["languages"] == ["Markdown"]
    with (ZED / "extension" / "Cargo.toml").open("rb") as handle:
        cargo = tomllib.load(handle)
    assert cargo["lib"]["crate-type"] == ["cdylib"]
    assert "zed_extension_api" in cargo["dependencies"]
    source = (ZED / "extension" / "src" / "lib.rs").read_text(encoding="utf-8")
    assert re.search(rf'const SERVER: &str = "{re.escape(server_id)}";', source)
    assert "register_extension!" in source


async def test_zed_settings_are_accepted_by_the_server(zed: Dict[str, Any], tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, defects=True)
    lsp = zed["lsp"]["echoes-lsp"]
    command = [resolve(lsp["binary"]["path"]), *lsp["binary"]["arguments"]]
    result = await diagnostics_with(
        command,
        lsp["initialization_options"],
        lsp["settings"],
        workspace,
        types.DiagnosticSeverity.Warning,
    )
    assert settings_errors(result["shown"]) == []
    assert result["severity"]["EV300"] == types.DiagnosticSeverity.Warning
    assert lsp["initialization_options"] == lsp["settings"]

    changed = copy.deepcopy(lsp["settings"])
    changed["echoes"]["diagnostics"]["severity"] = {"EV300": "error"}
    result = await diagnostics_with(
        command, changed, changed, workspace, types.DiagnosticSeverity.Error
    )
    assert result["severity"]["EV300"] == types.DiagnosticSeverity.Error


async def test_settings_only_from_workspace_configuration_reach_the_first_page(
    tmp_path: Path,
) -> None:
    """Contract: settings come from initializationOptions *and* workspace/configuration. An
    editor that passes them only through workspace/configuration and opens a page right away
    (as editors do) must see them applied to that page."""
    workspace = make_workspace(tmp_path, defects=True)
    settings = {"echoes": {"diagnostics": {"severity": {"EV300": "error"}}}}
    result = await diagnostics_with(
        [sys.executable, "-m", "echoes_lsp", "serve"],
        None,
        settings,
        workspace,
        types.DiagnosticSeverity.Error,
    )
    assert result["severity"]["EV300"] == types.DiagnosticSeverity.Error


# -- The guides' snippets -------------------------------------------------------------------------

GUIDES = ROOT / "docs" / "editors"


def fenced(path: Path, language: str) -> List[str]:
    """The code blocks of one language in a Markdown page (indented ones too, dedented)."""
    text = path.read_text(encoding="utf-8")
    pattern = rf"^( *)```{language}\n(.*?)^\1```"
    return [textwrap.dedent(m.group(2)) for m in re.finditer(pattern, text, re.M | re.S)]


def disagreements(snippet: Any, whole: Any, where: str = "") -> List[str]:
    """Where a guide's snippet says something the tested file does not: each key of a table is
    in the file's table with the same value, lists of tables agree item by item."""
    if isinstance(snippet, dict) and isinstance(whole, dict):
        found: List[str] = []
        for key, value in snippet.items():
            if key not in whole:
                found.append(f"{where}.{key}: not in the file")
            else:
                found.extend(disagreements(value, whole[key], f"{where}.{key}"))
        return found
    tables = isinstance(snippet, list) and all(isinstance(item, dict) for item in snippet)
    if tables and isinstance(whole, list) and len(snippet) == len(whole) and snippet:
        return [
            problem
            for number, (item, other) in enumerate(zip(snippet, whole))
            for problem in disagreements(item, other, f"{where}[{number}]")
        ]
    return [] if snippet == whole else [f"{where}: {snippet!r} where the file has {whole!r}"]


def test_the_helix_guide_shows_what_languages_toml_says(helix: Dict[str, Any]) -> None:
    [block] = fenced(GUIDES / "helix.md", "toml")
    snippet = tomllib.loads(block)
    assert disagreements(snippet, helix) == []
    server = snippet["language-server"]["echoes-lsp"]
    assert set(server) == {"command", "args", "required-root-patterns", "config"}
    assert set(snippet["language"][0]) == {"name", "roots", "language-servers"}


def test_the_zed_guide_shows_what_settings_json_says(zed: Dict[str, Any]) -> None:
    [block] = fenced(GUIDES / "zed.md", "json")
    snippet = json.loads(block)
    assert disagreements(snippet, zed) == []
    assert set(snippet["lsp"]["echoes-lsp"]) == {"binary", "initialization_options", "settings"}
    assert "languages" in snippet


def test_the_obsidian_guide_shows_the_shipped_page_template() -> None:
    template = (ROOT / "editors" / "obsidian" / "templates" / "page.md").read_text("utf-8")
    assert fenced(GUIDES / "obsidian.md", "markdown")[0] == template


def test_a_snippet_that_differs_from_the_file_is_found() -> None:
    whole = {"a": {"b": 1, "c": [1, 2]}, "t": [{"name": "x", "k": 1}]}
    assert disagreements({"a": {"b": 1}, "t": [{"name": "x"}]}, whole) == []
    assert disagreements({"a": {"b": 2, "d": 0}, "t": [{"k": 3}]}, whole) == [
        ".a.b: 2 where the file has 1",
        ".a.d: not in the file",
        ".t[0].k: 3 where the file has 1",
    ]
