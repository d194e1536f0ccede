"""`echoes-lsp check ARGV`: parse the arguments, then make one check (`checker.py`) or watch
(`watch.py`). It sits above both, so that `watch.py` can build on `checker.py` without the two
importing each other.
"""

from __future__ import annotations

import gc
import sys
from typing import List, Sequence

from .checker import EXIT_USAGE, UsageError, _flags, _validate, build_parser, check
from .project_config import ConfigError

# Vault models of the checks made by this process, when the caller exits right after the report:
# freeing a large model object by object takes longer than writing the report, so the process
# lets them go all at once when it ends (`__main__` exits without tearing objects down).
RETAINED: List[object] = []


def run(argv: Sequence[str], retain: bool = False) -> int:
    """`echoes-lsp check ARGV`; its exit code. With `retain`, the models stay in RETAINED."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exit_:
        return int(exit_.code) if isinstance(exit_.code, int) else EXIT_USAGE
    try:
        _validate(args)
        flags = _flags(args)
        if args.watch:
            # imported here: a one-shot check does not pay for watch mode's modules
            from .watch import watch

            return watch(args, flags)
        # The model is built once and freed at exit: cyclic garbage collection would only
        # re-scan the growing set of parsed pages (`bench/check_bench.py --gc` shows the cost).
        gc.disable()
        try:
            return check(args, flags, RETAINED if retain else None)
        finally:
            gc.enable()
    except (UsageError, ConfigError) as error:
        sys.stderr.write(f"echoes-lsp check: error: {error}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("echoes-lsp check: interrupted\n")
        return 130
