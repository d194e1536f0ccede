"""When a save is followed by the runtime's `hydrate`: only when it can succeed and only refreshes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from echoes_lsp.engine.vault import Vault
from echoes_lsp.server.hydrate_on_save import hydrate_wanted

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtime" / "echoes_vault.py"
PAGE = "---\ntype: note\nstack: []\nstatus: active\nsummary: {summary}\n---\n\n# Page\n"


def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(root), "init"],
        check=True,
        capture_output=True,
    )
    return root


def vault_with(root: Path, name: str, text: str) -> tuple[Vault, str]:
    path = root / "EchoesVault" / "pages" / name
    path.write_text(text, encoding="utf-8")
    vault = Vault(str(root))
    vault.load()
    return vault, str(path)


def test_a_valid_page_saved_by_hand_wants_hydrate(tmp_path: Path) -> None:
    vault, path = vault_with(project(tmp_path), "a.md", PAGE.format(summary="A."))
    assert hydrate_wanted(vault, path, enabled=True, writable=True)
    assert not hydrate_wanted(vault, path, enabled=False, writable=True)
    assert not hydrate_wanted(vault, path, enabled=True, writable=False)


def test_a_fresh_clone_without_an_index_wants_hydrate(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "EchoesVault" / "index.md").unlink()
    vault, path = vault_with(root, "a.md", PAGE.format(summary="A."))
    assert hydrate_wanted(vault, path, enabled=True, writable=True)


def test_no_hydrate_when_it_would_fail_or_overwrite_a_hand_edit(tmp_path: Path) -> None:
    root = project(tmp_path)
    vault, path = vault_with(root, "bad.md", "# no frontmatter\n")
    assert not hydrate_wanted(vault, path, True, True)  # the runtime builds no index
    (root / "EchoesVault" / "pages" / "bad.md").unlink()
    index = root / "EchoesVault" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\nMy note.\n", encoding="utf-8")
    vault, path = vault_with(root, "a.md", PAGE.format(summary="A."))
    assert not hydrate_wanted(vault, path, True, True)  # EV402: left for a person
    shutil.rmtree(root / ".echoes-vault")
    index.unlink()
    vault, path = vault_with(root, "a.md", PAGE.format(summary="A."))
    assert not hydrate_wanted(vault, path, True, True)  # no project runtime
    assert not hydrate_wanted(vault, str(index), True, True)  # not a page


def test_an_index_already_fresh_wants_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    vault, path = vault_with(root, "a.md", PAGE.format(summary="A."))
    subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(root), "hydrate"],
        check=True,
        capture_output=True,
    )
    vault = Vault(str(root))
    vault.load()
    assert not hydrate_wanted(vault, path, True, True)


def test_the_setting_is_on_by_default_and_checked() -> None:
    from echoes_lsp.server.client_settings import Settings, parse_settings

    assert Settings().hydrate_on_save is True
    assert parse_settings({"echoes": {"index": {"hydrateOnSave": False}}}).hydrate_on_save is False
    assert parse_settings({"echoes.index.hydrateOnSave": False}).hydrate_on_save is False
    bad = parse_settings({"echoes": {"index": {"hydrateOnSave": "yes"}}})
    assert bad.hydrate_on_save is True
    assert bad.errors == ("echoes.index.hydrateOnSave must be true or false",)
