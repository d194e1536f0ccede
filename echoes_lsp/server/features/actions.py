"""Code actions: quick fixes for findings, and source actions that go through the runtime."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Set

from lsprotocol import types

from ...engine import page_fixes
from ...engine.findings import Finding, expected_index
from ...engine.vault import PAGE, Entry, read_text, without_bom
from ...runtime import echoes_vault as rules
from ..echoes_server import EchoesServer
from ..lsp_convert import Columns, make_range, path_to_uri
from ..vault_folder import Folder
from . import Feature, commands
from .document_context import locate

QUICKFIX = types.CodeActionKind.QuickFix
SAVE_KIND = "source.echoes.save"
REBUILD_KIND = "source.echoes.rebuildIndex"
APPEND_KIND = "source.echoes.append"
DEPRECATE_KIND = "refactor.rewrite.echoes.deprecate"
OPTIONS = types.CodeActionOptions(
    code_action_kinds=[
        QUICKFIX,
        types.CodeActionKind.Source,
        SAVE_KIND,
        REBUILD_KIND,
        APPEND_KIND,
        DEPRECATE_KIND,
    ],
    resolve_provider=False,
)


def text_edit(ls: EchoesServer, uri: str, old: str, new: str) -> types.WorkspaceEdit:
    l0, c0, l1, c1, replacement = page_fixes.minimal_edit(old, new)
    lines = old.split("\n")
    edit = types.TextEdit(
        range=make_range(lines, ls.columns, l0, c0, l1, c1)
        if lines
        else types.Range(
            start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
        ),
        new_text=replacement,
    )
    return types.WorkspaceEdit(changes={uri: [edit]})


def snippet_edit(
    ls: EchoesServer, uri: str, old: str, new: str, selected: str
) -> Optional[types.WorkspaceEdit]:
    """The edit as a snippet whose first tab stop selects `selected` (a placeholder to replace),
    for clients that accept snippet edits (`workspaceEdit.snippetEditSupport`); else None."""
    document = ls.open_document(uri)
    snippets = ls.capability("workspace.workspace_edit.snippet_edit_support")
    if not snippets or document is None or new == old:
        return None
    l0, c0, l1, c1, replacement = page_fixes.minimal_edit(old, new)
    snippet = page_fixes.snippet_with_tab_stop(replacement, selected)
    if snippet is None:
        return None
    edit = types.SnippetTextEdit(
        range=make_range(old.split("\n"), ls.columns, l0, c0, l1, c1),
        snippet=types.StringValue(value=snippet),
    )
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=document.version)
    return types.WorkspaceEdit(
        document_changes=[types.TextDocumentEdit(text_document=identifier, edits=[edit])]
    )


def command_action(
    title: str,
    kind: str,
    command: str,
    argument: dict,
    folder: Folder,
    diagnostics: Optional[List[types.Diagnostic]] = None,
) -> types.CodeAction:
    disabled = None
    title = rules.mask_secrets(title)
    if not folder.writable:
        disabled = types.CodeActionDisabled(
            reason=f"read-only vault: {folder.vault.read_only_reason}"
        )
    return types.CodeAction(
        title=title,
        kind=kind,
        diagnostics=diagnostics,
        disabled=disabled,
        command=types.Command(title=title, command=command, arguments=[argument]),
    )


def resolved_conflict(text: str, block: page_fixes.ConflictBlock, keep: str) -> Optional[str]:
    return page_fixes.resolve_conflict(text, block, keep)


def overlaps(finding: Finding, selection: types.Range) -> bool:
    return finding.line <= selection.end.line and finding.end_line >= selection.start.line


def matching(diagnostics: List[types.Diagnostic], code: str) -> Optional[List[types.Diagnostic]]:
    found = [d for d in diagnostics if d.code == code]
    return found or None


@dataclass
class CodeActionRequest:
    """One code-action request: the open page, its findings in the requested range, and the
    client's diagnostics that actions name."""

    ls: EchoesServer
    uri: str
    path: str
    folder: Folder
    text: str
    entry: Optional[Entry]
    findings: List[Finding]
    client_diags: List[types.Diagnostic]
    selection: types.Range

    @property
    def codes(self) -> Set[str]:
        return {finding.code for finding in self.findings}

    @property
    def is_page(self) -> bool:
        return self.entry is not None and self.entry.kind == PAGE

    @property
    def workspace_uri(self) -> str:
        return path_to_uri(self.folder.workspace)

    def edit_fix(
        self, title: str, code: str, transform: Callable[[str], Optional[str]]
    ) -> List[types.CodeAction]:
        """A preferred quick fix that edits the buffer, if `transform` changes it."""
        new = transform(self.text)
        if new is None or new == self.text:
            return []
        return [
            types.CodeAction(
                title=rules.mask_secrets(title),
                kind=QUICKFIX,
                diagnostics=matching(self.client_diags, code),
                edit=text_edit(self.ls, self.uri, self.text, new),
                is_preferred=True,
            )
        ]


def frontmatter_fixes(asked: CodeActionRequest) -> List[types.CodeAction]:
    codes = asked.codes
    if not asked.is_page:
        return []
    actions: List[types.CodeAction] = []
    if codes & {"EV100", "EV101", "EV104"}:
        stem = os.path.basename(asked.path)[:-3]
        code = next(c for c in ("EV104", "EV100", "EV101") if c in codes)
        title = "Insert the missing frontmatter fields"
        inserted = page_fixes.insert_missing_fields(asked.text, stem)
        # Where the client takes snippets, the cursor lands on the summary placeholder;
        # elsewhere the placeholder is reported (EV202) until it is replaced.
        snippet = snippet_edit(
            asked.ls, asked.uri, asked.text, inserted, page_fixes.placeholder_summary(stem)
        )
        if snippet is not None:
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=QUICKFIX,
                    diagnostics=matching(asked.client_diags, code),
                    edit=snippet,
                    is_preferred=True,
                )
            )
        else:
            actions += asked.edit_fix(title, code, lambda t: inserted)
    if "EV201" in codes:
        actions += asked.edit_fix(
            "Join the summary onto one line", "EV201", page_fixes.join_summary
        )
    if "EV310" in codes:
        actions += asked.edit_fix(
            "Add the `> [!warning] DEPRECATED` callout", "EV310", page_fixes.add_deprecated_callout
        )
    return actions


def create_page_fixes(asked: CodeActionRequest) -> List[types.CodeAction]:
    actions = []
    for finding in asked.findings:
        if finding.code == "EV300":
            line = asked.text.split("\n")[finding.line]
            stem = line[finding.start : finding.end]
            actions.append(
                command_action(
                    f"Create page `{stem}` through EchoesVault",
                    QUICKFIX,
                    commands.CREATE,
                    {"workspace": asked.workspace_uri, "name": stem},
                    asked.folder,
                    matching(asked.client_diags, "EV300"),
                )
            )
    return actions


def conflict_fixes(asked: CodeActionRequest) -> List[types.CodeAction]:
    if "EV400" not in asked.codes:
        return []
    actions: List[types.CodeAction] = []
    for block in page_fixes.conflict_blocks(asked.text):
        if block.end < asked.selection.start.line or block.start > asked.selection.end.line:
            continue
        for keep in ("ours", "theirs", "both"):
            actions += asked.edit_fix(
                f"Resolve conflict: keep {keep}",
                "EV400",
                functools.partial(resolved_conflict, block=block, keep=keep),
            )
    return actions


def index_fixes(asked: CodeActionRequest) -> List[types.CodeAction]:
    index_codes = [c for c in ("EV403", "EV402") if c in asked.codes]
    if not index_codes:
        return []
    if index_codes == ["EV403"] and expected_index(asked.folder.vault) is None:
        return []  # invalid pages block the index: the runtime would refuse to rebuild it
    return [
        command_action(
            "Rebuild the index through EchoesVault",
            QUICKFIX,
            commands.REBUILD,
            {"workspace": asked.workspace_uri},
            asked.folder,
            matching(asked.client_diags, index_codes[0]),
        )
    ]


def stale_fixes(asked: CodeActionRequest) -> List[types.CodeAction]:
    """EV701: reload the disk version, open it beside the buffer, or overwrite it."""
    if "EV701" not in asked.codes:
        return []
    related = matching(asked.client_diags, "EV701")
    actions = []
    disk_text, _error = read_text(asked.path)
    if disk_text is not None:
        disk_text = without_bom(disk_text)  # as an editor shows the file; the mark is not text
        actions.append(
            types.CodeAction(
                title="Reload the disk version (discard buffer changes)",
                kind=QUICKFIX,
                diagnostics=related,
                edit=text_edit(asked.ls, asked.uri, asked.text, disk_text),
            )
        )
    actions.append(
        types.CodeAction(
            title="Open the disk version beside the buffer"
            if asked.ls.support.show_document
            else "Copy the disk version to a file (its path is shown)",
            kind=QUICKFIX,
            diagnostics=related,
            command=types.Command(
                title="Open disk version", command=commands.DISK, arguments=[{"uri": asked.uri}]
            ),
        )
    )
    actions.append(overwrite_action(asked, related))
    return actions


def overwrite_action(
    asked: CodeActionRequest, related: Optional[List[types.Diagnostic]]
) -> types.CodeAction:
    """Overwrite after a question where the client can be asked; where it cannot, choosing this
    action (named for what it does) is the confirmation."""
    ask = asked.ls.support.message_requests
    return command_action(
        commands.OVERWRITE_TITLE + (" (asks to confirm)" if ask else ""),
        QUICKFIX,
        commands.SAVE,
        {"uri": asked.uri, "confirmOverwrite": "ask" if ask else True},
        asked.folder,
        related,
    )


def source_actions(asked: CodeActionRequest) -> List[types.CodeAction]:
    """Deprecate the page, save it through the runtime, rebuild the index, append a selection."""
    actions = []
    entry = asked.entry
    if asked.is_page and entry is not None and entry.info is not None and not entry.info.deprecated:
        new = page_fixes.mark_deprecated(asked.text)
        if new is not None:
            actions.append(
                types.CodeAction(
                    title="Mark this page deprecated",
                    kind=DEPRECATE_KIND,
                    edit=text_edit(asked.ls, asked.uri, asked.text, new),
                )
            )
    if asked.is_page and "EV701" not in asked.codes:
        actions.append(
            command_action(
                "Save through EchoesVault (hash-checked)",
                SAVE_KIND,
                commands.SAVE,
                {"uri": asked.uri},
                asked.folder,
            )
        )
    actions.append(
        command_action(
            "Rebuild the EchoesVault index",
            REBUILD_KIND,
            commands.REBUILD,
            {"workspace": asked.workspace_uri},
            asked.folder,
        )
    )
    chosen = selected_text(asked.ls.columns, asked.text, asked.selection)
    if chosen.strip():
        actions.append(
            command_action(
                "Append the selection to a new scratchpad entry",
                APPEND_KIND,
                commands.APPEND,
                {"workspace": asked.workspace_uri, "entry": chosen},
                asked.folder,
            )
        )
    return actions


def selected_text(columns: Columns, text: str, selection: types.Range) -> str:
    """The text a client range covers ("" for an empty range); lines past the end are clamped."""
    if selection.start == selection.end:
        return ""
    lines = text.split("\n")
    start_line = min(selection.start.line, len(lines) - 1)
    end_line = min(selection.end.line, len(lines) - 1)
    start = columns.from_client(lines[start_line], selection.start.character)
    end = columns.from_client(lines[end_line], selection.end.character)
    chosen = "\n".join(lines[start_line : end_line + 1])
    chosen = chosen[start:]
    return chosen[: len(chosen) - (len(lines[end_line]) - end)]


def wanted(
    actions: List[types.CodeAction], only: Optional[Sequence[str]]
) -> List[types.CodeAction]:
    """The actions of the kinds the client asked for (all when it named none)."""
    if not only:
        return actions
    return [
        a
        for a in actions
        if a.kind and any(a.kind == k or a.kind.startswith(k + ".") for k in only)
    ]


def code_action(
    ls: EchoesServer, params: types.CodeActionParams
) -> Optional[List[types.CodeAction]]:
    uri = params.text_document.uri
    located = locate(ls, uri)
    text = ls.document_text(uri)
    if located is None or text is None:
        return None
    folder, path = located
    asked = CodeActionRequest(
        ls,
        uri,
        path,
        folder,
        text,
        folder.vault.entry(path),
        [f for f in ls.findings(uri) if overlaps(f, params.range)],
        list(params.context.diagnostics or []),
        params.range,
    )
    actions = [
        *frontmatter_fixes(asked),
        *create_page_fixes(asked),
        *conflict_fixes(asked),
        *index_fixes(asked),
        *stale_fixes(asked),
        *source_actions(asked),
    ]
    return wanted(actions, params.context.only)


FEATURES = [Feature(types.TEXT_DOCUMENT_CODE_ACTION, code_action, OPTIONS)]
