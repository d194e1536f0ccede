"""`SaveSafety`: what a hash-checked save needs to know about each open page.

For every open page it keeps the base hash (the SHA-256 of the disk text the buffer was based on,
as the runtime's `hash` computes it, byte-order mark included) and, for a page whose disk text
changed behind the buffer's back, the EV701 finding the page shows until it is reloaded, saved
over with confirmation, or saved by the editor. A checked save sends the base hash as
`expectedSha256`, so the runtime refuses to overwrite a change it has not seen.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from ..engine.findings import Finding, Related
from ..engine.vault import buffer_hash, disk_hash, starts_with_bom, without_bom

# The runtime's error codes for an `expectedSha256` that no longer matches the disk.
STALE_CODES = ("stale-hash", "missing-hash")


def stale_finding(path: str) -> Finding:
    """EV701 on the first line, pointing at the disk version of `path`."""
    return Finding(
        "EV701",
        "page changed on disk since it was opened; saving through EchoesVault is refused until "
        "you reload it or confirm an overwrite",
        0,
        0,
        0,
        0,
        (Related(path, 0, 0, 0, "current disk version"),),
    )


def refused_as_stale(error: BaseException) -> bool:
    """Whether a failed `upsert` was the runtime refusing a base hash the disk no longer has."""
    data = getattr(error, "data", None) or {}
    return isinstance(data, dict) and data.get("code") in STALE_CODES


class SaveSafety:
    """Base hashes of open pages (None: a page that is new on disk) and their stale findings."""

    def __init__(self) -> None:
        self._base_hashes: Dict[str, Optional[str]] = {}
        self._stale: Dict[str, Finding] = {}

    def opened(self, uri: str, path: str, text: str) -> None:
        """An editor opens a file with its disk text: that text is the base of a later checked
        save. Hashing the text it sent (not the disk now) keeps a change that lands between the
        editor's read and its `didOpen` from being overwritten silently."""
        exists = os.path.lexists(path)
        self._base_hashes[uri] = buffer_hash(text, starts_with_bom(path)) if exists else None
        self._stale.pop(uri, None)

    def saved_by_editor(self, uri: str, path: str) -> None:
        """The editor wrote the buffer: the disk holds it, and it is the new base."""
        self._base_hashes[uri] = disk_hash(path)
        self._stale.pop(uri, None)

    def written(self, uri: str, sha256: Optional[str]) -> None:
        """A checked save went through; `sha256` is the hash the runtime reported writing."""
        self._base_hashes[uri] = sha256
        self._stale.pop(uri, None)

    def closed(self, uri: str) -> None:
        self._base_hashes.pop(uri, None)
        self._stale.pop(uri, None)

    def deleted(self, uri: str) -> None:
        """The page was deleted while open: a save of its buffer creates it anew."""
        self._base_hashes[uri] = None

    def overwrite_confirmed(self, uri: str, path: str) -> None:
        """The person chose to replace the disk version: its hash is the new base."""
        self._base_hashes[uri] = disk_hash(path)

    def refused(self, uri: str, path: str) -> None:
        """The runtime refused a save because the disk changed: the page shows EV701."""
        self._stale[uri] = stale_finding(path)

    def is_stale(self, uri: str) -> bool:
        return uri in self._stale

    def stale_finding(self, uri: str) -> Optional[Finding]:
        return self._stale.get(uri)

    def upsert_payload(self, uri: str, path: str, text: str) -> Dict[str, Any]:
        """The runtime's `upsert` payload for a checked save of `text` as the page at `path`.
        It is written without a byte-order mark, which the runtime would read as text before
        the frontmatter fence; the base hash still covers the mark the file has now."""
        payload: Dict[str, Any] = {"filename": os.path.basename(path), "content": without_bom(text)}
        base = self._base_hashes.get(uri)
        if base is not None:
            payload["expectedSha256"] = base
        return payload

    def check_disk(self, uri: str, path: str, buffer: Optional[str]) -> bool:
        """Compare the disk with the base of an open page (`buffer` its text, if open); returns
        whether its EV701 appeared or went away. A disk that holds exactly the buffer (the
        editor saved it) becomes the new base."""
        if uri not in self._base_hashes:
            return False
        current = disk_hash(path)
        if current == self._base_hashes[uri]:
            return self._stale.pop(uri, None) is not None
        if (
            buffer is not None
            and current is not None
            and buffer_hash(buffer, starts_with_bom(path)) == current
        ):
            self._base_hashes[uri] = current
            return self._stale.pop(uri, None) is not None
        if uri not in self._stale:
            self._stale[uri] = stale_finding(path)
            return True
        return False
