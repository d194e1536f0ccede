"""The package's layers (`engine/` below `server/` and `cli/`, which never import each other) and
no module that imports itself through others: the server's state sits below the features, and
`server/app.py` (the setup point) sits above them. Every import counts, also one inside
a function, since a lazy import is how a cycle hides."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set

PACKAGE = Path(__file__).resolve().parents[2] / "echoes_lsp"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> Dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports(name: str, path: Path, known: Set[str]) -> Set[str]:
    """The package's modules that `name` imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: List[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base: Optional[str] = node.module
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            if base is None:
                continue
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            if target in known and target != name:
                found.add(target)
    return found


def cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One import cycle, if there is any."""
    state: Dict[str, int] = {}
    trail: List[str] = []

    def visit(node: str) -> Optional[List[str]]:
        state[node] = 1
        trail.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return trail[trail.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        trail.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def graph() -> Dict[str, Set[str]]:
    known = modules()
    return {name: imports(name, path, set(known)) for name, path in known.items()}


def test_the_package_has_no_import_cycle() -> None:
    assert cycle(graph()) is None


def test_only_the_command_line_imports_the_server_setup() -> None:
    edges = graph()
    assert "echoes_lsp.server.echoes_server" in edges["echoes_lsp.server.features.document_sync"]
    for name, targets in edges.items():
        if name != "echoes_lsp.__main__":  # the command line starts the server
            assert "echoes_lsp.server.app" not in targets, name


def layer(name: str) -> str:
    """`engine`, `server` or `cli` for a module inside one of them, else the module itself."""
    parts = name.split(".")
    return parts[1] if len(parts) > 2 else name


def test_the_engine_imports_neither_the_server_nor_the_cli_nor_the_runtime_client() -> None:
    for name, targets in graph().items():
        if layer(name) == "engine":
            wrong = {t for t in targets if layer(t) in ("server", "cli")}
            wrong |= {t for t in targets if t == "echoes_lsp.runtime_client"}
            assert not wrong, (name, wrong)


def test_the_server_and_the_cli_never_import_each_other() -> None:
    for name, targets in graph().items():
        other = {"server": "cli", "cli": "server"}.get(layer(name))
        if other:
            assert not {t for t in targets if layer(t) == other}, name


def test_every_module_sits_in_a_layer() -> None:
    """Only the dispatcher and the runtime client sit beside the three layers."""
    top = {name for name in modules() if name.count(".") == 1}
    assert top == {
        "echoes_lsp.__main__",
        "echoes_lsp.runtime_client",
        "echoes_lsp.engine",
        "echoes_lsp.server",
        "echoes_lsp.cli",
    }


def test_no_two_modules_share_a_name() -> None:
    names = [path.stem for path in PACKAGE.rglob("*.py") if path.stem != "__init__"]
    assert sorted(names) == sorted(set(names))


def test_the_cycle_finder_finds_cycles() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
