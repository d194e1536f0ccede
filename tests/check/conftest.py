"""Helpers for `echoes-lsp check` tests: the real command as a subprocess on copies of fixtures."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CHECK_VAULT = FIXTURES / "check-vault"
RUNTIME = ROOT / "runtime" / "echoes_vault.py"
HERE = Path(__file__).resolve().parent
TIMEOUT = 60

VALID_PAGE = """---
type: note
stack: []
status: active
summary: {summary}
---

# {title}
{body}"""


def base_env(**extra: str) -> Dict[str, str]:
    """The test process' environment without colour settings, with NO_COLOR, and with bytecode
    caching allowed (each run is a fresh interpreter: recompiling every module costs ~0.2 s)."""
    dropped = ("NO_COLOR", "FORCE_COLOR", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["NO_COLOR"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    env.update(extra)
    return env


def run_check(
    *args: str,
    cwd: Path,
    env: Optional[Dict[str, str]] = None,
    stdin: Optional[bytes] = None,
    timeout: float = TIMEOUT,
) -> subprocess.CompletedProcess:
    """`python -m echoes_lsp check ARGS` in `cwd`; stdout/stderr decoded as UTF-8."""
    process = subprocess.run(
        [sys.executable, "-m", "echoes_lsp", "check", *args],
        cwd=str(cwd),
        env=env if env is not None else base_env(),
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    decoded: subprocess.CompletedProcess = subprocess.CompletedProcess(
        process.args,
        process.returncode,
        process.stdout.decode("utf-8"),
        process.stderr.decode("utf-8"),
    )
    assert "Traceback" not in decoded.stderr, decoded.stderr
    return decoded


CheckRun = Callable[..., subprocess.CompletedProcess]


@pytest.fixture
def check_here(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> CheckRun:
    """`run_check` without a new interpreter: the command's own `check_command.run` in this
    process, in `cwd`, with exactly the environment `env` (default `base_env()`), its output
    read at the file descriptors. For tests of what a report looks like; a test of how the
    process starts, reads standard input or exits stays with `run_check`."""
    from echoes_lsp.cli import check_command

    def run(
        *args: str, cwd: Path, env: Optional[Dict[str, str]] = None
    ) -> subprocess.CompletedProcess:
        wanted = env if env is not None else base_env()
        capfd.readouterr()
        with monkeypatch.context() as patch:
            patch.chdir(cwd)
            for key in set(os.environ) - set(wanted):
                patch.delenv(key)
            for key, value in wanted.items():
                patch.setenv(key, value)
            code = check_command.run(list(args))
            out, err = capfd.readouterr()
        assert "Traceback" not in err, err
        return subprocess.CompletedProcess(["echoes-lsp", "check", *args], code, out, err)

    return run


def normalise(text: str) -> str:
    """Replace the run time in summary lines with a placeholder."""
    return re.sub(r"in (?:\d+\.\d+s|\d+ms|<1ms)", "in <time>", text)


def write_page(
    vault: Path, name: str, summary: str = "A page.", body: str = "", **fields: str
) -> Path:
    text = VALID_PAGE.format(summary=summary, title=name, body=body)
    for key, value in fields.items():
        text = re.sub(rf"^{key}: .*$", f"{key}: {value}", text, count=1, flags=re.M)
    path = vault / "pages" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def install_runtime(workspace: Path) -> None:
    """The project runtime, as `init` installs it (`.echoes-vault/echoes_vault.py`)."""
    target = workspace / ".echoes-vault"
    target.mkdir(exist_ok=True)
    shutil.copyfile(RUNTIME, target / "echoes_vault.py")


def runtime(workspace: Path, *args: str, payload: Optional[dict] = None) -> dict:
    process = subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), *args],
        input=json.dumps(payload) if payload is not None else None,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    return json.loads(process.stdout)


def snapshot_files(root: Path, skip: Iterable[str] = (".git",)) -> Dict[str, str]:
    """rel path → SHA-256 of bytes (or `->target` for links) of every file under root."""
    skipped = tuple(skip)
    found: Dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = [
            d for d in dirnames if os.path.normpath(os.path.join(rel_dir, d)) not in skipped
        ]
        for name in filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.relpath(path, root))
            if os.path.islink(path):
                found[rel] = "->" + os.readlink(path)
                continue
            with open(path, "rb") as handle:
                found[rel] = hashlib.sha256(handle.read()).hexdigest()
    return found


def changed_files(before: Dict[str, str], after: Dict[str, str]) -> List[str]:
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = base_env(
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.com",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
    )
    return subprocess.run(
        ["git", *args],
        cwd=str(cwd),
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )


LATIN1_PAGE = (
    b"---\ntype: note\nstack: []\nstatus: active\nsummary: Saved as Latin-1 by an old editor.\n"
    b"---\n\nCaf\xe9 notes.\n"
)


def copy_check_vault(target: Path) -> Path:
    """tests/fixtures/check-vault plus its page that is not UTF-8 (see the fixture's README)."""
    shutil.copytree(CHECK_VAULT, target, symlinks=True)
    (target / "EchoesVault" / "pages" / "latin1.md").write_bytes(LATIN1_PAGE)
    return target


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of tests/fixtures/check-vault (the vault with one of each mistake)."""
    return copy_check_vault(tmp_path / "check-vault")


@pytest.fixture
def clean_workspace(tmp_path: Path) -> Path:
    """A small valid vault with the project runtime installed and a generated index."""
    target = tmp_path / "clean"
    vault = target / "EchoesVault"
    (vault / "pages").mkdir(parents=True)
    shutil.copyfile(
        CHECK_VAULT / "EchoesVault" / ".echoes-vault.json", vault / ".echoes-vault.json"
    )
    for name in ("session-tokens",):
        shutil.copyfile(
            CHECK_VAULT / "EchoesVault" / "pages" / f"{name}.md", vault / "pages" / f"{name}.md"
        )
    write_page(vault, "overview", "Where everything is.", "\nSee [[session-tokens#Rotation]].\n")
    install_runtime(target)
    runtime(target, "rebuild-index")
    return target


def codes_of(report: dict) -> List[str]:
    return [d["code"] for d in report["diagnostics"]]


def json_report(*args: str, cwd: Path, env: Optional[Dict[str, str]] = None) -> dict:
    process = run_check("--format", "json", *args, cwd=cwd, env=env)
    assert process.returncode in (0, 1), process.stderr
    return json.loads(process.stdout)


def by_path(report: dict) -> Dict[str, List[str]]:
    result: Dict[str, List[str]] = {}
    for d in report["diagnostics"]:
        result.setdefault(d["path"], []).append(d["code"])
    return result


def schema(name: str) -> dict:
    path = (
        ROOT / "echoes_lsp" / "schemas" / name
        if name.startswith("check-")
        else HERE / "schemas" / name
    )
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def args_list(*groups: Sequence[str]) -> List[str]:
    return [item for group in groups for item in group]
