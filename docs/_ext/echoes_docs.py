"""Sphinx extension for the echoes-lsp site: the parts of the docs that are generated from the code.

- The diagnostic code pages' titles, facts lines and the table of codes are written by
  `code_facts.py` from `echoes_lsp/engine/codes.py`; the build warns (an error under `-W`) when a page
  differs, is missing, or documents no code.
- `echoes-cli-reference NAME`: the options of `echoes-lsp check` or `init`, read from their argparse
  parsers.
- `echoes-bench-plot METRIC`: a benchmark plot drawn from `bench/results/*.json` (see
  `bench_plots.py`).
- Links from a page to a repository file outside `docs/` (`../echoes_lsp/engine/codes.py`) become links to
  that file on GitHub, so they work both on GitHub and on the site.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any, Callable, ClassVar, Dict, List, Optional

import code_facts
from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx.application import Sphinx
from sphinx.util import logging

from echoes_lsp.cli import checker, init_command

LOG = logging.getLogger(__name__)
DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent


def _paragraph(*children: nodes.Node) -> nodes.paragraph:
    para = nodes.paragraph()
    para.extend(children)
    return para


def _table(header: List[str], rows: List[List[nodes.Node]], widths: List[int]) -> nodes.table:
    table = nodes.table()
    group = nodes.tgroup(cols=len(header))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    group += head
    head_row = nodes.row()
    for title in header:
        head_row += nodes.entry("", _paragraph(nodes.Text(title)))
    head += head_row
    body = nodes.tbody()
    group += body
    for cells in rows:
        row = nodes.row()
        for cell in cells:
            row += nodes.entry("", _paragraph(cell))
        body += row
    return table


def _code_pages(app: Sphinx) -> None:
    """The code pages' titles, facts and table must be what `code_facts.py` generates."""
    for problem in code_facts.stale():
        LOG.warning("%s (run `python docs/_ext/code_facts.py`)", problem)


PARSERS: Dict[str, Callable[[], argparse.ArgumentParser]] = {
    "check": checker.build_parser,
    "init": init_command.build_parser,
}


class CliReference(Directive):
    """A command's usage and options, from the parser the command itself uses
    (`echoes-cli-reference check`, `echoes-cli-reference init`)."""

    required_arguments = 1

    def run(self) -> List[nodes.Node]:
        name = self.arguments[0]
        if name not in PARSERS:
            raise self.error(f"unknown command {name!r}; known: {', '.join(PARSERS)}")
        parser = PARSERS[name]()
        usage = parser.format_usage().strip()
        out: List[nodes.Node] = [nodes.literal_block(usage, usage, language="text")]
        rows: List[List[nodes.Node]] = []
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                flags = ", ".join(action.option_strings)
            elif not action.option_strings:
                flags = action.metavar or action.dest
            else:
                metavar = action.metavar or (
                    "{" + ",".join(action.choices) + "}" if action.choices else None
                )
                takes = action.nargs != 0
                flags = ", ".join(
                    f"{flag} {metavar or action.dest.upper()}" if takes else flag
                    for flag in action.option_strings
                )
            help_text = (action.help or "") % {"default": action.default}
            if action.choices and action.option_strings:
                help_text += " (one of: " + ", ".join(map(str, action.choices)) + ")"
            rows.append([nodes.literal(flags, flags), nodes.Text(help_text)])
        out.append(_table(["option", "what it does"], rows, [30, 70]))
        epilog = (parser.epilog or "").strip()
        if epilog:
            out.append(nodes.literal_block(epilog, epilog, language="text"))
        return out


class BenchPlot(Directive):
    """A benchmark plot (PNG) drawn now from the committed bench results."""

    required_arguments = 1
    option_spec: ClassVar[Dict[str, Any]] = {"alt": directives.unchanged}

    def run(self) -> List[nodes.Node]:
        from bench_plots import PLOTS, RESULTS, draw

        metric = self.arguments[0]
        if metric not in PLOTS:
            raise self.error(f"unknown plot {metric!r}; known: {', '.join(PLOTS)}")
        env = self.state.document.settings.env
        path = draw(metric, RESULTS, DOCS / "_generated")
        for name in sorted(RESULTS.glob("*.json")):
            env.note_dependency(str(name))
        uri = "/" + path.relative_to(DOCS).as_posix()  # relative to the source folder
        return [nodes.image(uri=uri, alt=self.options.get("alt", metric))]


LINK = re.compile(r"(\]\()([^)\s]+)(\))")
FENCE = re.compile(r"^\s*(```|~~~)")


def repository_link(docname: str, target: str, base: str) -> Optional[str]:
    """The GitHub address for a relative link from page `docname` to a repository file outside
    docs/ (not a page of the site), or None for any other link."""
    if "://" in target or target.startswith(("#", "mailto:", "/")):
        return None
    path, hash_, anchor = target.partition("#")
    resolved = Path(os.path.normpath(DOCS / os.path.dirname(docname) / path))
    if resolved == DOCS or DOCS in resolved.parents:
        return None
    if ROOT not in resolved.parents or not resolved.exists():
        return None  # left for MyST to report as a broken link
    kind = "tree" if resolved.is_dir() else "blob"
    return f"{base}{kind}/main/{resolved.relative_to(ROOT).as_posix()}{hash_}{anchor}"


def _repository_links(app: Sphinx, docname: str, source: List[str]) -> None:
    """Links from a page to a repository file outside docs/ (a source file, an editor folder)
    point at that file on GitHub; on GitHub itself the relative link works as written."""
    base = app.config.echoes_repository
    out: List[str] = []
    fenced = False
    for line in source[0].split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        if not fenced:
            line = LINK.sub(
                lambda m: (
                    m.group(1)
                    + (repository_link(docname, m.group(2), base) or m.group(2))
                    + m.group(3)
                ),
                line,
            )
        out.append(line)
    source[0] = "\n".join(out)


def setup(app: Sphinx) -> Dict[str, Any]:
    app.add_config_value("echoes_repository", "", "env")
    app.connect("builder-inited", _code_pages)
    app.add_directive("echoes-cli-reference", CliReference)
    app.add_directive("echoes-bench-plot", BenchPlot)
    app.connect("source-read", _repository_links)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
