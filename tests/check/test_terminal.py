"""The terminal face of `check`: `--color`, OSC 8 links from each code to its page, `--help`."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from echoes_lsp.engine.codes import CODES

from .conftest import TIMEOUT, CheckRun, base_env

OSC8 = "\x1b]8;;"


def linked(code: str) -> str:
    return f"{OSC8}{CODES[code].url}\x1b\\"


def test_color_always_wins_over_no_color(workspace: Path, check_here: CheckRun) -> None:
    out = check_here("--color", "always", cwd=workspace, env=base_env()).stdout
    assert "\x1b[1;31mEV100\x1b[0m" in out
    # the code is a hyperlink to its page, closed right after it
    assert f"{linked('EV100')}\x1b[1;31mEV100\x1b[0m{OSC8}\x1b\\ " in out
    assert CODES["EV100"].url.endswith("/docs/codes/EV100.md")


def test_color_never_wins_over_force_color(workspace: Path, check_here: CheckRun) -> None:
    env = base_env(FORCE_COLOR="1")
    del env["NO_COLOR"]
    assert "\x1b[" in check_here(cwd=workspace, env=env).stdout  # FORCE_COLOR alone colours
    out = check_here("--color", "never", cwd=workspace, env=env).stdout
    assert "\x1b" not in out and "EV100" in out


def test_links_can_be_turned_off_and_plain_output_has_none(
    workspace: Path, check_here: CheckRun
) -> None:
    env = base_env(ECHOES_LSP_NO_HYPERLINKS="1")
    out = check_here("--color", "always", cwd=workspace, env=env).stdout
    assert "\x1b[1;31mEV100\x1b[0m" in out and OSC8 not in out
    plain = check_here(cwd=workspace).stdout
    assert OSC8 not in plain and "/docs/codes/" not in plain


def test_a_terminal_gets_colour_and_links(workspace: Path) -> None:
    """`auto` on a real pseudo-terminal: colour and links without any setting."""
    env = base_env()
    del env["NO_COLOR"]
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "echoes_lsp", "check", "--select", "EV300"],
        cwd=str(workspace),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.DEVNULL,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closes when the process ends
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=TIMEOUT) == 0
    out = b"".join(chunks).decode("utf-8")
    assert linked("EV300") in out and "\x1b[1;33mEV300" in out


def test_color_rejects_other_values(workspace: Path, check_here: CheckRun) -> None:
    process = check_here("--color", "sometimes", cwd=workspace)
    assert process.returncode == 2
    assert "invalid choice: 'sometimes'" in process.stderr


# -- messages that say what to do ------------------------------------------------------------------


def test_every_required_field_has_its_example() -> None:
    from echoes_lsp.engine.codes import FIELD_EXAMPLE
    from echoes_lsp.runtime.echoes_vault import REQUIRED_FIELDS

    assert tuple(FIELD_EXAMPLE) == REQUIRED_FIELDS


def test_messages_of_common_codes_say_what_to_do(tmp_path: Path, check_here: CheckRun) -> None:
    from .conftest import RUNTIME, install_runtime, write_page

    subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(tmp_path), "init"],
        capture_output=True,
        timeout=TIMEOUT,
        check=True,
    )
    install_runtime(tmp_path)
    vault = tmp_path / "EchoesVault"
    page = write_page(vault, "no-status")
    page.write_text(page.read_text("utf-8").replace("status: active\n", ""), encoding="utf-8")
    write_page(vault, "conflicted", body="<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n")
    out = check_here("--format", "concise", cwd=tmp_path).stdout
    assert (
        "EV104 [error] required field `status` is missing: add `status: active` (any word is "
        "accepted; `deprecated` marks an obsolete page)"
    ) in out
    assert "EV400 [error] unresolved Git conflict marker (start): keep one side" in out
    # The runtime's own refusal keeps its bytes (the reference contract pins its JSON output).
    payload = {"filename": "b.md", "content": page.read_text("utf-8")}
    refused = subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(tmp_path), "upsert"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert refused.returncode == 2
    error = json.loads(refused.stderr)["error"]
    assert error.endswith("EV104 line 5: required field `status` is missing"), error


# -- --help, --fix with nothing to fix, `-` ------------------------------------------------------


def test_help_says_what_fix_changes(tmp_path: Path, check_here: CheckRun) -> None:
    from echoes_lsp.cli import fix_command

    process = check_here("--help", cwd=tmp_path)
    assert process.returncode == 0
    listed = process.stdout.split("--fix changes only these")[1]
    for code in fix_command.FIXABLE:
        assert f"  {code}  {fix_command.DESCRIPTIONS[code]}\n" in listed
    assert "byte-order mark" in listed  # EV100 is fixed only when a BOM is its cause


def test_fix_with_nothing_fixable_says_so(clean_workspace: Path, check_here: CheckRun) -> None:
    from .conftest import write_page

    write_page(clean_workspace / "EchoesVault", "linked", body="See [[nowhere]].\n")
    first = check_here("--fix", cwd=clean_workspace).stdout
    assert "index.md: fixed EV403" in first and "nothing was fixable" not in first
    before = (clean_workspace / "EchoesVault" / "pages" / "linked.md").read_bytes()
    process = check_here("--fix", cwd=clean_workspace)
    assert "--fix: nothing was fixable (it fixes only EV100, EV201, EV310, EV402, EV403;" in (
        process.stdout
    )
    assert (clean_workspace / "EchoesVault" / "pages" / "linked.md").read_bytes() == before
    as_json = json.loads(check_here("--fix", "--format", "json", cwd=clean_workspace).stdout)
    assert any(note.startswith("--fix: nothing was fixable") for note in as_json["notes"])
    plain = check_here(cwd=clean_workspace).stdout
    assert "nothing was fixable" not in plain  # only when --fix was asked for


def test_dash_is_standard_input_with_stdin_filename(clean_workspace: Path) -> None:
    from .conftest import run_check

    name = "EchoesVault/pages/typed.md"
    process = run_check(
        "--format", "concise", "--stdin-filename", name, "-", cwd=clean_workspace, stdin=b"x\n"
    )
    assert process.returncode == 1, process.stderr
    assert process.stdout.startswith(f"{name}:1:1: EV100 [error]")
    alone = run_check("-", cwd=clean_workspace)
    assert alone.returncode == 2
    assert "`-` (standard input) needs --stdin-filename" in alone.stderr
    other = run_check("--stdin-filename", name, "EchoesVault", cwd=clean_workspace)
    assert other.returncode == 2 and "takes no PATH arguments but `-`" in other.stderr
