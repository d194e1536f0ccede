"""Rendering `echoes-lsp check` results: text (with code frames), concise, JSON, SARIF, GitHub.

Positions inside `Diagnostic` are 0-based lines and 0-based Unicode code-point columns, exactly
as the diagnostic engine produces them (the language server converts the same values to LSP
positions). Every output format adds 1 to both, and end columns are exclusive.
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from functools import lru_cache
from typing import IO, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .. import __version__
from ..engine.codes import CODES, docs_url

SCHEMA_VERSION = 1
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TAB_WIDTH = 4
FRAME_WIDTH = 120
FRAME_LINES = 6
LEVEL_ORDER = ("error", "warning", "information", "hint")
PLURAL = {"error": "errors", "warning": "warnings", "information": "information", "hint": "hints"}
SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
GITHUB_LEVEL = {"error": "error", "warning": "warning", "information": "notice", "hint": "notice"}

# Stable kebab-case rule names, used as SARIF `name` and in the JSON report.
RULE_NAMES: Dict[str, str] = {
    "EV100": "frontmatter-missing",
    "EV101": "frontmatter-unclosed",
    "EV102": "frontmatter-malformed",
    "EV103": "frontmatter-duplicate-key",
    "EV104": "required-field-missing",
    "EV105": "required-field-empty",
    "EV200": "summary-too-long",
    "EV201": "summary-not-one-line",
    "EV202": "summary-placeholder",
    "EV300": "link-target-missing",
    "EV301": "link-to-deprecated-page",
    "EV302": "asset-missing",
    "EV303": "link-anchor-missing",
    "EV310": "deprecated-callout-missing",
    "EV311": "deprecated-replacement-missing",
    "EV400": "conflict-marker",
    "EV401": "file-unreadable",
    "EV402": "index-edited-by-hand",
    "EV403": "index-out-of-date",
    "EV500": "unsafe-filename",
    "EV501": "page-name-collision",
    "EV502": "stray-file-in-pages",
    "EV503": "symbolic-link",
    "EV504": "legacy-daily-file",
    "EV600": "credential-shaped-text",
    "EV700": "vault-read-only",
    "EV701": "page-changed-on-disk",
    "EV702": "version-kept-aside",
}


class RelatedSpot(NamedTuple):
    path: str
    display: str
    line: int
    start: int
    end: int
    message: str


class Diagnostic(NamedTuple):
    """One reported finding, with its severity after the policy and a path for humans."""

    path: str
    display: str
    code: str
    severity: str
    message: str
    line: int
    start: int
    end_line: int
    end: int
    related: Tuple[RelatedSpot, ...] = ()
    fix: Optional[str] = None
    blocking: bool = False
    no_fix: Optional[str] = None  # why `--fix` cannot apply its fix, for a fixable code

    def sort_key(self) -> Tuple[str, int, int, str]:
        return (self.display, self.line, self.start, self.code)


class FixOutcome(NamedTuple):
    """What `--fix` did (or `--diff` would do) to one file."""

    path: str
    display: str
    codes: Tuple[str, ...]
    status: str  # applied | would-apply | skipped | refused | failed
    message: str = ""


class Report(NamedTuple):
    diagnostics: Sequence[Diagnostic]
    files_checked: int
    duration: float
    fail_on: str
    notes: Sequence[str] = ()
    fixes: Sequence[FixOutcome] = ()
    workspaces: Sequence[str] = ()

    def counts(self) -> Dict[str, Dict[str, int]]:
        """severity → code → count."""
        result: Dict[str, Dict[str, int]] = {level: {} for level in LEVEL_ORDER}
        for diagnostic in self.diagnostics:
            by_code = result[diagnostic.severity]
            by_code[diagnostic.code] = by_code.get(diagnostic.code, 0) + 1
        return result

    @property
    def failed(self) -> bool:
        """Whether a diagnostic reached its workspace's `fail-on` severity."""
        return any(d.blocking for d in self.diagnostics)


def display_path(path: str, cwd: Optional[str] = None) -> str:
    """A path relative to the working directory when it lies below it, with `/` separators."""
    base = cwd or os.getcwd()
    prefix = _normal_prefix(base)
    if prefix is not None and path.startswith(prefix):
        # Below the directory and already normal: what `relpath` gives, without its work.
        tail = path[len(prefix) :]
        wrapped = os.sep + tail + os.sep
        if (
            tail
            and os.sep + os.sep not in wrapped
            and f"{os.sep}.{os.sep}" not in wrapped
            and f"{os.sep}..{os.sep}" not in wrapped
            and (os.altsep is None or os.altsep not in tail)
        ):
            return tail.replace(os.sep, "/")
    try:
        rel = os.path.relpath(path, base)
    except ValueError:
        return path
    if rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        return path
    return rel.replace(os.sep, "/")


@lru_cache(maxsize=16)
def _normal_prefix(base: str) -> Optional[str]:
    """`base` and a separator when it is absolute and normal: paths starting with it lie below."""
    if not os.path.isabs(base) or base != os.path.normpath(base):
        return None
    return base.rstrip(os.sep) + os.sep


# -- terminal styling -----------------------------------------------------------------------------


COLOR_CHOICES = ("auto", "always", "never")
# Set to any value, it keeps the code in text output a plain word where colour is on: for
# terminals that print OSC 8 hyperlinks as stray characters.
NO_HYPERLINKS = "ECHOES_LSP_NO_HYPERLINKS"


def color_enabled(stream: IO[str], choice: str = "auto") -> bool:
    """`--color always|never` decides; with `auto`, `NO_COLOR` (any value) turns colour off,
    `FORCE_COLOR` turns it on, else only on a TTY."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force is not None and force not in ("", "0", "false"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def text_style(stream: IO[str], choice: str = "auto") -> Style:
    """The style of text output: colour as `color_enabled` says, and with it hyperlinks from each
    code to its page unless `ECHOES_LSP_NO_HYPERLINKS` is set."""
    enabled = color_enabled(stream, choice)
    return Style(enabled, links=enabled and not os.environ.get(NO_HYPERLINKS))


SEVERITY_COLOR = {"error": "31", "warning": "33", "information": "34", "hint": "36"}


class Style:
    """ANSI colours and OSC 8 hyperlinks, or plain text when disabled."""

    def __init__(self, enabled: bool, links: bool = False) -> None:
        self.enabled = enabled
        self.links = links

    def paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled and text else text

    def bold(self, text: str) -> str:
        return self.paint(text, "1")

    def gutter(self, text: str) -> str:
        return self.paint(text, "34")

    def severity(self, text: str, level: str) -> str:
        return self.paint(text, "1;" + SEVERITY_COLOR.get(level, "0"))

    def link(self, text: str, url: str) -> str:
        """`text` as an OSC 8 hyperlink to `url` (terminals without them show the text)."""
        if not (self.links and url and text):
            return text
        return f"\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\"


def clean(text: str) -> str:
    """Text safe to print on a terminal: control characters become `?` (tabs become spaces)."""
    if text.isprintable():
        return text
    return "".join(
        " " if ch == "\t" else "?" if unicodedata.category(ch) == "Cc" else ch for ch in text
    )


# -- code frames ----------------------------------------------------------------------------------


def _width(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_columns(line: str) -> Tuple[str, List[int]]:
    """The line as printed (tabs expanded, control characters replaced) and, for every code-point
    index 0..len(line), the display column where it starts."""
    if line.isascii() and line.isprintable():
        return line, list(range(len(line) + 1))
    out: List[str] = []
    columns: List[int] = []
    column = 0
    for ch in line:
        columns.append(column)
        if ch == "\t":
            step = TAB_WIDTH - column % TAB_WIDTH
            out.append(" " * step)
            column += step
            continue
        if unicodedata.category(ch) in ("Cc", "Cs"):
            out.append("?")
            column += 1
            continue
        out.append(ch)
        column += _width(ch)
    columns.append(column)
    return "".join(out), columns


def _window(line: str, start: int, end: int) -> Tuple[str, int, int, bool, bool]:
    """Crop a long line around [start, end): (text, start, end, cut_left, cut_right)."""
    if len(line) <= FRAME_WIDTH:
        return line, start, end, False, False
    left = max(0, min(start - 20, len(line) - FRAME_WIDTH))
    right = min(len(line), left + FRAME_WIDTH)
    return (
        line[left:right],
        max(0, start - left),
        max(0, min(end, right) - left),
        left > 0,
        right < len(line),
    )


def code_frame(lines: Sequence[str], d: Diagnostic, style: Style, label: str) -> List[str]:
    """Numbered source lines of a finding with `^^^` under its exact range."""
    if d.line >= len(lines):
        return []
    last = min(max(d.end_line, d.line), len(lines) - 1)
    numbers = list(range(d.line, last + 1))
    if len(numbers) > FRAME_LINES:
        numbers = [*numbers[: FRAME_LINES - 2], -1, *numbers[-1:]]
    width = len(str(last + 1))
    pad = " " * width
    out = [style.gutter(f"{pad} |")]
    underlined = [n for n in numbers if n >= 0]
    for number in numbers:
        if number < 0:
            out.append(style.gutter(f"{'.' * width} |") + " ...")
            continue
        text = lines[number]
        begin = d.start if number == d.line else 0
        finish = d.end if number == last and last == d.end_line else len(text)
        begin = min(begin, len(text))
        finish = min(max(finish, begin), len(text))
        shown, begin, finish, cut_left, cut_right = _window(text, begin, finish)
        rendered, columns = display_columns(shown)
        prefix = "…" if cut_left else ""
        suffix = "…" if cut_right else ""
        out.append(
            style.gutter(f"{number + 1:>{width}} |")
            + (" " if rendered or prefix else "")
            + prefix
            + rendered
            + suffix
        )
        is_last = number == underlined[-1]
        if finish == begin and len(underlined) > 1 and not is_last:
            continue
        lead = columns[begin] + len(prefix)
        size = max(1, columns[finish] - columns[begin])
        marks = style.severity("^" * size, d.severity)
        tail = " " + style.severity(label, d.severity) if is_last and label else ""
        out.append(style.gutter(f"{pad} |") + " " + " " * lead + marks + tail)
    out.append(style.gutter(f"{pad} |"))
    return out


# -- formats --------------------------------------------------------------------------------------


def _duration(seconds: float) -> str:
    """Milliseconds below a second (`0.00s` told nothing), seconds with two decimals above."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms" if seconds >= 0.0005 else "<1ms"
    return f"{seconds:.2f}s"


def summary_line(report: Report) -> str:
    counts = report.counts()
    files = f"{report.files_checked} file" + ("" if report.files_checked == 1 else "s")
    head = f"Checked {files} in {_duration(report.duration)}"
    parts = []
    for level in LEVEL_ORDER:
        by_code = counts[level]
        total = sum(by_code.values())
        if not total:
            continue
        name = level if total == 1 and level != "information" else PLURAL[level]
        codes = ", ".join(
            code if count == 1 else f"{code} x{count}" for code, count in sorted(by_code.items())
        )
        parts.append(f"{total} {name} ({codes})")
    if not parts:
        return f"{head}: no problems."
    # "problems", the word the editor's status uses for the same diagnostics (docs/concepts.md)
    total = len(report.diagnostics)
    return f"{head}, {total} problem{'' if total == 1 else 's'}: " + ", ".join(parts) + "."


def fixable_line(report: Report) -> Optional[str]:
    fixable = [d for d in report.diagnostics if d.fix]
    if not fixable:
        return None
    codes = ", ".join(sorted({d.code for d in fixable}))
    noun = "problem is" if len(fixable) == 1 else "problems are"
    return f"[*] {len(fixable)} {noun} fixable with `--fix` ({codes})."


def fix_lines(report: Report) -> List[str]:
    lines = []
    for outcome in report.fixes:
        codes = ", ".join(outcome.codes)
        verb = {
            "applied": "fixed",
            "would-apply": "would fix",
            "skipped": "not fixed",
            "refused": "fix refused",
            "failed": "fix failed",
        }[outcome.status]
        tail = f": {clean(outcome.message)}" if outcome.message else ""
        if not codes:
            lines.append(f"{clean(outcome.display)}: {clean(outcome.message) or verb}")
            continue
        lines.append(f"{clean(outcome.display)}: {verb} {codes}{tail}")
    return lines


def _code_text(d: Diagnostic, style: Style) -> str:
    """The finding's code, coloured, and a hyperlink to its page when links are on (the address
    is looked up only then)."""
    shown = style.severity(d.code, d.severity)
    entry = CODES.get(d.code)
    return style.link(shown, entry.url) if style.links and entry is not None else shown


def render_text_diagnostics(
    diagnostics: Sequence[Diagnostic],
    style: Style,
    source: Callable[[str], Optional[Sequence[str]]],
) -> str:
    """The text-format entries of some diagnostics: header, code frame, notes, blank line."""
    out: List[str] = []
    for d in diagnostics:
        mark = "[*] " if d.fix else ""
        out.append(
            f"{style.bold(clean(d.display))}:{d.line + 1}:{d.start + 1}: "
            f"{_code_text(d, style)} {mark}{clean(d.message)}"
        )
        lines = source(d.path)
        if lines is not None:
            out.extend(code_frame(lines, d, style, d.severity))
        for spot in d.related:
            out.append(
                f"  = note: {clean(spot.display)}:{spot.line + 1}:{spot.start + 1}: {clean(spot.message)}"
            )
        if d.fix:
            out.append(f"  = fix: {d.fix} (`--fix`)")
        elif d.no_fix:
            out.append(f"  = note: `--fix` cannot fix this: {clean(d.no_fix)}")
        out.append("")
    return "\n".join(out) + "\n" if out else ""


def render_text_footer(report: Report, style: Style) -> str:
    """Fix outcomes, notes, the summary line and the fixable count."""
    out: List[str] = list(fix_lines(report))
    if report.fixes:
        out.append("")
    out.extend(clean(note) for note in report.notes)
    out.append(style.bold(summary_line(report)))
    extra = fixable_line(report)
    if extra:
        out.append(extra)
    return "\n".join(out) + "\n"


def render_text(
    report: Report, style: Style, source: Callable[[str], Optional[Sequence[str]]]
) -> str:
    return render_text_diagnostics(report.diagnostics, style, source) + render_text_footer(
        report, style
    )


def render_concise(report: Report) -> str:
    return render_concise_diagnostics(report.diagnostics)


def render_concise_diagnostics(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(
        f"{clean(d.display)}:{d.line + 1}:{d.start + 1}: {d.code} [{d.severity}] {clean(d.message)}\n"
        for d in diagnostics
    )


def _github_property(value: str) -> str:
    return (
        value.replace("%", "%25")
        .replace("\r", "%0D")
        .replace("\n", "%0A")
        .replace(":", "%3A")
        .replace(",", "%2C")
    )


def _github_message(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def render_github(report: Report) -> str:
    out = []
    for d in report.diagnostics:
        props = (
            f"file={_github_property(d.display)},line={d.line + 1},col={d.start + 1},"
            f"endLine={d.end_line + 1},endColumn={d.end + 1},title={d.code}"
        )
        out.append(f"::{GITHUB_LEVEL[d.severity]} {props}::{_github_message(d.message)}\n")
    return "".join(out)


def _position(d: Diagnostic) -> Dict[str, int]:
    return {
        "line": d.line + 1,
        "column": d.start + 1,
        "endLine": d.end_line + 1,
        "endColumn": d.end + 1,
    }


def report_data(report: Report) -> Dict[str, object]:
    """The `--format json` document (see `echoes_lsp/schemas/check-report.schema.json`)."""
    counts = report.counts()
    diagnostics = []
    for d in report.diagnostics:
        item: Dict[str, object] = {
            "path": d.display,
            "absolutePath": d.path,
            "code": d.code,
            "name": RULE_NAMES.get(d.code, d.code.lower()),
            "severity": d.severity,
            "message": d.message,
            **_position(d),
            "url": CODES[d.code].url if d.code in CODES else docs_url(),
            "fix": d.fix,
            "blocking": d.blocking,
            "related": [
                {
                    "path": spot.display,
                    "absolutePath": spot.path,
                    "line": spot.line + 1,
                    "column": spot.start + 1,
                    "endLine": spot.line + 1,
                    "endColumn": spot.end + 1,
                    "message": spot.message,
                }
                for spot in d.related
            ],
        }
        diagnostics.append(item)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "echoes-lsp", "version": __version__},
        "summary": {
            "filesChecked": report.files_checked,
            "durationSeconds": round(report.duration, 4),
            "failOn": report.fail_on,
            "failed": report.failed,
            "total": len(report.diagnostics),
            "bySeverity": {level: sum(counts[level].values()) for level in LEVEL_ORDER},
            "byCode": {
                code: count
                for level in LEVEL_ORDER
                for code, count in sorted(counts[level].items())
            },
            "fixable": sum(1 for d in report.diagnostics if d.fix),
        },
        "diagnostics": diagnostics,
        "fixes": [
            {
                "path": f.display,
                "absolutePath": f.path,
                "codes": list(f.codes),
                "status": f.status,
                "message": f.message,
            }
            for f in report.fixes
        ],
        "notes": list(report.notes),
    }


def render_json(report: Report, indent: Optional[int] = 2) -> str:
    return json.dumps(report_data(report), ensure_ascii=False, indent=indent) + "\n"


def _sarif_rule(code: str, level: str) -> Dict[str, object]:
    entry = CODES[code]
    rule: Dict[str, object] = {
        "id": code,
        "name": RULE_NAMES.get(code, code.lower()),
        "shortDescription": {"text": entry.title},
        "fullDescription": {"text": f"{code}: {entry.title}."},
        "helpUri": entry.url,
        "help": {"text": f"See {entry.url}"},
        "defaultConfiguration": {
            "level": SARIF_LEVEL.get(level, "none"),
            "enabled": level != "off",
        },
        "properties": {"tags": ["echoes-vault"], "defaultSeverity": entry.severity},
    }
    return rule


def _sarif_region(line: int, start: int, end_line: int, end: int) -> Dict[str, int]:
    return {
        "startLine": line + 1,
        "startColumn": start + 1,
        "endLine": end_line + 1,
        "endColumn": end + 1,
    }


def _uri(display: str) -> str:
    """A URI reference for a path; file names that are not UTF-8 keep their exact bytes."""
    from urllib.parse import quote

    data = os.fsencode(display.replace(os.sep, "/"))
    return "file://" + quote(data) if os.path.isabs(display) else quote(data)


def render_sarif(report: Report, levels: Callable[[str], str], cwd: Optional[str] = None) -> str:
    """SARIF 2.1.0 with one rule per diagnostic code; columns count Unicode code points."""
    codes = sorted(CODES)
    index = {code: position for position, code in enumerate(codes)}
    results = []
    for d in report.diagnostics:
        result: Dict[str, object] = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": SARIF_LEVEL[d.severity],
            "message": {"text": d.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(d.display), "uriBaseId": "%SRCROOT%"},
                        "region": _sarif_region(d.line, d.start, d.end_line, d.end),
                    }
                }
            ],
        }
        if d.related:
            result["relatedLocations"] = [
                {
                    "id": number,
                    "message": {"text": spot.message},
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(spot.display), "uriBaseId": "%SRCROOT%"},
                        "region": _sarif_region(spot.line, spot.start, spot.line, spot.end),
                    },
                }
                for number, spot in enumerate(d.related)
            ]
        results.append(result)
    base = (cwd or os.getcwd()).replace(os.sep, "/").rstrip("/") + "/"
    from urllib.parse import quote

    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "echoes-lsp",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": docs_url(),
                        "rules": [_sarif_rule(code, levels(code)) for code in codes],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + quote(os.fsencode(base))}},
                "columnKind": "unicodeCodePoints",
                "results": results,
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": [
                            {"level": "note", "message": {"text": note}} for note in report.notes
                        ],
                    }
                ],
            }
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def printable(text: str) -> str:
    """Valid Unicode for any output: bytes of non-UTF-8 file names (kept by Python as lone
    surrogates) become U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def write(stream: IO[str], text: str) -> None:
    """Write and flush, tolerating a closed pipe (`echoes-lsp check | head`) and terminals that
    cannot show every character."""
    text = printable(text)
    try:
        try:
            stream.write(text)
        except UnicodeEncodeError:
            encoding = getattr(stream, "encoding", None) or "utf-8"
            stream.write(text.encode(encoding, "replace").decode(encoding))
        stream.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass
        sys.exit(1)
