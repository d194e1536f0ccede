"""Counting the work of a parser, so that tests can show it grows in proportion to its input
without timing anything.

A step is one line of Python run in the modules under test, or one character that a string
method of the input text reads (slices, searches, counts, splits: the loops that run in C).
The regular expressions' own work is not seen here; `tests/linear_expressions.py` checks their
structure instead. A budget stops a run that goes far past linear at once, so that a quadratic
parser fails quickly instead of running for minutes.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any, Callable, Iterable, Optional, Sequence


class BudgetExceeded(Exception):
    pass


class Steps:
    def __init__(self, budget: int) -> None:
        self.count = 0
        self.budget = budget

    def add(self, amount: int) -> None:
        self.count += amount
        if self.count > self.budget:
            raise BudgetExceeded(f"more than {self.budget} steps")


def _span(length: int, start: Optional[int], end: Optional[int]) -> int:
    first, last, _stride = slice(start, end).indices(length)
    return max(0, last - first)


class CountingText(str):
    """A text whose own slices and searches count the characters they read."""

    steps: Steps

    def __new__(cls, text: str, steps: Steps) -> CountingText:
        made = super().__new__(cls, text)
        made.steps = steps
        return made

    def __getitem__(self, key: Any) -> str:  # type: ignore[override]
        part = str.__getitem__(self, key)
        self.steps.add(len(part))
        return part

    def __contains__(self, sub: object) -> bool:  # type: ignore[override]
        found = str.find(self, sub)  # type: ignore[arg-type]
        self.steps.add(len(self) if found < 0 else found + len(sub))  # type: ignore[arg-type]
        return found >= 0

    def find(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        found = str.find(self, sub, start, end)
        reach = _span(len(self), start, end if found < 0 else found + len(sub))
        self.steps.add(reach)
        return found

    def rfind(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        found = str.rfind(self, sub, start, end)
        first = slice(start, end).indices(len(self))[0]
        self.steps.add(_span(len(self), found if found >= 0 else first, end))
        return found

    def count(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        self.steps.add(_span(len(self), start, end))
        return str.count(self, sub, start, end)

    def startswith(self, prefix: Any, start: Any = None, end: Any = None) -> bool:  # type: ignore[override]
        self.steps.add(1)
        return str.startswith(self, prefix, start, end)

    def split(self, sep: Any = None, maxsplit: int = -1) -> list:  # type: ignore[override]
        parts = str.split(self, sep, maxsplit)
        self.steps.add(sum(map(len, parts)) + len(parts))
        return parts

    def lower(self) -> str:
        self.steps.add(len(self))
        return str.lower(self)


def count_steps(run: Callable[[Any], object], text: str, files: Iterable[str], budget: int) -> int:
    """The steps `run(text)` takes in the given source files (and in reading the text), or
    BudgetExceeded when more than `budget`."""
    steps = Steps(budget)
    watched: Sequence[str] = tuple(files)

    def local(frame: FrameType, event: str, arg: object) -> Any:
        if event == "line":
            steps.add(1)
        return local

    def global_trace(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code.co_filename in watched else None

    counted = CountingText(text, steps)
    previous = sys.gettrace()
    sys.settrace(global_trace)
    try:
        run(counted)
    finally:
        sys.settrace(previous)
    return steps.count
