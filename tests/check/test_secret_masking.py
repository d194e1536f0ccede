"""`echoes-lsp check` never prints a credential: code frames mask it in place (same columns), the
kind is named, and every format and `--stdin-filename` behave alike (issue 12, item 1).

What each format prints is read from the command's code run in this process (`check_here`);
standard input goes through the real command."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.test_s17_secrets import SHAPES

from .conftest import CheckRun, run_check, write_page

TOKEN = SHAPES["GitHub token"]
URI = SHAPES["credential URI"]
LINE = f"deploy with {TOKEN} then [[{URI}]] ok"


def _pieces() -> list:
    return [TOKEN, TOKEN[-12:], "s3cr3tPw"]


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "github", "sarif"])
def test_no_format_prints_the_value(clean_workspace: Path, check_here: CheckRun, fmt: str) -> None:
    write_page(clean_workspace / "EchoesVault", "creds", "Where the deploy key is.", f"\n{LINE}\n")
    process = check_here("--format", fmt, cwd=clean_workspace)
    assert process.returncode == 1, process.stdout + process.stderr
    output = process.stdout + process.stderr
    assert "EV600" in output
    for piece in _pieces():
        assert piece not in output, (fmt, piece)


def test_the_code_frame_keeps_position_and_kind(
    clean_workspace: Path, check_here: CheckRun
) -> None:
    write_page(clean_workspace / "EchoesVault", "creds", "Where the deploy key is.", f"\n{LINE}\n")
    process = check_here(cwd=clean_workspace)
    text = process.stdout
    assert "credential-shaped text: GitHub token" in text
    credential = URI.rsplit("/", 1)[0]  # the URI's path is not part of the credential
    masked_line = LINE.replace(TOKEN, "*" * len(TOKEN)).replace(credential, "*" * len(credential))
    assert f" | {masked_line}" in text, text
    # the carets sit under the masked value: same column, same width
    frame = text.splitlines()
    at = next(i for i, line in enumerate(frame) if line.endswith(masked_line))
    marks = frame[at + 1]
    column = marks.index("^")
    assert frame[at].index("*") == column
    assert marks.count("^") == len(TOKEN)


def test_stdin_buffer_is_masked_too(clean_workspace: Path) -> None:
    buffer = (
        "---\ntype: note\nstack: []\nstatus: active\nsummary: Draft.\n---\n\n" + LINE + "\n"
    ).encode()
    for fmt in ("text", "concise", "json"):
        process = run_check(
            "--format",
            fmt,
            "--stdin-filename",
            "EchoesVault/pages/draft.md",
            cwd=clean_workspace,
            stdin=buffer,
        )
        output = process.stdout + process.stderr
        assert "EV600" in output, output
        for piece in _pieces():
            assert piece not in output, (fmt, piece)
    assert (
        "*" * len(TOKEN)
        in run_check(
            "--stdin-filename", "EchoesVault/pages/draft.md", cwd=clean_workspace, stdin=buffer
        ).stdout
    )


def test_diff_previews_mask_the_value(clean_workspace: Path, check_here: CheckRun) -> None:
    """`--diff` shows the index a fix would write; a summary written by hand may hold a token."""
    write_page(clean_workspace / "EchoesVault", "creds", f"Deploy key {TOKEN} for CI.")
    process = check_here("--diff", cwd=clean_workspace)
    assert "+- [[creds]]: Deploy key " + "*" * len(TOKEN) + " for CI." in process.stdout
    assert TOKEN not in process.stdout + process.stderr
