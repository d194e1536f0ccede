"""`echoes-lsp init [--dry-run] [PATH]`: put a project under EchoesVault, told for people.

The runtime's `init` (JSON on stdout) stays the contract for agents; this command runs that same
`init`, then says which files it wrote or changed and what to do next. `--dry-run` runs the
runtime's `init` on a scratch copy of the paths the runtime manages, so the list is the runtime's
own answer, and the project is not touched.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from typing import Dict, List, NamedTuple, Sequence, Set

from ..engine.codes import docs_url
from ..runtime import echoes_vault as rules
from ..runtime_client import RuntimeCall, RuntimeFailure, run
from .editor_dir import EDITOR_FOLDERS, SHIPPED_EDITORS

# The top-level paths `init` manages (the runtime's own list for its Git readiness check).
MANAGED = (
    rules.VAULT_DIR,
    rules.RUNTIME_DIR,
    "AGENTS.md",
    "CLAUDE.md",
    ".claude",
    ".opencode",
    ".codex",
)
# Files the runtime keeps for this checkout only (Git-ignored), shown apart from durable files.
LOCAL_ONLY = (
    f"{rules.VAULT_DIR}/{rules.INDEX_NAME}",
    f"{rules.RUNTIME_DIR}/state.json",
    f"{rules.RUNTIME_DIR}/index-cache.json",
    f"{rules.RUNTIME_DIR}/lock",
)
FIRST_PAGE = """\
---
type: decision
stack: [python]
status: active
summary: Why we chose Postgres for the ledger.
---

# Ledger database

We chose Postgres for its transactional guarantees.
"""


class Changes(NamedTuple):
    created: List[str]
    changed: List[str]
    folders: Set[str]  # which of them are folders
    conflicts: List[str]
    invalid: List[str]  # pages that keep the runtime from building the index
    pages: int  # knowledge pages in the vault after init


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="echoes-lsp init",
        description="Put a project under EchoesVault with the bundled runtime's `init`, then say "
        "what was written and what to do next. Agents call the runtime's `init` (JSON) instead.",
    )
    parser.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="the project (default: here)"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="list the files init would write or change; write nothing",
    )
    return parser


def _digest(path: str) -> str:
    if os.path.islink(path):
        return "link:" + os.readlink(path)
    if os.path.isdir(path):
        return "dir"
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def snapshot(root: str) -> Dict[str, str]:
    """Relative path → content digest (or `dir`) of everything under the managed paths."""
    found: Dict[str, str] = {}
    for top in MANAGED:
        start = os.path.join(root, top)
        if not os.path.lexists(start):
            continue
        found[top] = _digest(start)
        if os.path.isdir(start) and not os.path.islink(start):
            for folder, dirs, files in os.walk(start):
                for name in dirs + files:
                    path = os.path.join(folder, name)
                    found[os.path.relpath(path, root).replace(os.sep, "/")] = _digest(path)
    return found


def compare(before: Dict[str, str], after: Dict[str, str]) -> Changes:
    created = sorted(p for p in after if p not in before)
    changed = sorted(p for p in after if p in before and before[p] != after[p])
    folders = {p for p, d in after.items() if d == "dir"}
    return Changes(created, changed, folders, [], [], count_pages(after))


def count_pages(found: Dict[str, str]) -> int:
    prefix = f"{rules.VAULT_DIR}/{rules.PAGES_DIR}/"
    return sum(
        1 for p, d in found.items() if p.startswith(prefix) and p.endswith(".md") and d != "dir"
    )


def _scratch_copy(root: str, scratch: str) -> None:
    for top in MANAGED:
        source = os.path.join(root, top)
        if not os.path.lexists(source):
            continue
        target = os.path.join(scratch, top)
        if os.path.isdir(source) and not os.path.islink(source):
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target, follow_symlinks=False)
    os.mkdir(os.path.join(scratch, ".git"))  # its own workspace, as the project is


def run_init(root: str, dry_run: bool) -> Changes:
    """Run the runtime's `init` on the project (or on a scratch copy); what it wrote."""
    if not dry_run:
        before = snapshot(root)
        result = run(RuntimeCall(root), ["init"])
        changes = compare(before, snapshot(root))
        return changes._replace(conflicts=_conflicts(result), invalid=_invalid(result))
    scratch = tempfile.mkdtemp(prefix="echoes-init-")
    try:
        _scratch_copy(root, scratch)
        before = snapshot(scratch)
        result = run(RuntimeCall(scratch), ["init"])
        changes = compare(before, snapshot(scratch))
        return changes._replace(conflicts=_conflicts(result), invalid=_invalid(result))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _invalid(result: object) -> List[str]:
    """The pages the runtime names as blocking the index (`indexRefresh.errors`)."""
    refresh = result.get("indexRefresh") if isinstance(result, dict) else None
    errors = refresh.get("errors") if isinstance(refresh, dict) else None
    if not isinstance(errors, list):
        return []
    return [str(e.get("file")) for e in errors if isinstance(e, dict) and e.get("file")]


def _conflicts(result: object) -> List[str]:
    if not isinstance(result, dict):
        return []
    adapters = result.get("agentAdapters") or {}
    return [
        str(c.get("path", c)) if isinstance(c, dict) else str(c)
        for c in adapters.get("conflicts", [])
    ]


def _shown_paths(paths: Sequence[str], changes: Changes) -> List[str]:
    """Files, and the folders that hold no listed path (a folder's files speak for it)."""
    listed = set(changes.created) | set(changes.changed)
    return [
        path + "/" if path in changes.folders else path
        for path in paths
        if not (path in changes.folders and any(o.startswith(path + "/") for o in listed))
    ]


def first_step(pages: int) -> List[str]:
    """A vault that already has pages needs no sample page."""
    if pages:
        noun = "page" if pages == 1 else "pages"
        return [
            f"  1. The vault has {pages} {noun} (EchoesVault/pages/); agents add and change pages "
            "through the runtime's `upsert`."
        ]
    lines = [
        "  1. Write a first page, EchoesVault/pages/ledger-database.md (agents write pages "
        "through the runtime's `upsert`):",
        "",
    ]
    lines.extend("       " + line if line else "" for line in FIRST_PAGE.rstrip("\n").split("\n"))
    lines.append("")
    return lines


def editor_step() -> List[str]:
    """Every shipped editor and where its guide is: the documentation's address (a path in the
    echoes-lsp repository means nothing in the user's project), and the command that finds an
    editor plugin installed with the package."""
    names = ", ".join(SHIPPED_EDITORS[:-1]) + " or " + SHIPPED_EDITORS[-1]
    guides = docs_url("editors/index.md") or "docs/editors/index.md of echoes-lsp"
    plugins = "|".join(EDITOR_FOLDERS)
    return [
        f"  3. Open it in your editor:   {names}",
        f"     Editor guides:            {guides}",
        f"     A plugin's folder:        echoes-lsp editor-dir {plugins}",
    ]


def render(changes: Changes, where: str, dry_run: bool) -> str:
    """What init wrote (or would write), then the next steps for a person."""
    out: List[str] = [
        f"echoes-lsp init --dry-run: nothing written; init in {where} would:"
        if dry_run
        else f"EchoesVault is set up in {where}:"
    ]
    verbs = ("would create", "would change") if dry_run else ("created", "changed")
    lines = []
    for verb, paths in zip(verbs, (changes.created, changes.changed)):
        for path in _shown_paths(paths, changes):
            local = "  (local to this checkout, Git-ignored)" if path in LOCAL_ONLY else ""
            lines.append(f"  {verb:<12} {path}{local}")
    out.extend(lines or ["  nothing to do: the project is already set up and up to date"])
    for conflict in changes.conflicts:
        out.append(f"  {'kept':<12} {conflict}  (not written by EchoesVault: merge it by hand)")
    if changes.invalid:
        count = len(changes.invalid)
        pages = "page is" if count == 1 else "pages are"
        out.append(
            f"\nThe index {'would not be' if dry_run else 'was not'} built: {count} {pages} "
            f"invalid ({', '.join(changes.invalid[:3])}{' …' if count > 3 else ''}); "
            "`echoes-lsp check` shows what to fix."
        )
    if dry_run:
        if lines:
            out.append("\nRun `echoes-lsp init` to do it.")
        return "\n".join(out) + "\n"
    durable = sorted(
        {p.split("/")[0] for p in changes.created + changes.changed if p not in LOCAL_ONLY}
    )
    out.append("\nNext steps:")
    out.extend(first_step(changes.pages))
    out.append("  2. Check the vault:          echoes-lsp check")
    out.extend(editor_step())
    if durable:
        out.append("  4. Commit the shared files:  git add " + " ".join(durable))
    return "\n".join(out) + "\n"


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    start = os.path.abspath(args.path)
    if not os.path.isdir(start):
        sys.stderr.write(f"echoes-lsp init: error: {args.path}: not a folder\n")
        return 2
    root = rules.find_workspace_root(os.path.realpath(start))
    try:
        changes = run_init(root, args.dry_run)
    except RuntimeFailure as error:
        sys.stderr.write(f"echoes-lsp init: error: {error.message}\n")
        return 2
    except OSError as error:
        sys.stderr.write(f"echoes-lsp init: error: {error}\n")
        return 2
    where = "this project" if root == os.path.realpath(os.getcwd()) else root
    sys.stdout.write(render(changes, where, args.dry_run))
    return 0
