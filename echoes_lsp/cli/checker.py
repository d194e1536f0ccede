"""`echoes-lsp check [PATH ...]`: validate EchoesVault pages with the language server's engine.

Exit codes: 0 when nothing at or above `--fail-on` was found, 1 when something was (or a requested
fix could not be applied, or `--diff` has changes to show), 2 on a usage or configuration error or
when no readable vault was found.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from ..engine.codes import SEVERITY_RANK
from ..engine.findings import Finding, Policy, apply_policy, is_checked, vault_findings
from ..engine.vault import Vault, decode_text, find_workspace, linked_layout, read_text
from ..runtime import echoes_vault as rules
from ..runtime_client import RuntimeCall
from . import fix_command, parallel_check
from .project_config import FAIL_LEVELS, CheckConfig, check_selectors, resolve, split_list
from .report import (
    COLOR_CHOICES,
    NO_HYPERLINKS,
    Diagnostic,
    FixOutcome,
    RelatedSpot,
    Report,
    clean,
    display_path,
    render_concise,
    render_github,
    render_json,
    render_sarif,
    render_text,
    text_style,
    write,
)

FORMATS = ("text", "json", "sarif", "github", "concise")
PROGRESS_THRESHOLD = 1000
EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE = 0, 1, 2

EPILOG = """\
exit codes:
  0  no diagnostic at or above --fail-on
  1  diagnostics at or above --fail-on; with --fix, a fix that could not be applied;
     with --diff, changes to show
  2  usage or configuration error, missing path, or no readable EchoesVault/

{fixes}
configuration: [tool.echoes-lsp] in pyproject.toml and .echoes-lsp.toml at the workspace root
(keys select, ignore, fail-on, exclude, severity, secrets); flags override .echoes-lsp.toml,
which overrides pyproject.toml.
"""


NOTHING_FIXABLE = (
    f"--fix: nothing was fixable (it fixes only {', '.join(fix_command.FIXABLE)}; "
    "see `echoes-lsp check --help`)"
)


def _epilog() -> str:
    """The exit codes, what `--fix` changes (from the fixes' own descriptions), the configuration."""
    fixes = "\n".join(f"  {code}  {fix_command.DESCRIPTIONS[code]}" for code in fix_command.FIXABLE)
    return EPILOG.format(
        fixes=f"--fix changes only these (other codes are left to you):\n{fixes}\n"
    )


class UsageError(Exception):
    """Bad arguments or an unusable path: exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="echoes-lsp check",
        description="Validate an EchoesVault: a workspace, a vault, folders or single files.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="workspace, EchoesVault/ folder, sub-folder or file (default: the current "
        "workspace); `-` with --stdin-filename: standard input",
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format")
    parser.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colour and links to each code's page in text output (default auto: on a "
        "terminal, off with NO_COLOR, on with FORCE_COLOR; links off with "
        f"{NO_HYPERLINKS}=1)",
    )
    parser.add_argument(
        "--select", metavar="CODES", help="only these codes or prefixes (EV3,EV402)"
    )
    parser.add_argument("--ignore", metavar="CODES", help="leave out these codes or prefixes")
    parser.add_argument(
        "--fail-on",
        choices=FAIL_LEVELS,
        help="lowest severity that makes the exit code 1 (default: error)",
    )
    parser.add_argument(
        "--exclude",
        metavar="GLOBS",
        action="append",
        help="vault-relative globs to skip (comma-separated; repeatable)",
    )
    parser.add_argument(
        "--isolated", action="store_true", help="ignore pyproject.toml and .echoes-lsp.toml"
    )
    parser.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="check the text on standard input as if it were the file PATH",
    )
    parser.add_argument(
        "--fix",
        action="store_true",
        help="apply the safe fixes listed below, each written through the runtime",
    )
    parser.add_argument(
        "--diff", action="store_true", help="show the fixes as a unified diff; write nothing"
    )
    parser.add_argument(
        "--watch", action="store_true", help="keep running and re-check files as they change"
    )
    parser.add_argument(
        "--poll-interval",
        type=float,
        default=0.3,
        metavar="SECONDS",
        help="how often --watch looks for changes (default 0.3)",
    )
    parser.add_argument(
        "--python", metavar="PATH", help="interpreter that runs the project runtime for --fix"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="processes for a whole-vault check (default 0: one per CPU from "
        f"{parallel_check.MIN_PAGES:,} pages)",
    )
    return parser


# -- targets --------------------------------------------------------------------------------------


class Target:
    """What to check in one workspace."""

    def __init__(
        self,
        workspace: str,
        whole: bool = False,
        folders: Optional[List[str]] = None,
        files: Optional[List[str]] = None,
    ) -> None:
        self.workspace = workspace
        self.whole = whole
        self.folders: List[str] = folders if folders is not None else []
        self.files: List[str] = files if files is not None else []

    def __repr__(self) -> str:
        return f"Target({self.workspace!r}, whole={self.whole})"


def _canonical(path: str) -> str:
    """Absolute path with symbolic links resolved in the folders above it, not in the file."""
    absolute = os.path.abspath(path)
    head, tail = os.path.split(absolute)
    try:
        return os.path.join(os.path.realpath(head), tail) if tail else os.path.realpath(absolute)
    except (OSError, RuntimeError):
        return absolute


def _no_vault(path: str) -> str:
    candidate = os.path.join(
        path if os.path.isdir(path) else os.path.dirname(path), rules.VAULT_DIR
    )
    if os.path.lexists(candidate) and not os.path.isdir(candidate):
        return f"{display_path(candidate)} is not a readable folder"
    return (
        f"no {rules.VAULT_DIR}/ folder found at or above {display_path(path) or '.'}; "
        "to create one, run `echoes-lsp init` in the project"
    )


def through_link(raw: str) -> Optional[Tuple[str, str]]:
    """(workspace, link) when `raw` names a path in a folder of a vault's layout that is a
    symbolic link (`EchoesVault/` itself, or its `pages/`, `daily/`, `assets/`, `raw/`): such a
    path is reported by its link (EV503), never read through it. The folders above `raw` are
    walked as named, before any link in them is resolved."""
    absolute = os.path.abspath(raw)
    current = absolute
    while not os.path.isdir(os.path.join(current, rules.VAULT_DIR)):
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    linked = linked_layout(current)
    if linked is None or not (absolute == linked.path or absolute.startswith(linked.path + os.sep)):
        return None
    workspace = _canonical(current)
    return workspace, os.path.join(workspace, *linked.rel.split("/"))


def resolve_targets(paths: Sequence[str], errors: List[str], notes: List[str]) -> List[Target]:
    """Group the named paths by workspace; unusable paths are described in `errors`."""
    targets: Dict[str, Target] = {}
    if not paths:
        cwd = _canonical(os.getcwd())
        found = _workspace_of(cwd)
        if found is None:
            errors.append(_no_vault(cwd))
        else:
            targets[found] = Target(found, whole=True)
    for raw in paths:
        linked = through_link(raw)
        if linked is None:
            _add_path(targets, raw, errors, notes)
            continue
        workspace, link = linked
        targets.setdefault(workspace, Target(workspace)).files.append(link)
        if os.path.abspath(raw) != os.path.abspath(link):
            notes.append(f"{raw}: behind the symbolic link {display_path(link)}, not read")
    for workspace, target in targets.items():
        _forget_if_unreadable(workspace, target, errors)
    return [t for t in targets.values() if t.whole or t.folders or t.files]


def _workspace_of(folder: str) -> Optional[str]:
    """The workspace at or above a folder; None when there is none or it cannot be searched."""
    try:
        return find_workspace(folder)
    except (OSError, RuntimeError):
        return None


def _add_path(targets: Dict[str, Target], raw: str, errors: List[str], notes: List[str]) -> None:
    """One named path into the target of its workspace: the whole vault, a folder or a file of
    it; a path outside the vault is noted and skipped."""
    path = _canonical(raw)
    if not os.path.lexists(path):
        errors.append(f"{raw}: no such file or folder")
        return
    is_dir = os.path.isdir(path) and not os.path.islink(path)
    workspace = _workspace_of(path if is_dir else os.path.dirname(path))
    if workspace is None:
        errors.append(_no_vault(path))
        return
    target = targets.setdefault(workspace, Target(workspace))
    root = os.path.join(workspace, rules.VAULT_DIR)
    if is_dir and path in (workspace, root):
        target.whole = True
    elif path == root or path.startswith(root + os.sep):
        (target.folders if is_dir else target.files).append(path)
    else:
        notes.append(f"{display_path(path)}: not inside {rules.VAULT_DIR}/, skipped")


def _forget_if_unreadable(workspace: str, target: Target, errors: List[str]) -> None:
    """A vault folder that cannot be listed is an error, and nothing in it is checked; a linked
    one is reported by its link (EV503), never listed."""
    root = os.path.join(workspace, rules.VAULT_DIR)
    if os.path.islink(root):
        return
    try:
        with os.scandir(root):
            pass
    except OSError as error:
        errors.append(f"{display_path(root)}: cannot be read: {error.strerror or error}")
        target.whole, target.folders, target.files = False, [], []


# -- checking -------------------------------------------------------------------------------------


class Progress:
    """`checked 1200/10000 files` on stderr (the caller enables it for a terminal and more than
    1,000 pages)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled
        self.last = 0.0

    def update(self, done: int, what: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.05 and done < self.total:
            return
        self.last = now
        sys.stderr.write(f"\r\x1b[Kechoes-lsp: {what} {done}/{self.total} files")
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def policy_of(config: CheckConfig) -> Policy:
    return Policy(
        severity=config.severity,
        secrets=config.secrets,
        select=config.select,
        ignore=config.ignore,
    )


class Workspace:
    """One loaded vault and how to check it."""

    def __init__(self, target: Target, config: CheckConfig, vault: Vault, policy: Policy) -> None:
        self.target = target
        self.config = config
        self.vault = vault
        self.policy = policy
        self.files: List[str] = []
        self.marker = False
        self.findings: Dict[str, List[Finding]] = {}

    def scope(self, notes: List[str]) -> None:
        """The vault files to diagnose; whether EV700 is reported."""
        vault = self.vault
        target = self.target
        if target.whole:
            self.files = [p for p, e in vault.entries.items() if is_checked(e)]
            self.marker = True
            if not vault.by_key and not vault.reads_nothing:
                notes.append(
                    f"{display_path(vault.root)}: no pages in {rules.PAGES_DIR}/ (empty vault)"
                )
            return
        chosen: Set[str] = set()
        marker_path = os.path.join(vault.root, rules.MARKER_NAME)
        for folder in target.folders:
            if folder == vault.root:
                self.marker = True
            prefix = folder.rstrip(os.sep) + os.sep
            inside = [p for p, e in vault.entries.items() if p.startswith(prefix) and is_checked(e)]
            if not inside:
                notes.append(f"{display_path(folder)}: no vault files to check")
            chosen.update(inside)
        for path in target.files:
            if path in (marker_path, vault.root):  # the marker, or a linked EchoesVault/
                self.marker = True
                continue
            entry = vault.entries.get(path)
            if entry is None:
                notes.append(f"{display_path(path)}: excluded or not a vault file, skipped")
                continue
            chosen.add(path)
        self.files = sorted(chosen)

    def run(self, progress: Progress, offset: int, jobs: int = 1) -> None:
        vault = self.vault
        self.findings.update(
            parallel_check.diagnose_files(
                vault,
                self.files,
                jobs if self.target.whole else 1,
                lambda done: progress.update(offset + done, "checked"),
            )
        )
        if self.marker:
            self.findings.update(vault_findings(vault))


def load_workspace(
    target: Target,
    flags: Dict[str, object],
    isolated: bool,
    extra_exclude: Sequence[str] = (),
    lean: bool = False,
) -> Workspace:
    """The workspace's configuration and discovered vault; `lean` for a one-shot check."""
    config = resolve(target.workspace, flags, isolated)
    vault = Vault(target.workspace, exclude=(*config.exclude, *extra_exclude), lean=lean)
    vault.load()
    return Workspace(target, config, vault, policy_of(config))


def to_diagnostics(
    space: Workspace,
    fix_notes: Dict[Tuple[str, str], str],
    cwd: str,
    paths: Optional[Iterable[str]] = None,
    no_fix: Optional[Dict[Tuple[str, str], str]] = None,
) -> List[Diagnostic]:
    """Reported diagnostics (policy applied) of the workspace's findings, or of some paths."""
    fail_rank = SEVERITY_RANK[space.config.fail_on]
    out: List[Diagnostic] = []
    chosen = (
        space.findings.items()
        if paths is None
        else [(p, space.findings[p]) for p in paths if p in space.findings]
    )
    for path, findings in chosen:
        shown = display_path(path, cwd)
        for finding, level in apply_policy(findings, space.policy):
            related = (
                tuple(
                    RelatedSpot(
                        r.path, display_path(r.path, cwd), r.line, r.start, r.end, r.message
                    )
                    for r in finding.related
                )
                if finding.related
                else ()
            )
            out.append(
                Diagnostic(
                    path=path,
                    display=shown,
                    code=finding.code,
                    severity=level,
                    message=finding.message,
                    line=finding.line,
                    start=finding.start,
                    end_line=finding.end_line,
                    end=finding.end,
                    related=related,
                    fix=fix_notes.get((path, finding.code)) if fix_notes else None,
                    blocking=SEVERITY_RANK[level] >= fail_rank,
                    no_fix=no_fix.get((path, finding.code)) if no_fix else None,
                )
            )
    return out


def plan_fixes(space: Workspace) -> List[fix_command.Plan]:
    """Scheduled fix plans for the reported (policy-kept) fixable findings of one workspace."""
    plans: List[fix_command.Plan] = []
    index_path = os.path.join(space.vault.root, rules.INDEX_NAME)
    index_requested: Optional[str] = None
    for path, findings in sorted(space.findings.items()):
        if not any(f.code in fix_command.FIXABLE for f in findings):
            continue
        kept = {f.code for f, _level in apply_policy(findings, space.policy)}
        if path == index_path:
            index_requested = next(
                (c for c in fix_command.INDEX_FIXES if c in kept), index_requested
            )
        plan = fix_command.plan_page(space.vault, path, kept)
        if plan is not None:
            plans.append(plan)
    if not plans and not index_requested:
        return []
    return fix_command.schedule(space.vault, plans, index_requested)


def fix_notes_of(space: Workspace, plans: Sequence[fix_command.Plan]) -> Dict[Tuple[str, str], str]:
    if fix_command.refusal(space.vault, RuntimeCall(space.target.workspace)) is not None:
        return {}
    return {
        (plan.path, code): fix_command.DESCRIPTIONS[code]
        for plan in plans
        if plan.blocked is None
        for code in plan.codes
    }


def no_fix_notes_of(
    space: Workspace, plans: Sequence[fix_command.Plan]
) -> Dict[Tuple[str, str], str]:
    """Why `--fix` cannot apply the fix of a fixable finding: the vault refuses writes, or the
    runtime would refuse this page's write (the reason the plan is blocked)."""
    refused = fix_command.refusal(space.vault, RuntimeCall(space.target.workspace))
    return {
        (plan.path, code): refused or plan.blocked or ""
        for plan in plans
        if refused is not None or plan.blocked is not None
        for code in plan.codes
    }


class SourceCache:
    """Lines of the files shown in code frames, read once (buffers from overlays first)."""

    def __init__(self, overlays: Optional[Dict[str, str]] = None) -> None:
        self.overlays = overlays or {}
        self.lines: Dict[str, Optional[List[str]]] = {}

    def __call__(self, path: str) -> Optional[List[str]]:
        if path not in self.lines:
            text = self.overlays.get(path)
            if text is None:
                text, _error = read_text(path)
            # credential-shaped text is masked in place: frames keep its position, never its value
            self.lines[path] = rules.mask_secrets(text).split("\n") if text is not None else None
        return self.lines[path]

    def forget(self, paths: Iterable[str]) -> None:
        for path in paths:
            self.lines.pop(path, None)


def render(
    report: Report,
    fmt: str,
    levels: Callable[[str], str],
    overlays: Dict[str, str],
    color: str = "auto",
) -> str:
    if fmt == "json":
        return render_json(report)
    if fmt == "sarif":
        return render_sarif(report, levels)
    if fmt == "github":
        return render_github(report)
    if fmt == "concise":
        return render_concise(report)
    return render_text(report, text_style(sys.stdout, color), SourceCache(overlays))


def _flags(args: argparse.Namespace) -> Dict[str, object]:
    flags: Dict[str, object] = {}
    if args.select is not None:
        flags["select"] = check_selectors(split_list(args.select), "--select")
    if args.ignore is not None:
        flags["ignore"] = check_selectors(split_list(args.ignore), "--ignore")
    if args.fail_on is not None:
        flags["fail_on"] = args.fail_on
    if args.exclude:
        flags["exclude"] = tuple(g for value in args.exclude for g in split_list(value))
    return flags


def _read_stdin() -> Tuple[Optional[str], Optional[str]]:
    return decode_text(sys.stdin.buffer.read())


def _validate(args: argparse.Namespace) -> None:
    if args.stdin_filename is not None:
        if args.paths not in ([], ["-"]):
            raise UsageError("--stdin-filename takes no PATH arguments but `-`")
        if args.fix or args.diff or args.watch:
            raise UsageError("--stdin-filename cannot be combined with --fix, --diff or --watch")
    elif "-" in args.paths:
        raise UsageError(
            "`-` (standard input) needs --stdin-filename to name the file it stands for"
        )
    if args.watch and (args.fix or args.diff):
        raise UsageError("--watch cannot be combined with --fix or --diff")
    if args.watch and args.format in ("sarif", "github"):
        raise UsageError("--watch prints text, concise or json reports")
    if not 0 <= args.jobs <= parallel_check.MAX_EXPLICIT_JOBS:
        raise UsageError(
            f"--jobs must be 0 (automatic) or a number of processes up to "
            f"{parallel_check.MAX_EXPLICIT_JOBS}"
        )
    if not 0.05 <= args.poll_interval <= 60:
        raise UsageError("--poll-interval must be between 0.05 and 60 seconds")


def check(
    args: argparse.Namespace, flags: Dict[str, object], retain: Optional[List[object]] = None
) -> int:
    """One check of the named paths (or of standard input), with fixes when asked. The models
    are appended to `retain` when it is given."""
    started = time.perf_counter()
    cwd = os.getcwd()
    errors: List[str] = []
    notes: List[str] = []
    overlays: Dict[str, str] = {}
    targets, stdin_error = _targets_and_stdin(args, errors, notes, overlays)
    for message in errors:
        sys.stderr.write(f"echoes-lsp check: error: {clean(message)}\n")
    if not targets:
        return _nothing_to_check(errors, notes)
    spaces = _load_spaces(targets, flags, args.isolated, overlays, notes)
    if retain is not None:
        retain.append(spaces)
    # Fixes re-diagnose pages after writing them, so they keep every parse in this process.
    jobs = 1 if (args.fix or args.diff) else args.jobs
    total = _diagnose_all(spaces, jobs)
    if stdin_error is not None:
        _report_unreadable_stdin(spaces, _canonical(args.stdin_filename), stdin_error)
    outcomes: List[FixOutcome] = []
    diffs: List[str] = []
    diagnostics: List[Diagnostic] = []
    for space in spaces:
        diagnostics.extend(_fix_and_report(space, args, cwd, outcomes, diffs))
    diagnostics.sort(key=Diagnostic.sort_key)
    if args.fix and not outcomes:
        notes.append(NOTHING_FIXABLE)
    if args.diff:
        return _show_diffs(diffs, notes, outcomes, errors)
    report = Report(
        diagnostics,
        files_checked=total,
        duration=time.perf_counter() - started,
        fail_on=spaces[0].config.fail_on,
        notes=notes,
        fixes=outcomes,
        workspaces=[space.target.workspace for space in spaces],
    )
    return _show_report(report, args, spaces[0].policy, overlays, errors)


def _targets_and_stdin(
    args: argparse.Namespace, errors: List[str], notes: List[str], overlays: Dict[str, str]
) -> Tuple[List[Target], Optional[str]]:
    """The targets of the named paths, or of `--stdin-filename` with the text read from standard
    input as its buffer (in `overlays`); and why standard input could not be read."""
    if args.stdin_filename is None:
        return resolve_targets(args.paths, errors, notes), None
    targets = (
        resolve_targets([args.stdin_filename], errors, notes)
        if os.path.lexists(args.stdin_filename)
        else _stdin_target(args.stdin_filename, errors)
    )
    text, stdin_error = _read_stdin()
    if text is not None:
        overlays[_canonical(args.stdin_filename)] = text
    return targets, stdin_error


def _nothing_to_check(errors: List[str], notes: List[str]) -> int:
    for note in notes:
        sys.stderr.write(f"echoes-lsp check: {clean(note)}\n")
    if not errors:
        sys.stderr.write("echoes-lsp check: nothing to check\n")
    return EXIT_USAGE if errors else EXIT_CLEAN


def _load_spaces(
    targets: Sequence[Target],
    flags: Dict[str, object],
    isolated: bool,
    overlays: Dict[str, str],
    notes: List[str],
) -> List[Workspace]:
    """Each target's workspace, with the buffers open in it and its scope chosen."""
    # A one-shot check needs no backlink index, hashes or stamps (watch mode does).
    spaces = [load_workspace(target, flags, isolated, lean=True) for target in targets]
    for space in spaces:
        for path, text in overlays.items():
            if space.vault.rel(path) is not None:
                space.vault.open(path, text)
        space.scope(notes)
    return spaces


def _report_unreadable_stdin(spaces: Sequence[Workspace], path: str, error: str) -> None:
    """Standard input that could not be decoded stands for the file it names, as EV401."""
    for space in spaces:
        if path in space.files:
            space.findings[path] = [Finding("EV401", f"file {error}", 0, 0, 0, 0)]


def _show_diffs(
    diffs: Sequence[str], notes: Sequence[str], outcomes: Sequence[FixOutcome], errors: List[str]
) -> int:
    """`--diff`: the diffs on standard output, what could not be fixed on standard error."""
    write(sys.stdout, "".join(diffs))
    count = len(diffs)
    summary = f"{count} file{'s' if count != 1 else ''} would be changed by --fix"
    for line in [*notes, *(_fix_line(o) for o in outcomes), summary]:
        sys.stderr.write(clean(line) + "\n")
    if errors:
        return EXIT_USAGE
    return EXIT_FOUND if diffs else EXIT_CLEAN


def _show_report(
    report: Report,
    args: argparse.Namespace,
    policy: Policy,
    overlays: Dict[str, str],
    errors: List[str],
) -> int:
    """The report on standard output (notes and fixes on standard error when it is not text)."""
    if args.format != "text":
        for note in report.notes:
            sys.stderr.write(f"echoes-lsp check: {clean(note)}\n")
        for outcome in report.fixes:
            sys.stderr.write(_fix_line(outcome) + "\n")
    write(sys.stdout, render(report, args.format, policy.level, overlays, args.color))
    if errors:
        return EXIT_USAGE
    if report.failed or any(o.status in ("failed", "refused") for o in report.fixes):
        return EXIT_FOUND
    return EXIT_CLEAN


def _diagnose_all(spaces: Sequence[Workspace], jobs: int = 0) -> int:
    """Diagnose every workspace's scope, with progress for large vaults; files checked. `jobs`
    is the number of processes for a whole vault (0: automatic)."""
    total = sum(len(space.files) for space in spaces)
    pages = sum(len(space.vault.by_key) for space in spaces)
    progress = Progress(total, pages > PROGRESS_THRESHOLD and _stderr_tty())
    done = 0
    for space in spaces:
        # several processes on a large vault: `bench/check_bench.py --jobs 1,0` shows the gain
        count = jobs or parallel_check.auto_jobs(len(space.vault.by_key))
        if progress.enabled and space.target.whole and count == 1:
            remaining = len(space.vault.pending)
            while space.vault.parse_pending(250):
                progress.update(done + remaining - len(space.vault.pending), "read")
        space.run(progress, done, count)
        done += len(space.files)
    progress.done()
    return total


def _fix_and_report(
    space: Workspace,
    args: argparse.Namespace,
    cwd: str,
    outcomes: List[FixOutcome],
    diffs: List[str],
) -> List[Diagnostic]:
    """Preview (`--diff`) or apply (`--fix`) the workspace's fixes; its reported diagnostics."""
    plans = plan_fixes(space) if (args.fix or args.diff or space.findings) else []
    if args.diff and plans:
        refused = fix_command.refusal(space.vault, RuntimeCall(space.target.workspace))
        for plan in plans:
            shown = display_path(plan.path, cwd)
            if refused is not None:
                if plan.codes:
                    outcomes.append(FixOutcome(plan.path, shown, plan.codes, "refused", refused))
            elif plan.blocked is None:
                diffs.append(fix_command.unified_diff(plan, shown))
            else:
                outcomes.append(FixOutcome(plan.path, shown, plan.codes, "skipped", plan.blocked))
    if args.fix and plans:
        call = RuntimeCall(space.target.workspace, python=args.python)
        shown_paths = {plan.path: display_path(plan.path, cwd) for plan in plans}
        applied = fix_command.apply(space.vault, call, plans, shown_paths)
        outcomes.extend(applied)
        _recheck(space, [o.path for o in applied])
        plans = plan_fixes(space)
    return to_diagnostics(
        space, fix_notes_of(space, plans), cwd, no_fix=no_fix_notes_of(space, plans)
    )


def _fix_line(outcome: FixOutcome) -> str:
    from .report import fix_lines

    return fix_lines(Report([], 0, 0.0, "error", fixes=[outcome]))[0]


def _stdin_target(path: str, errors: List[str]) -> List[Target]:
    """A target for an unsaved buffer whose file does not exist yet."""
    linked = through_link(path)
    if linked is not None:
        return [Target(linked[0], files=[linked[1]])]
    canonical = _canonical(path)
    workspace = _workspace_of(os.path.dirname(canonical))
    if workspace is None:
        errors.append(_no_vault(os.path.dirname(canonical)))
        return []
    return [Target(workspace, files=[canonical])]


def _recheck(space: Workspace, paths: Sequence[str]) -> None:
    """After fixes: re-read what the runtime wrote and diagnose the scope again."""
    vault = space.vault
    for path in paths:
        vault.update(path)
    index = os.path.join(vault.root, rules.INDEX_NAME)
    if os.path.exists(index):
        vault.update(index)
    space.findings = {}
    space.run(Progress(0, False), 0)


def _stderr_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
