# Sourced by setup-code-server.sh: build native modules against the headers of the node that
# runs them. node-gyp's default is to download the headers from nodejs.org into $HOME, which
# fails offline and with a fresh HOME. Sets npm_config_nodedir (unless already set) to the
# node's prefix when it has its headers (include/node/common.gypi); returns 1 otherwise.
node_headers() {
  if [ -n "${npm_config_nodedir:-}" ]; then
    return 0
  fi
  local prefix
  prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
  if [ -f "$prefix/include/node/common.gypi" ]; then
    export npm_config_nodedir="$prefix"
    return 0
  fi
  return 1
}
