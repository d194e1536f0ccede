"""`echoes-lsp check --fix` / `--diff`: plan safe mechanical fixes and apply them through the runtime.

Only three fixes are mechanical enough to apply unasked: joining a multi-line summary (EV201),
adding the DEPRECATED callout (EV310) and rebuilding a stale index (EV402). Page fixes are sent to
the project runtime's `upsert` with `expectedSha256` set to the hash of the text that was read, so
a page changed in between is refused by the runtime, never overwritten.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Set, Tuple

import echoes_vault as rules

from . import fixes
from .diagnose import expected_index
from .report import FixOutcome
from .runtime_client import RuntimeCall, RuntimeFailure, run
from .vault import PAGE, Vault, read_text

PAGE_FIXES = ("EV201", "EV310")
INDEX_FIX = "EV402"
FIXABLE = (*PAGE_FIXES, INDEX_FIX)
DESCRIPTIONS: Dict[str, str] = {
    "EV201": "join the summary onto one line",
    "EV310": "add the `> [!warning] DEPRECATED` callout",
    "EV402": "rebuild index.md with the runtime's `rebuild-index`",
}


@dataclass
class Plan:
    """One file's fix: the text read, the text to write, and why it cannot be applied (if so)."""

    path: str
    codes: Tuple[str, ...]
    old: str
    new: str
    expected: str
    blocked: Optional[str] = None

    @property
    def is_index(self) -> bool:
        return self.codes == (INDEX_FIX,)


def _current_text(vault: Vault, path: str) -> Optional[str]:
    text = vault.overlays.get(path)
    if text is None:
        text, _error = read_text(path)
    return text


def _blocked(vault: Vault, path: str, new: str) -> Optional[str]:
    """Why the runtime would refuse the fixed page, so it is not even sent."""
    entry = vault.entries.get(path)
    if entry is None or entry.kind != PAGE or entry.symlink:
        return "not a regular page"
    name = os.path.basename(path)
    unsafe = rules.page_name_problem(name)
    if unsafe:
        return f"unsafe filename ({unsafe})"
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
        changed = fixes.join_summary(new) if code == "EV201" else fixes.add_deprecated_callout(new)
        if changed is not None and changed != new:
            new = changed
            applied.append(code)
    if not applied:
        return None
    return Plan(path, tuple(applied), old, new, rules.text_sha256(old), _blocked(vault, path, new))


def plan_index(vault: Vault, page_plans: Sequence[Plan]) -> Optional[Plan]:
    """The index that `rebuild-index` would write once the page plans are applied."""
    path = os.path.join(vault.root, rules.INDEX_NAME)
    old = _current_text(vault, path)
    if old is None:
        return None
    applicable = [p for p in page_plans if p.blocked is None]
    saved = {p.path: vault.overlays.get(p.path) for p in applicable}
    try:
        for plan in applicable:
            vault.open(plan.path, plan.new)
        new = expected_index(vault)
    finally:
        for plan in applicable:
            previous = saved[plan.path]
            if previous is None:
                vault.close(plan.path)
            else:
                vault.open(plan.path, previous)
    if new is None or new == old:
        return None
    return Plan(path, (INDEX_FIX,), old, new, rules.text_sha256(old))


def unified_diff(plan: Plan, display: str) -> str:
    """`--diff` output for one plan, git-style headers, with end-of-file newline markers."""
    old = plan.old.splitlines(keepends=True)
    new = plan.new.splitlines(keepends=True)
    lines = list(difflib.unified_diff(old, new, f"a/{display}", f"b/{display}"))
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def refusal(vault: Vault, call: RuntimeCall) -> Optional[str]:
    """Why no fix can be written to this vault at all, or None."""
    if not vault.marker.writable:
        return f"the vault is read-only (EV700: {vault.marker.problem})"
    try:
        from .runtime_client import runtime_for

        runtime_for(call.workspace, "upsert")
    except RuntimeFailure as error:
        return error.message
    return None


def apply(
    vault: Vault, call: RuntimeCall, plans: Sequence[Plan], display: Dict[str, str]
) -> List[FixOutcome]:
    """Send each plan to the runtime; pages first, then the index."""
    outcomes: List[FixOutcome] = []
    refused = refusal(vault, call)
    ordered = sorted(plans, key=lambda p: (p.is_index, p.path))
    for plan in ordered:
        shown = display.get(plan.path, plan.path)
        if plan.blocked:
            outcomes.append(FixOutcome(plan.path, shown, plan.codes, "skipped", plan.blocked))
            continue
        if refused:
            outcomes.append(FixOutcome(plan.path, shown, plan.codes, "refused", refused))
            continue
        try:
            if plan.is_index:
                run(call, ["rebuild-index"])
                outcomes.append(FixOutcome(plan.path, shown, plan.codes, "applied"))
                continue
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
                message = f"the file changed on disk after it was read; nothing was written ({message})"
            outcomes.append(FixOutcome(plan.path, shown, plan.codes, "failed", message))
            continue
        note = ""
        if isinstance(result, dict) and result.get("indexChanged"):
            note = "the runtime regenerated index.md"
        outcomes.append(FixOutcome(plan.path, shown, plan.codes, "applied", note))
    return outcomes
