"""Synthetic EchoesVault workspaces for benchmarks.

`generate(root, pages)` creates a Git repository at `root`, initializes it with the bundled runtime,
and fills it with valid knowledge pages (frontmatter, headings, `[[links]]`, some deprecated pages),
unique daily entries and a few assets, then commits the durable files. The output depends only on
the arguments, so benchmarks are repeatable. Pages are written directly (not through `upsert`) to
keep generation fast; the runtime's `rebuild-index` then produces the index.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, List, Optional

RUNTIME = Path(__file__).resolve().parent.parent / "runtime" / "echoes_vault.py"
GENERATOR_VERSION = 1

WORDS = (
    "account adapter alert api audit backoff batch billing boundary broker cache callback "
    "charge checkout client cluster config consumer contract cron currency customer database "
    "deploy dispute endpoint event export fee gateway handler idempotency index invoice job "
    "kafka key ledger limit logging merchant metric migration model monitor network notify "
    "order outbox partition payment payout policy postgres queue rate reconcile record redis "
    "refund region replica retry risk route schema secret service session settlement shard "
    "signature subscription tenant timeout token trace transfer upgrade user validation "
    "vendor webhook worker"
).split()
TYPES = ("architecture", "decision", "runbook", "api", "schema", "incident", "config")
STACKS = ("[python]", "[python, postgresql]", "[go, kafka]", "[typescript]", "[]", "[terraform]")


def page_stem(number: int) -> str:
    return f"topic-{number:05d}"


def _sentence(rng: random.Random, words: int) -> str:
    chosen = [rng.choice(WORDS) for _ in range(words)]
    return " ".join(chosen).capitalize() + "."


def page_text(
    number: int, pages: int, rng: random.Random, links_per_page: int, bytes_per_page: int
) -> str:
    deprecated = number % 25 == 7
    status = "deprecated" if deprecated else rng.choice(("active", "active", "draft"))
    summary = f"{_sentence(rng, 8)[:-1]} (topic {number})."
    lines = [
        "---",
        f"type: {rng.choice(TYPES)}",
        f"stack: {rng.choice(STACKS)}",
        f"status: {status}",
        f"summary: {summary}",
        f"tags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]",
        "---",
        "",
        f"# Topic {number}: {rng.choice(WORDS)} {rng.choice(WORDS)}",
        "",
    ]
    if deprecated:
        replacement = page_stem((number + 1) % pages)
        lines += [
            "> [!warning] DEPRECATED",
            f"> Replaced by [[{replacement}]].",
            "",
        ]
    section = 0
    size = sum(len(line) + 1 for line in lines)
    while size < bytes_per_page:
        section += 1
        paragraph = [f"## Section {section}", ""]
        text = " ".join(_sentence(rng, rng.randint(6, 16)) for _ in range(rng.randint(3, 6)))
        paragraph.append(text)
        paragraph.append("")
        for _ in range(max(1, links_per_page // 2)):
            target = page_stem(rng.randrange(pages))
            paragraph.append(f"- See [[{target}]] for the {rng.choice(WORDS)} details.")
        paragraph.append("")
        lines += paragraph
        size += sum(len(line) + 1 for line in paragraph)
    return "\n".join(lines) + "\n"


def _git(root: Path, *args: str) -> None:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.invalid",
    )
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def run_runtime(root: Path, *args: str, python: Optional[str] = None) -> str:
    process = subprocess.run(
        [python or sys.executable, str(RUNTIME), "--workspace", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if process.returncode != 0:
        raise RuntimeError(f"runtime {args} failed: {process.stderr.strip()}")
    return process.stdout


def generate(
    root: Path,
    pages: int,
    seed: int = 0,
    links_per_page: int = 5,
    bytes_per_page: int = 4000,
    daily_entries: Optional[int] = None,
    commit: bool = True,
) -> Path:
    """Create an initialized synthetic workspace at `root` (which must not exist)."""
    rng = random.Random(seed)
    root = Path(root)
    root.mkdir(parents=True)
    _git(root, "init", "-q")
    run_runtime(root, "init")
    vault = root / "EchoesVault"
    for number in range(pages):
        text = page_text(number, pages, rng, links_per_page, bytes_per_page)
        (vault / "pages" / f"{page_stem(number)}.md").write_text(text, encoding="utf-8")
    entries = daily_entries if daily_entries is not None else max(10, pages // 20)
    for number in range(entries):
        day = 1 + number % 28
        stamp = f"202609{day:02d}T{number % 24:02d}{number % 60:02d}00{number:06d}"[:21] + "Z"
        kind = "session" if number % 5 == 0 else "scratchpad"
        directory = vault / "daily" / f"2026-09-{day:02d}"
        directory.mkdir(exist_ok=True)
        name = f"{stamp}-{kind}-bench-{rng.getrandbits(32):08x}.md"
        title = "Session" if kind == "session" else "Scratchpad"
        body = (
            f"### {title} — 2026-09-{day:02d}T12:00:00+00:00\n\nAgent: `bench`\n\n"
            f"- {_sentence(rng, 12)}\n- Linked [[{page_stem(rng.randrange(max(pages, 1)))}]].\n"
        )
        (directory / name).write_text(body, encoding="utf-8")
    for number in range(min(20, max(1, pages // 500))):
        (vault / "assets" / f"diagram-{number:03d}.svg").write_text(
            f'<svg xmlns="http://www.w3.org/2000/svg"><text>{number}</text></svg>\n',
            encoding="utf-8",
        )
    (vault / "raw" / "notes.txt").write_text("raw material kept for later\n", encoding="utf-8")
    run_runtime(root, "rebuild-index")
    if commit:
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "synthetic vault")
    (root / ".bench-vault.json").write_text(
        json.dumps({"pages": pages, "seed": seed, "generator": GENERATOR_VERSION}) + "\n",
        encoding="utf-8",
    )
    return root


def cached_vault(cache_dir: Path, pages: int, seed: int = 0, **options: Any) -> Path:
    """A generated vault reused across runs while the generator and parameters are unchanged."""
    root = Path(cache_dir) / f"vault-{pages}-{seed}"
    stamp = root / ".bench-vault.json"
    wanted = {"pages": pages, "seed": seed, "generator": GENERATOR_VERSION}
    if stamp.exists():
        try:
            if json.loads(stamp.read_text(encoding="utf-8")) == wanted:
                return root
        except ValueError:
            pass
    if root.exists():
        shutil.rmtree(root)
    return generate(root, pages, seed, **options)


def pages_of(root: Path) -> List[Path]:
    return sorted((Path(root) / "EchoesVault" / "pages").glob("*.md"))
