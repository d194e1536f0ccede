"""A whole-vault check split over processes.

Parsing and diagnosing pages is pure Python, so one process uses one CPU. On a large vault the
pages are dealt out in path order, so that the shares are alike, to the parent and forked
workers. Each process parses its share; the processes then exchange every page's `PageFacts`
(status, summary, problems, replacement: small) so that a link into any page, and the index, are
diagnosed exactly as in a single process; then each diagnoses its share and the parent gathers
the findings. A worker that fails costs only time: the parent diagnoses its share itself.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import IO, Callable, Dict, List, Optional, Sequence

from .diagnose import Finding, diagnose, replacement
from .vault import INDEX, PAGE, PageFacts, Vault

# Below this many pages the fork and the exchange cost more than they save.
MIN_PAGES = 2000
MAX_JOBS = 8

Findings = Dict[str, List[Finding]]
Facts = Dict[str, PageFacts]


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def auto_jobs(pages: int) -> int:
    """Processes for a whole-vault check of this many pages: one per CPU for a large vault on a
    platform that can fork, otherwise one."""
    if not hasattr(os, "fork") or pages < MIN_PAGES:
        return 1
    return max(1, min(available_cpus(), MAX_JOBS))


class _Worker:
    """A forked worker as the parent sees it: its pid, its share and the two pipe ends."""

    def __init__(self, pid: int, share: List[str], results: IO[bytes], facts: IO[bytes]) -> None:
        self.pid = pid
        self.share = share
        self.results = results
        self.facts = facts
        self.alive = True


def diagnose_files(
    vault: Vault,
    files: Sequence[str],
    jobs: int,
    progress: Optional[Callable[[int], None]] = None,
) -> Findings:
    """Findings of `files` (those with any), the same as diagnosing them one by one here, using
    up to `jobs` processes. `progress` hears how many files are done."""
    shares = _deal(vault, files, jobs)
    if len(shares) < 2:
        return _diagnose(vault, files, progress)
    sys.stdout.flush()
    sys.stderr.flush()
    workers: List[_Worker] = []
    kept = list(shares[0])
    for share in shares[1:]:
        worker = _spawn(vault, share, workers)
        if worker is None:
            kept.extend(share)
        else:
            workers.append(worker)
    try:
        findings = _lead(vault, kept, workers, progress)
    finally:
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


def _deal(vault: Vault, files: Sequence[str], jobs: int) -> List[List[str]]:
    """The parent's share first. Pages are dealt in turn, in path order. The parent also keeps
    the other files (cheap to parse, and nobody needs their facts), and the last worker checks
    the index, which needs every page's facts: the processes meet after parsing, so both halves
    of the work (before and after that meeting) are balanced on their own."""
    pages = sorted(path for path in files if _is_page(vault, path))
    if jobs < 2 or len(pages) < jobs or not hasattr(os, "fork"):
        return [list(files)]
    index = [path for path in files if vault.entries[path].kind == INDEX]
    rest = [path for path in files if not _is_page(vault, path) and path not in index]
    shares = [pages[number::jobs] for number in range(jobs)]
    shares[0].extend(rest)
    shares[-1].extend(index)
    return shares


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


def _parse(vault: Vault, share: Sequence[str]) -> Facts:
    """Parse a share (everything but the exchange needs); the facts of its pages."""
    facts: Facts = {}
    for path in share:
        entry = vault.ensure(vault.entries[path])
        if _is_page(vault, path):
            named = replacement(vault, entry) if entry.deprecated else None
            facts[path] = PageFacts.of(entry, named.stem if named else None)
    return facts


def _spawn(vault: Vault, share: List[str], earlier: Sequence[_Worker]) -> Optional[_Worker]:
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
                _work(vault, share, out, into)
            status = 0
        finally:
            os._exit(status)
    os.close(results_write)
    os.close(facts_read)
    return _Worker(pid, share, os.fdopen(results_read, "rb"), os.fdopen(facts_write, "wb"))


def _work(vault: Vault, share: List[str], out: IO[bytes], into: IO[bytes]) -> None:
    """A worker's whole job: parse its pages, trade facts, diagnose its share, report."""
    _send(out, _parse(vault, share))
    foreign: Facts = pickle.load(into)
    for path, facts in foreign.items():
        vault.adopt(path, facts)
    _send(out, _diagnose(vault, share))


def _send(stream: IO[bytes], value: object) -> None:
    pickle.dump(value, stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.flush()


def _lead(
    vault: Vault,
    kept: List[str],
    workers: List[_Worker],
    progress: Optional[Callable[[int], None]],
) -> Findings:
    """The parent's side: its share, the exchange, and the gathering of the workers' findings."""
    facts = _parse(vault, kept)
    for worker in workers:
        try:
            facts.update(pickle.load(worker.results))
        except Exception:  # the worker died or sent garbage: its share is done here
            worker.alive = False
            kept.extend(worker.share)
            facts.update(_parse(vault, worker.share))
    for worker in workers:
        if not worker.alive:
            continue
        mine = set(worker.share)
        try:
            _send(worker.facts, {p: f for p, f in facts.items() if p not in mine})
            worker.facts.close()
        except OSError:
            worker.alive = False
            kept.extend(worker.share)
    for worker in workers:
        if worker.alive:
            for path in worker.share:
                if path in facts:
                    vault.adopt(path, facts[path])
    findings = _diagnose(vault, kept, progress)
    for worker in workers:
        if not worker.alive:
            continue
        try:
            findings.update(pickle.load(worker.results))
        except Exception:  # died after the exchange: its share is diagnosed here after all
            for path in worker.share:
                if path in facts:
                    vault.reparse(path)
            findings.update(_diagnose(vault, worker.share))
    return findings
