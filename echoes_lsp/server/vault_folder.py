"""`Folder`: one workspace with an `EchoesVault/`, its vault model, and what the status bar is told
about it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional

from ..engine.vault import Vault
from .lsp_convert import path_to_uri


@dataclass
class Folder:
    """One workspace with an `EchoesVault/`."""

    workspace: str
    vault: Vault
    loaded: asyncio.Event = field(default_factory=asyncio.Event)
    # Set once the page catalog and its search index are made, after `loaded`: the vault is
    # reported ready then.
    searchable: asyncio.Event = field(default_factory=asyncio.Event)
    # Whether code-lens refreshes already follow this vault's link graph.
    _lenses_followed: bool = field(default=False, init=False, repr=False)
    # Whether inlay hints and semantic tokens are already refreshed after this vault changes.
    _views_followed: bool = field(default=False, init=False, repr=False)

    @property
    def writable(self) -> bool:
        return self.vault.writable

    def follow_lenses(self, listener: Callable[[Optional[str]], None]) -> bool:
        """Have `listener` hear every change of this vault's files, once: False when code-lens
        refreshes already follow this vault."""
        if self._lenses_followed:
            return False
        self._lenses_followed = True
        self.vault.listeners.append(listener)
        return True

    def follow_views(self, listener: Callable[[Optional[str]], None]) -> bool:
        """Have `listener` hear every change of this vault's files, once: False when inlay-hint
        and semantic-token refreshes already follow this vault."""
        if self._views_followed:
            return False
        self._views_followed = True
        self.vault.listeners.append(listener)
        return True

    def status(self, open_problems: int = 0) -> Dict[str, Any]:
        """The `echoes/statusChanged` notification for this workspace. Two counts, each named
        for what it counts (docs/concepts.md): `issueCount`, the vault's files the runtime would
        refuse or cannot index, which decides `integrity`; and `openProblemCount`, the
        diagnostics its open documents show (what `check` reports, for those files)."""
        vault = self.vault
        if vault.linked is not None:
            integrity = "read-only"
        elif not vault.marker.present:
            integrity = "uninitialized"
        elif not vault.marker.writable:
            integrity = "read-only"
        else:
            integrity = "healthy"
        issues = count_issues(vault) if self.loaded.is_set() else 0
        if integrity == "healthy" and issues:
            integrity = "attention"
        return {
            "workspace": path_to_uri(self.workspace),
            "integrity": integrity,
            "issueCount": issues,
            "openProblemCount": open_problems,
            "pages": len(vault.by_key),
            "ready": self.searchable.is_set(),
        }


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def card_line(status: Dict[str, Any]) -> str:
    """What the editor counts, for the status card under the runtime's own counts: the two
    numbers of the status notification, each named for what it counts."""
    problems = plural(status["openProblemCount"], "problem", "problems")
    files = (
        "vault files healthy"
        if not status["issueCount"]
        else plural(status["issueCount"], "vault file needs", "vault files need") + " attention"
    )
    return (
        f"**In the editor:** {problems} in open files · {files} (invalid, conflicted, unreadable, "
        "stray or colliding). The integrity count above also covers the index, adapters, local "
        "state and Git; `echoes-lsp check` lists the problems of every file."
    )


def count_issues(vault: Vault) -> int:
    """Files with protocol-level problems, the same ones the runtime's health report counts."""
    issues = 0
    for entry in vault.entries.values():
        if (
            entry.symlink
            or entry.read_error
            or entry.conflicts
            or (entry.info is not None and entry.info.problems)
            or entry.kind == "stray"
        ):
            issues += 1
    issues += sum(len(paths) for paths in vault.by_key.values() if len(paths) > 1)
    return issues
