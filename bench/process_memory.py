"""A process's memory as Linux reports it, for the benchmarks that print it."""

from __future__ import annotations

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
