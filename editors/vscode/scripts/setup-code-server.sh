#!/usr/bin/env bash
# Install code-server (the real VS Code workbench and extension host, from npm) under
# editors/vscode/.code-server/, offline except for the npm registry. Idempotent: a stamp file
# naming the version makes a second run instant.
#
# code-server's own postinstall cannot run here (it wants root flags, Kerberos headers and a
# ripgrep download), so this script does its steps by hand: dependencies of lib/vscode without
# install scripts, Debian's `rg` where @vscode/ripgrep expects its binary, native modules
# rebuilt, the node_modules.asar and bin symlinks, the built-in extensions' shared packages.
#
# Needs: node 20 (4.100.3 is the last code-server release for node 20) with its headers, npm,
# a C++ toolchain, libkrb5-dev and ripgrep (apt). Exit status 3 means a prerequisite is
# missing. Nothing is fetched but from the npm registry: native modules are built against the
# local node's headers (node-headers.sh), so a fresh HOME needs no nodejs.org download.
set -euo pipefail

VERSION=4.100.3
HERE="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX="${CODE_SERVER_PREFIX:-$HERE/.code-server}"
STAMP="$PREFIX/.installed-$VERSION"
NPM_FLAGS=(--ignore-scripts --no-audit --no-fund --loglevel=error)

# One installer at a time: `make vscode-test` starts this in the background and the e2e tests
# call it again later, which then waits here for the first run to finish.
mkdir -p "$PREFIX"
exec 9>"$PREFIX/.lock"
flock 9

if [ -f "$STAMP" ]; then
  echo "$PREFIX/node_modules/.bin/code-server"
  exit 0
fi

missing=()
command -v rg >/dev/null || missing+=("ripgrep (apt install ripgrep)")
[ -e /usr/include/gssapi/gssapi.h ] || [ -e /usr/include/krb5.h ] || missing+=("libkrb5-dev (apt)")
command -v g++ >/dev/null || command -v c++ >/dev/null || missing+=("a C++ compiler (apt install g++)")
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" = 20 ] || missing+=("node 20 (found node $node_major)")
# shellcheck source=node-headers.sh
. "$HERE/scripts/node-headers.sh"
node_headers || missing+=("node's headers (include/node beside node; or set npm_config_nodedir)")
export npm_config_update_notifier=false
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'setup-code-server: missing %s\n' "${missing[@]}" >&2
  exit 3
fi

log() { printf '[setup-code-server] %s\n' "$*" >&2; }
mkdir -p "$PREFIX"
cd "$PREFIX"
[ -f package.json ] || echo '{"name":"code-server-host","private":true}' > package.json

log "npm install code-server@$VERSION (no scripts)"
npm install "${NPM_FLAGS[@]}" "code-server@$VERSION" >&2

CS="$PREFIX/node_modules/code-server"
VS="$CS/lib/vscode"
log "lib/vscode dependencies"
(cd "$VS" && npm install --omit=dev "${NPM_FLAGS[@]}" >&2)

log "ripgrep from the system"
mkdir -p "$VS/node_modules/@vscode/ripgrep/bin"
ln -sf "$(command -v rg)" "$VS/node_modules/@vscode/ripgrep/bin/rg"

log "native modules (node-pty, spdlog, …)"
(cd "$VS" && npm_config_yes=true npm rebuild --loglevel=error >&2)
(cd "$PREFIX" && npm rebuild argon2 --loglevel=error >&2)

log "postinstall links and built-in extensions"
(cd "$VS" && rm -rf node_modules.asar && ln -s node_modules node_modules.asar)
(cd "$VS/bin/remote-cli" && rm -f code-server && ln -s code-linux.sh code-server)
(cd "$VS/bin/helpers" && rm -f browser.sh && ln -s browser-linux.sh browser.sh)
(cd "$VS/extensions" && npm install --omit=dev "${NPM_FLAGS[@]}" >&2)

log "check"
"$PREFIX/node_modules/.bin/code-server" --config "$PREFIX/config.yaml" --version >&2
touch "$STAMP"
log "done"
echo "$PREFIX/node_modules/.bin/code-server"
