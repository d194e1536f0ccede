"""A tour of echoes-lsp on the demo vault (a fictional payments service).

Run it with `make demo` or `python examples/demo.py`.

The demo vault holds seven healthy pages and, on purpose, one page for each common mistake that
agents and people make: a missing field and an over-long summary, a multi-line summary, a broken
and a deprecated link, a leftover Git conflict, a deprecated page without its callout, and a
credential pasted into a page.

The runtime resolves `--workspace` to the enclosing Git repository's top level, exactly as agents
rely on. `examples/demo-vault/` lives inside the echoes-lsp repository, so pointing the runtime at it
directly would address the echoes-lsp checkout instead. The demo therefore copies the vault to a
temporary directory, installs this checkout's runtime into the copy (the demo vault carries no copy
of it: `init` or `upgrade` installs it in a real project), makes the copy its own Git repository
(with the durable files committed, as a real project would have them), and there:

1. `status --format card` shows the read-only health card, with the invalid pages (in colour on a
   terminal);
2. `hydrate` refuses to build an index while pages are invalid (all-or-nothing);
3. `search idempotency` shows a literal search over the knowledge pages;
4. a scripted language-server session opens a page and prints the diagnostics and a `[[`
   completion that an editor would show;
5. `echoes-lsp check` shows every problem with code frames.

Nothing in the repository is modified. Set ECHOES_DEMO_KEEP=1 to keep the temporary copy.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List

from echoes_lsp.cli.report import Style, color_enabled

HERE = Path(__file__).resolve().parent
DEMO_VAULT = HERE / "demo-vault"
RUNTIME = HERE.parent / "runtime" / "echoes_vault.py"
LOCAL_ONLY = (
    "EchoesVault/index.md",
    ".echoes-vault/state.json",
    ".echoes-vault/lock",
    ".echoes-vault/index-cache.json",
)


def runtime(workspace: Path, *args: str) -> str:
    process = subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if process.returncode != 0:
        raise SystemExit(
            f"runtime {' '.join(args)} failed ({process.returncode}): {process.stderr.strip()}"
        )
    return process.stdout


def git(workspace: Path, *args: str) -> None:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="Demo",
        GIT_AUTHOR_EMAIL="demo@example.invalid",
        GIT_COMMITTER_NAME="Demo",
        GIT_COMMITTER_EMAIL="demo@example.invalid",
    )
    subprocess.run(["git", *args], cwd=workspace, env=env, check=True, capture_output=True)


def copy_vault(target: Path) -> Path:
    ignore = shutil.ignore_patterns(
        "index.md", "state.json", "lock", "index-cache.json", "__pycache__"
    )
    shutil.copytree(DEMO_VAULT, target, ignore=ignore)
    # the demo vault carries no runtime: install this checkout's, as `init` does in a project
    shutil.copyfile(RUNTIME, target / ".echoes-vault" / "echoes_vault.py")
    if shutil.which("git"):
        git(target, "init", "-q")
        git(target, "add", "-A")
        git(target, "commit", "-q", "-m", "Demo vault")
    else:  # without Git the copy is still its own workspace (no enclosing repository)
        (target / ".git").mkdir()
    return target


STYLE = Style(color_enabled(sys.stdout))


def heading(title: str) -> None:
    rule = "=" * 72
    print(f"\n{STYLE.paint(rule, '2')}\n{STYLE.bold(title)}\n{STYLE.paint(rule, '2')}\n")


def card_for_terminal(card: str, workspace: Path) -> str:
    """The runtime's Markdown status card, painted for a terminal (plain when colour is off), with
    the temporary workspace named for what it is: it is removed when the demo ends."""
    card = card.replace(str(workspace), f"{workspace.name} (a temporary copy of the demo vault)")
    if not STYLE.enabled:
        return card  # Markdown, as the runtime wrote it
    out = []
    for line in card.split("\n"):
        if line.startswith("#"):
            out.append(STYLE.paint(line.lstrip("# "), "1;36"))
            continue
        line = re.sub(r"\*\*([^*]+)\*\*", lambda m: STYLE.bold(m.group(1)), line)
        line = re.sub(r"`([^`]+)`", lambda m: STYLE.paint(m.group(1), "36"), line)
        line = re.sub(r"\b(EV\d{3})\b", lambda m: STYLE.severity(m.group(1), "error"), line)
        for word, code in (("attention", "1;33"), ("healthy", "1;32"), ("blocked", "33")):
            line = line.replace(word, STYLE.paint(word, code))
        out.append(line)
    return "\n".join(out)


def error_lines(message: str) -> str:
    """A runtime error naming several pages, one page per line, nothing cut off."""
    head, colon, rest = message.partition("): ")
    if not colon:
        return message
    return head + "):\n" + "\n".join(f"  {part.strip()}" for part in rest.split(" | "))


def try_runtime(workspace: Path, *args: str) -> tuple[int, str, str]:
    process = subprocess.run(
        [sys.executable, str(RUNTIME), "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return process.returncode, process.stdout, process.stderr


def main(argv: List[str]) -> int:
    query = argv[0] if argv else "idempotency"
    keep = os.environ.get("ECHOES_DEMO_KEEP") == "1"
    temporary = Path(tempfile.mkdtemp(prefix="echoes-demo-"))
    try:
        workspace = copy_vault(temporary / "lumen-pay")
        heading("status --format card (read-only)")
        print(
            card_for_terminal(runtime(workspace, "status", "--format", "card"), workspace), end=""
        )
        heading("hydrate: the index is all-or-nothing, so invalid pages block it")
        code, out, err = try_runtime(workspace, "hydrate")
        if code == 0:
            refresh = json.loads(out)["indexRefresh"]
            print(f"index {refresh['status']}: {refresh['pages']} pages")
        else:
            error = json.loads(err)
            print(f"exit {code}, code {error.get('code')!r}:\n{error_lines(error['error'])}")
        heading(f"search {query!r}")
        found = json.loads(runtime(workspace, "search", query, "--limit", "10"))
        for result in found["results"]:
            print(f"{result['file']}:{result['line']}: {result['text']}")
        if found["truncated"]:
            print("… more results (raise --limit)")
        print(f"\n({len(found['results'])} results)")
        heading("language server: open fx-rates.md, then type `[[sett`")
        sys.path.insert(0, str(HERE))
        from lsp_session import session

        page = workspace / "EchoesVault" / "pages" / "fx-rates.md"
        print("\n".join(asyncio.run(session(workspace, page))))
        heading("echoes-lsp check")
        sys.stdout.flush()
        check = subprocess.run(
            [sys.executable, "-m", "echoes_lsp", "check"], cwd=workspace, check=False
        )
        if keep:
            print(f"\nThe demo workspace is kept at {workspace} (ECHOES_DEMO_KEEP=1).")
        return 0 if check.returncode <= 1 else check.returncode
    finally:
        if not keep:
            shutil.rmtree(temporary, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
