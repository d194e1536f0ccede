"""The shared diagnostic engine on small vaults built in temporary directories."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from echoes_lsp.engine.findings import diagnose
from echoes_lsp.engine.vault import Vault

VALID = "---\ntype: note\nstack: []\nstatus: {status}\nsummary: {summary}\n---\n\n{body}\n"


def make_vault(root: Path, pages: Dict[str, str], assets: List[str] = ()) -> Vault:
    vault_dir = root / "EchoesVault"
    (vault_dir / "pages").mkdir(parents=True)
    (vault_dir / "assets" / "img").mkdir(parents=True)
    (vault_dir / ".echoes-vault.json").write_text('{"protocolVersion": "1.0.0"}\n')
    for name, text in pages.items():
        (vault_dir / "pages" / name).write_text(text, encoding="utf-8")
    for name in assets:
        (vault_dir / "assets" / name).write_bytes(b"x")
    vault = Vault(str(root))
    vault.load()
    return vault


def codes_of(vault: Vault, root: Path, name: str) -> List[str]:
    return [f.code for f in diagnose(vault, str(root / "EchoesVault" / "pages" / name))]


def page(body: str, status: str = "active", summary: str = "A page.") -> str:
    return VALID.format(status=status, summary=summary, body=body)


def test_asset_links_resolve_by_name_by_path_in_assets_and_by_vault_path(tmp_path: Path) -> None:
    body = "![[d.png]] ![[img/e.png]] ![[assets/img/e.png]] ![[E.PNG]] ![[nope.png]]"
    vault = make_vault(tmp_path, {"a.md": page(body)}, ["d.png", "img/e.png"])
    assert codes_of(vault, tmp_path, "a.md") == ["EV302"]


def test_links_resolve_after_nfc_and_case_folding(tmp_path: Path) -> None:
    decomposed = "Cafe\u0301"
    vault = make_vault(
        tmp_path,
        {
            "café.md": page("x"),
            "a.md": page(f"[[{decomposed}]] [[CAFÉ]] [[café.md]] [[pages/café]]"),
        },
    )
    assert codes_of(vault, tmp_path, "a.md") == []


def test_deprecated_pages_and_links_to_them(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path,
        {
            "old.md": page("# Old\n\nNo callout, no replacement.", status="Deprecated"),
            "a.md": page("[[old]]"),
        },
    )
    assert codes_of(vault, tmp_path, "old.md") == ["EV310", "EV311"]
    assert codes_of(vault, tmp_path, "a.md") == ["EV301"]


def test_setext_underline_is_not_a_conflict_marker(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"a.md": page("Title\n=======\n\ntext")})
    assert codes_of(vault, tmp_path, "a.md") == []


def test_links_in_code_are_ignored(tmp_path: Path) -> None:
    body = "`[[a1]]` ``x [[a2]] x``\n\n```\n[[a3]]\n```\n\n~~~md\n[[a4]]\n~~~\n[[real-missing]]"
    vault = make_vault(tmp_path, {"a.md": page(body)})
    assert codes_of(vault, tmp_path, "a.md") == ["EV300"]


def test_links_into_the_same_page_check_its_headings_and_blocks(tmp_path: Path) -> None:
    body = "# Here\n\nA line. ^kept\n\n[[#Here]] [[#^kept]] [[#Gone]] [[#^lost]]"
    vault = make_vault(tmp_path, {"a.md": page(body)})
    findings = diagnose(vault, str(tmp_path / "EchoesVault" / "pages" / "a.md"))
    assert [(f.code, f.message) for f in findings] == [
        ("EV303", "heading `Gone` not found in `a`"),
        ("EV303", "block `^lost` not found in `a`"),
    ]
