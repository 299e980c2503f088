#!/usr/bin/env bash
# Installs the pinned npm packages the tests run against (server-everything,
# the MCP conformance suite, Node 22 for it) into .cache/npm, from
# testdata/npm/package-lock.json. Re-running is cheap: it reinstalls only when
# the lock file changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/testdata/npm"
dst="$root/.cache/npm"
stamp="$dst/.lock.sha256"
want=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$dst/node_modules" ]; then
  exit 0
fi
mkdir -p "$dst"
cp "$src/package.json" "$src/package-lock.json" "$dst/"
echo "npm-deps: installing pinned test packages into $dst" >&2
(cd "$dst" && npm ci --no-audit --no-fund --loglevel=error)
echo "$want" > "$stamp"
