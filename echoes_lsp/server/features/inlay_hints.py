"""`textDocument/inlayHint`: after `[[page#^block]]`, the first line of that block; after a link
to a deprecated page, `deprecated → replacement`. Each is behind a setting
(`echoes.inlayHints.blockText`, `echoes.inlayHints.deprecated`); both are on by default."""

from __future__ import annotations

from typing import List, Optional, Sequence

from lsprotocol import types

from ...engine.hint_texts import HintMaker
from ...engine.token_spans import links_between
from ...engine.vault import read_text
from ..echoes_server import EchoesServer
from ..lsp_convert import path_to_uri
from . import Feature
from .document_context import load_analysed
from .view_refresh import follow_views


class LinesOf:
    """Another file's lines: its open buffer, else the disk."""

    def __init__(self, ls: EchoesServer) -> None:
        self.ls = ls

    def __call__(self, path: str) -> Optional[Sequence[str]]:
        text = self.ls.document_text(path_to_uri(path))
        if text is None:
            text, _error = read_text(path)
        return text.split("\n") if text is not None else None


async def inlay_hints(
    ls: EchoesServer, params: types.InlayHintParams
) -> Optional[List[types.InlayHint]]:
    settings = ls.settings
    if not (settings.hint_block_text or settings.hint_deprecated):
        return []
    document = await load_analysed(ls, params.text_document.uri)
    if document is None:
        return None
    follow_views(ls, document.folder)
    links = links_between(document.structure.links, params.range.start.line, params.range.end.line)
    maker = HintMaker(
        document.vault, document.entry, document.structure, document.lines, LinesOf(ls)
    )
    found = maker.hints(links, settings.hint_block_text, settings.hint_deprecated)
    lines, columns = document.lines, ls.columns
    return [
        types.InlayHint(
            position=types.Position(
                line=hint.line, character=columns.to_client(lines[hint.line], hint.column)
            ),
            label=hint.label,
            padding_left=True,
        )
        for hint in found
    ]


FEATURES = [
    Feature(
        types.TEXT_DOCUMENT_INLAY_HINT, inlay_hints, types.InlayHintOptions(resolve_provider=False)
    ),
]
