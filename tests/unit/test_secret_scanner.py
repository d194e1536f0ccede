"""The secret scanner runs in time linear in its text, whatever the text holds, and finds exactly
what the expressions it was first written as found.

Linear time is shown three ways, none timed: every expression of the table is checked for the
shapes that make a regex engine slow (`tests/linear_expressions.py`); the scanner counts the
candidates it tries and the characters its parts read (`secret_scan_work`); and a step counter
sees the Python work around them (overlaps, pairs, line numbers). Each adversarial text is
measured at 64 KB and 256 KB: four times the text, about four times the work.
"""

from __future__ import annotations

from typing import List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from echoes_lsp.runtime import echoes_vault as rules
from tests.adversarial_text import AWS_ID, AWS_KEY, SECRET_TEXTS
from tests.linear_expressions import problems
from tests.runtime.test_s17_secrets import BENIGN, MORE_SHAPES, SHAPES
from tests.step_count import BudgetExceeded, count_steps
from tests.unit import secret_oracle
from tests.unit.test_secret_hints import PIECES, SHAPE_PIECES, WHOLE_PIECES

SMALL, LARGE = 64 * 1024, 256 * 1024
EVERY_KIND = {shape.kind for shape in rules.SECRET_SHAPES}
ADVERSARIAL = [
    pytest.param(kind, name, make, id=f"{kind}: {name}")
    for kind, texts in SECRET_TEXTS.items()
    for name, make in texts.items()
]


def test_every_kind_has_adversarial_texts() -> None:
    assert set(SECRET_TEXTS) == EVERY_KIND


# --- Same findings as the expressions first written ------------------------------------------

# Pieces that build long runs of one alphabet, the places where shapes used to restart.
RUN_PIECES = ["-eyJ", "eyJ", ".eyJ", "-glpat", "glpat-", "-", "aaaa", "é", "_", "xoxb-1-", "a-b-"]


def assert_same_findings(text: str) -> None:
    expected = secret_oracle.spans(text)
    assert rules._secret_spans(text, EVERY_KIND) == expected, text
    assert rules.secret_spans(text) == expected, text  # through the gates too


@pytest.mark.parametrize(
    "text",
    [
        *SHAPES.values(),
        *(value for _kind, value in MORE_SHAPES),
        *BENIGN,
        "x-eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        "-eyJ-eyJabcdefgh.eyJabcdefgh.abcdefghij",
        "eyJabcdefgh-eyJabcdefgh.eyJabcdefgh.abcdefghij",
        "glpat-" + "a" * 19 + "-" + "b" * 5 + "-",
        "glpat-" + "a" * 25 + "\u00e9",
        "glpat-" + "a" * 10 + "-" + "b" * 15 + "\u00e9",
        "glpat-" + "-" * 30,
        "postgres://postgres://app:s3cr3tPw@db.internal/x",
        "xoxb-1-a-b-c-abcdefg xoxb-1-abcdef_ xoxb-1-a-xoxb-1-abcdefg",
    ],
)
def test_the_scanner_finds_what_the_expressions_found(text: str) -> None:
    for variant in (text, f"key = {text}", f"x-{text}", f"a.{text}.b", f"'{text}'\n"):
        assert_same_findings(variant)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES + SHAPE_PIECES + RUN_PIECES), max_size=40))
def test_the_scanner_finds_what_the_expressions_found_in_any_text(parts: List[str]) -> None:
    assert_same_findings("".join(parts))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WHOLE_PIECES + RUN_PIECES), max_size=14))
def test_the_scanner_finds_what_the_expressions_found_around_every_shape(parts: List[str]) -> None:
    assert_same_findings("".join(parts))


# An ID looks for its key 200 characters to either side; these pieces put keys at every
# distance, reaches that overlap, and runs that cross the end of a reach.
PAIR_PIECES = [AWS_ID, AWS_KEY, AWS_KEY + "A", " ", "\n", "x" * 37, " " * 50, "+" * 11, "A/"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PAIR_PIECES), max_size=30))
def test_keys_are_paired_with_ids_as_before(parts: List[str]) -> None:
    assert_same_findings("".join(parts))


@pytest.mark.parametrize("gap", [0, 119, 120, 159, 160, 161, 199, 200, 201])
def test_a_key_is_paired_at_every_distance_as_before(gap: int) -> None:
    for key in (AWS_KEY, AWS_KEY + "Zz9", AWS_KEY[:39]):
        assert_same_findings(f"{AWS_ID}{' ' * gap}{key} and {key}{' ' * gap}{AWS_ID}")


def test_lines_and_columns_are_those_of_each_finding() -> None:
    token = SHAPES["GitHub token"]
    text = "\n".join(f"{'x ' * n}{token} {token}" for n in range(40))
    hits = rules.find_secrets(text)
    expected = [
        (kind, text.count("\n", 0, start), start - (text.rfind("\n", 0, start) + 1))
        for kind, start, _end in secret_oracle.spans(text)
    ]
    assert [(hit.kind, hit.line, hit.start) for hit in hits] == expected
    assert len(hits) == 80


# --- Every expression can only run in linear time --------------------------------------------


def expressions() -> List[Tuple[str, str]]:
    found = [(shape.kind, shape.start) for shape in rules.SECRET_SHAPES]
    found = [(kind, start) for kind, start in found if isinstance(start, str)]
    found.append(("credential URI", rules._URI))
    for sign, search, kinds in rules._SECRET_GATES:
        pattern = getattr(getattr(search, "__self__", None), "pattern", None)
        if pattern is not None:
            found.append((f"gate {sign} ({kinds[0]})", pattern))
    return found


@pytest.mark.parametrize("kind, expression", expressions(), ids=lambda value: str(value)[:40])
def test_no_expression_restarts_inside_a_run(kind: str, expression: str) -> None:
    assert problems(expression) == []


def test_the_expressions_first_written_were_not_all_linear() -> None:
    """The check is not empty: it finds the two expressions the parts replaced."""
    flagged = {kind for kind, pattern in secret_oracle.SECRET_PATTERNS if problems(pattern)}
    assert flagged == {"JSON Web Token", "GitLab token"}


def test_only_the_shapes_that_need_them_read_with_parts() -> None:
    with_parts = {shape.kind for shape in rules.SECRET_SHAPES if shape.parts}
    assert with_parts == {"JSON Web Token", "GitLab token"}


# --- The work grows with the text -------------------------------------------------------------


def work(text: str) -> int:
    candidates, read = rules.secret_scan_work(text)
    return candidates + read


@pytest.mark.parametrize("kind, name, make", ADVERSARIAL)
def test_the_scanners_work_grows_with_the_text(kind: str, name: str, make) -> None:  # type: ignore[no-untyped-def]
    small, large = work(make(SMALL)), work(make(LARGE))
    assert large <= 4.2 * small + 1024, (small, large)
    assert large <= 4 * LARGE  # each character read a bounded number of times


def test_the_work_counts_every_run_read() -> None:
    """A run is counted as read: without that, the test above would hold for any scanner."""
    text = "-eyJ" * 1000
    # one candidate: its start (`-eyJ`), the rest of the run, and the `.eyJ` looked for after it
    assert rules.secret_scan_work(text) == (1, 4 + (len(text) - 4) + 4)
    assert work(f"{AWS_ID} {AWS_KEY}") >= 40


SCANNER = (rules.__file__,)


@pytest.mark.parametrize("kind, name, make", ADVERSARIAL)
def test_the_steps_around_the_expressions_grow_with_the_text(kind: str, name: str, make) -> None:  # type: ignore[no-untyped-def]
    budget = 40 * LARGE
    small = count_steps(rules.find_secrets, make(SMALL), SCANNER, budget)
    large = count_steps(rules.find_secrets, make(LARGE), SCANNER, budget)
    assert large <= 4.2 * small + 1024, (small, large)


DENSE = {
    "GitHub tokens": SHAPES["GitHub token"] + " ",
    "JSON Web Tokens": "eyJabcdefgh.eyJabcdefgh.abcdefghij\n",
    "credential URIs": "ab://u:p@h ",
    "access key IDs": AWS_ID + " ",
    "IDs with keys": f"{AWS_ID} {AWS_KEY}\n",
}


@pytest.mark.parametrize("unit", DENSE.values(), ids=list(DENSE))
def test_many_findings_cost_each_the_same(unit: str) -> None:
    """Thousands of findings in one text: the overlap check, the pairs and the line numbers
    cost the same for the last finding as for the first."""
    budget = 200 * LARGE
    texts = [unit * (size // len(unit)) for size in (SMALL, LARGE)]
    try:
        small, large = (count_steps(rules.find_secrets, text, SCANNER, budget) for text in texts)
    except BudgetExceeded as error:
        pytest.fail(f"quadratic: {error}")
    assert large <= 4.2 * small + 1024, (small, large)
    assert len(rules.find_secrets(texts[0])) >= SMALL // 64
