"""Starts the echoes-lsp server bundled with the VS Code extension.

Run as `python -I launch.py serve` (or `--version`): `-I` keeps a module of the same name in the
workspace or the user's site-packages from shadowing the bundle, which this script puts first on
`sys.path`. Written for every Python 3 so that an old interpreter gets a clear message, not a
syntax error.
"""

import os
import sys

MINIMUM = (3, 9)


def main():
    if sys.version_info < MINIMUM:
        found = "{}.{}".format(*sys.version_info[:2])
        sys.stderr.write(
            "echoes-lsp needs Python 3.9 or newer; " + sys.executable + " is Python " + found + "\n"
        )
        return 3
    libs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
    if not os.path.isfile(os.path.join(libs, "echoes_lsp", "__main__.py")):
        sys.stderr.write("the extension's bundled server is incomplete: " + libs + " is missing\n")
        return 3
    sys.path.insert(0, libs)
    from echoes_lsp.__main__ import main as echoes_lsp_main

    return echoes_lsp_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
