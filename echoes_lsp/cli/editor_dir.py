"""`echoes-lsp editor-dir NAME`: where an editor integration installed with the package is, so
that an installation without a checkout (pipx) carries its editor integrations; and the list of
shipped editors that `init` names."""

from __future__ import annotations

import os
import sys
from typing import Dict, List, Optional

# Each editor integration the package carries: its folder name (`echoes_lsp/<name>` in the
# wheel, `editors/<name>` in a checkout) and a file that marks it as complete.
EDITOR_FOLDERS: Dict[str, str] = {
    "nvim": os.path.join("lsp", "echoes_lsp.lua"),
    "emacs": "echoes-lsp.el",
    "vim": os.path.join("plugin", "echoes_lsp.vim"),
}
# Every editor with a guide in docs/editors/ (the editors table of docs/editors/index.md).
SHIPPED_EDITORS = ("VS Code", "Neovim", "Vim", "Emacs", "Helix", "Zed", "Obsidian")
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def editor_folder(name: str) -> Optional[str]:
    """Where the integration for editor `name` is: installed from the wheel, `echoes_lsp/<name>`;
    run from a checkout, `editors/<name>`."""
    for candidate in (
        os.path.join(PACKAGE, name),
        os.path.join(os.path.dirname(PACKAGE), "editors", name),
    ):
        if os.path.isfile(os.path.join(candidate, EDITOR_FOLDERS[name])):
            return candidate
    return None


def main(rest: List[str]) -> int:
    """Print the folder to put on the editor's load path."""
    if len(rest) != 1 or rest[0] not in EDITOR_FOLDERS:
        names = ", ".join(EDITOR_FOLDERS)
        sys.stderr.write(f"usage: echoes-lsp editor-dir NAME  (NAME: one of {names})\n")
        return 2
    folder = editor_folder(rest[0])
    if folder is None:
        sys.stderr.write(f"echoes-lsp: this installation has no {rest[0]} integration\n")
        return 1
    sys.stdout.write(folder + "\n")
    return 0


def nvim_plugin(rest: List[str]) -> int:
    """`echoes-lsp nvim-plugin`: `editor-dir nvim`, under the name the Neovim guides use."""
    if rest:
        sys.stderr.write("echoes-lsp nvim-plugin takes no arguments\n")
        return 2
    return main(["nvim"])
