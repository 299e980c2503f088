#!/usr/bin/env bash
# Installs pinned npm packages into .cache/, from a lock file under testdata/.
#
#   scripts/npm-deps.sh            the packages the tests run against
#                                  (server-everything, server-memory and
#                                  server-filesystem, the MCP conformance
#                                  suite, Node 22 for it): testdata/npm ->
#                                  .cache/npm
#   scripts/npm-deps.sh bench      the npm hubs and bridges `make bench`
#                                  compares mcp-hub with (mcp-hub, mcp-proxy,
#                                  supergateway): testdata/npm-bench ->
#                                  .cache/npm-bench; make test never needs them
#
# Re-running is cheap: it reinstalls only when the lock file changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-test}" in
  test) set=npm ;;
  bench) set=npm-bench ;;
  *) echo "usage: $0 [test|bench]" >&2; exit 2 ;;
esac
src="$root/testdata/$set"
dst="$root/.cache/$set"
stamp="$dst/.lock.sha256"
want=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$dst/node_modules" ]; then
  exit 0
fi
mkdir -p "$dst"
cp "$src/package.json" "$src/package-lock.json" "$dst/"
echo "npm-deps: installing pinned $set packages into $dst" >&2
(cd "$dst" && npm ci --no-audit --no-fund --loglevel=error)
echo "$want" > "$stamp"
