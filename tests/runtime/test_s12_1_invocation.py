"""Spec 12.1: invocation, workspace resolution, errors and project-runtime delegation."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from .conftest import PYTHON, RUNTIME, Runtime, page, pages_dir, snapshot

ENGINE = re.search(r'^ENGINE_VERSION = "([^"]+)"', RUNTIME.read_text(), re.MULTILINE).group(1)


def with_engine(source: str, version: str, marker: str = "") -> str:
    text = re.sub(
        r'^ENGINE_VERSION = "[^"]+"',
        f'ENGINE_VERSION = "{version}"',
        source,
        count=1,
        flags=re.MULTILINE,
    )
    if marker:
        text = text.replace(
            "def cmd_protocol(ctx: Context, args: Any) -> Dict[str, Any]:\n",
            f"def cmd_protocol(ctx: Context, args: Any) -> Dict[str, Any]:\n    print({marker!r}, file=sys.stderr)\n",
            1,
        )
    return text


def test_s12_1_workspace_resolves_to_the_git_top_level(rt: Runtime, vault: Path) -> None:
    nested = vault / "src" / "deep"
    nested.mkdir(parents=True)
    result = rt.ok(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "x.md", "content": page()},
        workspace=str(nested),
    )
    assert result["page"] == str(pages_dir(vault) / "x.md")
    assert rt.ok("protocol", workspace="src", cwd=vault)["workspace"] == str(vault)


def test_s12_1_default_workspace_is_the_current_directory(tmp_path: Path) -> None:
    import subprocess

    plain = tmp_path / "plain"
    plain.mkdir()
    process = subprocess.run(
        [PYTHON, str(RUNTIME), "protocol"],
        cwd=plain,
        capture_output=True,
        text=True,
        check=False,
    )
    assert process.returncode == 0
    assert json.loads(process.stdout)["workspace"] == str(plain.resolve())


def test_s12_1_errors_exit_2_with_json_on_stderr(rt: Runtime, tmp_path: Path) -> None:
    cases = [
        (("frobnicate",), None, b"", "usage"),
        (("search",), None, b"", "usage"),
        (("start", "--recent", "many"), None, b"", "usage"),
        (("upsert",), None, b"", "payload"),  # --payload defaults to stdin, empty here
        (("upsert", "--payload", "-"), None, b"{not json", "payload"),
        (("upsert", "--payload", "-"), None, b"[1, 2]", "payload"),
        (("upsert", "--payload", "-"), None, b"\xff\xfe", "payload"),
        (("upsert", "--payload", "-"), {"filename": "x.md"}, None, "payload"),
        (("upsert", "--payload", "-"), {"filename": 3, "content": page()}, None, "payload"),
        (
            ("upsert", "--payload", "-"),
            {"filename": "x.md", "content": page(), "expectedSha256": "zz"},
            None,
            "payload",
        ),
        (("upsert", "--payload", str(tmp_path / "missing.json")), None, b"", "payload"),
        (
            ("append", "--payload", "-"),
            None,
            b'{"entry": "' + b"a" * (8 * 1024 * 1024) + b'"}',
            "payload",
        ),
    ]
    for args, payload, stdin, code in cases:
        rt.fail(*args, payload=payload, stdin=stdin, code=code)
    rt.fail("protocol", workspace=str(tmp_path / "nope"), code="usage")


def test_s12_1_an_error_is_one_line_whatever_it_quotes(rt: Runtime) -> None:
    for odd in ("\x85", "\u2028", "\u2029", "a\nb"):
        result = rt.run("protocol", "extra" + odd)  # quoted as it is
        assert result.code == 2
        lines = result.stderr.splitlines()  # splits on every Unicode line break
        assert len(lines) == 1, lines
        error = json.loads(lines[0])
        assert error["code"] == "usage" and odd in error["error"]


def test_s12_1_help_is_not_an_error(rt: Runtime) -> None:
    result = rt.run("--help")
    assert result.code == 0 and "upsert" in result.stdout


def test_s12_1_bundled_runtime_reexecutes_through_the_project_runtime(
    rt: Runtime, vault: Path
) -> None:
    project = vault / ".echoes-vault/echoes_vault.py"
    project.write_text(with_engine(RUNTIME.read_text(), ENGINE, marker="PROJECT-RUNTIME-RAN"))
    result = rt.run("protocol", bundled=True)
    assert result.code == 0 and "PROJECT-RUNTIME-RAN" in result.stderr
    # payloads on stdin reach the project runtime unchanged
    out = rt.run(
        "upsert",
        "--payload",
        "-",
        payload={"filename": "d.md", "content": page("Delegated.")},
        bundled=True,
    )
    assert out.code == 0 and json.loads(out.stdout)["action"] == "created"


def test_s12_1_init_delegates_to_a_newer_project_runtime(rt: Runtime, vault: Path) -> None:
    project = vault / ".echoes-vault/echoes_vault.py"
    newer = with_engine(RUNTIME.read_text(), "99.0.0", marker="NEWER-RAN")
    project.write_text(newer)
    for command in ("init", "upgrade", "migrate"):
        result = rt.run(command, bundled=True)
        assert result.code == 0, result
        assert project.read_text() == newer, "a newer project runtime is never downgraded"
        assert json.loads(result.stdout)["runtime"]["action"] == "unchanged"


def test_s12_1_upgrade_replaces_an_older_project_runtime(rt: Runtime, vault: Path) -> None:
    project = vault / ".echoes-vault/echoes_vault.py"
    project.write_text(with_engine(RUNTIME.read_text(), "0.0.1"))
    result = rt.run("upgrade", bundled=True)
    assert result.code == 0, result
    assert json.loads(result.stdout)["runtime"]["action"] == "installed"
    assert project.read_bytes() == RUNTIME.read_bytes()


def test_s12_1_incompatible_project_runtime_is_refused_for_writes(rt: Runtime, vault: Path) -> None:
    project = vault / ".echoes-vault/echoes_vault.py"
    project.write_text('PROTOCOL_VERSION = "2.0.0"\nENGINE_VERSION = "5.0.0"\n')
    before = snapshot(vault, lock_ok=True)
    rt.fail("upgrade", bundled=True, code="unsupported-protocol")
    rt.fail(
        "append",
        "--payload",
        "-",
        payload={"entry": "- x"},
        bundled=True,
        code="unsupported-protocol",
    )
    health = rt.ok("status", bundled=True)
    assert health["runtime"]["project"]["compatible"] is False
    assert any(i["kind"] == "runtime" for i in health["issues"])
    assert snapshot(vault, lock_ok=True) == before


def test_s12_1_missing_project_runtime_is_recovered_by_init(rt: Runtime, vault: Path) -> None:
    (vault / ".echoes-vault/echoes_vault.py").unlink()
    health = rt.ok("status", bundled=True)
    assert any(i["kind"] == "runtime" for i in health["issues"])
    rt.ok("init", bundled=True)
    assert (vault / ".echoes-vault/echoes_vault.py").read_bytes() == RUNTIME.read_bytes()


@pytest.mark.parametrize("command", ["init", "upsert"])
def test_s12_1_symlinked_project_runtime_is_never_followed(
    rt: Runtime, vault: Path, tmp_path: Path, command: str
) -> None:
    outside = tmp_path / "runtime.py"
    shutil.copy(RUNTIME, outside)
    project = vault / ".echoes-vault/echoes_vault.py"
    project.unlink()
    project.symlink_to(outside)
    payload = {"filename": "x.md", "content": page()} if command == "upsert" else None
    args = ("upsert", "--payload", "-") if command == "upsert" else ("init",)
    rt.fail(*args, payload=payload, bundled=True, code="symlink")
    assert outside.read_bytes() == RUNTIME.read_bytes()
