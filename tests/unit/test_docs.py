"""The docs: a page per diagnostic code where its `codeDescription` points, generated facts that
match the code, and relative links in the README and the docs that resolve."""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path
from typing import Iterator, List, Set, Tuple

from echoes_lsp.engine import codes as code_table
from echoes_lsp.engine.codes import CODES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")
sys.path.insert(0, str(DOCS / "_ext"))

import code_facts  # noqa: E402

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def declared_docs_url() -> str:
    """`Documentation` in pyproject.toml's `[project.urls]`, read with a TOML parser."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]["urls"]["Documentation"]


def test_the_documentation_address_is_the_one_pyproject_declares() -> None:
    declared = declared_docs_url()
    assert declared.endswith("/docs/")
    assert code_table.docs_base() == declared
    assert code_table._from_pyproject() == declared  # the checkout's fallback reads the same
    assert code_table._from_metadata() == declared  # and so does the installed metadata
    assert "github.com" not in (ROOT / "echoes_lsp" / "engine" / "codes.py").read_text("utf-8")


def test_without_metadata_or_pyproject_no_address_is_invented(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(code_table, "_from_metadata", lambda: None)
    monkeypatch.setattr(code_table, "_from_dist_info", lambda: None)
    monkeypatch.setattr(code_table, "PYPROJECT", str(tmp_path / "pyproject.toml"))
    code_table.docs_base.cache_clear()
    try:
        assert code_table.docs_base() == ""
        assert CODES["EV300"].url == ""
    finally:
        code_table.docs_base.cache_clear()


def test_a_wheel_install_reads_the_metadata_beside_the_package(monkeypatch, tmp_path) -> None:
    """The quick path of an installed wheel: `echoes_lsp-*.dist-info/METADATA` in site-packages."""
    (tmp_path / "echoes_lsp").mkdir()
    info = tmp_path / "echoes_lsp-9.9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.4\nName: echoes-lsp\nProject-URL: Repository, https://r.example/\n"
        "Project-URL: Documentation, https://d.example/docs/\n\nProject-URL: Documentation, no\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(code_table, "PACKAGE", str(tmp_path / "echoes_lsp"))
    assert code_table._from_dist_info() == "https://d.example/docs/"


def test_every_code_links_to_its_page() -> None:
    for code in CODES.values():
        assert code.url == f"{declared_docs_url()}codes/{code.code}.md"
        page = DOCS / code.page
        assert page.is_file(), code.code
        text = page.read_text(encoding="utf-8")
        assert text.startswith(f"# {code.code}: {code.title}\n"), code.code
        for section in ("## What it means", "## Example", "## How to fix it"):
            assert f"\n{section}\n" in text, (code.code, section)


def test_generated_code_facts_match_the_code() -> None:
    assert code_facts.stale() == []


def test_a_changed_title_or_severity_is_caught(monkeypatch) -> None:
    """The drift check itself can fail: a code whose title or severity changes no longer matches."""
    from echoes_lsp.engine import codes

    changed = codes.Code("EV300", "renamed", codes.ERROR)
    monkeypatch.setitem(codes.CODES, "EV300", changed)
    problems = code_facts.stale()
    assert "codes/EV300.md: generated text differs from codes.py" in problems
    assert "diagnostics.md: generated table differs from codes.py" in problems


def test_the_two_commands_are_documented() -> None:
    assert "make demo" in README and "make test" in README


def test_the_readme_is_a_front_door() -> None:
    assert len(README.splitlines()) <= 300


def _slug(heading: str) -> str:
    """GitHub's (and MyST's `myst_heading_anchors`) anchor for a heading."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> Set[str]:
    anchors: Set[str] = set()
    counts: dict = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = re.match(r"#{1,6}\s+(.*)", line)
        if match:
            slug = _slug(match.group(1))
            n = counts.get(slug, 0)
            counts[slug] = n + 1
            anchors.add(slug if n == 0 else f"{slug}-{n}")
        anchors.update(re.findall(r'<a id="([^"]+)"', line))
        anchors.update(re.findall(r"^\(([\w-]+)\)=$", line))
    return anchors


def _links(path: Path) -> Iterator[Tuple[int, str]]:
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            yield number, match.group(1)


def broken_links(path: Path) -> List[str]:
    broken = []
    for number, target in _links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto:
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(ROOT)}:{number}: {target}"
        if ROOT not in resolved.parents and resolved != ROOT:
            broken.append(f"{where} (above the repository)")
        elif not resolved.exists():
            broken.append(f"{where} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{where} (no such heading)")
    return broken


def test_relative_links_in_the_readme_and_the_docs_resolve() -> None:
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    pages = [p for p in pages if "_build" not in p.parts]
    assert len(pages) > 30
    broken = [problem for page in pages for problem in broken_links(page)]
    assert broken == []


def test_the_link_check_finds_broken_links(tmp_path: Path) -> None:
    page = DOCS / "_link_check_probe.md"
    page.write_text(
        "# Probe\n\n[a](nowhere.md) [b](../../outside.md) [c](diagnostics.md#no-such-heading)\n"
        "[ok](diagnostics.md#diagnostic-codes) [ok](#probe) `[code](skipped.md)`\n",
        encoding="utf-8",
    )
    try:
        problems = broken_links(page)
    finally:
        page.unlink()
    assert [p.split(": ", 1)[1] for p in problems] == [
        "nowhere.md (no such file)",
        "../../outside.md (above the repository)",
        "diagnostics.md#no-such-heading (no such heading)",
    ]


def editors_table() -> List[List[str]]:
    """The rows of the editors table of docs/editors/index.md, as cells."""
    text = (DOCS / "editors" / "index.md").read_text(encoding="utf-8")
    table = text.split("## The editors", 1)[1].split("\n\n", 2)[1]
    rows = [line.strip("|").split(" | ") for line in table.splitlines() if line.startswith("| ")]
    return rows[1:]  # without the header


def test_every_shipped_editor_has_a_row_and_every_guide_is_in_the_table() -> None:
    """`init` names the shipped editors; each is a row of the editors table, and each guide page
    of docs/editors/ is linked from its row (a guide nobody finds from the overview is lost)."""
    from echoes_lsp.cli.editor_dir import SHIPPED_EDITORS

    rows = editors_table()
    assert [row[0].split()[0] for row in rows] == [name.split()[0] for name in SHIPPED_EDITORS]
    linked = {target for row in rows for target in LINK.findall(row[-1])}
    guides = {path.name for path in (DOCS / "editors").glob("*.md")} - {"index.md"}
    assert guides <= linked, guides - linked
