"""A whole-vault check split over processes reports exactly what one process reports."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from echoes_lsp.cli import parallel_check
from echoes_lsp.engine.findings import diagnose, is_checked
from echoes_lsp.engine.vault import PageFacts, Vault

from .conftest import CHECK_VAULT, run_check, write_page


def mixed_vault(root: Path, pages: int = 90, valid: bool = False) -> Path:
    """Pages whose diagnostics depend on other pages (deprecated targets and their replacements,
    anchors, missing pages), daily entries and a stale index; unless `valid`, also page-local
    problems and a collision (which keep the index from being built)."""
    vault = root / "EchoesVault"
    if valid:
        (vault / "pages").mkdir(parents=True)
        (vault / ".echoes-vault.json").write_text('{"protocolVersion": "1.0.0"}\n')
    else:
        shutil.copytree(CHECK_VAULT, root)
    for number in range(pages):
        body = (
            f"\n## Part {number}\n\nText ^block-{number}\n\n"
            f"See [[p{(number + 1) % pages:03}]], [[p{(number * 7) % pages:03}#Part {number}]], "
            f"[[p{(number * 5) % pages:03}#Part {(number * 5) % pages}]], "
            f"[[p{(number + 3) % pages:03}#^block-{(number + 3) % pages}]], "
            f"[[p{(number + 4) % pages:03}#^nope]] and [[missing-{number % 7}]].\n"
            f"`[[p{(number + 2) % pages:03}]]` is code.\n"
        )
        if number % 9 == 4:
            body += f"\nReplaced by [[p{(number + 10) % pages:03}]].\n"
        fields: Dict[str, str] = {}
        if number % 9 == 4:
            fields["status"] = "deprecated"
        summary = "A page." if number % 13 or valid else "x" * 170
        write_page(vault, f"p{number:03}", summary=summary, body=body, **fields)
    secret_page = vault / "pages" / f"p{min(50, pages - 1):03}.md"
    secret = "token ghp_" + "a1B2c3D4" * 5 + "\n"
    conflict = "" if valid else "<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n"
    secret_page.write_text(
        secret_page.read_text(encoding="utf-8") + secret + conflict, encoding="utf-8"
    )
    if not valid:
        (vault / "pages" / "P001.md").write_text("---\ntype: note\n---\n", encoding="utf-8")
    daily = vault / "daily" / "2026-02-01"
    daily.mkdir(parents=True)
    (daily / "20260201T090000000000Z-scratchpad-1a2b3c4d.md").write_text(
        "- Worked on [[p004]] and [[p004#Part 4]] and [[gone]].\n", encoding="utf-8"
    )
    (vault / "index.md").write_text("# stale\n", encoding="utf-8")
    return root


def diagnostics(root: Path, jobs: int) -> List[Dict[str, Any]]:
    process = run_check("--format", "json", "--jobs", str(jobs), ".", cwd=root)
    assert process.returncode == 1, process.stderr
    return json.loads(process.stdout)["diagnostics"]


@pytest.mark.parametrize(
    ("valid", "codes"),
    [
        (False, {"EV300", "EV301", "EV303", "EV200", "EV400", "EV501", "EV600"}),
        (True, {"EV300", "EV301", "EV303", "EV402", "EV600"}),
    ],
)
def test_split_checks_report_exactly_what_one_process_reports(
    tmp_path: Path, valid: bool, codes: set
) -> None:
    root = mixed_vault(tmp_path / "w", valid=valid)
    alone = diagnostics(root, 1)
    assert codes <= {d["code"] for d in alone}
    for jobs in (2, 3, 5):
        assert diagnostics(root, jobs) == alone, jobs


def findings_of(root: Path, jobs: int) -> Dict[str, Any]:
    vault = Vault(str(root), lean=True)
    vault.load()
    files = [p for p, e in vault.entries.items() if is_checked(e)]
    return parallel_check.diagnose_files(vault, files, jobs)


class Handoff:
    """A pipe by which a worker tells the parent that it has claimed work. The parent claims
    nothing from that queue until then, so the worker that dies always dies holding work,
    whichever process the machine runs first."""

    def __init__(self) -> None:
        self.read, self.write = os.pipe()

    def claim(self, *args: Any) -> None:
        """In the worker, called with a stage's arguments: claim one run from the queue that is
        the second of them, then say whether it brought work."""
        os.write(self.write, b"1" if args[1].claim() else b"0")

    def wait(self) -> None:
        """In the parent: until the worker has claimed (end of file if it died before)."""
        if self.write >= 0:
            os.close(self.write)  # then the worker holds the only write end
            self.write = -1
        assert os.read(self.read, 1) == b"1", "the dying worker claimed no work"

    def close(self) -> None:
        for fd in (self.read, self.write):
            if fd >= 0:
                os.close(fd)


def fails_in_worker(real: Callable[..., Any], first: Callable[..., Any] = lambda *_: None) -> Any:
    """`real` in the parent; in a forked worker, `first` and then a sudden exit."""
    parent = os.getpid()

    def wrapper(*args: Any) -> Any:
        if os.getpid() != parent:
            first(*args)
            os._exit(3)
        return real(*args)

    return wrapper


def waits_in_parent(real: Callable[..., Any], wait: Callable[[], None]) -> Any:
    """`real`, in the parent only after `wait`."""
    parent = os.getpid()

    def wrapper(*args: Any) -> Any:
        if os.getpid() == parent:
            wait()
        return real(*args)

    return wrapper


@pytest.mark.parametrize(
    ("stage", "claiming", "jobs"),
    [
        ("_worker_job", None, 3),  # before claiming anything
        ("_worker_job", "_parse_claimed", 2),  # after claiming a run of pages
        ("_diagnose_claimed", "_diagnose_claimed", 2),  # after claiming the index
        ("_diagnose", None, 2),  # after the exchange, before reporting
    ],
    ids=["at-start", "after-claiming-pages", "after-claiming-the-index", "after-the-exchange"],
)
def test_a_worker_that_dies_costs_time_not_findings(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stage: str,
    claiming: Optional[str],
    jobs: int,
) -> None:
    """The worker dies in `stage`. Where it dies holding work, it claims one run (of pages, or
    of the other files: the index first) from the queue that is `stage`'s second argument, and
    the parent's `claiming` (the function with which the parent claims from that queue) waits
    until it has."""
    root = mixed_vault(tmp_path / "w", pages=40, valid=True)
    expected = findings_of(root, 1)
    assert any(path.endswith("index.md") for path in expected)  # the stale index counts too
    handoff = Handoff()
    try:
        if claiming is None:
            dying = fails_in_worker(getattr(parallel_check, stage))
        else:
            waiting = waits_in_parent(getattr(parallel_check, claiming), handoff.wait)
            monkeypatch.setattr(parallel_check, claiming, waiting)
            dying = fails_in_worker(getattr(parallel_check, stage), handoff.claim)
        monkeypatch.setattr(parallel_check, stage, dying)
        assert findings_of(root, jobs) == expected
    finally:
        handoff.close()


def test_a_worker_that_cannot_take_the_facts_costs_time_not_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent claims no pages (so the worker parses them all), then cannot send the worker
    the facts: it parses and diagnoses the worker's pages itself."""
    root = mixed_vault(tmp_path / "w", pages=40, valid=True)
    expected = findings_of(root, 1)
    parent = os.getpid()
    real_parse, real_send = parallel_check._parse_claimed, parallel_check._send

    def parse_claimed(*args: Any) -> Any:
        return {} if os.getpid() == parent else real_parse(*args)

    def send(*args: Any) -> None:
        if os.getpid() == parent:
            raise BrokenPipeError("the worker is gone")
        real_send(*args)

    monkeypatch.setattr(parallel_check, "_parse_claimed", parse_claimed)
    monkeypatch.setattr(parallel_check, "_send", send)
    assert findings_of(root, 2) == expected


def test_only_a_batch_model_adopts_pages_parsed_elsewhere(tmp_path: Path) -> None:
    root = mixed_vault(tmp_path / "w", pages=3)
    vault = Vault(str(root))
    vault.load()
    page = str(root / "EchoesVault" / "pages" / "p000.md")
    lean = Vault(str(root), lean=True)
    lean.load()
    facts = PageFacts.of(lean.ensure(lean.entries[page]))
    with pytest.raises(ValueError):
        vault.adopt(page, facts)
    assert diagnose(lean, page) == diagnose(vault, page)


def test_an_adopted_page_gives_back_the_facts_it_was_given(tmp_path: Path) -> None:
    root = mixed_vault(tmp_path / "w", pages=3)
    page = str(root / "EchoesVault" / "pages" / "p000.md")
    parsed = Vault(str(root), lean=True)
    parsed.load()
    facts = PageFacts.of(parsed.ensure(parsed.entries[page]))
    assert facts.body_line > 0
    adopting = Vault(str(root), lean=True)
    adopting.load()
    adopting.adopt(page, facts)
    assert PageFacts.of(adopting.entries[page]) == facts


def test_jobs_must_be_a_sensible_number(tmp_path: Path) -> None:
    root = mixed_vault(tmp_path / "w", pages=2)
    for bad in ("-1", "65", "many"):
        process = run_check("--jobs", bad, ".", cwd=root)
        assert process.returncode == 2 and "--jobs" in process.stderr, bad
    assert run_check("--jobs", "64", "--format", "concise", ".", cwd=root).returncode == 1
