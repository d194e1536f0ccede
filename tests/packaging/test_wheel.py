"""The wheel as a user gets it: its contents, a quiet build, and every face run from a clean
virtual environment outside the checkout (`--version` ×3, `check`, `runtime init`, `serve`)."""

from __future__ import annotations

import re
import subprocess
import venv
import zipfile
from pathlib import Path
from typing import List, Tuple

import pytest

from echoes_lsp import __version__
from echoes_lsp.runtime.echoes_vault import ENGINE_VERSION, PROTOCOL_VERSION

from .conftest import ROOT, TIMEOUT, clean_env, lsp_initialize

BROKEN_PAGE = """---
type: runbook
stack: [python]
status: active
summary: Steps to deploy.
---

# Deploy

Read [[no-such-page]] first.
"""


def test_the_wheel_carries_the_licence_schemas_and_runtime_under_the_package(
    built_wheel: Tuple[Path, str],
) -> None:
    wheel, _ = built_wheel
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"echoes_lsp-{__version__}.dist-info"
        assert f"{info}/licenses/LICENSE" in names
        assert archive.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        metadata = archive.read(f"{info}/METADATA").decode()
        assert "License-Expression: MIT" in metadata
        assert f"Version: {__version__}" in metadata
        assert "echoes_lsp/schemas/check-report.schema.json" in names
        assert "echoes_lsp/runtime/echoes_vault.py" in names
        assert (
            archive.read("echoes_lsp/runtime/echoes_vault.py")
            == (ROOT / "runtime" / "echoes_vault.py").read_bytes()
        )
        # Only the package's own namespace at the top of site-packages.
        assert {name.split("/")[0] for name in names} == {"echoes_lsp", info}
        assert archive.read(f"{info}/top_level.txt").decode().split() == ["echoes_lsp"]


def test_the_build_prints_no_warning(built_wheel: Tuple[Path, str]) -> None:
    _, output = built_wheel
    if not output:
        pytest.skip("the wheel was given (ECHOES_WHEEL), not built here")
    warnings = [
        line for line in output.splitlines() if re.search(r"warn|deprecat", line, re.IGNORECASE)
    ]
    assert warnings == []


@pytest.fixture(scope="module")
def installed(built_wheel: Tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment outside the checkout with only the wheel (and its dependencies)."""
    wheel, _ = built_wheel
    env_dir = tmp_path_factory.mktemp("clean-venv")
    assert ROOT not in env_dir.parents
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=clean_env(),
        check=False,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    return env_dir


def run(command: List[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=120, env=clean_env(), check=False
    )


def test_the_package_is_imported_from_the_clean_environment(
    installed: Path, tmp_path: Path
) -> None:
    python = str(installed / "bin" / "python")
    where = run(
        [
            python,
            "-c",
            "import echoes_lsp, echoes_lsp.runtime.echoes_vault as r; print(r.__file__)",
        ],
        tmp_path,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(installed)
    # No generic top-level module.
    top = run([python, "-c", "import echoes_vault"], tmp_path)
    assert top.returncode != 0 and "No module named 'echoes_vault'" in top.stderr


def test_version_on_all_three_faces(installed: Path, tmp_path: Path) -> None:
    exe = str(installed / "bin" / "echoes-lsp")
    engine = f"engine {ENGINE_VERSION}, EchoesVault Protocol {PROTOCOL_VERSION}"
    main = run([exe, "--version"], tmp_path)
    assert (main.returncode, main.stdout) == (0, f"echoes-lsp {__version__} (runtime {engine})\n")
    runtime = run([exe, "runtime", "--version"], tmp_path)
    assert (runtime.returncode, runtime.stdout) == (0, f"echoes_vault.py {engine}\n")
    (tmp_path / "project").mkdir()
    init = run([exe, "runtime", "--workspace", str(tmp_path / "project"), "init"], tmp_path)
    assert init.returncode == 0, init.stderr
    copied = tmp_path / "project" / ".echoes-vault" / "echoes_vault.py"
    face = run(["python3", str(copied), "--version"], tmp_path)
    assert (face.returncode, face.stdout, face.stderr) == (0, f"echoes_vault.py {engine}\n", "")


def test_runtime_init_then_check_finds_a_broken_link(installed: Path, tmp_path: Path) -> None:
    exe = str(installed / "bin" / "echoes-lsp")
    project = tmp_path / "project"
    project.mkdir()
    init = run([exe, "runtime", "--workspace", str(project), "init"], tmp_path)
    assert init.returncode == 0, init.stderr
    assert (project / "EchoesVault" / ".echoes-vault.json").is_file()
    clean = run([exe, "check", str(project / "EchoesVault")], tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    (project / "EchoesVault" / "pages" / "deploy.md").write_text(BROKEN_PAGE, encoding="utf-8")
    broken = run([exe, "check", "--fail-on", "warning", str(project / "EchoesVault")], tmp_path)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "EV300" in broken.stdout


def test_serve_answers_initialize(installed: Path, tmp_path: Path) -> None:
    result = lsp_initialize([str(installed / "bin" / "echoes-lsp"), "serve"], tmp_path, clean_env())
    assert result["serverInfo"] == {"name": "echoes-lsp", "version": __version__}
    assert result["capabilities"]["completionProvider"]["triggerCharacters"]


def test_the_extension_and_the_package_share_one_version() -> None:
    import json

    package = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == __version__
    assert f"## {__version__}" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
