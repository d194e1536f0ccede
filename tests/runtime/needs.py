"""What a test needs from the machine (root, a tool from Debian), and what it does without it:
skip with the reason on a developer's machine, fail when `CI` is set, where it must run."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator, NoReturn, Optional

import pytest


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail under CI: a test that CI silently skipped would prove nothing there."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this test must run)")
    pytest.skip(reason)


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def debian_install(package: str) -> None:
    """Install `package` with apt-get, when running as root on a machine that has it."""
    if not is_root() or not shutil.which("apt-get"):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", package]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
        # an image with empty package lists: fetch them, then try once more
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, check=False)
        subprocess.run(install, env=env, capture_output=True, check=False)


def debian_tool(name: str, package: str) -> Optional[str]:
    """The path of `name`, installing `package` with apt-get (as root) when it is missing."""
    found = shutil.which(name)
    if not found:
        debian_install(package)
    return found or shutil.which(name)


@contextlib.contextmanager
def tmpfs(mount: Path, size: int) -> Iterator[Path]:
    """A tmpfs of `size` bytes mounted at the new folder `mount` (as root: a small file system a
    test can fill), unmounted afterwards."""
    if not is_root():
        unavailable("mounting a small tmpfs needs root")
    mount.mkdir()
    command = ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(mount)]
    process = subprocess.run(command, capture_output=True, text=True, check=False)
    if process.returncode != 0:
        unavailable(f"cannot mount a tmpfs here: {process.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
