"""Properties: scalar round-trips, index determinism, name normalization, no tracebacks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import PYTHON, ROOT, RUNTIME, base_env, make_repo, page

sys.path.insert(0, str(ROOT / "runtime"))
from echoes_lsp.runtime import echoes_vault as ev

SUBPROCESS = settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@given(st.text())
def test_scalar_render_parse_round_trip(value: str) -> None:
    assert ev.parse_scalar(ev.render_scalar(value)) == (value, None)


@given(st.text(min_size=1).filter(lambda v: v.strip() and "\n" not in v and "\r" not in v))
def test_frontmatter_scalar_round_trip_through_a_page(value: str) -> None:
    text = f"---\ntype: {ev.render_scalar(value)}\nstack: []\nstatus: {ev.render_scalar(value)}\nsummary: s\n---\n"
    info = ev.analyze_page(text)
    assert info.problems == []
    assert info.type == value and info.status == value


@given(st.text())
def test_page_name_normalization_is_idempotent(name: str) -> None:
    try:
        normalized = ev.normalize_page_name(name)
    except ev.EchoesError as error:
        assert error.code == "unsafe-path"
        return
    assert ev.normalize_page_name(normalized) == normalized
    # only one final lowercase `.md` is taken as the suffix (`note.MD` -> `note.MD.md`)
    stem = unicodedata.normalize("NFC", name.strip())
    stem = stem[:-3] if stem.endswith(".md") else stem
    assert normalized == stem + ".md"
    assert unicodedata.is_normalized("NFC", normalized)
    assert "/" not in normalized and "\\" not in normalized and ".." not in normalized
    assert not normalized.startswith(".")


stems = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12
).map(lambda s: s.replace("/", "").replace("\\", "").replace("..", "").replace("]", "").lstrip("."))


@given(st.lists(st.tuples(stems, st.text(max_size=20)), max_size=12), st.randoms())
def test_render_index_ignores_input_order(rows: List[Any], random: Any) -> None:
    shuffled = list(rows)
    random.shuffle(shuffled)
    assert ev.render_index(rows) == ev.render_index(shuffled)
    assert ev.render_index(rows).endswith("\n")


@pytest.fixture(scope="module")
def fuzz_vault(tmp_path_factory: pytest.TempPathFactory, initialized_template: Path) -> Path:
    root = make_repo(tmp_path_factory.mktemp("fuzz") / "ws")
    for item in initialized_template.iterdir():
        if item.name != ".git":
            (shutil.copytree if item.is_dir() else shutil.copy2)(item, root / item.name)
    return root


def run(
    root: Path, args: List[str], stdin: bytes = b"", bundled: bool = False
) -> subprocess.CompletedProcess:
    script = RUNTIME if bundled else root / ".echoes-vault/echoes_vault.py"
    return subprocess.run(
        [PYTHON, str(script), "--workspace", str(root), *args],
        input=stdin,
        capture_output=True,
        env=base_env(ECHOES_VAULT_LOCK_TIMEOUT="5"),
        timeout=60,
        check=False,
    )


names = st.lists(
    st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True),
    min_size=1,
    max_size=6,
    unique_by=ev.page_key,
)


@settings(SUBPROCESS, max_examples=6)
@given(names, st.randoms())
def test_index_bytes_do_not_depend_on_creation_order(
    tmp_path: Path, initialized_template: Path, stems_: List[str], random: Any
) -> None:
    results = []
    for _attempt in range(2):
        root = tmp_path / f"v{len(list(tmp_path.iterdir()))}"
        shutil.copytree(initialized_template, root, ignore=shutil.ignore_patterns(".git"))
        (root / ".git").mkdir()  # a workspace boundary; no Git needed for this property
        order = list(stems_)
        random.shuffle(order)
        for stem in order:
            (root / "EchoesVault/pages" / f"{stem}.md").write_text(page(f"Summary of {stem}."))
        process = run(root, ["rebuild-index"])
        assert process.returncode == 0, process.stderr
        results.append((root / "EchoesVault/index.md").read_bytes())
    assert results[0] == results[1]


COMMANDS = [*ev.COMMAND_NAMES, "bogus"]
FLAGS = [
    "--payload",
    "-",
    "--format",
    "card",
    "json",
    "--recent",
    "--limit",
    "--agent",
    "--adapter-version",
    "--confirm-explicit-user-end",
    "--help",
    "-x",
    "--",
]
tokens = st.one_of(st.sampled_from(COMMANDS + FLAGS), st.text(max_size=12)).filter(
    lambda t: not t.startswith("--workspace") and "\x00" not in t
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
payloads = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {
            "filename": st.one_of(st.text(max_size=15), st.integers()),
            "content": st.one_of(st.text(max_size=80), st.just(page())),
        },
        optional={
            "expectedSha256": st.text(max_size=64),
            "indexDescription": st.text(max_size=20),
            "agent": st.text(max_size=10),
        },
    ),
    st.fixed_dictionaries(
        {"dailySummary": st.text(max_size=40)},
        optional={
            "pages": st.lists(json_values, max_size=2),
            "agent": json_values,
            "indexUpdates": json_values,
        },
    ),
)


def assert_clean(process: subprocess.CompletedProcess) -> None:
    stderr = process.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert process.returncode in (0, 2), (process.returncode, stderr)
    if process.returncode == 2:
        error = json.loads(stderr.strip().splitlines()[-1])
        assert error["ok"] is False and error["code"] != "internal", error


def assert_still_inspectable(root: Path) -> None:
    """Whatever the random input did, the vault still answers `inspect` and `status`."""
    for command in (["inspect"], ["status"]):
        process = run(root, command)
        assert process.returncode == 0, (command, process.stderr)
        assert json.loads(process.stdout)["ok"] is True


@SUBPROCESS
@given(st.lists(tokens, max_size=6))
def test_random_arguments_never_produce_a_traceback(fuzz_vault: Path, args: List[str]) -> None:
    assert_clean(run(fuzz_vault, args, stdin=b"{}"))
    assert_still_inspectable(fuzz_vault)


@SUBPROCESS
@given(st.sampled_from(["upsert", "append", "end"]), payloads)
def test_random_payloads_never_produce_a_traceback(
    fuzz_vault: Path, command: str, payload: Any
) -> None:
    args = [command, "--payload", "-"] + (
        ["--confirm-explicit-user-end"] if command == "end" else []
    )
    assert_clean(run(fuzz_vault, args, stdin=json.dumps(payload).encode("utf-8")))
    assert_still_inspectable(fuzz_vault)


@SUBPROCESS
@given(st.binary(max_size=200))
def test_random_payload_bytes_never_produce_a_traceback(fuzz_vault: Path, data: bytes) -> None:
    assert_clean(run(fuzz_vault, ["upsert", "--payload", "-"], stdin=data))
    assert_still_inspectable(fuzz_vault)
