#!/usr/bin/env bash
# The README's picture of the editor: a real screenshot from the VS Code end-to-end test.
#
# `make test-e2e` opens a page with known defects in code-server (the real VS Code) with the packaged
# extension and the real server, and takes a screenshot once the Problems panel lists them
# (tests/artifacts/vscode-problems*.png). This copies that screenshot to docs/_static/.
#
# Usage: docs/editor-screenshot.sh   (from anywhere; needs what `make test-e2e` needs)
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
rm -f tests/artifacts/vscode-problems*.png
make test-e2e
shot="$(ls -t tests/artifacts/vscode-problems*.png | head -n 1)"
cp "$shot" docs/_static/editor-vscode.png
echo "docs/_static/editor-vscode.png (from $shot)"
