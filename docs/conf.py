"""Sphinx configuration of the echoes-lsp documentation site (`make docs`).

The pages are Markdown (MyST) so that they read the same on GitHub; the build is strict: `make docs`
runs with `-W --keep-going -n`, so a broken local link, a missing page or an unknown reference
fails it. The generated parts (diagnostic code metadata, the `check` reference, the benchmark
plots) come from the package itself and `bench/results/`, so they cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

from echoes_lsp import __version__  # noqa: E402 - after the path above

project = "echoes-lsp"
author = "echoes-lsp contributors"
copyright = "echoes-lsp contributors"
version = release = __version__

extensions = ["myst_parser", "echoes_docs"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]

# `[text](page.md#heading)` links resolve against heading slugs (GitHub's style, so the same link
# works on GitHub); an unresolved one is a `myst.xref_missing` warning, which `-W` turns into an
# error.
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence", "deflist"]
# The repository's own files outside docs/ (sources, editor folders, schemas) are linked to GitHub.
echoes_repository = "https://github.com/echoes-lsp/echoes-lsp/"

html_theme = "furo"
html_title = f"echoes-lsp {release}"
html_static_path = ["_static"]
