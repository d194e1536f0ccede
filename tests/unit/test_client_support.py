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
