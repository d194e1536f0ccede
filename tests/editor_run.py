"""The report a real-editor scenario writes (Neovim, Vim, Emacs), read by the tests.

Each editor's driver runs a scenario and writes what the editor saw to a JSON report; a test
reads its keys. A key the driver never wrote, or a driver error, fails with what is needed to
explain it: the steps reached, the editor's messages (and the keys each editor adds), and the end
of the editor's own output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Tuple, TypeVar

Run = TypeVar("Run", bound="ScenarioRun")


class ScenarioRun:
    """One scenario's report, the editor's output and the workspace it ran in."""

    # The report's keys named when a test fails, after the error and the steps.
    shown: Tuple[str, ...] = ("messages",)

    def __init__(self, report: Dict[str, Any], output: str, workspace: Path) -> None:
        self.report = report
        self.output = output
        self.workspace = workspace

    def __getitem__(self, key: str) -> Any:
        if key not in self.report:
            raise AssertionError(f"report has no {key!r}; {self.explain()}")
        return self.report[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.report.get(key, default)

    def explain(self) -> str:
        shown = "".join(f"{key}: {self.report.get(key)}; " for key in self.shown)
        return (
            f"driver error: {self.report.get('error')}; steps: {self.report.get('steps')}; "
            f"{shown}output: {self.output[-2000:]}"
        )

    def ok(self: Run) -> Run:
        assert not self.report.get("error"), self.explain()
        return self

    def page(self, name: str) -> Path:
        return self.workspace / "EchoesVault" / "pages" / name
