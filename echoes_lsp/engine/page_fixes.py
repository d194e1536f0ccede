"""Mechanical page fixes as pure text transformations, shared by quick fixes and `check --fix`.

Each returns the new text, or None when the fix does not apply. None of them writes anything:
callers save the result through the runtime with a hash check.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Tuple

from ..runtime import echoes_vault as rules

CALLOUT = "> [!warning] DEPRECATED"
# How a summary the user still has to write begins. The runtime accepts it (it is a valid summary),
# so the checker reports it (EV202) until it is replaced.
PLACEHOLDER = "TODO:"
FIELD_TEMPLATE = {
    "type": "note",
    "stack": "[]",
    "status": "active",
    "summary": rules.render_scalar(f"{PLACEHOLDER} one-line summary of this page."),
}


def _lines(text: str) -> List[str]:
    return text.split("\n")


def join_summary(text: str) -> Optional[str]:
    """Fold a multi-line summary (block scalar or continuation lines) onto one line."""
    lines = _lines(text)
    fm = rules.parse_frontmatter(lines)
    if fm is None or "summary" not in fm.fields:
        return None
    found = fm.fields["summary"]
    raw = found.raw.strip()
    parts: List[str] = []
    if raw and raw[0] not in "|>":
        value, error = rules.parse_scalar(raw) if raw[0] in "\"'" else (raw, None)
        parts.append(value if value is not None and error is None else raw)
    parts.extend(lines[number].strip() for number in found.continuation)
    joined = " ".join(" ".join(part.split()) for part in parts if part.strip())
    if not found.continuation and "\n" not in joined and raw[:1] not in ("|", ">"):
        value, _ = rules.parse_scalar(raw)
        if value is None or ("\n" not in value and "\r" not in value):
            return None
        joined = " ".join(value.split())
    new_line = f"summary: {rules.render_scalar(joined)}"
    drop = set(found.continuation)
    result = []
    for number, line in enumerate(lines):
        if number == found.line:
            result.append(new_line)
        elif number not in drop:
            result.append(line)
    return "\n".join(result)


def add_deprecated_callout(text: str) -> Optional[str]:
    """Open the body with the DEPRECATED callout (after a leading title heading, if any)."""
    info = rules.analyze_page(text)
    if info.frontmatter is None or info.frontmatter.close_line is None:
        return None
    from .markdown import has_deprecated_callout

    lines = _lines(text)
    body = info.body_line
    if has_deprecated_callout(lines, body):
        return None
    index = body
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index < len(lines) and lines[index].lstrip().startswith("# "):
        insert_at = index + 1
        block = ["", CALLOUT]
    else:
        insert_at = body
        block = ["", CALLOUT]
        if index >= len(lines) or lines[body:index] == []:
            block = ["", CALLOUT, ""] if index < len(lines) else ["", CALLOUT]
    new = lines[:insert_at] + block + lines[insert_at:]
    return "\n".join(new)


def set_field(text: str, key: str, value: str) -> Optional[str]:
    """Replace (or add) one frontmatter key's inline value."""
    lines = _lines(text)
    fm = rules.parse_frontmatter(lines)
    if fm is None or fm.close_line is None:
        return None
    rendered = f"{key}: {value}"
    if key in fm.fields:
        found = fm.fields[key]
        drop = set(found.continuation)
        out = [
            rendered if n == found.line else line for n, line in enumerate(lines) if n not in drop
        ]
        return "\n".join(out)
    return "\n".join(lines[: fm.close_line] + [rendered] + lines[fm.close_line :])


def mark_deprecated(text: str) -> Optional[str]:
    """`status: deprecated` plus the callout."""
    updated = set_field(text, "status", "deprecated")
    if updated is None:
        return None
    return add_deprecated_callout(updated) or updated


def placeholder_summary(stem: str) -> str:
    """The summary text `insert_missing_fields` puts in for a page named `stem`."""
    return (
        f"{PLACEHOLDER} summary of {stem}."
        if stem
        else f"{PLACEHOLDER} one-line summary of this page."
    )


def snippet_with_tab_stop(replacement: str, selected: str) -> Optional[str]:
    """`replacement` as an LSP snippet whose first tab stop selects `selected` (so the cursor lands
    on a placeholder), or None when `selected` is not in it. Snippet syntax is escaped."""
    at = replacement.find(selected) if selected else -1
    if at < 0:
        return None

    def escape(part: str) -> str:
        return part.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")

    after = replacement[at + len(selected) :]
    return escape(replacement[:at]) + "${1:" + escape(selected) + "}" + escape(after) + "$0"


def insert_missing_fields(text: str, stem: str = "") -> str:
    """Add every missing required field from a template; creates the block when there is none."""
    lines = _lines(text)
    fm = rules.parse_frontmatter(lines)
    template = dict(FIELD_TEMPLATE)
    if stem:
        template["summary"] = rules.render_scalar(placeholder_summary(stem))
    if fm is None:
        block = ["---", *(f"{k}: {v}" for k, v in template.items()), "---", ""]
        return "\n".join(block + lines)
    missing = [k for k in rules.REQUIRED_FIELDS if k not in fm.fields]
    if not missing:
        return text
    new_lines = [f"{k}: {template[k]}" for k in missing]
    if fm.close_line is None:
        return "\n".join(
            lines[: fm.open_line + 1] + [*new_lines, "---"] + lines[fm.open_line + 1 :]
        )
    return "\n".join(lines[: fm.close_line] + new_lines + lines[fm.close_line :])


class ConflictBlock(NamedTuple):
    start: int
    base: Optional[int]
    separator: int
    end: int


def conflict_blocks(text: str) -> List[ConflictBlock]:
    """Complete `<<<<<<<` … `=======` … `>>>>>>>` blocks, in order."""
    blocks: List[ConflictBlock] = []
    start: Optional[int] = None
    base: Optional[int] = None
    separator: Optional[int] = None
    for number, line in enumerate(_lines(text)):
        if line.startswith("<<<<<<<"):
            start, base, separator = number, None, None
        elif line.startswith("|||||||") and start is not None and separator is None:
            base = number
        elif line.rstrip() == "=======" and start is not None:
            separator = number
        elif line.startswith(">>>>>>>") and start is not None and separator is not None:
            blocks.append(ConflictBlock(start, base, separator, number))
            start = base = separator = None
    return blocks


def resolve_conflict(text: str, block: ConflictBlock, keep: str) -> str:
    """Keep `ours`, `theirs` or `both` sides of one conflict block."""
    lines = _lines(text)
    ours = lines[block.start + 1 : block.base if block.base is not None else block.separator]
    theirs = lines[block.separator + 1 : block.end]
    chosen = {"ours": ours, "theirs": theirs, "both": ours + theirs}[keep]
    return "\n".join(lines[: block.start] + chosen + lines[block.end + 1 :])


def new_page_text(stem: str) -> str:
    """A valid new page for a missing `[[stem]]`."""
    summary = f"{PLACEHOLDER} summary of {stem}."
    return (
        "---\n"
        f"type: note\nstack: []\nstatus: draft\nsummary: {rules.render_scalar(summary)}\n"
        f"---\n\n# {stem}\n"
    )


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, by binary search over C-speed slice comparisons."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    low, high = 0, min(len(a), len(b), limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle :] == b[len(b) - middle :]:
            low = middle
        else:
            high = middle - 1
    return low


def minimal_edit(old: str, new: str) -> Tuple[int, int, int, int, str]:
    """The smallest whole-line replacement turning `old` into `new`: (l0, c0, l1, c1, text)."""
    prefix = _common_prefix(old, new)
    prefix = old.rfind("\n", 0, prefix) + 1
    suffix = _common_suffix(old, new, min(len(old), len(new)) - prefix)
    cut = old.find("\n", len(old) - suffix)
    suffix = len(old) - cut if cut != -1 else 0
    suffix = min(suffix, len(new) - prefix)
    old_end = len(old) - suffix
    line0 = old.count("\n", 0, prefix)
    line1 = old.count("\n", 0, old_end)
    col1 = old_end - (old.rfind("\n", 0, old_end) + 1)
    return line0, 0, line1, col1, new[prefix : len(new) - suffix]
