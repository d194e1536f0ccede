"""Which regular expressions the engine can run in linear time, judged from their structure.

Two shapes make a backtracking engine slow on long runs, and these checks find both:

- **restarting inside a run**: an expression searched for at every position (`search`,
  `finditer`) whose unbounded repeat can read a run that holds another place where the
  expression could begin. Each of those places reads the run again: quadratic time. A repeat is
  safe when its class leaves out a character of the literal text before it (or a line start
  before it), when it begins only at the start of its own run (a look-behind for its own class
  just before it), or when it is the expression's last element (it takes the whole run, and a
  failing candidate fails within the repeat's least length).
- **backing off between two repeats**: an unbounded repeat followed by another repeat whose class
  overlaps it, so that on failure every split of a run between them is tried. Safe when the second
  repeat always succeeds: it ends the expression, or it is `.*` right before `$` (a line).
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Sequence, Set, Tuple

try:  # Python 3.11 and later
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.9 and 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

C = sre_constants
UNBOUNDED = C.MAXREPEAT
REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT)
ONE_CHARACTER = (C.LITERAL, C.NOT_LITERAL, C.IN, C.ANY, C.CATEGORY)
LINE_STARTS = (C.AT_BEGINNING_LINE,)
TEXT_STARTS = (C.AT_BEGINNING, C.AT_BEGINNING_STRING)
Node = Tuple[object, object]


class Repeat:
    """One repeat of the expression, with what can be known of it without running it."""

    def __init__(self, node: Node, flags: int, state: object) -> None:
        _op, (least, most, item) = node  # type: ignore[misc]
        self.least = least
        self.unbounded = most == UNBOUNDED
        self.item = item
        self._leaves = [_compile_leaf(leaf, flags, state) for leaf in _leaves(item)]
        self._first = [_compile_leaf(leaf, flags, state) for leaf in _first_leaves(item)]

    def admits(self, char: str) -> bool:
        """Whether a run this repeat reads can hold `char`."""
        return any(leaf.fullmatch(char) for leaf in self._leaves)

    def begins_with(self, char: str) -> bool:
        """Whether what this repeat reads can begin with `char`."""
        return any(leaf.fullmatch(char) for leaf in self._first)

    def overlaps(self, after: Repeat) -> bool:
        """Whether what `after` reads can begin with a character this repeat can read."""
        return any(self.admits(chr(code)) and after.begins_with(chr(code)) for code in range(0x250))

    def is_line_rest(self) -> bool:
        """`.*` without DOTALL: the rest of a line, which always succeeds before `$`."""
        leaves = list(_leaves(self.item))
        return self.least == 0 and len(leaves) == 1 and leaves[0][0] == C.ANY


def _leaves(item: Sequence[Node]) -> Iterator[Node]:
    """The one-character parts of an item, at any depth."""
    for op, av in item:
        if op in ONE_CHARACTER:
            yield op, av
        elif op in REPEATS:
            yield from _leaves(av[2])  # type: ignore[index]
        elif op == C.SUBPATTERN:
            yield from _leaves(av[-1])  # type: ignore[index]
        elif op == C.BRANCH:
            for branch in av[1]:  # type: ignore[index]
                yield from _leaves(branch)


def _first_leaves(item: Sequence[Node]) -> Iterator[Node]:
    """The one-character parts an item can begin with."""
    for op, av in item:
        if op in ONE_CHARACTER:
            yield op, av
            return
        if op in REPEATS:
            yield from _first_leaves(av[2])  # type: ignore[index]
            if av[0] > 0:  # type: ignore[index]
                return
        elif op == C.SUBPATTERN:
            yield from _first_leaves(av[-1])  # type: ignore[index]
            return
        elif op == C.BRANCH:
            for branch in av[1]:  # type: ignore[index]
                yield from _first_leaves(branch)
            return


def _compile_leaf(leaf: Node, flags: int, state: object) -> re.Pattern:
    try:
        from re import _compiler as sre_compile  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover
        import sre_compile  # type: ignore[no-redef]
    return sre_compile.compile(sre_parse.SubPattern(state, [leaf]), flags)  # type: ignore[no-any-return]


def _flatten(item: Sequence[Node], flags: int) -> Iterator[Tuple[Node, int]]:
    """The elements of an expression in order, groups opened (a repeated group stays whole)."""
    for op, av in item:
        if op == C.SUBPATTERN:
            _group, add, _remove, inner = av  # type: ignore[misc]
            yield from _flatten(inner, flags | add)
        else:
            yield (op, av), flags


def _literal_chars(node: Node) -> Set[str]:
    op, av = node
    if op == C.LITERAL:
        return {chr(av)}  # type: ignore[arg-type]
    if op == C.AT and av in LINE_STARTS:
        return {"\n"}
    return set()


def _lookbehind_class(node: Node, flags: int, state: object) -> Optional[Repeat]:
    """For `(?<![class])`, a repeat of that class, to compare with the repeat after it."""
    op, av = node
    if op != C.ASSERT_NOT or av[0] != -1:  # type: ignore[index]
        return None
    inner = list(av[1])  # type: ignore[index]
    if len(inner) != 1 or inner[0][0] != C.IN:
        return None
    return Repeat((C.MAX_REPEAT, (0, UNBOUNDED, inner)), flags, state)


def problems(source: str, searched: bool = True, flags: int = 0) -> List[str]:
    """Why the expression may take more than linear time; empty when it cannot. `searched`:
    the expression is tried at every position of a text (`search`, `finditer`), not only at
    one (`match`, `fullmatch`)."""
    parsed = sre_parse.parse(source, flags)
    state = parsed.state
    elements = list(_flatten(list(parsed), flags | state.flags))
    found: List[str] = []
    for index, (node, node_flags) in enumerate(elements):
        top = Repeat(node, node_flags, state) if node[0] in REPEATS else None
        inner = [Repeat(each, node_flags, state) for each in _repeats_in([node]) if each != node]
        if searched:
            for repeat in ([top] if top else []) + inner:
                if _restarts(elements, index, repeat, last=repeat is top, state=state):
                    found.append(f"{source!r}: an unbounded repeat can restart inside its run")
        if top is not None and _backs_off(elements, index, top, state):
            found.append(f"{source!r}: two overlapping repeats back off against each other")
    return sorted(set(found))


def _restarts(elements: list, index: int, repeat: Repeat, last: bool, state: object) -> bool:
    if not repeat.unbounded or (last and index == len(elements) - 1):
        return False
    before = [node for node, _flags in elements[:index]]
    if any(node[0] == C.AT and node[1] in TEXT_STARTS for node in before):
        return False
    if any(not repeat.admits(char) for node in before for char in _literal_chars(node)):
        return False
    return not (last and index and _same_class(elements[index - 1], repeat, state))


def _repeats_in(item: Sequence[Node]) -> Iterator[Node]:
    """Every repeat in an item, at any depth, alternatives and look-arounds included."""
    for op, av in item:
        if op in REPEATS:
            yield op, av
            yield from _repeats_in(av[2])  # type: ignore[index]
        elif op == C.SUBPATTERN:
            yield from _repeats_in(av[-1])  # type: ignore[index]
        elif op == C.BRANCH:
            for branch in av[1]:  # type: ignore[index]
                yield from _repeats_in(branch)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            yield from _repeats_in(av[1])  # type: ignore[index]


def _same_class(element: Tuple[Node, int], repeat: Repeat, state: object) -> bool:
    behind = _lookbehind_class(element[0], element[1], state)
    return behind is not None and all(
        behind.admits(chr(code)) == repeat.admits(chr(code)) for code in range(0x250)
    )


def _backs_off(elements: list, index: int, repeat: Repeat, state: object) -> bool:
    if not repeat.unbounded or index + 1 >= len(elements):
        return False
    node, node_flags = elements[index + 1]
    if node[0] not in REPEATS:
        return False
    after = Repeat(node, node_flags, state)
    rest = elements[index + 2 :]
    always_succeeds = not rest or (after.is_line_rest() and _ends_at_line_end(rest))
    return repeat.overlaps(after) and not always_succeeds


def _ends_at_line_end(rest: list) -> bool:
    return len(rest) == 1 and rest[0][0] == (C.AT, C.AT_END)
