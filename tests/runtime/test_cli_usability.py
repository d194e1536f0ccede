"""The runtime's command line for people: usage, help with payload fields, `--version`,
`search --format text`, `hash` given a path, and the status card's wording."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import RUNTIME, Runtime, page, pages_dir


def test_no_arguments_print_usage_and_exit_2(rt: Runtime) -> None:
    import subprocess
    import sys

    process = subprocess.run(
        [sys.executable, str(RUNTIME)], capture_output=True, text=True, check=False
    )
    assert process.returncode == 2 and process.stdout == ""
    assert process.stderr.startswith("usage: echoes_vault.py")
    error = json.loads(process.stderr.strip().splitlines()[-1])
    assert error == {"ok": False, "error": error["error"], "code": "usage"}


def test_help_is_plain_text_on_stdout(rt: Runtime) -> None:
    result = rt.run("--help")
    assert result.code == 0 and result.stderr == ""
    assert result.stdout.startswith("usage: ") and "rebuild-index" in result.stdout


@pytest.mark.parametrize(
    "command, fields",
    [
        ("upsert", ["filename", "content", "expectedSha256", "indexDescription", "agent"]),
        ("append", ["entry", "agent"]),
        ("end", ["dailySummary", "pages", "agent"]),
    ],
)
def test_command_help_lists_payload_fields(rt: Runtime, command: str, fields: list) -> None:
    result = rt.run(command, "--help")
    assert result.code == 0 and "payload (a JSON object on standard input" in result.stdout
    for field in fields:
        assert re.search(rf"^  {field} ", result.stdout, re.M), field


def test_version_prints_engine_and_protocol(rt: Runtime) -> None:
    source = RUNTIME.read_text(encoding="utf-8")
    engine = re.search(r'^ENGINE_VERSION = "([^"]+)"', source, re.M)
    assert engine is not None
    result = rt.run("--version", bundled=True)
    assert result.code == 0 and result.stderr == ""
    assert f"engine {engine.group(1)}" in result.stdout and "Protocol 1.0.0" in result.stdout


def test_search_text_format(rt: Runtime) -> None:
    rt.upsert("a.md", page("A.", body="needle one\nneedle two\n"))
    text = rt.text("search", "needle", "--format", "text")
    lines = text.splitlines()
    assert lines[0] == "EchoesVault/pages/a.md:8: needle one"
    assert lines[1] == "EchoesVault/pages/a.md:9: needle two"
    assert lines[2] == "2 matches for 'needle'"
    cut = rt.text("search", "needle", "--format", "text", "--limit", "1").splitlines()
    assert cut[-1] == "1 match for 'needle' (more exist: raise --limit above 1)"
    assert json.loads(rt.text("search", "needle"))["results"][0]["line"] == 8


def test_hash_accepts_a_path_inside_the_pages_folder(rt: Runtime, vault: Path) -> None:
    rt.upsert("deploy.md", page("Deploy."))
    expected = rt.hash("deploy")
    assert rt.hash("EchoesVault/pages/deploy.md") == expected
    assert rt.hash(str(pages_dir(vault) / "deploy.md")) == expected
    assert rt.ok("hash", "./deploy.md", cwd=pages_dir(vault))["sha256"] == expected
    for outside in ("EchoesVault/index.md", "EchoesVault/pages/sub/deploy.md", "/etc/passwd"):
        rt.fail("hash", outside, code="unsafe-path")


def test_card_words_and_what_it_does_not_count(rt: Runtime) -> None:
    rt.upsert("a.md", page("A.", body="See [[missing-page]].\n"))
    card = rt.text("status", "--format", "card")
    assert "Index topics" not in card
    assert "**Index:** current, 1 page listed" in card
    assert "Not counted: links, assets, headings" in card and "`echoes-lsp check`" in card
