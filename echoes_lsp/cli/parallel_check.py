"""A whole-vault check split over processes.

Parsing and diagnosing pages is pure Python, so one process uses one CPU. On a large vault the
parent forks workers, and every process claims runs of pages from a shared pipe and parses them
until none are left (a faster process takes more). The processes then exchange every page's
`PageFacts` (status, summary, problems, replacement: small) so that a link into any page, and the
index, are diagnosed exactly as in a single process; each diagnoses the pages it parsed, then
claims the other files (the index first) from a second pipe, and the parent gathers the findings.
A worker that fails costs only time: the parent parses and diagnoses what it had taken.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import IO, Callable, Dict, List, Optional, Sequence, Tuple

from ..engine.findings import Finding, diagnose, replacement
from ..engine.vault import INDEX, PAGE, PageFacts, Vault
from ..runtime import echoes_vault as rules

# Below this many pages the fork and the exchange cost more than they save (the gain above it:
# `bench/check_bench.py --jobs 1,0`).
MIN_PAGES = 2000
MAX_JOBS = 8  # chosen automatically, at most
MAX_EXPLICIT_JOBS = 64  # asked for with --jobs, at most
RUN_PAGES = 64  # pages in one claim of work, at most
MAX_RUNS = 1024  # tickets of 4 bytes: all of them fit any pipe's buffer at once

Findings = Dict[str, List[Finding]]
Facts = Dict[str, PageFacts]


def auto_jobs(pages: int) -> int:
    """Processes for a whole-vault check of this many pages: one per CPU for a large vault on a
    platform that can fork, otherwise one."""
    if not rules.can_fork() or pages < MIN_PAGES:
        return 1
    return max(1, min(rules.usable_cpus(), MAX_JOBS))


class _Worker:
    """A forked worker as the parent sees it: its pid, the pages it parsed, its pipe ends."""

    def __init__(self, pid: int, results: IO[bytes], facts: IO[bytes]) -> None:
        self.pid = pid
        self.share: List[str] = []
        self.results = results
        self.facts = facts
        self.alive = True


class _Runs:
    """Runs of files that the processes claim one at a time from a shared pipe, so that a faster
    process takes more of them. Pages are claimed to be parsed: the processes meet once every
    page is parsed, and each then diagnoses the pages it parsed, so shares claimed this way keep
    the work before and after that meeting balanced. The other files are claimed afterwards, to
    be read and diagnosed by whichever process is free, the index (the largest task) first."""

    def __init__(self, files: List[str], jobs: int, first: Sequence[str] = ()) -> None:
        # about eight runs per process at least, so that the last claims even out the shares
        size = max(1, min(RUN_PAGES, len(files) // (8 * jobs)), -(-len(files) // MAX_RUNS))
        self.runs = [[path] for path in first]
        self.runs += [files[at : at + size] for at in range(0, len(files), size)]
        self.claims, tickets = os.pipe()
        try:
            # every ticket is written before any process reads: the pipe holds them all
            os.write(tickets, b"".join(n.to_bytes(4, "big") for n in range(len(self.runs))))
        finally:
            os.close(tickets)

    def claim(self) -> Optional[List[str]]:
        # A pipe hands each 4-byte ticket to exactly one reader; an empty, closed pipe ends.
        ticket = os.read(self.claims, 4)
        return self.runs[int.from_bytes(ticket, "big")] if len(ticket) == 4 else None

    def close(self) -> None:
        os.close(self.claims)


def diagnose_files(
    vault: Vault,
    files: Sequence[str],
    jobs: int,
    progress: Optional[Callable[[int], None]] = None,
) -> Findings:
    """Findings of `files` (those with any), the same as diagnosing them one by one here, using
    up to `jobs` processes. `progress` hears how many files are done."""
    pages = sorted(path for path in files if _is_page(vault, path))
    if jobs < 2 or len(pages) < jobs or not rules.can_fork():
        return _diagnose(vault, files, progress)
    rest = [path for path in files if not _is_page(vault, path)]
    index = [path for path in rest if vault.entries[path].kind == INDEX]
    sys.stdout.flush()
    sys.stderr.flush()
    runs = _Runs(pages, jobs)
    others = _Runs([path for path in rest if path not in index], jobs, first=index)
    workers: List[_Worker] = []
    try:
        for _ in range(jobs - 1):
            worker = _spawn(vault, runs, others, workers)
            if worker is not None:
                workers.append(worker)
        findings = _parent_job(vault, pages, rest, runs, others, workers, progress)
    finally:
        runs.close()
        others.close()
        for worker in workers:
            for stream in (worker.results, worker.facts):
                try:
                    stream.close()
                except OSError:
                    pass
            try:
                os.waitpid(worker.pid, 0)
            except ChildProcessError:
                pass
    if progress is not None:
        progress(len(files))
    return {path: findings[path] for path in files if path in findings}


def _is_page(vault: Vault, path: str) -> bool:
    entry = vault.entries.get(path)
    return entry is not None and entry.kind == PAGE and not entry.symlink


def _diagnose(
    vault: Vault, files: Sequence[str], progress: Optional[Callable[[int], None]] = None
) -> Findings:
    findings: Findings = {}
    for number, path in enumerate(files):
        found = diagnose(vault, path)
        if found:
            findings[path] = found
        if progress is not None:
            progress(number + 1)
    return findings


def _parse(vault: Vault, files: Sequence[str]) -> Facts:
    """Parse pages; their facts for the other processes."""
    facts: Facts = {}
    for path in files:
        entry = vault.ensure(vault.entries[path])
        named = replacement(vault, entry) if entry.deprecated else None
        facts[path] = PageFacts.of(entry, named.stem if named else None)
    return facts


def _parse_claimed(vault: Vault, runs: _Runs) -> Facts:
    facts: Facts = {}
    while True:
        run = runs.claim()
        if run is None:
            return facts
        facts.update(_parse(vault, run))


def _diagnose_claimed(vault: Vault, others: _Runs, findings: Findings) -> List[str]:
    """Diagnose the runs of other files this process claims; the files it diagnosed."""
    done: List[str] = []
    while True:
        run = others.claim()
        if run is None:
            return done
        findings.update(_diagnose(vault, run))
        done.extend(run)


def _spawn(
    vault: Vault, runs: _Runs, others: _Runs, earlier: Sequence[_Worker]
) -> Optional[_Worker]:
    try:
        results_read, results_write = os.pipe()
        facts_read, facts_write = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        for fd in (results_read, results_write, facts_read, facts_write):
            os.close(fd)
        return None
    if pid == 0:  # the worker: it never returns from here
        status = 1
        try:
            # Other ends must close here, or a pipe would never report end-of-file.
            os.close(results_read)
            os.close(facts_write)
            for other in earlier:
                other.results.close()
                other.facts.close()
            with os.fdopen(results_write, "wb") as out, os.fdopen(facts_read, "rb") as into:
                _worker_job(vault, runs, others, out, into)
            status = 0
        finally:
            os._exit(status)
    os.close(results_write)
    os.close(facts_read)
    return _Worker(pid, os.fdopen(results_read, "rb"), os.fdopen(facts_write, "wb"))


def _worker_job(vault: Vault, runs: _Runs, others: _Runs, out: IO[bytes], into: IO[bytes]) -> None:
    """A worker's whole job: parse the pages it claims, trade facts, diagnose those pages and
    the other files it claims, report the findings and the other files it diagnosed."""
    mine = _parse_claimed(vault, runs)
    _send(out, mine)
    foreign: Facts = pickle.load(into)
    for path, facts in foreign.items():
        vault.adopt(path, facts)
    findings = _diagnose(vault, list(mine))
    done = _diagnose_claimed(vault, others, findings)
    _send(out, (findings, done))


def _send(stream: IO[bytes], value: object) -> None:
    pickle.dump(value, stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.flush()


def _parent_job(
    vault: Vault,
    pages: List[str],
    rest: List[str],
    runs: _Runs,
    others: _Runs,
    workers: List[_Worker],
    progress: Optional[Callable[[int], None]],
) -> Findings:
    """The parent's side: the pages it claims, the exchange, its diagnoses, the gathering."""
    facts, kept = _gather_facts(vault, pages, runs, workers)
    kept.extend(_share_facts(vault, facts, workers))
    findings = _diagnose(vault, kept, progress)
    done = set(_diagnose_claimed(vault, others, findings))
    done.update(_gather_findings(vault, workers, findings))
    # other files claimed by a worker that died were never reported: diagnose them here
    findings.update(_diagnose(vault, [path for path in rest if path not in done]))
    return findings


def _gather_facts(
    vault: Vault, pages: List[str], runs: _Runs, workers: List[_Worker]
) -> Tuple[Facts, List[str]]:
    """The facts of every page: those this process parses, those each worker sends, and the
    pages a dead worker had claimed, parsed here. Also the pages parsed here."""
    facts = _parse_claimed(vault, runs)
    kept = list(facts)
    for worker in workers:
        try:
            theirs: Facts = pickle.load(worker.results)
        except Exception:  # the worker died or sent garbage: what it claimed is done here
            worker.alive = False
            continue
        worker.share = list(theirs)
        facts.update(theirs)
    unclaimed = [path for path in pages if path not in facts]
    facts.update(_parse(vault, unclaimed))
    kept.extend(unclaimed)
    return facts, kept


def _share_facts(vault: Vault, facts: Facts, workers: List[_Worker]) -> List[str]:
    """Send each live worker the facts of the pages it did not parse, and adopt the pages it
    did. Returns the pages of the workers that could not be reached, parsed here again."""
    taken_back: List[str] = []
    for worker in workers:
        if not worker.alive:
            continue
        mine = set(worker.share)
        try:
            _send(worker.facts, {p: f for p, f in facts.items() if p not in mine})
            worker.facts.close()
        except OSError:
            _take_back(vault, worker)
            taken_back.extend(worker.share)
            continue
        for path in worker.share:
            vault.adopt(path, facts[path])
    return taken_back


def _gather_findings(vault: Vault, workers: List[_Worker], findings: Findings) -> List[str]:
    """Add each worker's findings; returns the other files the workers diagnosed. A worker that
    died after the exchange has its pages diagnosed here after all."""
    done: List[str] = []
    for worker in workers:
        if not worker.alive:
            continue
        try:
            theirs_found, theirs_done = pickle.load(worker.results)
        except Exception:  # died after the exchange: its pages are diagnosed here after all
            _take_back(vault, worker)
            findings.update(_diagnose(vault, worker.share))
            continue
        findings.update(theirs_found)
        done.extend(theirs_done)
    return done


def _take_back(vault: Vault, worker: _Worker) -> None:
    """A worker is lost: the pages it parsed are parsed here again."""
    worker.alive = False
    for path in worker.share:
        vault.reparse(path)
