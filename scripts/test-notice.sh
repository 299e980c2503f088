#!/usr/bin/env bash
# Says, before make test installs anything, what it installs and how: Go
# modules and pinned npm packages into this clone and the Go cache, and two
# Debian packages with apt-get as root. make test runs it first; it installs
# nothing itself.
set -euo pipefail
missing=()
have_chromium=
for b in chromium chromium-browser google-chrome; do
  command -v "$b" >/dev/null 2>&1 && have_chromium=1
done
[ -n "$have_chromium" ] || missing+=("chromium (the web console's browser test)")
compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null || missing+=("postgresql (the store's tests on PostgreSQL)")

cat >&2 <<'TEXT'
make test installs what its tests need, when it is missing: the Go modules
(go mod download), the pinned npm packages (into .cache/npm), and Debian's
chromium and postgresql with apt-get, as root (chromium through sudo when
you are not root; postgresql only as root: otherwise make test stops and
names the command to run).
TEXT
if [ ${#missing[@]} -eq 0 ]; then
  echo "Nothing to install with apt-get here: chromium and postgresql are present." >&2
else
  echo "Missing here, to be installed with apt-get now:" >&2
  for m in "${missing[@]}"; do
    echo "  $m" >&2
  done
fi
