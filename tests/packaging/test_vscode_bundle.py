"""The server bundled into the VS Code extension (`bundled/libs`, built by
`editors/vscode/scripts/bundle_server.py` from the wheel) runs on every supported Python, in
isolated mode, with nothing installed; an older Python gets a clear message."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Tuple

import pytest

from echoes_lsp import __version__

from .conftest import ROOT, TIMEOUT, clean_env, lsp_initialize

EXTENSION = ROOT / "editors" / "vscode"
LAUNCHER = EXTENSION / "bundled" / "tool" / "launch.py"


@pytest.fixture(scope="module")
def bundle(built_wheel: Tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the extension's `bundled/` folder with `libs` built from the wheel."""
    wheel, _ = built_wheel
    bundled = tmp_path_factory.mktemp("extension") / "bundled"
    (bundled / "tool").mkdir(parents=True)
    shutil.copy(LAUNCHER, bundled / "tool" / "launch.py")
    done = subprocess.run(
        [
            sys.executable,
            str(EXTENSION / "scripts" / "bundle_server.py"),
            "--wheel",
            str(wheel),
            "--target",
            str(bundled / "libs"),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=clean_env(),
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return bundled


def test_the_bundle_holds_the_pinned_libraries_and_their_licences(bundle: Path) -> None:
    libs = bundle / "libs"
    infos = sorted(p.name for p in libs.glob("*.dist-info"))
    assert infos == [
        "attrs-26.1.0.dist-info",
        "cattrs-25.3.0.dist-info",
        f"echoes_lsp-{__version__}.dist-info",
        "exceptiongroup-1.3.2.dist-info",
        "lsprotocol-2025.0.0.dist-info",
        "pygls-2.1.1.dist-info",
        "tomli-2.5.0.dist-info",
        "typing_extensions-4.16.0.dist-info",
    ]
    for info in libs.glob("*.dist-info"):
        assert list((info / "licenses").iterdir()), f"{info.name} has no licence file"
    notices = (libs / "THIRD-PARTY-NOTICES.md").read_text(encoding="utf-8")
    assert "| pygls | 2.1.1 | Apache-2.0 |" in notices
    assert (libs / "echoes_lsp" / "runtime" / "echoes_vault.py").is_file()
    # Nothing tied to the machine that built it, and nothing the extension does not run.
    assert not (libs / "bin").exists()
    assert not list(libs.rglob("__pycache__")) and not list(libs.rglob("*.so"))
    assert not (libs / "echoes_lsp" / "nvim").exists()
    assert not (libs / "echoes_lsp" / "vim").exists()


def python(version: str) -> str:
    """A working `python<version>`: on PATH, else one of pyenv's builds (its shims on PATH only
    run the versions pyenv has selected)."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [shutil.which(f"python{version}")]
    candidates += [str(p) for p in sorted(root.glob(f"versions/{version}.*/bin/python{version}"))]
    for candidate in candidates:
        if (
            candidate
            and subprocess.run(
                [candidate, "-c", "pass"], capture_output=True, timeout=60
            ).returncode
            == 0
        ):
            return candidate
    pytest.skip(f"no working python{version} on this machine")


@pytest.mark.parametrize("version", ["3.9", "3.10", "3.11", "3.12", "3.13"])
def test_the_bundled_server_answers_initialize(bundle: Path, tmp_path: Path, version: str) -> None:
    interpreter = python(version)
    # Isolated mode, as the extension runs it: no PYTHONPATH, no user site, not the cwd.
    command = [interpreter, "-I", str(bundle / "tool" / "launch.py")]
    shown = subprocess.run(
        [*command, "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    assert shown.returncode == 0 and shown.stdout.startswith(f"echoes-lsp {__version__} ("), (
        shown.stderr
    )
    result = lsp_initialize([*command, "serve"], tmp_path, clean_env())
    assert result["serverInfo"] == {"name": "echoes-lsp", "version": __version__}


def test_an_older_python_is_told_what_it_needs(bundle: Path, tmp_path: Path) -> None:
    interpreter = python("3.8")
    done = subprocess.run(
        [interpreter, "-I", str(bundle / "tool" / "launch.py"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 3
    assert done.stderr == f"echoes-lsp needs Python 3.9 or newer; {interpreter} is Python 3.8\n"


def test_an_incomplete_bundle_is_named(tmp_path: Path) -> None:
    (tmp_path / "tool").mkdir()
    shutil.copy(LAUNCHER, tmp_path / "tool" / "launch.py")
    done = subprocess.run(
        [sys.executable, "-I", str(tmp_path / "tool" / "launch.py"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3
    assert "the extension's bundled server is incomplete" in done.stderr
