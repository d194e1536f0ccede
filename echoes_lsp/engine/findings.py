"""Diagnostics for one vault file: the runtime's rules plus link, index and layout checks.

The server and `echoes-lsp check` both call `diagnose`, so they report the same codes and ranges.
"""

from __future__ import annotations

import heapq
import os
from functools import lru_cache
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..runtime import echoes_vault as rules
from . import index_drift, page_fixes
from .codes import CODES, SEVERITY_RANK, advise, matches
from .markdown import Link, heading_key, page_stem
from .vault import (
    ASSET,
    DAILY,
    INDEX,
    LEGACY_DAILY,
    MARKER,
    OTHER,
    PAGE,
    STRAY,
    Entry,
    Vault,
    starts_with_bom,
)


class Related(NamedTuple):
    path: str
    line: int
    start: int
    end: int
    message: str


class Finding(NamedTuple):
    """A diagnostic before it meets a protocol: 0-based lines, code-point columns. A tuple:
    thousands are made and sent between the processes of a parallel check."""

    code: str
    message: str
    line: int
    start: int
    end_line: int
    end: int
    related: Tuple[Related, ...] = ()

    @classmethod
    def of(cls, problem: rules.Problem) -> Finding:
        return cls(
            problem.code,
            advise(problem.code, problem.message),
            problem.line,
            problem.start,
            problem.end_line,
            problem.end,
        )


class Policy(NamedTuple):
    """Which codes are reported and how severe they are."""

    severity: Tuple[Tuple[str, str], ...] = ()
    secrets: bool = True
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()

    def level(self, code: str) -> str:
        for name, level in self.severity:
            if name.upper() == code:
                return level
        return CODES[code].severity

    def keeps(self, code: str) -> bool:
        if code == "EV600" and not self.secrets:
            return False
        if self.select and not matches(code, self.select):
            return False
        if self.ignore and matches(code, self.ignore):
            return False
        return self.level(code) != "off"


def _whole_line(code: str, message: str, line: int = 0, length: int = 0) -> Finding:
    return Finding(code, message, line, 0, line, length)


def _placeholder_finding(vault: Vault, entry: Entry) -> Optional[Finding]:
    """EV202: the summary still holds the placeholder a quick fix or a created page put there."""
    summary = entry.info.summary if entry.info is not None else None
    if summary is None or not summary.startswith(page_fixes.PLACEHOLDER):
        return None
    info = vault.page_info(entry)
    if info is None or info.frontmatter is None:
        return None
    found = info.frontmatter.fields.get("summary")
    if found is None:
        return None
    return Finding(
        "EV202",
        f"summary is still a placeholder (`{page_fixes.PLACEHOLDER} …`): say what this page is about",
        found.line,
        found.value_start,
        found.line,
        found.value_end,
    )


def _page_findings(vault: Vault, entry: Entry) -> List[Finding]:
    findings: List[Finding] = []
    info = entry.info
    if info is None:
        return findings
    findings.extend(Finding.of(p) for p in info.problems)
    placeholder = _placeholder_finding(vault, entry)
    if placeholder is not None:
        findings.append(placeholder)
    name = entry.rel.split("/")[-1]
    unsafe = rules.page_name_problem(name)
    if unsafe:
        findings.append(_whole_line("EV500", f"unsafe page filename: {unsafe}"))
    others = [p for p in vault.by_key.get(entry.key, []) if p != entry.path]
    if others:
        related = tuple(
            Related(p, 0, 0, 0, f"collides with {vault.entries[p].rel}") for p in sorted(others)
        )
        names = ", ".join(vault.entries[p].rel for p in sorted(others))
        findings.append(
            Finding(
                "EV501",
                f"page name `{entry.stem}` collides with {names} after NFC normalization and "
                "case folding",
                0,
                0,
                0,
                0,
                related,
            )
        )
    full = vault.page_info(entry) if info.deprecated else None
    if full is not None and full.frontmatter is not None:
        status = full.frontmatter.fields.get("status")
        line = status.line if status else 0
        if not entry.callout:
            findings.append(
                Finding(
                    "EV310",
                    "deprecated page should begin its body with `> [!warning] DEPRECATED`",
                    line,
                    0,
                    line,
                    status.value_end if status else 0,
                )
            )
        has_link = entry.structure is not None and any(
            not link.is_asset and link.page_stem and rules.page_key(link.page_stem) != entry.key
            for link in entry.structure.links
        )
        if not has_link:
            findings.append(
                Finding(
                    "EV311",
                    "deprecated page names no replacement `[[link]]`",
                    line,
                    0,
                    line,
                    status.value_end if status else 0,
                )
            )
    return findings


def _plain_link(vault: Vault, inner: str) -> bool:
    """Whether a `[[inner]]` link, wherever it stands, needs no diagnostic: it names an existing,
    current page, with no anchor, and cannot be an asset embed."""
    target = inner.partition("|")[0]
    if "#" in target or "." in target:
        return False
    stem = page_stem(target)
    if not stem:
        return False
    found = vault.page(stem)
    return found is not None and not found.deprecated


def _plain_links(vault: Vault, targets: List[str]) -> Dict[str, bool]:
    """`_plain_link` of every target (and of others asked before), kept for the vault as it
    is now."""
    plain = vault.cached_answers("plain-links")
    for inner in targets:
        if inner not in plain:
            plain[inner] = _plain_link(vault, inner)
    return plain


def _link_findings(vault: Vault, entry: Entry) -> List[Finding]:
    findings: List[Finding] = []
    for link in _links_to_check(vault, entry):
        if link.is_asset:
            if not vault.asset_exists(link.target):
                findings.append(
                    _at_target(link, "EV302", f"asset `{link.target}` is not in assets/")
                )
        else:
            findings.extend(_page_link_findings(vault, entry, link))
    return findings


def _links_to_check(vault: Vault, entry: Entry) -> Sequence[Link]:
    """Plain links have no findings. An unscanned page whose every candidate link is plain has
    none (its links are a subset of the candidates); otherwise only its other links are
    located, with the same positions a full scan gives."""
    structure = entry.structure
    if structure is None:
        return ()
    targets = structure.link_targets()
    if targets is None:
        return structure.links
    plain = _plain_links(vault, targets)
    if all(map(plain.__getitem__, targets)):
        return ()
    return structure.links_except(plain.__getitem__, targets)


def _page_link_findings(vault: Vault, entry: Entry, link: Link) -> List[Finding]:
    """A link to a missing page; to a deprecated one; to an anchor its page lacks. A link with
    no page name points into the page it sits in."""
    stem = link.page_stem
    if not stem:
        if entry.kind != PAGE:
            return []
        return _anchor_findings(entry, link)
    target = vault.page(stem)
    if target is None:
        return [_at_target(link, "EV300", f"no page named `{stem}` in pages/")]
    findings: List[Finding] = []
    if target.deprecated and target is not entry:
        message = f"`{stem}` is deprecated" + _replacement_hint(vault, target)
        findings.append(_at_target(link, "EV301", message))
    return findings + _anchor_findings(target, link)


def _anchor_findings(target: Entry, link: Link) -> List[Finding]:
    """EV303 when the heading or block a link names is not in its target."""
    structure = target.structure
    if structure is None:
        return []
    if link.heading:
        if not structure.has_heading(heading_key(link.heading)):
            message = f"heading `{link.heading}` not found in `{target.stem}`"
            return [_at_anchor(link, "EV303", message)]
    elif link.block is not None:
        if not structure.has_block(link.block):
            message = f"block `^{link.block}` not found in `{target.stem}`"
            return [_at_anchor(link, "EV303", message)]
    return []


def _at_target(link: Link, code: str, message: str) -> Finding:
    """A finding on the page or asset name of a link."""
    return Finding(code, message, link.line, link.target_start, link.line, link.target_end)


def _at_anchor(link: Link, code: str, message: str) -> Finding:
    """A finding on the `#heading` or `^block` of a link."""
    return Finding(code, message, link.line, link.anchor_start, link.line, link.anchor_end)


def replacement(vault: Vault, entry: Entry) -> Optional[Entry]:
    """The first page a deprecated page links to: its named replacement. For a page adopted
    from another process of a parallel check, the one that process found."""
    if entry.adopted:
        return vault.listed_page(entry.replaced_by) if entry.replaced_by else None
    if entry.structure is None:
        return None
    for link in entry.structure.links:
        if link.is_asset or not link.page_stem:
            continue
        target = vault.listed_page(link.page_stem)
        if target is not None and target is not entry:
            return target
    return None


def _replacement_hint(vault: Vault, entry: Entry) -> str:
    hints = vault.cached_answers("replacement-hints")
    hint = hints.get(entry.path)
    if hint is None:
        found = replacement(vault, entry)
        hint = hints[entry.path] = f"; use `[[{found.stem}]]` instead" if found else ""
    return hint


def expected_index(vault: Vault) -> Optional[str]:
    """The index the runtime would generate, or None when it would refuse to build one: a page is
    invalid or unreadable, has an unsafe name, or collides with another. Like the runtime, symbolic
    links are left out of the index rather than blocking it."""
    answers = vault.cached_answers("expected-index")
    if "text" not in answers:
        answers["text"] = _build_index(vault)
    return answers["text"]  # type: ignore[no-any-return]


def _build_index(vault: Vault) -> Optional[str]:
    """The runtime's own index build over records of the pages' analyses, or None when a page
    blocks it."""
    records, blockers = _index_records(vault)
    if blockers:
        return None
    text, _errors = rules.index_build(records)
    return text


def _index_records(vault: Vault) -> Tuple[List[rules.PageRecord], List[str]]:
    """The records of the pages the index would list, and the stems of the pages that keep the
    runtime from building it (invalid or unreadable)."""
    records: List[rules.PageRecord] = []
    blockers: List[str] = []
    for paths in vault.by_key.values():
        for path in paths:
            entry = vault.entries[path]
            if entry.symlink:
                continue
            record = rules.PageRecord(entry.rel.rsplit("/", 1)[-1])
            info = vault.ensure(entry).info
            if info is not None:
                record.apply_info(info)
            if info is None or record.errors:
                blockers.append(record.stem)
            else:
                records.append(record)
    return records, blockers


def blocked_index(vault: Vault) -> Optional[Tuple[str, List[str]]]:
    """While pages block the index: the index the valid pages would give, and the blocking
    pages' stems. It shows how far `index.md` is behind, though no index can be written yet."""
    answers = vault.cached_answers("blocked-index")
    if "value" not in answers:
        records, blockers = _index_records(vault)
        text, _errors = rules.index_build(records) if blockers else (None, [])
        answers["value"] = (text, sorted(blockers)) if text is not None else None
    return answers["value"]  # type: ignore[no-any-return]


def _index_drift(vault: Vault, text: str) -> Optional[index_drift.Drift]:
    expected = expected_index(vault)
    if expected is not None:
        return index_drift.compare(text, expected)
    blocked = blocked_index(vault)
    if blocked is None:
        return None
    drift = index_drift.compare(text, blocked[0], unknown=set(blocked[1]))
    if drift is None or drift.code != index_drift.STALE:
        return drift
    return drift._replace(message=index_drift.blocked_message(drift.message, blocked[1]))


def _index_findings(vault: Vault, entry: Entry) -> List[Finding]:
    text = vault.overlays.get(entry.path)
    if text is None:
        from .vault import read_text

        text, _error = read_text(entry.path)
    if text is None:
        return []
    drift = _index_drift(vault, text)
    if drift is None:
        return []
    width = len(text.split("\n")[drift.line])
    return [Finding(drift.code, drift.message, drift.line, 0, drift.line, width)]


def diagnose(vault: Vault, path: str) -> List[Finding]:
    """Every finding for one file of the vault, before severity policy."""
    entry = vault.entry(path)
    if entry is None:
        return []
    findings: List[Finding] = []
    if entry.symlink:
        linked = read_only_finding(vault) if vault.linked is not None else None
        if linked is not None and vault.linked is not None and vault.linked.path == entry.path:
            return [linked]
        target = os.readlink(entry.path) if os.path.islink(entry.path) else "?"
        return [_whole_line("EV503", f"symbolic link inside the vault (points to {target})")]
    if entry.read_error:
        return [_whole_line("EV401", f"file {entry.read_error}")]
    kind = entry.kind
    if kind == STRAY:
        what = "nested folder" if entry.rel.count("/") > 1 else "non-.md file"
        return [
            _whole_line(
                "EV502", f"{what} in pages/: only top-level `.md` files are knowledge pages"
            )
        ]
    if kind == PAGE:
        findings.extend(_page_findings(vault, entry))
        findings.extend(_link_findings(vault, entry))
        findings.extend(kept_findings(vault, path))
    else:
        findings.extend(Finding.of(p) for p in entry.conflicts)
        if kind in (DAILY, LEGACY_DAILY):
            findings.extend(_link_findings(vault, entry))
        if kind == LEGACY_DAILY:
            findings.append(
                _whole_line(
                    "EV504",
                    "legacy shared daily file: new entries go to unique files under "
                    "daily/YYYY-MM-DD/",
                )
            )
        if kind == INDEX:
            findings.extend(_index_findings(vault, entry))
    findings.extend(
        Finding(
            "EV600", f"credential-shaped text: {hit.kind}", hit.line, hit.start, hit.line, hit.end
        )
        for hit in entry.secrets
    )
    findings.sort(key=lambda f: (f.line, f.start, f.code))
    return findings


def hidden_bom_finding(vault: Vault, path: str, buffer: str) -> Optional[Finding]:
    """EV100 for an open page whose file begins with a byte-order mark that the editor keeps out
    of the buffer: the buffer looks valid, but the runtime refuses the file (see `decode_text`)."""
    if buffer.startswith(rules.BOM) or not vault.is_page(path) or not starts_with_bom(path):
        return None
    return Finding(
        "EV100",
        "page does not begin with a `---` frontmatter block on disk: the file begins with a "
        "byte-order mark (U+FEFF) that the editor hides; “Save through EchoesVault” writes the "
        "page without it",
        0,
        0,
        0,
        0,
    )


def read_only_finding(vault: Vault) -> Optional[Finding]:
    """Why the vault is read-only for this tool, if it is: a folder of its layout that is a
    symbolic link (EV503, which the runtime's writers refuse), else its marker (EV700)."""
    linked = vault.linked
    if linked is None:
        return marker_finding(vault)
    target = os.readlink(linked.path) if os.path.islink(linked.path) else "?"
    unread = ", and nothing in it is read" if linked.is_vault else ""
    return _whole_line(
        "EV503",
        f"{linked.message} (it points to {target}): the vault is read-only for this tool{unread}",
    )


def marker_finding(vault: Vault) -> Optional[Finding]:
    """EV700 when the marker is missing or unsupported (not read through a linked vault)."""
    if vault.marker.writable or vault.reads_nothing:
        return None
    return Finding(
        "EV700",
        f"{vault.marker.problem}: the vault is read-only for this tool",
        vault.marker.line,
        0,
        vault.marker.line,
        0,
    )


def is_checked(entry: Entry) -> bool:
    """Whether a whole-vault check diagnoses this file (assets and non-Markdown files are not)."""
    return entry.symlink or entry.special is not None or entry.kind not in (ASSET, OTHER, MARKER)


def checked_paths(vault: Vault) -> List[str]:
    """The files a whole-vault check diagnoses, in the order of their vault-relative paths."""
    ordered = sorted(vault.entries.items(), key=lambda item: item[1].rel)
    return [path for path, entry in ordered if is_checked(entry)]


def diagnose_vault(vault: Vault) -> Dict[str, List[Finding]]:
    """Findings for every file with any, plus EV700 on the marker path (or EV503 on a linked
    `EchoesVault/`)."""
    vault.complete()
    results: Dict[str, List[Finding]] = {}
    for path in checked_paths(vault):
        findings = diagnose(vault, path)
        if findings:
            results[path] = findings
    results.update(vault_findings(vault))
    return results


def vault_findings(vault: Vault) -> Dict[str, List[Finding]]:
    """The findings about the vault as a whole, by the path they stand on: EV700 on the
    marker, or EV503 on `EchoesVault/` when it is a symbolic link (a linked folder inside it
    has its own entry, and the EV503 of `diagnose`); EV702 on the marker for a journal kept
    aside, and on each deleted page whose interrupted `end`'s version was kept."""
    if vault.reads_nothing:
        linked = read_only_finding(vault)
        return {vault.root: [linked]} if linked is not None else {}
    found: Dict[str, List[Finding]] = {}
    marker = marker_finding(vault)
    if marker is not None:
        found[os.path.join(vault.root, rules.MARKER_NAME)] = [marker]
    for path in _kept_by_path(vault):
        entry = vault.entries.get(path)
        if entry is None or entry.kind != PAGE:  # a page's own EV702 comes with `diagnose`
            found.setdefault(path, []).extend(kept_findings(vault, path))
    return found


def _kept_by_path(vault: Vault) -> Dict[str, List[str]]:
    """The kept versions by the path they are reported on: a page's, whether or not it still
    exists, or the marker's for a journal that could not be read."""
    answers = vault.cached_answers("kept")
    if "value" not in answers:
        by_path: Dict[str, List[str]] = {}
        for rel, name in vault.kept:
            where = rules.MARKER_NAME if name == rules.JOURNAL_NAME else f"{rules.PAGES_DIR}/{name}"
            by_path.setdefault(os.path.join(vault.root, *where.split("/")), []).append(rel)
        answers["value"] = by_path
    return answers["value"]  # type: ignore[no-any-return]


def kept_findings(vault: Vault, path: str) -> List[Finding]:
    """EV702 for each version kept aside that `path` stands for (see `_kept_by_path`): nothing
    was lost, but a person has to merge it or throw it away."""
    kept = _kept_by_path(vault).get(path)
    if not kept:
        return []
    if os.path.basename(path) == rules.MARKER_NAME:
        what = (
            "an `end` journal that could not be read was moved to `{}`; nothing was rolled "
            "forward from it: look at it, then delete it"
        )
    elif path in vault.entries:
        what = (
            "an interrupted `end`'s version of this page is kept at `{}`: the page changed after "
            "that `end` was recorded, so it was not written over. Compare the two, merge by "
            "hand, then delete the kept file"
        )
    else:
        what = (
            "this page was deleted after an interrupted `end` was recorded; that `end`'s version "
            "of it is kept at `{}`: save it again if it is wanted, then delete the kept file"
        )
    return [_whole_line("EV702", what.format(rel)) for rel in kept]


def apply_policy(findings: Sequence[Finding], policy: Policy) -> List[Tuple[Finding, str]]:
    """Drop findings the policy turns off; attach each kept finding's severity. A message that
    quotes credential-shaped text (a link target, a name) has it masked: every surface that
    reports findings (the server, `check`) passes through here."""
    decided = []
    for finding in findings:
        level = _reported_level(policy, finding.code)
        if level is not None:
            message = rules.mask_secrets(finding.message)
            if message != finding.message:
                finding = finding._replace(message=message)
            decided.append((finding, level))
    return decided


DEFAULT_LIMIT = 1000


def cap(decided: Sequence[Tuple[Finding, str]], limit: int) -> List[Tuple[Finding, str]]:
    """At most `limit` findings for one document, the most severe first; the rest become one
    summary finding at the first of them, so an editor never receives a flood (a page of
    200,000 broken links would otherwise send 200,000 diagnostics). `limit` 0 keeps all."""
    if limit <= 0 or len(decided) <= limit:
        return list(decided)
    # nsmallest, not a sort of every finding: its loop lets a worker thread give way to the
    # event loop (bench/large_page_bench.py), and it equals sorted(...)[:limit].
    kept = heapq.nsmallest(
        limit, decided, key=lambda item: (-SEVERITY_RANK[item[1]], item[0].line, item[0].start)
    )
    chosen = {id(item) for item in kept}
    hidden = [item for item in decided if id(item) not in chosen]
    counts: Dict[str, int] = {}
    for finding, _level in hidden:
        counts[finding.code] = counts.get(finding.code, 0) + 1
    first = min(hidden, key=lambda item: (item[0].line, item[0].start))[0]
    code = max(counts, key=lambda name: (counts[name], name))
    by_code = ", ".join(f"{name} ×{counts[name]:,}" for name in sorted(counts))
    summary = Finding(
        code,
        f"{len(hidden):,} more diagnostics in this document are not shown ({by_code}); "
        f"the limit is echoes.diagnostics.maxPerDocument = {limit:,}",
        first.line,
        first.start,
        first.end_line,
        first.end,
    )
    kept.sort(key=lambda item: (item[0].line, item[0].start, item[0].code))
    kept.append((summary, max((lvl for _f, lvl in hidden), key=SEVERITY_RANK.__getitem__)))
    return kept


@lru_cache(maxsize=1024)
def _reported_level(policy: Policy, code: str) -> Optional[str]:
    """The severity a code is reported at under a policy, or None when it is not reported."""
    return policy.level(code) if policy.keeps(code) else None
