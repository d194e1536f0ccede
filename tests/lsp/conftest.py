"""pytest-lsp fixtures: the real server over stdio on a copy of a fixture vault.

Every test runs twice: with Neovim 0.11's capabilities (push diagnostics: Neovim cannot be asked to
re-pull) and with VS Code's capabilities as current releases send them (pull diagnostics with
refresh support), so both diagnostic paths run.

Two ways to get a server: `session` starts one for the test alone, on a fresh copy of the vault;
`shared` hands the test the one server its module shares per client kind (`shared_client`, on the
module's `shared_workspace`). A shared test may only read: its documents are closed when it ends,
and it fails if it changed a file under the workspace or the server reported a bug of its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Dict, List, Optional, Set, Tuple, Union

import pytest
import pytest_asyncio
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import (
    ClientServerConfig,
    LanguageClient,
    client_capabilities,
    make_test_lsp_client,
)

from echoes_lsp.server.echoes_server import INTERNAL_ERROR

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtime" / "echoes_vault.py"
WAIT = 30.0
CLIENTS = ("neovim", "visual_studio_code")
# The `clientInfo` each client sends (the server knows some abilities only by name).
CLIENT_INFO = {
    "neovim": types.ClientInfo(name="Neovim", version="v0.11.0"),
    "visual_studio_code": types.ClientInfo(name="Visual Studio Code", version="1.95.0"),
}
# Clients that declare less, replayed from the `initialize` the real editors sent (clients/).
LIMITED = ("eglot_1.9", "ale_3.3")
CAPTURED = Path(__file__).resolve().parent / "clients"


def capabilities(name: str) -> types.ClientCapabilities:
    if name == "neovim":
        return client_capabilities("neovim@v0.11.0")
    caps = client_capabilities("visual_studio_code")
    # VS Code 1.67+ pulls diagnostics and honours workspace/diagnostic/refresh.
    assert caps.text_document is not None and caps.workspace is not None
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(
        dynamic_registration=True, related_document_support=False
    )
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    # VS Code 1.65+ shows inlay hints and honours workspace/inlayHint/refresh.
    caps.text_document.inlay_hint = types.InlayHintClientCapabilities(dynamic_registration=True)
    caps.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    return caps


def copy_vault(name: str, destination: Path, init: bool = False) -> Path:
    """A fresh workspace holding the fixture vault `name`; `init` installs the runtime."""
    workspace = destination / name
    shutil.copytree(FIXTURES / name, workspace)
    if init:
        subprocess.run(
            [sys.executable, str(RUNTIME), "--workspace", str(workspace), "init"],
            check=True,
            capture_output=True,
        )
    return workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return copy_vault("lsp-vault", tmp_path)


def uri(path: Path) -> str:
    return path.resolve().as_uri()


class Session:
    """Test helpers around one initialized client."""

    def __init__(self, client: LanguageClient, workspace: Path, kind: str) -> None:
        self.client = client
        self.workspace = workspace
        self.kind = kind
        self.versions: Dict[str, int] = {}
        self.opened: Set[str] = set()

    @property
    def pull(self) -> bool:
        return self.kind == "visual_studio_code"

    def page(self, name: str) -> Path:
        return self.workspace / "EchoesVault" / "pages" / name

    def open(self, path: Path, text: Optional[str] = None) -> str:
        document = uri(path)
        if text is None:
            text = path.read_text(encoding="utf-8")
        self.versions[document] = 1
        self.opened.add(document)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=document, language_id="markdown", version=1, text=text
                )
            )
        )
        return document

    def replace(self, document: str, text: str) -> None:
        """Send a full-text change."""
        self.versions[document] = self.versions.get(document, 1) + 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=document, version=self.versions[document]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def edit(self, document: str, line: int, start: int, end: int, text: str) -> None:
        """Send one incremental change on a single line."""
        self.versions[document] = self.versions.get(document, 1) + 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=document, version=self.versions[document]
                ),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=line, character=start),
                            end=types.Position(line=line, character=end),
                        ),
                        text=text,
                    )
                ],
            )
        )

    async def diagnostics(
        self,
        document: str,
        until: Callable[[List[types.Diagnostic]], bool] = lambda items: True,
        timeout: float = WAIT,
    ) -> List[types.Diagnostic]:
        """The document's diagnostics once `until` holds (pulling or waiting for a push)."""
        deadline = asyncio.get_event_loop().time() + timeout
        last: List[types.Diagnostic] = []
        while True:
            if self.pull:
                report = await asyncio.wait_for(
                    self.client.text_document_diagnostic_async(
                        types.DocumentDiagnosticParams(
                            text_document=types.TextDocumentIdentifier(uri=document)
                        )
                    ),
                    timeout,
                )
                last = list(getattr(report, "items", []) or [])
            else:
                last = list(self.client.diagnostics.get(document, []) or [])
                if document not in self.client.diagnostics:
                    last = []
            if (self.pull or document in self.client.diagnostics) and until(last):
                return last
            if asyncio.get_event_loop().time() > deadline:
                raise AssertionError(
                    f"timed out waiting for diagnostics on {document}; last: "
                    + repr([(d.code, d.message) for d in last])
                )
            await asyncio.sleep(0.05)

    async def command(self, name: str, *arguments: Any) -> Any:
        return await asyncio.wait_for(
            self.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=name, arguments=list(arguments))
            ),
            60,
        )

    async def code_actions(
        self, document: str, diagnostic: types.Diagnostic
    ) -> List[Union[types.Command, types.CodeAction]]:
        """The code actions offered for one diagnostic."""
        result = await asyncio.wait_for(
            self.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=document),
                    range=diagnostic.range,
                    context=types.CodeActionContext(diagnostics=[diagnostic]),
                )
            ),
            WAIT,
        )
        return list(result or [])

    def close(self, document: str) -> None:
        self.opened.discard(document)
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=document)
            )
        )

    async def close_all(self) -> None:
        """Close every document this session opened, and wait until the server has handled it."""
        for document in sorted(self.opened):
            self.close(document)
        await self.alive()

    async def alive(self) -> None:
        """The server still answers requests."""
        identifier = types.TextDocumentIdentifier(uri=self.page("auth.md").as_uri())
        start = types.Position(line=0, character=0)
        await asyncio.wait_for(
            self.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=identifier,
                    range=types.Range(start=start, end=start),
                    context=types.CodeActionContext(diagnostics=[]),
                )
            ),
            WAIT,
        )


def codes(items: List[types.Diagnostic]) -> List[str]:
    return sorted(str(d.code) for d in items)


def poll_off(options: Optional[dict]) -> dict:
    """`options` with the server's own disk poll turned off (unless they set one): a change made
    on disk is then known only through the `didChangeWatchedFiles` events a test sends, so a
    server that ignores them fails instead of being rescued by its poll."""
    if options is not None and isinstance(options.get("echoes"), dict):
        return {**options, "echoes": {"watch": {"pollInterval": 0}, **options["echoes"]}}
    return {"watch": {"pollInterval": 0}, **(options or {})}


async def start_session(
    lsp_client: LanguageClient, workspace: Path, kind: str, options: Optional[dict] = None
) -> Session:
    lsp_client.init_result = await asyncio.wait_for(  # type: ignore[attr-defined]
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities(kind),
                client_info=CLIENT_INFO.get(kind),
                root_uri=uri(workspace),
                workspace_folders=[types.WorkspaceFolder(uri=uri(workspace), name="vault")],
                initialization_options=poll_off(options),
            )
        ),
        WAIT,
    )
    return Session(lsp_client, workspace, kind)


def make_client() -> LanguageClient:
    """The pytest-lsp client, plus the requests and notifications this server sends."""
    client = make_test_lsp_client()
    # lsprotocol reads a CodeAction that has a `command` but no `edit` as a bare Command; decide
    # by the shape of `command` instead, as the specification does.
    converter = client.protocol._converter
    action_or_command = Union[types.Command, types.CodeAction]

    def structure_action(obj: Any, _type: Any) -> Any:
        kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, kind)

    converter.register_structure_hook(action_or_command, structure_action)
    client.registrations = []  # type: ignore[attr-defined]
    client.statuses = []  # type: ignore[attr-defined]
    client.message_answer = None  # type: ignore[attr-defined]
    client.message_requests = []  # type: ignore[attr-defined]
    client.refreshes = []  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    @client.feature("echoes/statusChanged")
    def status_changed(params: Any) -> None:
        client.statuses.append(params)  # type: ignore[attr-defined]

    client.answers_questions = True  # type: ignore[attr-defined]

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def show_message_request(params: types.ShowMessageRequestParams) -> Any:
        client.message_requests.append(params)  # type: ignore[attr-defined]
        if not client.answers_questions:  # type: ignore[attr-defined]
            await asyncio.Event().wait()  # as ALE: the question is never answered
        answer = client.message_answer  # type: ignore[attr-defined]
        return types.MessageActionItem(title=answer) if answer else None

    @client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def inlay_hint_refresh(params: Any) -> None:
        client.refreshes.append(types.WORKSPACE_INLAY_HINT_REFRESH)  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_SEMANTIC_TOKENS_REFRESH)
    def semantic_tokens_refresh(params: Any) -> None:
        client.refreshes.append(types.WORKSPACE_SEMANTIC_TOKENS_REFRESH)  # type: ignore[attr-defined]

    return client


SERVER = ClientServerConfig(
    client_factory=make_client,
    server_command=[sys.executable, "-m", "echoes_lsp", "serve"],
    server_env={**os.environ, "PYTHONUNBUFFERED": "1"},
)


def internal_errors(client: LanguageClient) -> List[str]:
    """Messages by which the server reported a bug of its own (an unexpected exception)."""
    return [
        message.message
        for message in client.messages
        if message.message.startswith((INTERNAL_ERROR, "Error in server"))
    ]


@pytest_lsp.fixture(config=SERVER)
async def bare_client(lsp_client: LanguageClient):
    """A connected but uninitialized client, for tests that choose their own options."""
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)
    assert internal_errors(lsp_client) == []


@pytest_lsp.fixture(params=CLIENTS, config=SERVER)
async def client(request: Any, lsp_client: LanguageClient, workspace: Path):
    await start_session(lsp_client, workspace, request.param)
    lsp_client.kind = request.param  # type: ignore[attr-defined]
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)
    # Also a failure no request saw (in a notification handler or a deferred update).
    assert internal_errors(lsp_client) == []


@pytest.fixture
def session(client: LanguageClient, workspace: Path) -> Session:
    """A server of the test's own, on a fresh copy of the vault: for tests that may change it."""
    return Session(client, workspace, client.kind)  # type: ignore[attr-defined]


# -- clients that declare less: eglot 1.9 and ALE 3.3 as they initialize -----------------------


def captured_params(name: str, workspace: Path, options: Optional[dict]) -> types.InitializeParams:
    """The `initialize` the editor `name` sent, exactly, on the test's workspace and options."""
    data = json.loads((CAPTURED / f"{name}.json").read_text(encoding="utf-8"))
    data.pop("processId", None)
    data["rootUri"] = uri(workspace)
    data["rootPath"] = str(workspace)
    if "workspaceFolders" in data:
        data["workspaceFolders"] = [{"uri": uri(workspace), "name": str(workspace)}]
    data["initializationOptions"] = options
    params: types.InitializeParams = default_converter().structure(data, types.InitializeParams)
    return params


async def start_limited(
    client: LanguageClient, workspace: Path, options: Optional[dict] = None
) -> Session:
    """Initialize `client` as its editor (`client.kind`, one of LIMITED) does; by default with
    the poll off, as `start_session`."""
    kind = client.kind  # type: ignore[attr-defined]
    params = captured_params(kind, workspace, poll_off(options))
    client.init_result = await asyncio.wait_for(  # type: ignore[attr-defined]
        client.initialize_session(params), WAIT
    )
    return Session(client, workspace, kind)


@pytest_lsp.fixture(params=LIMITED, config=SERVER)
async def limited_client(request: Any, lsp_client: LanguageClient):
    """A connected client that declares only what eglot 1.9 or ALE 3.3 declares, not yet
    initialized (`start_limited`). As ALE, the ALE client never answers a question."""
    lsp_client.kind = request.param  # type: ignore[attr-defined]
    lsp_client.answers_questions = request.param != "ale_3.3"  # type: ignore[attr-defined]
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)
    assert internal_errors(lsp_client) == []


@pytest_asyncio.fixture
async def limited(limited_client: LanguageClient, workspace: Path) -> Session:
    """A server of the test's own, initialized as eglot 1.9 or ALE 3.3 initializes it."""
    return await start_limited(limited_client, workspace)


# -- one server per module and client kind, for the tests that only read ---------------------------


@pytest.fixture(scope="module")
def shared_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workspace of the module's shared server (a module may override it, module-scoped)."""
    return copy_vault("lsp-vault", tmp_path_factory.mktemp("shared"))


@pytest_lsp.fixture(scope="module", params=CLIENTS, config=SERVER)
async def shared_client(request: Any, lsp_client: LanguageClient, shared_workspace: Path):
    await start_session(lsp_client, shared_workspace, request.param)
    lsp_client.kind = request.param  # type: ignore[attr-defined]
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)
    assert internal_errors(lsp_client) == []


def pytest_collection_modifyitems(items: List[pytest.Item]) -> None:
    """A test on the shared server runs in its module's event loop, where that server's client
    lives (pytest-asyncio gives every other test a loop of its own)."""
    for item in items:
        if "shared_client" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.asyncio(loop_scope="module"), append=False)


def disk_state(root: Path) -> Dict[str, Tuple[Any, ...]]:
    """Every entry under `root`: its kind, and a regular file's SHA-256 (a FIFO is never opened,
    as opening one that no one writes to blocks)."""
    found: Dict[str, Tuple[Any, ...]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        key = str(path.relative_to(root))
        if stat.S_ISREG(info.st_mode):
            found[key] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
        else:
            found[key] = (stat.S_IFMT(info.st_mode),)
    return found


def forget_records(client: LanguageClient) -> None:
    """Drop what the shared client saw before this test, so a test sees only what it caused."""
    client.diagnostics.clear()
    client.messages.clear()
    client.statuses.clear()  # type: ignore[attr-defined]
    client.message_requests.clear()  # type: ignore[attr-defined]
    client.refreshes.clear()  # type: ignore[attr-defined]
    client.message_answer = None  # type: ignore[attr-defined]


@pytest_asyncio.fixture(loop_scope="module")
async def shared(shared_client: LanguageClient, shared_workspace: Path) -> AsyncIterator[Session]:
    """The module's shared server, for a test that only reads: documents it opens are closed when
    it ends, and it fails if a file under the workspace changed (a test that writes takes
    `session`, a server of its own)."""
    before = disk_state(shared_workspace)
    forget_records(shared_client)
    session = Session(shared_client, shared_workspace, shared_client.kind)  # type: ignore[attr-defined]
    yield session
    await session.close_all()
    assert internal_errors(shared_client) == []
    after = disk_state(shared_workspace)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert not changed, f"a test on the shared server changed files: {changed}"
