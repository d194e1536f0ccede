"""`echoes-lsp` command line: `serve`, `check`, `runtime`."""

from __future__ import annotations

import os
import sys
from typing import Callable, Dict, List, Optional

from . import __version__

USAGE = """usage: echoes-lsp <command> [options]

commands:
  serve     run the language server (stdio by default; --tcp HOST:PORT, --ws HOST:PORT)
  init      put a project under EchoesVault and say what was written (--dry-run: only say)
  check     validate a vault, a folder or files (see `echoes-lsp check --help`)
  explain [CODE]
            print a diagnostic code's page (offline); without CODE, list the codes
  runtime   run the bundled EchoesVault runtime with the given arguments
            (`echoes-lsp runtime --version`: its engine and protocol versions)
  editor-dir NAME
            print the folder of an editor integration installed with the package
            (NAME: nvim, emacs or vim); `nvim-plugin` is `editor-dir nvim`
  --version print the version, with the bundled runtime's engine and protocol versions
"""


def run_editor_dir(rest: List[str]) -> int:
    from .cli.editor_dir import main

    return main(rest)


def run_nvim_plugin(rest: List[str]) -> int:
    from .cli.editor_dir import nvim_plugin

    return nvim_plugin(rest)


def print_version(_rest: List[str]) -> int:
    from .runtime.echoes_vault import ENGINE_VERSION, PROTOCOL_VERSION

    sys.stdout.write(
        f"echoes-lsp {__version__} (runtime engine {ENGINE_VERSION}, "
        f"EchoesVault Protocol {PROTOCOL_VERSION})\n"
    )
    return 0


def run_serve(rest: List[str]) -> int:
    from .server.app import serve

    return serve(rest)


def run_init(rest: List[str]) -> int:
    from .cli.init_command import main

    return main(rest)


def run_explain(rest: List[str]) -> int:
    from .cli.explain import main

    return main(rest)


def run_runtime(rest: List[str]) -> int:
    from .runtime_client import run_bundled

    return run_bundled(rest)


def run_check(rest: List[str], ends_process: bool) -> int:
    """`echoes-lsp check`. When it is the whole process, the process ends here: the vault models
    are not torn down object by object."""
    from .cli.check_command import run

    if not ends_process:
        return run(rest)
    code = run(rest, retain=True)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


# Each command but `check`, and the function that runs it (its modules are imported only then).
COMMANDS: Dict[str, Callable[[List[str]], int]] = {
    "--version": print_version,
    "version": print_version,
    "serve": run_serve,
    "init": run_init,
    "explain": run_explain,
    "editor-dir": run_editor_dir,
    "nvim-plugin": run_nvim_plugin,
    "runtime": run_runtime,
}


def main(argv: Optional[List[str]] = None) -> int:
    """The `echoes-lsp` command. Without `argv` it reads the process's own arguments, and a
    `check` ends the process."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "check":
        return run_check(rest, ends_process=argv is None)
    run = COMMANDS.get(command)
    if run is None:
        sys.stderr.write(f"echoes-lsp: unknown command {command!r}\n\n{USAGE}")
        return 2
    return run(rest)


if __name__ == "__main__":
    sys.exit(main())
