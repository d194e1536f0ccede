"""Builds `bundled/libs`: the echoes-lsp server, its runtime and their pure-Python dependencies,
installed with pip for the `.vsix` to carry (the layout Microsoft's Python tool extensions use).

    python3 scripts/bundle_server.py [--wheel dist/echoes_lsp-<version>-py3-none-any.whl]

The dependencies come from `bundled/requirements.txt` (pinned, hash-checked, pure-Python wheels
for Python 3.9 and newer); echoes-lsp itself from the given wheel, or one built from this
checkout's sdist with `python -m build` (the `dev` extra).
Their licences stay in each `*.dist-info`, and `bundled/libs/THIRD-PARTY-NOTICES.md` lists them.
"""

from __future__ import annotations

import argparse
import email.parser
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List

EXTENSION = Path(__file__).resolve().parent.parent
REPO = EXTENSION.parent.parent
BUNDLED = EXTENSION / "bundled"
LIBS = BUNDLED / "libs"
REQUIREMENTS = BUNDLED / "requirements.txt"
# Installer bookkeeping that the extension never reads.
DROPPED_METADATA = ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")


def pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "install", *args]
    subprocess.run(command, check=True)


def build_wheel(out: Path) -> Path:
    """The wheel of this checkout, built from its sdist (as `make dist` does), so that no stale
    `build/` folder of the checkout adds files."""
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)], check=True)
    (wheel,) = out.glob("echoes_lsp-*-py3-none-any.whl")
    return wheel


def tidy(libs: Path) -> None:
    """Drops what pip --target leaves that the bundle does not need: scripts with this machine's
    interpreter path, the Neovim and Vim plugins, byte code, installer records."""
    shutil.rmtree(libs / "bin", ignore_errors=True)
    for editor in ("nvim", "vim"):  # the other editors' plugins
        shutil.rmtree(libs / "echoes_lsp" / editor, ignore_errors=True)
    for cache in list(libs.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)
    for info in libs.glob("*.dist-info"):
        for name in DROPPED_METADATA:
            (info / name).unlink(missing_ok=True)


def notices(libs: Path) -> str:
    """A table of the bundled distributions, their licences and the licence files beside them."""
    rows: List[str] = []
    for info in sorted(libs.glob("*.dist-info"), key=lambda p: p.name.lower()):
        with open(info / "METADATA", encoding="utf-8") as handle:
            meta = email.parser.Parser().parse(handle, headersonly=True)
        classifiers = [
            c.rsplit(" :: ", 1)[-1]
            for c in meta.get_all("Classifier") or []
            if c.startswith("License ::")
        ]
        licence = (
            meta.get("License-Expression")
            or meta.get("License")
            or ", ".join(classifiers)
            or "see the licence file"
        )
        files = sorted(
            str(p.relative_to(libs)).replace(os.sep, "/")
            for p in info.rglob("*")
            if p.is_file() and ("licen" in p.name.lower() or "copying" in p.name.lower())
        )
        rows.append(
            f"| {meta['Name']} | {meta['Version']} | {licence} | {', '.join(files) or '—'} |"
        )
    return (
        "# Third-party software bundled with the EchoesVault extension\n\n"
        "Installed into `bundled/libs` by `scripts/bundle_server.py`; each licence text is in the\n"
        "distribution's `.dist-info` folder.\n\n"
        "| distribution | version | licence | licence files |\n|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n"
    )


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--wheel", type=Path, help="the echoes-lsp wheel (default: build this checkout)"
    )
    parser.add_argument(
        "--target", type=Path, default=LIBS, help="where to install (default: bundled/libs)"
    )
    args = parser.parse_args(argv)
    libs: Path = args.target
    if args.wheel is not None and not args.wheel.is_file():
        parser.error(f"{args.wheel} is not a file")
    shutil.rmtree(libs, ignore_errors=True)
    pure = ["--only-binary=:all:", "--platform", "any", "--implementation", "py"]
    pure += ["--python-version", "3.9", "--abi", "none"]
    pip(
        "--quiet",
        "--target",
        str(libs),
        "--no-deps",
        "--require-hashes",
        *pure,
        "-r",
        str(REQUIREMENTS),
    )
    with tempfile.TemporaryDirectory() as scratch:
        wheel = args.wheel or build_wheel(Path(scratch))
        pip("--quiet", "--target", str(libs), "--no-deps", str(wheel))
    tidy(libs)
    (libs / "THIRD-PARTY-NOTICES.md").write_text(notices(libs), encoding="utf-8")
    size = sum(p.stat().st_size for p in libs.rglob("*") if p.is_file())
    print(f"{libs}: {sum(1 for _ in libs.glob('*.dist-info'))} distributions, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
