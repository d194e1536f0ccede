"""`echoes-lsp` command line: `serve`, `check`, `runtime`."""

from __future__ import annotations

import os
import sys
from typing import List, Optional

from . import __version__

USAGE = """usage: echoes-lsp <command> [options]

commands:
  serve     run the language server (stdio by default; --tcp HOST:PORT, --ws HOST:PORT)
  init      put a project under EchoesVault and say what was written (--dry-run: only say)
  check     validate a vault, a folder or files (see `echoes-lsp check --help`)
  runtime   run the bundled EchoesVault runtime with the given arguments
  --version print the version
"""


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command in ("--version", "version"):
        sys.stdout.write(f"echoes-lsp {__version__}\n")
        return 0
    if command == "serve":
        from .server import serve

        return serve(rest)
    if command == "check":
        from .check import run

        if argv is not None:
            return run(rest)
        code = run(rest, retain=True)
        # The process ends here: skip tearing down the vault models object by object.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    if command == "init":
        from .init_cli import main as init

        return init(rest)
    if command == "runtime":
        from .runtime_client import run_bundled

        return run_bundled(rest)
    sys.stderr.write(f"echoes-lsp: unknown command {command!r}\n\n{USAGE}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
