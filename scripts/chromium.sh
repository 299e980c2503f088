#!/usr/bin/env bash
# Installs Debian's Chromium, which the web console's browser test
# (TestConsoleInBrowser) drives headless, when no Chromium is on the PATH.
# Idempotent: does nothing when one is there. make test runs it.
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then
    exit 0
  fi
done
if ! command -v apt-get >/dev/null 2>&1; then
  echo "scripts/chromium.sh: no Chromium on the PATH and no apt-get to install Debian's: install Chromium (or Chrome) for the console's browser test" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi
echo "scripts/chromium.sh: installing Debian's chromium for the console's browser test" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq chromium >/dev/null
command -v chromium >/dev/null
