"""What the server reads from the client's `initialize`: one record that every feature asks."""

from __future__ import annotations

from lsprotocol import types

from echoes_lsp.server.client_support import ClientSupport, preferred_markup


def params(capabilities: types.ClientCapabilities, name: str = "") -> types.InitializeParams:
    info = types.ClientInfo(name=name) if name else None
    return types.InitializeParams(capabilities=capabilities, client_info=info)


def test_a_client_that_declares_nothing_gets_no_request_it_cannot_answer() -> None:
    support = ClientSupport.of(params(types.ClientCapabilities()))
    assert not support.message_requests
    assert not support.show_document
    assert not support.apply_edit
    assert not support.rename_files
    assert support.hover_format == types.MarkupKind.Markdown
    assert not support.folding_lines_only and support.folding_limit is None


def test_the_folding_limits_are_read() -> None:
    caps = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            folding_range=types.FoldingRangeClientCapabilities(
                range_limit=5000, line_folding_only=True
            )
        )
    )
    support = ClientSupport.of(params(caps))
    assert support.folding_lines_only and support.folding_limit == 5000


def test_each_declared_ability_is_read_from_its_own_capability() -> None:
    caps = types.ClientCapabilities(
        window=types.WindowClientCapabilities(
            show_message=types.ShowMessageRequestClientCapabilities(),
            show_document=types.ShowDocumentClientCapabilities(support=True),
        ),
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                resource_operations=[types.ResourceOperationKind.Rename]
            ),
        ),
        text_document=types.TextDocumentClientCapabilities(
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.PlainText])
        ),
    )
    support = ClientSupport.of(params(caps, "Eglot"))
    assert support.name == "Eglot"
    assert support.message_requests and support.show_document
    assert support.apply_edit and support.rename_files
    assert support.hover_format == types.MarkupKind.PlainText


def test_the_hover_format_is_the_first_the_client_prefers() -> None:
    markdown, plain = types.MarkupKind.Markdown, types.MarkupKind.PlainText
    assert preferred_markup(None) == markdown
    assert preferred_markup([plain, markdown]) == plain
    assert preferred_markup([markdown, plain]) == markdown


def test_completion_documentation_without_a_listed_format_follows_the_hover_format() -> None:
    plain = [types.MarkupKind.PlainText]
    hover_only = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            hover=types.HoverClientCapabilities(content_format=plain)
        )
    )
    assert ClientSupport.of(params(hover_only)).documentation_format == types.MarkupKind.PlainText
    listed = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            hover=types.HoverClientCapabilities(content_format=plain),
            completion=types.CompletionClientCapabilities(
                completion_item=types.ClientCompletionItemOptions(
                    documentation_format=[types.MarkupKind.Markdown]
                )
            ),
        )
    )
    assert ClientSupport.of(params(listed)).documentation_format == types.MarkupKind.Markdown


def test_document_changes_are_declared_or_implied_by_file_renames() -> None:
    def edits(**declared: object) -> types.ClientCapabilities:
        return types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                workspace_edit=types.WorkspaceEditClientCapabilities(**declared)  # type: ignore[arg-type]
            )
        )

    assert not ClientSupport.of(params(edits())).document_changes
    assert ClientSupport.of(params(edits(document_changes=True))).document_changes
    renames = edits(resource_operations=[types.ResourceOperationKind.Rename])
    assert ClientSupport.of(params(renames)).document_changes


def test_an_unnamed_client_is_polled_and_gets_no_completion_command() -> None:
    """eglot 1.9 and ALE 3.3 send no clientInfo; eglot 1.9's watcher misses renames."""
    unnamed = ClientSupport.of(params(types.ClientCapabilities()))
    assert not unnamed.watcher_sees_renames and not unnamed.completion_commands
    named = ClientSupport.of(params(types.ClientCapabilities(), "Neovim"))
    assert named.watcher_sees_renames and named.completion_commands


def test_a_null_answer_to_show_document_reads_as_not_shown() -> None:
    """eglot 1.9 answers `window/showDocument` with null: the server reads "not shown" (and
    names the file in a message) instead of failing to read the answer."""
    from pygls.protocol import default_converter

    from echoes_lsp.server.transport import strict_converter

    converter = strict_converter(default_converter)()
    for answer, shown in ((None, False), ({"success": True}, True), ({"success": False}, False)):
        message = {"jsonrpc": "2.0", "id": 1, "result": answer}
        read = converter.structure(message, types.ShowDocumentResponse)
        assert read.result.success is shown


def test_refreshes_of_hints_and_tokens_are_read_from_their_capabilities() -> None:
    assert not ClientSupport.of(params(types.ClientCapabilities())).inlay_hint_refresh
    assert not ClientSupport.of(params(types.ClientCapabilities())).semantic_tokens_refresh
    caps = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            inlay_hint=types.InlayHintWorkspaceClientCapabilities(refresh_support=True),
            semantic_tokens=types.SemanticTokensWorkspaceClientCapabilities(refresh_support=False),
        )
    )
    support = ClientSupport.of(params(caps))
    assert support.inlay_hint_refresh and not support.semantic_tokens_refresh
