"""The server's state is owned by objects, and changed only through their methods.

Checked on the source, structurally: every dict, set or list an object in `server/` keeps is a
private attribute; no module in `server/` reaches into another object's private attributes; and
no handler module in `server/features/` assigns to another object's attributes or changes a
container it reaches through one (`ls.stale[uri] = ...`, `del ls.folders[path]`,
`ls.timers.pop(uri)`): it calls a method of the object that owns the container instead."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

SERVER = Path(__file__).resolve().parents[2] / "echoes_lsp" / "server"
FEATURES = SERVER / "features"
# pygls's own private attributes, which the server has to touch: the workspace it replaces
# (`EchoesServer.adopt_workspace`) and the writer that answers a frame pygls cannot read.
PYGLS_PRIVATE = {"_workspace", "_sync_kind", "_send_data"}
MUTATORS = {
    "add",
    "append",
    "clear",
    "discard",
    "extend",
    "insert",
    "pop",
    "popitem",
    "remove",
    "setdefault",
    "update",
}
CONTAINER_CALLS = {"dict", "set", "list", "defaultdict", "OrderedDict"}


def sources(folder: Path) -> Iterator[Tuple[str, ast.AST]]:
    for path in sorted(folder.rglob("*.py")):
        yield str(path.relative_to(SERVER)), ast.parse(path.read_text(encoding="utf-8"))


def is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def is_super(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def root(node: ast.AST) -> ast.AST:
    """`ls` of `ls.save_safety.stale[uri]`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


def through_attribute(node: ast.AST) -> bool:
    """Whether `node` is reached through an attribute of something other than `self`."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and not is_self(root(node))


def foreign_private(tree: ast.AST) -> List[str]:
    """Private attributes used on anything but `self` (or `super()`)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__") or name in PYGLS_PRIVATE:
            continue
        if not (is_self(node.value) or is_super(node.value)):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def foreign_changes(tree: ast.AST) -> List[str]:
    """Assignments, deletions and container changes made through another object's attributes."""
    found = []
    for node in ast.walk(tree):
        targets: List[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in MUTATORS and through_attribute(node.func.value):
                found.append(f"line {node.lineno}: {ast.unparse(node.func)}(...)")
            continue
        for target in targets:
            attribute = isinstance(target, ast.Attribute) and not is_self(root(target))
            if attribute or (isinstance(target, ast.Subscript) and through_attribute(target)):
                found.append(f"line {node.lineno}: {ast.unparse(target)}")
    return found


def is_container(value: ast.AST) -> bool:
    if isinstance(value, (ast.Dict, ast.Set, ast.List, ast.DictComp, ast.SetComp, ast.ListComp)):
        return True
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in CONTAINER_CALLS
    )


def public_containers(tree: ast.AST) -> List[str]:
    """`self.name = {}` (or a set, list, comprehension) with a public name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs = [(target, node.value) for target in node.targets]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            pairs = [(node.target, node.value)]
        else:
            continue
        for target, value in pairs:
            if (
                isinstance(target, ast.Attribute)
                and is_self(target.value)
                and not target.attr.startswith("_")
                and is_container(value)
            ):
                found.append(f"line {node.lineno}: {ast.unparse(target)}")
    return found


def problems(folder: Path, check: object) -> Dict[str, List[str]]:
    found: Dict[str, List[str]] = {}
    for name, tree in sources(folder):
        lines = check(tree)  # type: ignore[operator]
        if lines:
            found[name] = lines
    return found


def test_no_handler_module_changes_another_objects_state() -> None:
    assert problems(FEATURES, foreign_changes) == {}


def test_no_server_module_reaches_into_another_objects_private_attributes() -> None:
    assert problems(SERVER, foreign_private) == {}


def test_every_container_a_server_object_keeps_is_private() -> None:
    assert problems(SERVER, public_containers) == {}


def test_the_server_holds_one_object_per_concern() -> None:
    (tree,) = [tree for name, tree in sources(SERVER) if name == "echoes_server.py"]
    (server,) = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name == "EchoesServer"
    ]
    made: Set[Tuple[str, str]] = set()
    for node in ast.walk(server):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
        ):
            made.add((node.targets[0].attr, node.value.func.id))
    assert {
        ("save_safety", "SaveSafety"),
        ("large_documents", "LargeDocuments"),
        ("scheduler", "Scheduler"),
    } <= made


def test_the_checks_find_what_they_look_for() -> None:
    def changes(source: str) -> int:
        return len(foreign_changes(ast.parse(source)))

    assert changes("ls.stale[uri] = finding") == 1
    assert changes("ls.save_safety.stale[uri] = finding") == 1
    assert changes("del ls.folders[path]") == 1
    assert changes("ls.timers.pop(uri, None)") == 1
    assert changes("ls.large_jobs[uri].cancel()") == 0  # a method call, not a change
    assert changes("ls.lens_timer = None") == 1
    assert changes("folder.vault.listeners.append(listener)") == 1
    assert changes("self.cache[path] = lines; self.cache.pop(path); self.count = 1") == 0
    assert changes("found = []; found.append(1); result['uri'] = uri; del found[0]") == 0
    assert len(foreign_private(ast.parse("ls.save_safety._stale.clear()"))) == 1
    assert len(foreign_private(ast.parse("self._stale.clear(); super()._apply(x)"))) == 0
    assert len(public_containers(ast.parse("self.timers = {}\nself._timers = {}"))) == 1
    assert len(public_containers(ast.parse("self.jobs: Dict[str, int] = dict()"))) == 1
