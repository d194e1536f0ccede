"""Small vaults on disk for unit tests."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterable, Optional

from echoes_lsp.engine.vault import Vault


def page(
    summary: str = "A page.",
    body: str = "",
    status: str = "active",
    type_: str = "note",
    stack: str = "[]",
) -> str:
    return (
        f"---\ntype: {type_}\nstack: {stack}\nstatus: {status}\nsummary: {summary}\n---\n\n{body}"
    )


def make_vault(
    root: Path,
    pages: Dict[str, str],
    files: Optional[Dict[str, str]] = None,
    assets: Iterable[str] = (),
    complete: bool = True,
) -> Vault:
    """A workspace at `root` with `EchoesVault/pages/<stem>.md` for each page, plus other vault
    files (`files`, vault-relative) and empty assets."""
    vault_dir = root / "EchoesVault"
    for folder in ("pages", "daily", "assets", "raw"):
        (vault_dir / folder).mkdir(parents=True, exist_ok=True)
    for stem, text in pages.items():
        (vault_dir / "pages" / f"{stem}.md").write_text(text, encoding="utf-8")
    for rel, text in (files or {}).items():
        target = vault_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for rel in assets:
        target = vault_dir / "assets" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"\x89PNG\r\n")
    vault = Vault(str(root))
    vault.load()
    if complete:
        vault.complete()
    return vault


def page_path(vault: Vault, stem: str) -> str:
    return os.path.join(vault.root, "pages", f"{stem}.md")
