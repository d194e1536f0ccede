"""Whether the editor should ask the runtime to `hydrate` after a page is saved.

A page saved by the editor is written without the runtime, which leaves the local `index.md` out
of date (EV403). With `echoes.index.hydrateOnSave` (on by default) the server then runs the
project runtime's `hydrate`, which regenerates the index under the lock; the server never writes
`index.md` itself. It does so only when that can succeed and changes nothing else: the vault is
writable, the project has its runtime, every page is valid (or the runtime refuses to build an
index), and the index is merely out of date; an index edited by hand (EV402) is left for a person
to look at, never overwritten unasked.
"""

from __future__ import annotations

import os

from ..engine import index_drift
from ..engine.findings import expected_index
from ..engine.vault import PAGE, Vault, read_text
from ..runtime import echoes_vault as rules
from ..runtime_client import project_runtime

# The log line with which the server starts a `hydrate` after a save (its start, never its end).
HYDRATE_LOG = "Refreshing index.md through the runtime's hydrate"


def hydrate_wanted(vault: Vault, path: str, enabled: bool, writable: bool) -> bool:
    """Whether saving the file at `path` should be followed by the runtime's `hydrate`."""
    if not enabled or not writable:
        return False
    entry = vault.entries.get(path)
    if entry is None or entry.kind != PAGE or entry.symlink:
        return False
    if project_runtime(vault.workspace) is None:
        return False
    expected = expected_index(vault)
    if expected is None:
        return False
    index = os.path.join(vault.root, rules.INDEX_NAME)
    if not os.path.lexists(index):
        return True  # a fresh clone: `hydrate` creates the local index
    text, _error = read_text(index)
    if text is None:
        return False
    drift = index_drift.compare(text, expected)
    return drift is not None and drift.code == index_drift.STALE
