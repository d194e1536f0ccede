"""Shared fixtures: the runtime driven as a real subprocess in temporary Git repositories."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtime" / "echoes_vault.py"
PROJECT_RUNTIME = Path(".echoes-vault") / "echoes_vault.py"
# The interpreter that runs the runtime under test; set ECHOES_TEST_PYTHON to check another
# version (the runtime supports Python 3.9 and newer).
PYTHON = os.environ.get("ECHOES_TEST_PYTHON") or sys.executable

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def base_env(**extra: str) -> Dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_ENV)
    env.pop("ECHOES_VAULT_LOCK_TIMEOUT", None)
    env.pop("ECHOES_VAULT_LOCK_STALE", None)
    env.update(extra)
    return env


def git(repo: Path, *args: str) -> str:
    process = subprocess.run(
        ["git", *args], cwd=repo, env=base_env(), capture_output=True, text=True, check=True
    )
    return process.stdout


class Result:
    def __init__(self, process: subprocess.CompletedProcess) -> None:
        self.code: int = process.returncode
        self.stdout: str = process.stdout
        self.stderr: str = process.stderr

    @property
    def json(self) -> Dict[str, Any]:
        return json.loads(self.stdout)

    @property
    def error(self) -> Dict[str, Any]:
        data = json.loads(self.stderr.strip().splitlines()[-1])
        assert data["ok"] is False
        return data

    def __repr__(self) -> str:
        return (
            f"Result(code={self.code}, stdout={self.stdout[:500]!r}, stderr={self.stderr[:500]!r})"
        )


class Runtime:
    """Runs the runtime as a subprocess against one workspace.

    By default the project runtime (`.echoes-vault/echoes_vault.py`, a copy of the file under test
    installed by `init`) is invoked, as adapters do; `bundled=True` runs `runtime/echoes_vault.py`
    itself (which re-executes through the project runtime when one exists)."""

    def __init__(self, workspace: Path, prefix: Sequence[str] = ()) -> None:
        self.workspace = workspace
        self.prefix = list(prefix)  # e.g. a command that runs it with fewer privileges

    def script(self, bundled: bool) -> Path:
        project = self.workspace / PROJECT_RUNTIME
        if not bundled and project.is_file() and not project.is_symlink():
            return project
        return RUNTIME

    def run(
        self,
        *args: str,
        payload: Any = None,
        stdin: Optional[bytes] = None,
        bundled: bool = False,
        script: Optional[Path] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[Path] = None,
        workspace: Optional[str] = None,
        timeout: float = 60,
    ) -> Result:
        command = [*self.prefix, PYTHON, str(script or self.script(bundled))]
        command += ["--workspace", workspace if workspace is not None else str(self.workspace)]
        command += list(args)
        data = stdin
        if payload is not None:
            data = json.dumps(payload).encode("utf-8")
        process = subprocess.run(
            command,
            input=data if data is not None else b"",
            capture_output=True,
            cwd=cwd or self.workspace,
            env=env or base_env(),
            timeout=timeout,
            check=False,
        )
        decoded = subprocess.CompletedProcess(
            process.args,
            process.returncode,
            process.stdout.decode("utf-8"),
            process.stderr.decode("utf-8"),
        )
        result = Result(decoded)
        assert "Traceback" not in result.stderr, result
        return result

    def ok(self, *args: str, **options: Any) -> Dict[str, Any]:
        result = self.run(*args, **options)
        assert result.code == 0, result
        assert result.stderr == "", result
        return result.json

    def text(self, *args: str, **options: Any) -> str:
        result = self.run(*args, **options)
        assert result.code == 0, result
        return result.stdout

    def fail(self, *args: str, code: Optional[str] = None, **options: Any) -> Dict[str, Any]:
        result = self.run(*args, **options)
        assert result.code == 2, result
        assert result.stdout == "", result
        error = result.error
        assert set(error) == {"ok", "error", "code"}, error
        assert isinstance(error["error"], str) and error["error"], error
        if code is not None:
            assert error["code"] == code, error
        return error

    def hash(self, name: str) -> str:
        return self.ok("hash", name)["sha256"]

    def upsert(self, filename: str, content: str, **fields: Any) -> Dict[str, Any]:
        return self.ok(
            "upsert", "--payload", "-", payload={"filename": filename, "content": content, **fields}
        )


def page(
    summary: str = "A useful one-line summary.",
    *,
    status: str = "active",
    type_: str = "note",
    stack: str = "[python]",
    body: str = "# Title\n\nBody text.\n",
    extra: str = "",
) -> str:
    return f"---\ntype: {type_}\nstack: {stack}\nstatus: {status}\nsummary: {summary}\n{extra}---\n\n{body}"


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    return path


@pytest.fixture(scope="session")
def initialized_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One workspace initialized by the runtime; tests copy it instead of running init again."""
    root = make_repo(tmp_path_factory.mktemp("template") / "ws")
    runtime = Runtime(root)
    result = runtime.run("init", script=RUNTIME)
    assert result.code == 0, result
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def vault(repo: Path, initialized_template: Path) -> Path:
    for item in initialized_template.iterdir():
        if item.name == ".git":
            continue
        if item.is_dir():
            shutil.copytree(item, repo / item.name, symlinks=True)
        else:
            shutil.copy2(item, repo / item.name)
    return repo


@pytest.fixture
def rt(vault: Path) -> Runtime:
    return Runtime(vault)


@pytest.fixture
def bare(repo: Path) -> Runtime:
    """A runtime bound to an uninitialized Git repository."""
    return Runtime(repo)


def snapshot(root: Path, *, lock_ok: bool = False) -> Dict[str, Tuple[str, int, int, str]]:
    """Every entry below `root` (including `.git`) with type, size, mtime and content digest.

    `lock_ok` ignores the modification time of `.echoes-vault/` itself, which changes when a
    writer creates and removes its ephemeral lock before refusing."""
    result: Dict[str, Tuple[str, int, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            info = path.lstat()
            if path.is_symlink():
                result[rel] = ("link", 0, info.st_mtime_ns, os.readlink(path))
            elif path.is_dir():
                mtime = 0 if lock_ok and rel == ".echoes-vault" else info.st_mtime_ns
                result[rel] = ("dir", 0, mtime, "")
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                result[rel] = ("file", info.st_size, info.st_mtime_ns, digest)
    return result


def pages_dir(root: Path) -> Path:
    return root / "EchoesVault" / "pages"


def daily_files(root: Path) -> list:
    return sorted((root / "EchoesVault" / "daily").rglob("*.md"))


def index_text(root: Path) -> str:
    return (root / "EchoesVault" / "index.md").read_text(encoding="utf-8")


@pytest.fixture
def write_file() -> Iterator[Any]:
    def write(path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return path

    yield write


@pytest.fixture
def no_racy_window() -> Iterator[None]:
    """The page cache's racy window at zero, so that files written just now get cache entries
    (in-process tests of the cache: every outside change they make alters a size or an inode)."""
    from echoes_lsp.runtime import echoes_vault as ev

    saved = ev.CACHE_RACY_NS
    ev.CACHE_RACY_NS = 0
    try:
        yield
    finally:
        ev.CACHE_RACY_NS = saved
