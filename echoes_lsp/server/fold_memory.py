"""`FoldMemories`: the folds of each heading section of the last few documents asked for.

An editor asks for a page's folding ranges again after every edit, and an edit changes one
section: `engine/folding.folds` reads again only the sections whose text is not in the
document's memory. A section's folds depend on its text alone, so a memory never goes stale;
it holds the sections of the text last folded, one page's worth, and is dropped when the
document closes or when more recently asked documents push it out.
"""

from __future__ import annotations

from collections import OrderedDict

from ..engine.folding import FoldMemory

# Memories are kept for this many documents, those asked most recently.
KEPT_DOCUMENTS = 8


class FoldMemories:
    """One `FoldMemory` per document (by URI), for the last `KEPT_DOCUMENTS` asked."""

    def __init__(self) -> None:
        self._documents: OrderedDict[str, FoldMemory] = OrderedDict()

    def memory(self, uri: str) -> FoldMemory:
        """The memory of a document, to pass to `folds`; an empty one when it is new."""
        found = self._documents.get(uri)
        if found is None:
            found = self._documents[uri] = {}
            if len(self._documents) > KEPT_DOCUMENTS:
                self._documents.popitem(last=False)
        self._documents.move_to_end(uri)
        return found

    def closed(self, uri: str) -> None:
        """The document closed: its memory goes (a reopened one may hold any text)."""
        self._documents.pop(uri, None)

    def __contains__(self, uri: object) -> bool:
        return uri in self._documents
