"""The runtime's public API: `__all__` names exactly what the package takes from it. A name the
package starts to use must be added there (and so be seen as a promise); a name it stops using
must leave it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterable, Set

import pytest

from echoes_lsp.runtime import echoes_vault

ROOT = Path(__file__).resolve().parents[2]
# The package, and the documentation's extensions that import it.
SOURCES = (ROOT / "echoes_lsp", ROOT / "docs" / "_ext")


def _runtime_aliases(tree: ast.AST) -> Set[str]:
    """Names under which a module binds the runtime (`from ..runtime import echoes_vault as rules`,
    `import echoes_lsp.runtime.echoes_vault as rules`)."""
    aliases: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("runtime"):
            aliases.update(a.asname or a.name for a in node.names if a.name == "echoes_vault")
        elif isinstance(node, ast.Import):
            aliases.update(
                a.asname for a in node.names if a.name.endswith(".echoes_vault") and a.asname
            )
    return aliases


def runtime_names(source: str, where: str = "<source>") -> Set[str]:
    """Every runtime name one module's source uses: `alias.X` and `from ...echoes_vault import X`.
    Module attributes such as `__file__` are not API. A bare use of the alias (passed on,
    `getattr`) would hide its names from this check, so it fails instead."""
    tree = ast.parse(source)
    aliases = _runtime_aliases(tree)
    found: Set[str] = set()
    through_attribute: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("echoes_vault"):
            assert all(a.name != "*" for a in node.names), f"{where}: star import of the runtime"
            found.update(a.name for a in node.names)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            through_attribute.add(id(node.value))
            if not (node.attr.startswith("__") and node.attr.endswith("__")):
                found.add(node.attr)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in aliases:
            assert id(node) in through_attribute, f"{where}:{node.lineno}: bare use of the runtime"
    return found


def used_names(roots: Iterable[Path] = SOURCES) -> Dict[str, Set[str]]:
    """Each runtime name the package uses, with the modules that use it."""
    users: Dict[str, Set[str]] = {}
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            where = str(path.relative_to(ROOT))
            for name in runtime_names(path.read_text(encoding="utf-8"), where):
                users.setdefault(name, set()).add(where)
    return users


def test_all_lists_exactly_the_names_the_package_uses() -> None:
    used = used_names()
    listed = set(echoes_vault.__all__)
    unlisted = {name: sorted(users) for name, users in used.items() if name not in listed}
    assert not unlisted, f"used from the runtime but missing from its __all__: {unlisted}"
    assert not listed - set(used), f"in the runtime's __all__ but unused: {listed - set(used)}"
    assert len(echoes_vault.__all__) == len(listed), "a name is listed twice in __all__"


def test_every_listed_name_exists() -> None:
    missing = [name for name in echoes_vault.__all__ if not hasattr(echoes_vault, name)]
    assert not missing


def test_the_walk_sees_each_form_of_use() -> None:
    source = (
        "from ..runtime import echoes_vault as rules\n"
        "from ...runtime.echoes_vault import Problem, nfc as fold\n"
        "import echoes_lsp.runtime.echoes_vault as ev\n"
        "def f():\n"
        "    return rules.page_key(rules.__file__), ev.BOM, other.text_sha256\n"
    )
    assert runtime_names(source) == {"Problem", "nfc", "page_key", "BOM"}


def test_a_bare_use_of_the_runtime_fails_the_walk() -> None:
    source = "from ..runtime import echoes_vault as rules\nname = getattr(rules, 'nfc')\n"
    with pytest.raises(AssertionError, match="bare use of the runtime"):
        runtime_names(source)
