"""EV402/EV403 follow spec 8's order: the checker's prospective index is the runtime's, rows sorted by
the file name with `.md` (`api-gateway` before `api`), and `.MD` files are pages."""

from __future__ import annotations

from pathlib import Path

from .conftest import by_path, git, json_report, runtime, write_page


def test_ev402_uses_the_runtimes_order(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    git(workspace, "init", "-q")
    runtime(workspace, "init")
    vault = workspace / "EchoesVault"
    for name in ("api", "api-gateway", "API-x", "api.v2", "strasse-2", "straße"):
        write_page(vault, name, summary=f"About {name}.")
    (vault / "pages" / "Upper.MD").write_text(
        "---\ntype: note\nstack: []\nstatus: active\nsummary: Upper.\n---\n", encoding="utf-8"
    )
    runtime(workspace, "rebuild-index")
    index = vault / "index.md"
    rows = [
        line for line in index.read_text(encoding="utf-8").splitlines() if line.startswith("- [[")
    ]
    assert [row.split("]]")[0][4:] for row in rows] == [
        "api-gateway",
        "API-x",
        "api",
        "api.v2",
        "strasse-2",
        "straße",
        "Upper",
    ]
    report = json_report("--select", "EV402,EV403,EV502", cwd=workspace)
    assert by_path(report) == {}, report
    # the stem order of engines before 1.5.0 is now a stale index (EV403: out of date, not edited)
    text = index.read_text(encoding="utf-8")
    first, second = rows[0], rows[2]
    index.write_text(
        text.replace(first, "\0").replace(second, first).replace("\0", second), encoding="utf-8"
    )
    report = json_report("--select", "EV402,EV403", cwd=workspace)
    assert by_path(report) == {"EchoesVault/index.md": ["EV403"]}, report
