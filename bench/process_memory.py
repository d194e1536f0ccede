"""A process's memory and CPU time as Linux reports them, for the benchmarks that print them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union


def memory_mb(pid: Union[int, str], field: str = "VmRSS") -> Optional[float]:
    """Resident memory now (`VmRSS`) or at its peak (`VmHWM`) in MB, from /proc; None where
    there is no /proc or no such process."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return None


def stat_cpu_seconds(stat: str, ticks_per_second: int) -> float:
    """User plus system CPU seconds from the text of /proc/<pid>/stat.

    The command name (field 2) is in parentheses and may itself hold spaces and parentheses,
    so the fields are counted after its last closing parenthesis: utime and stime are fields
    14 and 15 of the line, the 12th and 13th after the name."""
    after_name = stat[stat.rindex(")") + 1 :].split()
    return (int(after_name[11]) + int(after_name[12])) / ticks_per_second


def cpu_seconds(pid: Union[int, str]) -> Optional[float]:
    """The CPU time a process has used so far (its own, not its children's); None where there
    is no /proc or no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat_cpu_seconds(stat, os.sysconf("SC_CLK_TCK"))
