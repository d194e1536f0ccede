"""Code actions: quick fixes for findings, and source actions that go through the runtime."""

from __future__ import annotations

import functools
import os
from typing import Callable, List, Optional

from lsprotocol import types

from .. import fixes
from ..diagnose import Finding
from ..lsp_util import make_range, path_to_uri, uri_to_path
from ..runtime import echoes_vault as rules
from ..server import EchoesServer, Folder
from ..vault import PAGE
from . import commands

QUICKFIX = types.CodeActionKind.QuickFix
SAVE_KIND = "source.echoes.save"
REBUILD_KIND = "source.echoes.rebuildIndex"
APPEND_KIND = "source.echoes.append"
DEPRECATE_KIND = "refactor.rewrite.echoes.deprecate"


def text_edit(ls: EchoesServer, uri: str, old: str, new: str) -> types.WorkspaceEdit:
    l0, c0, l1, c1, replacement = fixes.minimal_edit(old, new)
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
    caps = ls.client_capabilities
    workspace = caps.workspace if caps else None
    edit_caps = workspace.workspace_edit if workspace else None
    document = ls.open_document(uri)
    if not (edit_caps and edit_caps.snippet_edit_support) or document is None or new == old:
        return None
    l0, c0, l1, c1, replacement = fixes.minimal_edit(old, new)
    snippet = fixes.snippet_with_tab_stop(replacement, selected)
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
            reason=f"read-only vault: {folder.vault.marker.problem}"
        )
    return types.CodeAction(
        title=title,
        kind=kind,
        diagnostics=diagnostics,
        disabled=disabled,
        command=types.Command(title=title, command=command, arguments=[argument]),
    )


def resolve(text: str, block: fixes.ConflictBlock, keep: str) -> Optional[str]:
    return fixes.resolve_conflict(text, block, keep)


def overlaps(finding: Finding, selection: types.Range) -> bool:
    return finding.line <= selection.end.line and finding.end_line >= selection.start.line


def matching(diagnostics: List[types.Diagnostic], code: str) -> Optional[List[types.Diagnostic]]:
    found = [d for d in diagnostics if d.code == code]
    return found or None


def register(server: EchoesServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[
                QUICKFIX,
                types.CodeActionKind.Source,
                SAVE_KIND,
                REBUILD_KIND,
                APPEND_KIND,
                DEPRECATE_KIND,
            ],
            resolve_provider=False,
        ),
    )
    def code_action(
        ls: EchoesServer, params: types.CodeActionParams
    ) -> Optional[List[types.CodeAction]]:
        uri = params.text_document.uri
        path = uri_to_path(uri)
        folder = ls.folder_for_path(path)
        text = ls.document_text(uri)
        if folder is None or path is None or text is None:
            return None
        entry = folder.vault.entry(path)
        only = params.context.only
        actions: List[types.CodeAction] = []
        client_diags = list(params.context.diagnostics or [])
        findings = [f for f in ls.findings(uri) if overlaps(f, params.range)]
        codes = {f.code for f in findings}
        is_page = entry is not None and entry.kind == PAGE
        workspace_uri = path_to_uri(folder.workspace)

        def fix(title: str, code: str, transform: Callable[[str], Optional[str]]) -> None:
            new = transform(text)
            if new is not None and new != text:
                actions.append(
                    types.CodeAction(
                        title=rules.mask_secrets(title),
                        kind=QUICKFIX,
                        diagnostics=matching(client_diags, code),
                        edit=text_edit(ls, uri, text, new),
                        is_preferred=True,
                    )
                )

        if is_page and codes & {"EV100", "EV101", "EV104"}:
            stem = os.path.basename(path)[:-3]
            code = next(c for c in ("EV104", "EV100", "EV101") if c in codes)
            title = "Insert the missing frontmatter fields"
            inserted = fixes.insert_missing_fields(text, stem)
            # Where the client takes snippets, the cursor lands on the summary placeholder;
            # elsewhere the placeholder is reported (EV202) until it is replaced.
            snippet = snippet_edit(ls, uri, text, inserted, fixes.placeholder_summary(stem))
            if snippet is not None:
                actions.append(
                    types.CodeAction(
                        title=title,
                        kind=QUICKFIX,
                        diagnostics=matching(client_diags, code),
                        edit=snippet,
                        is_preferred=True,
                    )
                )
            else:
                fix(title, code, lambda t: inserted)
        if is_page and "EV201" in codes:
            fix("Join the summary onto one line", "EV201", fixes.join_summary)
        if is_page and "EV310" in codes:
            fix("Add the `> [!warning] DEPRECATED` callout", "EV310", fixes.add_deprecated_callout)
        for finding in findings:
            if finding.code == "EV300":
                line = text.split("\n")[finding.line]
                stem = line[finding.start : finding.end]
                actions.append(
                    command_action(
                        f"Create page `{stem}` through EchoesVault",
                        QUICKFIX,
                        commands.CREATE,
                        {"workspace": workspace_uri, "name": stem},
                        folder,
                        matching(client_diags, "EV300"),
                    )
                )
        if "EV400" in codes:
            for block in fixes.conflict_blocks(text):
                if block.end < params.range.start.line or block.start > params.range.end.line:
                    continue
                for keep in ("ours", "theirs", "both"):
                    fix(
                        f"Resolve conflict: keep {keep}",
                        "EV400",
                        functools.partial(resolve, block=block, keep=keep),
                    )
        index_codes = [c for c in ("EV403", "EV402") if c in codes]
        if index_codes:
            actions.append(
                command_action(
                    "Rebuild the index through EchoesVault",
                    QUICKFIX,
                    commands.REBUILD,
                    {"workspace": workspace_uri},
                    folder,
                    matching(client_diags, index_codes[0]),
                )
            )
        if "EV701" in codes:
            disk_text = None
            try:
                with open(path, encoding="utf-8") as handle:
                    disk_text = rules.normalize_newlines(handle.read())
            except (OSError, UnicodeDecodeError):
                pass
            if disk_text is not None:
                actions.append(
                    types.CodeAction(
                        title="Reload the disk version (discard buffer changes)",
                        kind=QUICKFIX,
                        diagnostics=matching(client_diags, "EV701"),
                        edit=text_edit(ls, uri, text, disk_text),
                    )
                )
            actions.append(
                types.CodeAction(
                    title="Open the disk version beside the buffer",
                    kind=QUICKFIX,
                    diagnostics=matching(client_diags, "EV701"),
                    command=types.Command(
                        title="Open disk version", command=commands.DISK, arguments=[{"uri": uri}]
                    ),
                )
            )
            actions.append(
                command_action(
                    "Overwrite the disk version with this buffer (asks to confirm)",
                    QUICKFIX,
                    commands.SAVE,
                    {"uri": uri, "confirmOverwrite": "ask"},
                    folder,
                    matching(client_diags, "EV701"),
                )
            )
        if is_page and entry is not None and entry.info is not None and not entry.info.deprecated:
            new = fixes.mark_deprecated(text)
            if new is not None:
                actions.append(
                    types.CodeAction(
                        title="Mark this page deprecated",
                        kind=DEPRECATE_KIND,
                        edit=text_edit(ls, uri, text, new),
                    )
                )
        if is_page and "EV701" not in codes:
            actions.append(
                command_action(
                    "Save through EchoesVault (hash-checked)",
                    SAVE_KIND,
                    commands.SAVE,
                    {"uri": uri},
                    folder,
                )
            )
        actions.append(
            command_action(
                "Rebuild the EchoesVault index",
                REBUILD_KIND,
                commands.REBUILD,
                {"workspace": workspace_uri},
                folder,
            )
        )
        selection = params.range
        if selection.start != selection.end:
            lines = text.split("\n")
            start_line = min(selection.start.line, len(lines) - 1)
            end_line = min(selection.end.line, len(lines) - 1)
            start = ls.columns.from_client(lines[start_line], selection.start.character)
            end = ls.columns.from_client(lines[end_line], selection.end.character)
            chosen = "\n".join(lines[start_line : end_line + 1])
            chosen = chosen[start:]
            chosen = chosen[: len(chosen) - (len(lines[end_line]) - end)]
            if chosen.strip():
                actions.append(
                    command_action(
                        "Append the selection to a new scratchpad entry",
                        APPEND_KIND,
                        commands.APPEND,
                        {"workspace": workspace_uri, "entry": chosen},
                        folder,
                    )
                )
        if only:
            actions = [
                a
                for a in actions
                if a.kind and any(a.kind == k or a.kind.startswith(k + ".") for k in only)
            ]
        return actions
