#!/usr/bin/env bash
# Installs, when missing, the Debian packages that release builds need:
#
#   scripts/cross-deps.sh NEED...
#
#   linux-arm64   gcc-aarch64-linux-gnu, libc6-dev-arm64-cross (cgo for arm64)
#   windows-x64   gcc-mingw-w64-x86-64 (cgo for Windows), zip, unzip
#   check         file, unzip, qemu-user (scripts/release-check.sh)
#
# A package is installed only when its command (or file) is missing, so a
# second run, or a machine that has them, does nothing and needs no network.
# Installs with apt-get as root, or through sudo; without apt-get it says
# what is missing and fails.
set -euo pipefail

want=()
for need in "$@"; do
  case "$need" in
    linux-x64) ;;
    linux-arm64) want+=(aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu
                        /usr/aarch64-linux-gnu/include/stdio.h:libc6-dev-arm64-cross) ;;
    windows-x64) want+=(x86_64-w64-mingw32-gcc:gcc-mingw-w64-x86-64 zip:zip unzip:unzip) ;;
    check) want+=(file:file unzip:unzip qemu-aarch64:qemu-user) ;;
    *) echo "cross-deps: unknown need $need (want linux-x64, linux-arm64, windows-x64 or check)" >&2; exit 2 ;;
  esac
done

# present: a command on PATH, or a file (an absolute path).
present() {
  case "$1" in
    /*) [ -e "$1" ] ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}
missing=()
for w in ${want[@]+"${want[@]}"}; do
  present "${w%%:*}" || missing+=("${w#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "cross-deps: missing ${missing[*]} and no apt-get to install them" >&2
  exit 1
fi
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "cross-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >&2
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
