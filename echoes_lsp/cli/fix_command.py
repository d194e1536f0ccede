"""`echoes-lsp check --fix` / `--diff`: plan safe mechanical fixes and apply them through the runtime.

Only four fixes are mechanical enough to apply unasked: dropping a byte-order mark that stands
before the frontmatter (EV100 of that cause only), joining a multi-line summary (EV201), adding the
DEPRECATED callout (EV310) and rebuilding an out-of-date or hand-edited index (EV403, EV402). Page
fixes are sent to
the project runtime's `upsert` with `expectedSha256` set to the hash of the text that was read, so
a page changed in between is refused by the runtime, never overwritten.

The runtime writes a page only when the whole vault would still produce an index (every page
valid, no unsafe or colliding names). Plans are therefore simulated on the vault model first and
scheduled in an order the runtime accepts; a plan that cannot be accepted is skipped with the
reason, and `--diff` shows only what `--fix` would write.
"""

from __future__ import annotations

import difflib
import os
from typing import Dict, List, Optional, Sequence, Set, Tuple

from ..engine import page_fixes
from ..engine.findings import expected_index
from ..engine.vault import PAGE, Vault, buffer_hash, read_text, starts_with_bom, without_bom
from ..runtime import echoes_vault as rules
from ..runtime_client import RuntimeCall, RuntimeFailure, run, runtime_for, warnings_of
from .report import FixOutcome

PAGE_FIXES = ("EV100", "EV201", "EV310")
INDEX_FIXES = ("EV402", "EV403")
FIXABLE = (*PAGE_FIXES, *INDEX_FIXES)
DESCRIPTIONS: Dict[str, str] = {
    "EV100": "write the page without the byte-order mark that stands before its frontmatter",
    "EV201": "join the summary onto one line",
    "EV310": "add the `> [!warning] DEPRECATED` callout",
    "EV402": "rebuild index.md with the runtime's `rebuild-index`",
    "EV403": "rebuild index.md with the runtime's `rebuild-index`",
}
MESSAGE_LIMIT = 300


class Plan:
    """One file's fix: the text read, the text to write, and why it cannot be applied (if so).

    An index plan with no codes is the runtime regenerating `index.md` as a consequence of page
    fixes (`upsert` always refreshes the index), not a requested EV402/EV403 fix.
    """

    def __init__(
        self,
        path: str,
        codes: Tuple[str, ...],
        old: str,
        new: str,
        expected: str,
        blocked: Optional[str] = None,
        index: bool = False,
    ) -> None:
        self.path = path
        self.codes = codes
        self.old = old
        self.new = new
        self.expected = expected
        self.blocked = blocked
        self.index = index

    def __repr__(self) -> str:
        return f"Plan({self.path!r}, {self.codes!r}, blocked={self.blocked!r})"


def _current_text(vault: Vault, path: str) -> Optional[str]:
    text = vault.overlays.get(path)
    if text is None:
        text, _error = read_text(path)
    return text


def _page_blocked(vault: Vault, path: str, new: str) -> Optional[str]:
    """Why the runtime would refuse this page's new text, whatever the rest of the vault holds."""
    entry = vault.entries.get(path)
    if entry is None or entry.kind != PAGE or entry.symlink:
        return "not a regular page"
    try:
        rules.normalize_page_name(os.path.basename(path))
    except rules.EchoesError as error:
        return f"unsafe filename ({error})"
    if len(vault.by_key.get(entry.key, [])) > 1:
        return "the page name collides with another page (EV501)"
    info = rules.analyze_page(new)
    if not info.valid:
        codes = ", ".join(sorted({p.code for p in info.problems}))
        return f"the page has other problems to fix by hand first ({codes})"
    if rules.find_secrets(new):
        return "the page holds credential-shaped text (EV600)"
    return None


def plan_page(vault: Vault, path: str, codes: Set[str]) -> Optional[Plan]:
    """The page fix for the given reported codes, or None when no fix applies."""
    wanted = [code for code in PAGE_FIXES if code in codes]
    if not wanted:
        return None
    old = _current_text(vault, path)
    if old is None:
        return None
    new = old
    applied: List[str] = []
    for code in wanted:
        if code == "EV100":
            changed: Optional[str] = without_bom(new)  # the only EV100 a machine can fix
        elif code == "EV201":
            changed = page_fixes.join_summary(new)
        else:
            changed = page_fixes.add_deprecated_callout(new)
        if changed is not None and changed != new:
            new = changed
            applied.append(code)
    if not applied:
        return None
    expected = buffer_hash(old, starts_with_bom(path))
    return Plan(path, tuple(applied), old, new, expected, _page_blocked(vault, path, new))


def index_blockers(vault: Vault, limit: int = 5) -> str:
    """The pages that keep the runtime from building an index, for a skip message."""
    vault.complete()
    found: List[str] = []
    for paths in vault.by_key.values():
        real = [p for p in paths if not vault.entries[p].symlink]
        for path in real:
            entry = vault.entries[path]
            codes: Set[str] = set()
            if len(real) > 1:
                codes.add("EV501")
            if entry.info is None:
                codes.add("EV401")
            else:
                codes.update(p.code for p in entry.info.problems)
            if rules.index_name_problem(entry.rel.rsplit("/", 1)[-1]) is not None:
                codes.add("EV500")
            if codes:
                found.append(f"{entry.rel} ({', '.join(sorted(codes))})")
    found.sort()
    more = f" and {len(found) - limit} more" if len(found) > limit else ""
    return ", ".join(found[:limit]) + more


def schedule(vault: Vault, plans: Sequence[Plan], index_requested: Optional[str]) -> List[Plan]:
    """Order page plans so that every write leaves a vault the runtime accepts, and mark the plans
    it cannot accept as blocked. Appends the index plan (requested by the index's reported code,
    EV402 or EV403, or as a consequence of page writes).

    Fixes only ever make pages valid, so: if the vault still cannot produce an index with every
    fix applied, no write succeeds; otherwise the pages invalid now are exactly the fixed ones
    that turn valid, and since the runtime writes one page at a time, at most one of them can go
    (first), followed by the pages that were valid all along.
    """
    pending = [p for p in plans if p.blocked is None]
    invalid_now = [p for p in pending if not _valid_on_record(vault, p.path)]
    saved = {p.path: vault.overlays.get(p.path) for p in pending}
    index: Optional[Plan] = None
    blocked_reason: Optional[str] = None
    try:
        for plan in pending:
            vault.open(plan.path, plan.new)
        if pending and expected_index(vault) is None:
            blocked_reason = (
                "the runtime writes a page only when every page of the vault is valid; "
                f"still invalid after the fixes: {index_blockers(vault)}"
            )
        elif len(invalid_now) > 1:
            names = ", ".join(sorted(os.path.basename(p.path) for p in invalid_now))
            blocked_reason = (
                "the runtime writes one page at a time and only when every other page is valid; "
                f"fix all but one of these by hand first: {names}"
            )
        elif pending or index_requested:
            index = _plan_index(vault, index_requested)
    finally:
        for plan in pending:
            _restore(vault, plan.path, saved[plan.path])
    if blocked_reason is not None:
        for plan in pending:
            plan.blocked = blocked_reason
        return list(plans)
    ordered = invalid_now + [p for p in pending if p not in invalid_now]
    result = ordered + [p for p in plans if p.blocked is not None]
    if index is not None:
        result.append(index)
    return result


def _valid_on_record(vault: Vault, path: str) -> bool:
    entry = vault.entry(path)
    return bool(entry and entry.info and entry.info.valid)


def _restore(vault: Vault, path: str, previous: Optional[str]) -> None:
    if previous is None:
        vault.close(path)
    else:
        vault.open(path, previous)


def _plan_index(vault: Vault, requested: Optional[str]) -> Optional[Plan]:
    path = os.path.join(vault.root, rules.INDEX_NAME)
    old = _current_text(vault, path)
    if old is None:
        return None
    new = expected_index(vault)
    if new is None or new == old:
        return None
    codes = (requested,) if requested else ()
    return Plan(path, codes, old, new, buffer_hash(old, starts_with_bom(path)), index=True)


def unified_diff(plan: Plan, display: str) -> str:
    """`--diff` output for one plan, git-style headers, with end-of-file newline markers.
    Credential-shaped text is masked on both sides (same lengths, so the diff is unchanged)."""
    old = rules.mask_secrets(plan.old).splitlines(keepends=True)
    new = rules.mask_secrets(plan.new).splitlines(keepends=True)
    out = []
    for line in difflib.unified_diff(old, new, f"a/{display}", f"b/{display}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def refusal(vault: Vault, call: RuntimeCall) -> Optional[str]:
    """Why no fix can be written to this vault at all, or None."""
    if vault.linked is not None:
        return f"the vault is read-only (EV503: {vault.linked.message})"
    if not vault.marker.writable:
        return f"the vault is read-only (EV700: {vault.marker.problem})"
    try:
        runtime_for(call.workspace, "upsert")
    except RuntimeFailure as error:
        return error.message
    return None


def _short(message: str) -> str:
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 1] + "…"


def apply(
    vault: Vault, call: RuntimeCall, plans: Sequence[Plan], display: Dict[str, str]
) -> List[FixOutcome]:
    """Send scheduled plans to the runtime in order: pages, then the index."""
    outcomes: List[FixOutcome] = []
    refused = refusal(vault, call)
    written = False
    for plan in plans:
        shown = display.get(plan.path, plan.path)
        if plan.blocked:
            outcomes.append(FixOutcome(plan.path, shown, plan.codes, "skipped", plan.blocked))
            continue
        if refused:
            if plan.codes:
                outcomes.append(FixOutcome(plan.path, shown, plan.codes, "refused", refused))
            continue
        if plan.index:
            outcomes.extend(_apply_index(call, plan, shown, written))
            continue
        try:
            result = run(
                call,
                ["upsert", "--payload", "-"],
                {
                    "filename": os.path.basename(plan.path),
                    "content": plan.new,
                    "expectedSha256": plan.expected,
                },
            )
        except RuntimeFailure as error:
            message = error.message
            if error.code == "stale-hash":
                message = "the file changed on disk after it was read; nothing was written"
            outcomes.append(FixOutcome(plan.path, shown, plan.codes, "failed", _short(message)))
            continue
        written = True
        outcomes.append(FixOutcome(plan.path, shown, plan.codes, "applied", _warned(result)))
    return outcomes


def _warned(result: object) -> str:
    """The warnings of a fix that took effect (a local state or index the runtime could not
    write after the page), for the line that reports it."""
    found = warnings_of(result)
    return _short("with warnings: " + " · ".join(found)) if found else ""


def _apply_index(call: RuntimeCall, plan: Plan, shown: str, written: bool) -> List[FixOutcome]:
    current, _error = read_text(plan.path)
    if current == plan.new:
        if written:
            return [
                FixOutcome(
                    plan.path, shown, plan.codes, "applied", "regenerated by the runtime's upsert"
                )
            ]
        return []
    if not plan.codes:
        return []
    try:
        result = run(call, ["rebuild-index"])
    except RuntimeFailure as error:
        return [FixOutcome(plan.path, shown, plan.codes, "failed", _short(error.message))]
    return [FixOutcome(plan.path, shown, plan.codes, "applied", _warned(result))]
