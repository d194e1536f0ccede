"""`textDocument/inlayHint`: after `[[page#^block]]`, the first line of that block; after a link
to a deprecated page, `deprecated → replacement`. Each is behind a setting
(`echoes.inlayHints.blockText`, `echoes.inlayHints.deprecated`); both are on by default."""

from __future__ import annotations

from bisect import bisect_left
from typing import Optional, Sequence

from lsprotocol import types

from ...engine.hint_texts import HintMaker
from ...engine.token_spans import links_between
from ...engine.vault import read_text
from ..echoes_server import EchoesServer
from ..lsp_convert import JsonText, hint_json, json_list, path_to_uri
from ..token_rows import page_hints
from . import Feature
from .document_context import load_analysed, locate
from .semantic_tokens import Kept, kept_document
from .view_refresh import follow_views

# A request for more lines than this is answered from kept rows (Neovim asks for the whole page);
# a smaller one from the model's structure, unless the document was edited since its analysis.
FEW_LINES = 200


class LinesOf:
    """Another file's lines: its open buffer, else the disk."""

    def __init__(self, ls: EchoesServer) -> None:
        self.ls = ls

    def __call__(self, path: str) -> Optional[Sequence[str]]:
        text = self.ls.document_text(path_to_uri(path))
        if text is None:
            text, _error = read_text(path)
        return text.split("\n") if text is not None else None


async def inlay_hints(ls: EchoesServer, params: types.InlayHintParams) -> Optional[JsonText]:
    settings = ls.settings
    if not (settings.hint_block_text or settings.hint_deprecated):
        return json_list(())
    uri = params.text_document.uri
    first, last = params.range.start.line, params.range.end.line
    if last - first > FEW_LINES or model_behind(ls, uri):
        kept = await kept_document(ls, uri)
        if kept is not None:
            return kept_hints(ls, kept, first, last)
    document = await load_analysed(ls, uri)
    if document is None:
        return None
    follow_views(ls, document.folder)
    links = links_between(document.structure.links, first, last)
    maker = HintMaker(
        document.vault, document.entry, document.structure, document.lines, LinesOf(ls)
    )
    found = maker.hints(links, settings.hint_block_text, settings.hint_deprecated)
    lines, columns = document.lines, ls.columns
    return json_list(
        hint_json(hint.line, columns.to_client(lines[hint.line], hint.column), hint.label)
        for hint in found
    )


def model_behind(ls: EchoesServer, uri: str) -> bool:
    """Whether an open document was edited since the model last analysed it."""
    text = ls.document_text(uri)
    located = locate(ls, uri) if text is not None else None
    return located is not None and located[0].vault.overlays.get(located[1]) is not text


def kept_hints(ls: EchoesServer, kept: Kept, first: int, last: int) -> JsonText:
    """The hints of the lines `first`..`last` of an open document, from the hints of all its
    lines, kept between requests."""
    settings = (ls.settings.hint_block_text, ls.settings.hint_deprecated)
    maker = HintMaker(kept.vault, kept.entry, kept.own, kept.lines, LinesOf(ls))
    answer = page_hints(kept.rows, kept.found, maker, settings, ls.columns)
    low = bisect_left(answer.numbers, first)
    high = bisect_left(answer.numbers, last + 1)
    return json_list(answer.json[low:high])


FEATURES = [
    Feature(
        types.TEXT_DOCUMENT_INLAY_HINT, inlay_hints, types.InlayHintOptions(resolve_provider=False)
    ),
]
