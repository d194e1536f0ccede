"""`echoes-lsp check --watch`: re-check changed files and the files that link to them.

Changes are found by polling file metadata (modification time, size, inode, type) every
`--poll-interval` seconds with `os.scandir`/`os.lstat`: no dependency, the same behaviour on every
platform and filesystem (network mounts, containers, WSL), and symbolic links are never followed,
so link loops cannot trap the scan. A 10,000-page vault costs about one directory walk per
interval.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import stat
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set, Tuple

from ..engine.findings import diagnose, is_checked, vault_findings
from ..engine.vault import ASSET, PAGE, Entry
from ..runtime import echoes_vault as rules
from .checker import (
    EXIT_CLEAN,
    EXIT_FOUND,
    EXIT_USAGE,
    Progress,
    SourceCache,
    Target,
    Workspace,
    load_workspace,
    resolve_targets,
    to_diagnostics,
)
from .report import (
    Diagnostic,
    Report,
    clean,
    display_path,
    render_concise_diagnostics,
    render_json,
    render_text_diagnostics,
    render_text_footer,
    text_style,
    write,
)

# Files editors write next to the one being saved; never worth a re-check.
EDITOR_TEMPORARY = (
    "*~",
    "*.swp",
    "*.swo",
    "*.swx",
    "*.tmp",
    "*.temp",
    "4913",
    "*/4913",
    ".#*",
    "*/.#*",
    "#*#",
    "*/#*#",
    "*.crdownload",
)
TEMPORARY_SUFFIXES = ("~", ".swp", ".swo", ".swx", ".tmp", ".temp", ".crdownload")
CLEAR = "\x1b[2J\x1b[H"


def is_editor_temporary(name: str) -> bool:
    """The file-name test behind EDITOR_TEMPORARY, cheap enough for every file of every poll."""
    return (
        name.endswith(TEMPORARY_SUFFIXES)
        or name == "4913"
        or name.startswith(".#")
        or (len(name) > 1 and name[0] == "#" and name[-1] == "#")
    )


Stamp = Tuple[int, int, int, int]


@dataclass
class Impact:
    """What one batch of file changes can affect, gathered while the model takes it in."""

    # page keys whose pages were added, removed or changed in what other files can see
    keys: Set[str] = field(default_factory=set)
    # files read again into the model
    updated: Set[str] = field(default_factory=set)
    # a page's row of the generated index may have changed
    index_stale: bool = False
    assets_changed: bool = False


@dataclass
class Watched:
    """One workspace under watch: its vault, file stamps and the latest findings."""

    space: Workspace
    stamps: Dict[str, Stamp] = field(default_factory=dict)
    missing: bool = False
    # Reported diagnostics and their rendered text, per file, kept between cycles so that a
    # cycle only redoes the files it re-checked.
    diagnostics: Dict[str, List[Diagnostic]] = field(default_factory=dict)
    rendered: Dict[str, str] = field(default_factory=dict)
    ordered: List[str] = field(default_factory=list)

    def refresh(self, paths: Iterable[str], cwd: str) -> None:
        """Recompute the reported diagnostics of these files (after a re-check)."""
        for path in paths:
            self.rendered.pop(path, None)
            found = to_diagnostics(self.space, {}, cwd, [path])
            if found:
                found.sort(key=Diagnostic.sort_key)
                self.diagnostics[path] = found
            else:
                self.diagnostics.pop(path, None)
        self.ordered = sorted(self.diagnostics, key=lambda p: self.diagnostics[p][0].display)

    def scan(self) -> Dict[str, Stamp]:
        """Stamps of the files the vault model knows about: the same walk as `Vault.walk`
        (dot-names skipped except the marker, symbolic links never followed, configured excludes
        applied) without editors' temporary files, and with one `lstat` per file."""
        vault = self.space.vault
        cut = len(vault.root) + 1
        configured = bool(self.space.config.exclude)
        stamps: Dict[str, Stamp] = {}
        stack = [] if vault.reads_nothing else [vault.root]
        while stack:
            try:
                listing = os.scandir(stack.pop())
            except OSError:
                continue
            with listing:
                for item in listing:
                    name = item.name
                    if name[0] == "." and name != rules.MARKER_NAME:
                        continue
                    if is_editor_temporary(name):
                        continue
                    if configured and vault.excluded(item.path[cut:].replace(os.sep, "/")):
                        continue
                    try:
                        if item.is_dir(follow_symlinks=False):
                            stack.append(item.path)
                            continue
                        info = item.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    stamps[item.path] = (
                        info.st_mtime_ns,
                        info.st_size,
                        info.st_ino,
                        stat.S_IFMT(info.st_mode),
                    )
        return stamps

    def in_scope(self, path: str, entry: Entry) -> bool:
        target = self.space.target
        if not is_checked(entry):
            return False
        if target.whole:
            return True
        if path in target.files:
            return True
        return any(path.startswith(folder.rstrip(os.sep) + os.sep) for folder in target.folders)

    def check_all(self) -> None:
        space = self.space
        space.findings = {}
        space.scope([])
        space.run(Progress(0, False), 0)
        self.stamps = self.scan()
        self.diagnostics.clear()
        self.rendered.clear()

    def poll(self) -> Tuple[Set[str], Set[str]]:
        """(changed or new, removed) paths since the last poll."""
        current = self.scan()
        changed = {path for path, stamp in current.items() if self.stamps.get(path) != stamp}
        removed = set(self.stamps) - set(current)
        retyped = {
            path
            for path in changed
            if path in self.stamps and self.stamps[path][3] != current[path][3]
        }
        self.stamps = current
        return changed, removed | retyped

    def apply(self, changed: Set[str], removed: Set[str]) -> Set[str]:
        """Update the model and re-diagnose what the change can affect; returns the files
        re-checked (and removed)."""
        vault = self.space.vault
        impact = Impact()
        self._take_removed(removed, impact)
        added = any(path not in vault.entries for path in changed)
        self._take_changed(changed, impact)
        done = set(removed) | self._rediagnose(self._affected(impact))
        done.add(self._rediagnose_marker())
        if removed or added:
            self.space.files = [p for p, e in vault.entries.items() if self.in_scope(p, e)]
        return done

    def _take_removed(self, removed: Set[str], impact: Impact) -> None:
        """Drop removed files from the model and their findings from the report."""
        vault = self.space.vault
        for path in sorted(removed):
            entry = vault.entries.get(path)
            if entry is not None:
                impact.index_stale |= entry.kind == PAGE
                impact.assets_changed |= entry.kind == ASSET
            impact.keys |= vault.remove(path)
            self.space.findings.pop(path, None)

    def _take_changed(self, changed: Set[str], impact: Impact) -> None:
        """Read changed and new files into the model (one gone again meanwhile is removed)."""
        vault = self.space.vault
        for path in sorted(changed):
            if not os.path.lexists(path):
                impact.keys |= vault.remove(path)
                self.space.findings.pop(path, None)
                continue
            before = _index_row(vault.entries.get(path))
            impact.keys |= vault.update(path)
            entry = vault.entries.get(path)
            if entry is None:
                continue
            if entry.kind == PAGE:
                impact.index_stale |= _index_row(vault.ensure(entry)) != before
            impact.assets_changed |= entry.kind == ASSET
            impact.updated.add(path)

    def _affected(self, impact: Impact) -> Set[str]:
        """The files to diagnose again: those updated, those that link to a changed page, the
        pages of a changed key, every file with an asset link when assets changed, and the index
        when a page's row in it may have changed."""
        vault = self.space.vault
        recheck = impact.updated | vault.dependents(impact.keys)
        for key in impact.keys:
            recheck.update(vault.by_key.get(key, ()))
        if impact.assets_changed:
            recheck.update(
                path
                for path, entry in vault.entries.items()
                if entry.structure is not None
                and any(link.is_asset for link in entry.structure.links)
            )
        if impact.index_stale:
            recheck.add(os.path.join(vault.root, rules.INDEX_NAME))
        return recheck

    def _rediagnose(self, paths: Set[str]) -> Set[str]:
        """Diagnose these files again; returns those in scope (the others lose their findings)."""
        space = self.space
        done: Set[str] = set()
        for path in paths:
            entry = space.vault.entries.get(path)
            if entry is None or not self.in_scope(path, entry):
                space.findings.pop(path, None)
                continue
            done.add(path)
            found = diagnose(space.vault, path)
            if found:
                space.findings[path] = found
            else:
                space.findings.pop(path, None)
        return done

    def _rediagnose_marker(self) -> str:
        """The marker file's finding, checked after every change; returns the marker's path."""
        space = self.space
        marker_path = os.path.join(space.vault.root, rules.MARKER_NAME)
        space.findings.pop(marker_path, None)
        if space.marker:
            space.findings.update(vault_findings(space.vault))  # the marker, or a linked vault
        return marker_path


def _index_row(entry: Optional[Entry]) -> Tuple[object, ...]:
    """What a page contributes to the generated index."""
    if entry is None or entry.kind != PAGE:
        return ()
    info = entry.info
    if info is None:
        return (entry.stem, entry.read_error)
    return (entry.stem, info.valid, info.index_summary())


def _report(watched: List[Watched], duration: float, cwd: str) -> Report:
    diagnostics: List[Diagnostic] = []
    for item in watched:
        for path in item.ordered:
            diagnostics.extend(item.diagnostics[path])
    return Report(
        diagnostics,
        files_checked=sum(len(item.space.files) for item in watched),
        duration=duration,
        fail_on=watched[0].space.config.fail_on,
        workspaces=[item.space.target.workspace for item in watched],
    )


def _render(
    args: argparse.Namespace, watched: List[Watched], report: Report, sources: SourceCache
) -> str:
    if args.format == "json":
        return render_json(report, indent=None)
    style = text_style(sys.stdout, args.color)
    chunks: List[str] = []
    for item in watched:
        for path in item.ordered:
            chunk = item.rendered.get(path)
            if chunk is None:
                found = item.diagnostics[path]
                chunk = item.rendered[path] = (
                    render_concise_diagnostics(found)
                    if args.format == "concise"
                    else render_text_diagnostics(found, style, sources)
                )
            chunks.append(chunk)
    if args.format == "concise":
        count = len(report.diagnostics)
        chunks.append(f"{count} problems in {report.files_checked} files.\n")
    else:
        chunks.append(render_text_footer(report, style))
    return "".join(chunks)


def _emit(args: argparse.Namespace, header: str, body: str, tty: bool) -> None:
    if args.format == "json":
        write(sys.stdout, body)
        return
    write(sys.stdout, f"{CLEAR if tty else ''}{header}\n\n{body}")


def _stop(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def watch(args: argparse.Namespace, flags: Dict[str, object]) -> int:
    """Run until interrupted; the exit code reflects the last report."""
    previous = signal.signal(signal.SIGTERM, _stop)
    last_failed = False
    try:
        targets = _targets(args.paths)
        if targets is None:
            return EXIT_USAGE
        cwd = os.getcwd()
        tty = _is_tty()
        watched = [
            Watched(load_workspace(target, flags, args.isolated, EDITOR_TEMPORARY))
            for target in targets
        ]
        started = time.perf_counter()
        _check_all(watched, cwd)
        report = _report(watched, time.perf_counter() - started, cwd)
        last_failed = report.failed
        sources = SourceCache()
        header = _watching_header(watched, args.poll_interval, cwd)
        _emit(args, header, _render(args, watched, report, sources), tty)
        while True:
            time.sleep(args.poll_interval)
            update = _next_report(args, watched, sources, cwd)
            if update is None:
                continue
            report, header, body = update
            last_failed = report.failed
            _emit(args, header, body, tty)
    except KeyboardInterrupt:
        if _is_tty():
            sys.stdout.write("\n")
        return EXIT_FOUND if last_failed else EXIT_CLEAN
    finally:
        signal.signal(signal.SIGTERM, previous)


def _targets(paths: List[str]) -> Optional[List[Target]]:
    """The targets of the named paths; None (after saying why) when one is unusable."""
    errors: List[str] = []
    notes: List[str] = []
    targets = resolve_targets(paths, errors, notes)
    for message in errors:
        sys.stderr.write(f"echoes-lsp check: error: {message}\n")
    if errors or not targets:
        return None
    return targets


def _check_all(watched: List[Watched], cwd: str) -> None:
    """The first check of every workspace."""
    gc.disable()
    try:
        for item in watched:
            item.check_all()
            item.refresh(list(item.space.findings), cwd)
    finally:
        # The loaded model lives as long as the process: keep it out of every later
        # collection, which then only looks at what changes.
        gc.freeze()
        gc.enable()


def _watching_header(watched: List[Watched], interval: float, cwd: str) -> str:
    roots = ", ".join(display_path(item.space.vault.root, cwd) for item in watched)
    return f"[{time.strftime('%H:%M:%S')}] watching {roots} every {interval:g}s (Ctrl-C to stop)"


def _next_report(
    args: argparse.Namespace, watched: List[Watched], sources: SourceCache, cwd: str
) -> Optional[Tuple[Report, str, str]]:
    """One poll: when files changed, re-check what they affect and return the new report,
    its header and its rendered body; None when nothing changed."""
    changes = [(item, *item.poll()) for item in watched]
    if not any(changed or removed for _item, changed, removed in changes):
        return None
    detected = time.perf_counter()
    rechecked, touched = _apply_changes(changes, cwd)
    sources.forget(rechecked | set(touched))
    report = _report(watched, time.perf_counter() - detected, cwd)
    body = _render(args, watched, report, sources)
    # Detection to a rendered report, ready to print.
    elapsed_ms = (time.perf_counter() - detected) * 1000
    return report, _change_header(watched, touched, len(rechecked), elapsed_ms, cwd), body


def _apply_changes(
    changes: List[Tuple[Watched, Set[str], Set[str]]], cwd: str
) -> Tuple[Set[str], List[str]]:
    """Each workspace takes its changes; the files re-checked, and those that changed."""
    rechecked: Set[str] = set()
    touched: List[str] = []
    for item, changed, removed in changes:
        if changed or removed:
            done = item.apply(changed, removed)
            item.refresh(done, cwd)
            rechecked |= done
            touched.extend(sorted(changed | removed))
    return rechecked, touched


def _change_header(
    watched: List[Watched], touched: List[str], rechecked: int, elapsed_ms: float, cwd: str
) -> str:
    """What changed, how many files were re-checked and how fast, and any vault gone missing."""
    shown = ", ".join(clean(display_path(p, cwd)) for p in touched[:3])
    if len(touched) > 3:
        shown += f" and {len(touched) - 3} more"
    gone = [
        display_path(item.space.vault.root, cwd)
        for item in watched
        if not os.path.isdir(item.space.vault.root)
    ]
    header = (
        f"[{time.strftime('%H:%M:%S')}] changed: {shown}; "
        f"re-checked {rechecked} file{'s' if rechecked != 1 else ''} in "
        f"{elapsed_ms:.1f} ms"
    )
    if gone:
        header += f"\n{', '.join(gone)} is missing; waiting for it to come back"
    return header


def _is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False
