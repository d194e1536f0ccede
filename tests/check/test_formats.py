"""Output formats: text snapshot, concise, GitHub annotations, JSON and SARIF against schemas.

The snapshot runs the real command; the other tests look at what a report says, so they run the
command's code in this process (`check_here`)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest

from .conftest import HERE, CheckRun, base_env, codes_of, normalise, run_check, schema

SNAPSHOT = HERE / "snapshots" / "check-vault.txt"

EXPECTED_CODES = {
    "EV100", "EV101", "EV102", "EV103", "EV104", "EV105", "EV200", "EV201", "EV300", "EV301",
    "EV302", "EV303", "EV310", "EV311", "EV400", "EV401", "EV500", "EV502", "EV504", "EV600",
}  # fmt: skip


def report_of(check_here: CheckRun, cwd: Path) -> dict:
    process = check_here("--format", "json", cwd=cwd)
    assert process.returncode == 1, process.stderr
    return json.loads(process.stdout)


def test_text_output_matches_snapshot(workspace: Path) -> None:
    process = run_check(cwd=workspace)
    assert process.returncode == 1
    text = normalise(process.stdout)
    expected = SNAPSHOT.read_text(encoding="utf-8")
    if text != expected and os.environ.get("UPDATE_SNAPSHOTS"):
        # Rewriting is never a pass: the run fails, and the new snapshot is reviewed in the diff.
        SNAPSHOT.write_text(text, encoding="utf-8")
        pytest.fail(f"{SNAPSHOT.name} rewritten; review it and run again without UPDATE_SNAPSHOTS")
    assert text == expected
    assert "\x1b[" not in process.stdout


def test_text_output_has_frames_carets_and_summary(workspace: Path, check_here: CheckRun) -> None:
    out = check_here(cwd=workspace).stdout
    header = (
        "EchoesVault/pages/auth-architecture.md:11:66: EV300 no page named `audit-trail` in pages/"
    )
    assert header in out
    block = out[out.index(header) :].split("\n")
    assert (
        block[2]
        == "11 | The old flow lives in [[legacy-login]]; the audit notes are in [[audit-trail]]."
    )
    caret_line = block[3]
    assert caret_line.index("^") - len("   | ") == 65  # under `audit-trail`, 0-based column 65
    assert caret_line.count("^") == len("audit-trail")
    last = out.rstrip("\n").split("\n")[-1]
    assert re.fullmatch(
        r"Checked 19 files in (?:\d+ms|<1ms|\d+\.\d\ds), 27 problems: 14 errors \(.*\), 10 warnings \(.*EV300 x4.*\), "
        r"2 information \(EV301, EV310\), 1 hint \(EV311\)\.",
        last,
    ), last


def test_wide_characters_and_tabs_keep_carets_aligned(
    workspace: Path, check_here: CheckRun
) -> None:
    out = check_here(
        "--select", "EV300", "EchoesVault/pages/auth-architecture.md", cwd=workspace
    ).stdout
    lines = out.split("\n")
    sources = [n for n, line in enumerate(lines) if line.startswith("17 |")]
    assert len(sources) == 2
    assert all("\t" not in lines[n] for n in sources)  # tabs are expanded for display
    carets = [lines[n + 1] for n in sources]
    # The tab shows as four spaces; the four wide characters before the second link each take
    # two columns, so the caret moves four columns further right than the code-point count.
    gutter = len("   | ")
    assert carets[0].index("^") - gutter == len("    Indented with a tab: [[")
    prefix = "    Indented with a tab: [[tabbed-missing]] and 日本語の [["
    assert carets[1].index("^") - gutter == len(prefix) + 4


def test_colour_only_when_forced_or_tty(workspace: Path, check_here: CheckRun) -> None:
    plain = check_here(cwd=workspace, env=base_env()).stdout
    assert "\x1b[" not in plain
    env = base_env(FORCE_COLOR="1")
    del env["NO_COLOR"]
    forced = check_here(cwd=workspace, env=env).stdout
    assert "\x1b[1;31mEV100\x1b[0m" in forced
    both = check_here(cwd=workspace, env=base_env(FORCE_COLOR="1")).stdout
    assert "\x1b[" not in both  # NO_COLOR wins


def test_concise_is_one_line_per_diagnostic(workspace: Path, check_here: CheckRun) -> None:
    process = check_here("--format", "concise", cwd=workspace)
    lines = process.stdout.splitlines()
    report = report_of(check_here, workspace)
    assert len(lines) == len(report["diagnostics"]) == 27
    assert lines[0] == (
        "EchoesVault/daily/2026-01-15.md:1:1: EV504 [warning] legacy shared daily file: new "
        "entries go to unique files under daily/YYYY-MM-DD/"
    )
    assert all(
        re.match(r"^\S+:\d+:\d+: EV\d{3} \[(error|warning|information|hint)\] ", x) for x in lines
    )


def test_github_annotations(workspace: Path, check_here: CheckRun) -> None:
    process = check_here("--format", "github", cwd=workspace)
    assert process.returncode == 1
    lines = process.stdout.splitlines()
    assert (
        "::warning file=EchoesVault/pages/auth-architecture.md,line=11,col=66,endLine=11,"
        "endColumn=77,title=EV300::no page named `audit-trail` in pages/"
    ) in lines
    assert (
        "::error file=EchoesVault/pages/conflicted.md,line=10,col=1,endLine=10,endColumn=13,"
        "title=EV400::unresolved Git conflict marker (start): keep one side (or merge both) and "
        "delete the marker lines (`<<<<<<<`, `=======`, `>>>>>>>`)"
    ) in lines
    assert any(line.startswith("::notice ") and "title=EV311::" in line for line in lines)
    assert all(
        re.match(
            r"^::(error|warning|notice) file=[^,]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=EV\d{3}::",
            x,
        )
        for x in lines
    )


def test_github_escapes_commas_and_newlines(workspace: Path, check_here: CheckRun) -> None:
    page = workspace / "EchoesVault" / "pages" / "a,b.md"
    page.write_text("no frontmatter\n", encoding="utf-8")
    out = check_here("--format", "github", "--select", "EV100", str(page), cwd=workspace).stdout
    assert out.startswith("::error file=EchoesVault/pages/a%2Cb.md,line=1,")


def test_json_validates_and_exposes_exact_ranges(workspace: Path, check_here: CheckRun) -> None:
    report = report_of(check_here, workspace)
    jsonschema.Draft202012Validator(schema("check-report.schema.json")).validate(report)
    assert set(codes_of(report)) == EXPECTED_CODES
    link = next(
        d for d in report["diagnostics"] if d["message"].startswith("no page named `audit-trail`")
    )
    assert (link["line"], link["column"], link["endLine"], link["endColumn"]) == (11, 66, 11, 77)
    assert link["severity"] == "warning" and link["name"] == "link-target-missing"
    assert link["url"].endswith("/docs/codes/EV300.md")
    summary = report["summary"]
    assert summary["filesChecked"] == 19 and summary["failed"] is True
    assert summary["bySeverity"] == {"error": 14, "warning": 10, "information": 2, "hint": 1}
    assert summary["byCode"]["EV400"] == 3
    multi = next(d for d in report["diagnostics"] if d["code"] == "EV201")
    assert (multi["line"], multi["column"], multi["endLine"], multi["endColumn"]) == (5, 10, 7, 13)


def test_json_schema_rejects_a_broken_report(workspace: Path, check_here: CheckRun) -> None:
    report = report_of(check_here, workspace)
    report["diagnostics"][0]["line"] = 0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema("check-report.schema.json")).validate(report)


def test_sarif_validates_against_the_official_schema(workspace: Path, check_here: CheckRun) -> None:
    process = check_here("--format", "sarif", cwd=workspace)
    assert process.returncode == 1
    document = json.loads(process.stdout)
    validator = jsonschema.Draft4Validator(
        schema("sarif-schema-2.1.0.json"), format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(document), key=str)
    assert not errors, errors[0]
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert len(rules) == 28 and {r["id"] for r in rules} >= EXPECTED_CODES | {
        "EV402",
        "EV403",
        "EV501",
        "EV503",
        "EV700",
        "EV701",
    }
    ev300 = next(r for r in rules if r["id"] == "EV300")
    assert ev300["helpUri"].endswith("/docs/codes/EV300.md")
    assert ev300["defaultConfiguration"]["level"] == "warning"
    assert ev300["shortDescription"]["text"] == "link to a page that does not exist"
    assert run["columnKind"] == "unicodeCodePoints"
    result = next(r for r in run["results"] if "audit-trail" in r["message"]["text"])
    assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == "EV300"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {
        "uri": "EchoesVault/pages/auth-architecture.md",
        "uriBaseId": "%SRCROOT%",
    }
    assert location["region"] == {
        "startLine": 11,
        "startColumn": 66,
        "endLine": 11,
        "endColumn": 77,
    }
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels["EV311"] == "note" and levels["EV100"] == "error"
    assert len(run["results"]) == 27


def test_sarif_schema_catches_a_broken_document(workspace: Path, check_here: CheckRun) -> None:
    document = json.loads(check_here("--format", "sarif", cwd=workspace).stdout)
    document["runs"][0]["results"][0]["level"] = "fatal"
    validator = jsonschema.Draft4Validator(schema("sarif-schema-2.1.0.json"))
    assert list(validator.iter_errors(document))
