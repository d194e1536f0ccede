"""`FoldMemories`: the folds of each heading section of the last few documents asked for, and
their last answers.

An editor asks for a page's folding ranges again after every edit, and an edit changes one
section: `engine/folding.folds` reads again only the sections whose text is not in the
document's memory. A section's folds depend on its text alone, so a memory never goes stale;
it holds the sections of the text last folded, one page's worth, and is dropped when the
document closes or when more recently asked documents push it out. Most keystrokes change no
fold at all: the JSON of the last answer (whole lines) is kept too, and sent again when the
folds are the same.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, List, Optional, Tuple

from ..engine.folding import Fold, FoldMemory

# Memories are kept for this many documents, those asked most recently.
KEPT_DOCUMENTS = 8


class DocumentFolds:
    """One document's section memory, and its last answer: the folds and their JSON."""

    def __init__(self) -> None:
        self._sections: FoldMemory = {}
        self._answer: Optional[Tuple[List[Fold], str]] = None

    def sections(self) -> FoldMemory:
        return self._sections

    def answer(self, found: List[Fold], write: Callable[[List[Fold]], str]) -> str:
        """`found` as JSON (`write` writes it): the last answer's JSON when the folds are the
        same, as they are after most keystrokes."""
        if self._answer is None or self._answer[0] != found:
            self._answer = (found, write(found))
        return self._answer[1]


class FoldMemories:
    """One `DocumentFolds` per document (by URI), for the last `KEPT_DOCUMENTS` asked."""

    def __init__(self) -> None:
        self._documents: OrderedDict[str, DocumentFolds] = OrderedDict()

    def _document(self, uri: str) -> DocumentFolds:
        found = self._documents.get(uri)
        if found is None:
            found = self._documents[uri] = DocumentFolds()
            if len(self._documents) > KEPT_DOCUMENTS:
                self._documents.popitem(last=False)
        self._documents.move_to_end(uri)
        return found

    def memory(self, uri: str) -> FoldMemory:
        """The memory of a document, to pass to `folds`; an empty one when it is new."""
        return self._document(uri).sections()

    def answer(self, uri: str, found: List[Fold], write: Callable[[List[Fold]], str]) -> str:
        """`found`, a document's folds, as JSON (see `DocumentFolds.answer`)."""
        return self._document(uri).answer(found, write)

    def closed(self, uri: str) -> None:
        """The document closed: its memory goes (a reopened one may hold any text)."""
        self._documents.pop(uri, None)

    def __contains__(self, uri: object) -> bool:
        return uri in self._documents
