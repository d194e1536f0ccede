"""Obsidian beside the tools: pages edited the way Obsidian writes them, no LSP involved.

Obsidian saves a note by writing a temporary file next to it and renaming it over the note. The
language server (over stdio, as any editor runs it) and `echoes-lsp check --watch` must both
notice such a change by themselves and report its effect on the pages that link to the note.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, AsyncIterator, Dict, List, Optional

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities, make_test_lsp_client

from tests.nvim.harness import make_workspace

WAIT = 30.0
ROOT = Path(__file__).resolve().parents[1]


def obsidian_write(page: Path, text: str) -> None:
    """Write as Obsidian does: a temporary file beside the note, renamed over it atomically."""
    temporary = page.with_name(f".{page.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, page)


def rename_heading(workspace: Path) -> Path:
    """Rename `## Token lifetime` in session-tokens.md, which auth-architecture.md links to."""
    page = workspace / "EchoesVault" / "pages" / "session-tokens.md"
    text = page.read_text(encoding="utf-8")
    assert "## Token lifetime" in text
    obsidian_write(page, text.replace("## Token lifetime", "## Token expiry"))
    return page


# -- the language server ---------------------------------------------------------------------------


def make_client() -> LanguageClient:
    client = make_test_lsp_client()
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    @client.feature("echoes/statusChanged")
    def status(params: Any) -> None:
        pass

    return client


SERVER = ClientServerConfig(
    client_factory=make_client,
    server_command=[sys.executable, "-m", "echoes_lsp", "serve"],
    server_env={**os.environ, "PYTHONUNBUFFERED": "1"},
)


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    """The real server over stdio; each test initializes it for its own workspace. The server
    always ends, also when a test failed half-way."""
    yield lsp_client
    server = getattr(lsp_client, "_server", None)
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)
    except Exception:
        pass
    if server is not None and server.returncode is None:
        server.kill()


async def start(client: LanguageClient, workspace: Path, watching: bool) -> None:
    """Initialize with Neovim 0.11's capabilities (push diagnostics); `watching` turns dynamic
    file-watcher registration on, as editors with a file watcher (VS Code, Neovim on macOS) have."""
    caps = client_capabilities("neovim@v0.11.0")
    assert caps.workspace is not None
    caps.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
        dynamic_registration=watching, relative_pattern_support=True
    )
    await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="vault")],
                # With a watcher the server's own 10-s safety poll is turned off, so only the
                # `didChangeWatchedFiles` events sent below can make the change known in time.
                initialization_options={"watch": {"pollInterval": 0}} if watching else None,
            )
        ),
        WAIT,
    )


async def diagnostics_for(
    client: LanguageClient, uri: str, code: str, present: bool = True
) -> List[types.Diagnostic]:
    deadline = asyncio.get_event_loop().time() + WAIT
    while True:
        items = list(client.diagnostics.get(uri, []) or [])
        if uri in client.diagnostics and any(d.code == code for d in items) == present:
            return items
        if asyncio.get_event_loop().time() > deadline:
            raise AssertionError(
                f"{code} {'never appeared' if present else 'stayed'} on {uri}: "
                f"{[(d.code, d.message) for d in items]}"
            )
        await asyncio.sleep(0.05)


async def registration(client: LanguageClient, method: str) -> None:
    deadline = asyncio.get_event_loop().time() + WAIT
    while method not in [r.method for r in client.registrations]:  # type: ignore[attr-defined]
        assert asyncio.get_event_loop().time() < deadline, f"the server did not register {method}"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("watching", [False, True], ids=["polling", "watched-files"])
async def test_server_reports_the_effect_of_an_obsidian_edit(
    client: LanguageClient, tmp_path: Path, watching: bool
) -> None:
    workspace = make_workspace(tmp_path)
    await start(client, workspace, watching)
    page = workspace / "EchoesVault" / "pages" / "auth-architecture.md"
    uri = page.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=page.read_text(encoding="utf-8")
            )
        )
    )
    assert await diagnostics_for(client, uri, "EV303", present=False) == []

    if watching:
        # The server registers its watcher right after `initialized`.
        await registration(client, types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    changed = rename_heading(workspace)
    registered = [r.method for r in client.registrations]  # type: ignore[attr-defined]
    if watching:
        # The editor's file watcher reports the change (the server's poll is off here).
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=changed.as_uri(), type=types.FileChangeType.Changed)]
            )
        )
    else:
        # No watcher (Neovim 0.11 on Linux): the server's own polling notices the rename.
        assert types.WORKSPACE_DID_CHANGE_WATCHED_FILES not in registered

    items = await diagnostics_for(client, uri, "EV303")
    stale = next(d for d in items if d.code == "EV303")
    line = page.read_text(encoding="utf-8").split("\n")[stale.range.start.line]
    assert line[stale.range.start.character : stale.range.end.character] == "Token lifetime"
    assert "Token lifetime" in stale.message

    # Obsidian puts the heading back: the diagnostic goes away again.
    obsidian_write(
        changed, changed.read_text(encoding="utf-8").replace("Token expiry", "Token lifetime")
    )
    if watching:
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=changed.as_uri(), type=types.FileChangeType.Changed)]
            )
        )
    await diagnostics_for(client, uri, "EV303", present=False)


# -- echoes-lsp check --watch -----------------------------------------------------------------------


class Watcher:
    """`echoes-lsp check --watch --format json`: one JSON report per line."""

    def __init__(self, workspace: Path) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "echoes_lsp",
                "check",
                "--watch",
                "--format",
                "json",
                "--poll-interval",
                "0.2",
                str(workspace),
            ],
            cwd=workspace,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def report(self, timeout: float = WAIT) -> Dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            stderr = self.process.stderr.read() if self.process.stderr else ""
            raise AssertionError(
                f"no report from check --watch within {timeout}s: {stderr}"
            ) from None
        report: Dict[str, Any] = json.loads(line)
        return report

    def stop(self) -> Optional[int]:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        return self.process.returncode


def found(report: Dict[str, Any]) -> List[tuple]:
    return [(d["path"], d["code"]) for d in report["diagnostics"]]


def test_check_watch_reports_an_obsidian_edit(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    watcher = Watcher(workspace)
    try:
        first = watcher.report()
        assert first["diagnostics"] == [], first
        rename_heading(workspace)
        fresh = watcher.report()
        assert found(fresh) == [("EchoesVault/pages/auth-architecture.md", "EV303")]
        stale = fresh["diagnostics"][0]
        assert (stale["line"], stale["column"]) == (11, 38)
        assert "Token lifetime" in stale["message"]
    finally:
        code = watcher.stop()
    # Stopped by SIGTERM: the exit code reflects the last report (a warning: not a failure).
    assert code == 0


# -- what Obsidian's own features leave behind ----------------------------------------------------


def check(workspace: Path) -> List[tuple]:
    done = subprocess.run(
        [sys.executable, "-m", "echoes_lsp", "check", "--format", "json", str(workspace)],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode in (0, 1), done.stderr
    return found(json.loads(done.stdout))


def runtime(workspace: Path, *args: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(workspace / ".echoes-vault" / "echoes_vault.py"),
            "--workspace",
            str(workspace),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_obsidian_rename_with_link_updates_needs_only_an_index_rebuild(tmp_path: Path) -> None:
    """Obsidian's "Automatically update internal links": the page is renamed and every link to it
    rewritten in the other pages. The pages stay valid; only the generated index is behind until
    `rebuild-index` (or `hydrate`) runs."""
    workspace = make_workspace(tmp_path)
    pages = workspace / "EchoesVault" / "pages"
    assert check(workspace) == []
    os.rename(pages / "database-access.md", pages / "data-access.md")
    referrer = pages / "auth-architecture.md"
    obsidian_write(
        referrer,
        referrer.read_text(encoding="utf-8").replace("[[database-access|", "[[data-access|"),
    )
    assert check(workspace) == [("EchoesVault/index.md", "EV403")]
    runtime(workspace, "rebuild-index")
    assert check(workspace) == []
    index = (workspace / "EchoesVault" / "index.md").read_text(encoding="utf-8")
    assert "[[data-access]]" in index and "[[database-access]]" not in index


def test_obsidian_rename_without_link_updates_breaks_links(tmp_path: Path) -> None:
    """With "Automatically update internal links" off, a rename leaves broken links behind."""
    workspace = make_workspace(tmp_path)
    pages = workspace / "EchoesVault" / "pages"
    os.rename(pages / "database-access.md", pages / "data-access.md")
    assert ("EchoesVault/pages/auth-architecture.md", "EV300") in check(workspace)


def test_obsidian_folders_and_the_page_template(tmp_path: Path) -> None:
    """`.obsidian/` and a `templates/` folder are not checked; a page made from the shipped
    template is valid."""
    workspace = make_workspace(tmp_path)
    vault = workspace / "EchoesVault"
    template = (ROOT / "editors" / "obsidian" / "templates" / "page.md").read_text("utf-8")
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "app.json").write_text('{"newFileLocation": "folder"}', "utf-8")
    (vault / "templates").mkdir()
    (vault / "templates" / "page.md").write_text(template, "utf-8")
    assert check(workspace) == []
    obsidian_write(
        vault / "pages" / "Token Rotation.md", template.replace("{{title}}", "Token Rotation")
    )
    runtime(workspace, "rebuild-index")
    assert check(workspace) == []
