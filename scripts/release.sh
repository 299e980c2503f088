#!/usr/bin/env bash
# Builds mcp-hub's release archives.
#
#   scripts/release.sh [-o DIR] [TARGET...]
#
# TARGET is linux-x64, linux-arm64, windows-x64, darwin-x64 or darwin-arm64;
# none, or "host", means every target this machine builds: the three Linux
# and Windows ones on Linux (with Debian's cross compilers, which
# scripts/cross-deps.sh installs when missing), the two darwin ones on macOS
# (Apple's clang; no macOS cross toolchain exists for Linux, so they are built
# by .github/workflows/release.yml on a macOS runner). "sums" builds nothing.
#
# Each archive, DIR/mcp-hub-VERSION-TARGET.tar.gz (.zip for Windows), holds
# the directory mcp-hub-VERSION-TARGET/ with the binary, LICENSE, NOTICE
# (the WordNet license of the tool search's word table) and README.md. DIR/SHA256SUMS then lists every archive in DIR. DIR defaults
# to dist.
#
# VERSION (default: git describe --tags --always --dirty) and COMMIT
# (default: git rev-parse HEAD) are linked into the binary, which prints
# them and its target with --version. cgo stays on: the store is SQLite
# (go-sqlite3). Linux binaries are linked statically (glibc, the pure-Go
# resolver and user lookup), so they run on any distribution; Windows
# binaries need only KERNEL32 and msvcrt. SQLite's load_extension, which
# the hub never uses, is left out (it would need dlopen).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

out=dist
while getopts "o:" opt; do
  case "$opt" in
    o) out=$OPTARG ;;
    *) echo "usage: $0 [-o DIR] [TARGET...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

host_os=$(go env GOHOSTOS)
host_arch=$(go env GOHOSTARCH)
targets=("$@")
if [ ${#targets[@]} -eq 0 ] || [ "${targets[*]}" = host ]; then
  case "$host_os" in
    linux) targets=(linux-x64 linux-arm64 windows-x64) ;;
    darwin) targets=(darwin-x64 darwin-arm64) ;;
    *) echo "release: no targets for a $host_os host" >&2; exit 1 ;;
  esac
fi
[ "${targets[*]}" = sums ] && targets=()

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
# Archives carry the commit's time, not the build's.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH

# goarch maps an npm-style architecture name to Go's.
goarch() {
  case "$1" in
    x64) echo amd64 ;;
    arm64) echo arm64 ;;
  esac
}

# build TARGET: compiles the binary into $stage and archives it.
build() {
  local target=$1 os=${1%-*} arch
  arch=$(goarch "${1#*-}")
  local goos=$os exe=mcp-hub cc tags=() extld=()
  case "$target" in
    linux-x64|linux-arm64)
      [ "$host_os" = linux ] || { echo "release: $target builds on Linux only" >&2; return 1; }
      cc=gcc
      if [ "$arch" != "$host_arch" ]; then
        case "$arch" in amd64) cc=x86_64-linux-gnu-gcc ;; arm64) cc=aarch64-linux-gnu-gcc ;; esac
      fi
      tags=(-tags "netgo,osusergo,sqlite_omit_load_extension")
      extld=(-extldflags -static)
      ;;
    windows-x64)
      [ "$host_os" = linux ] || { echo "release: $target builds on Linux only (mingw-w64)" >&2; return 1; }
      cc=x86_64-w64-mingw32-gcc exe=mcp-hub.exe
      tags=(-tags sqlite_omit_load_extension)
      extld=(-extldflags -static)
      ;;
    darwin-x64|darwin-arm64)
      [ "$host_os" = darwin ] || { echo "release: $target builds on macOS only (see .github/workflows/release.yml)" >&2; return 1; }
      local clangarch=$arch
      [ "$arch" = amd64 ] && clangarch=x86_64
      cc="clang -arch $clangarch"
      tags=(-tags sqlite_omit_load_extension)
      export MACOSX_DEPLOYMENT_TARGET=${MACOSX_DEPLOYMENT_TARGET:-11.0}
      ;;
    *) echo "release: unknown target $target (want linux-x64, linux-arm64, windows-x64, darwin-x64, darwin-arm64)" >&2; return 2 ;;
  esac

  local name="mcp-hub-$VERSION-$target"
  local stage="$work/$name"
  mkdir -p "$stage"
  echo "release: building $name" >&2
  CGO_ENABLED=1 GOOS=$goos GOARCH=$arch CC=$cc \
    go build -trimpath ${tags[@]+"${tags[@]}"} \
      -ldflags "-s -w -X main.buildVersion=$VERSION -X main.buildCommit=$COMMIT ${extld[*]-}" \
      -o "$stage/$exe" ./cmd/mcp-hub
  cp LICENSE NOTICE README.md "$stage/"
  touch -d "@$SOURCE_DATE_EPOCH" "$stage"/* "$stage" 2>/dev/null || true

  rm -f "$out/$name.tar.gz" "$out/$name.zip"
  if [ "$goos" = windows ]; then
    (cd "$work" && zip -q -X -r "$name.zip" "$name")
    mv "$work/$name.zip" "$out/"
  elif tar --version 2>/dev/null | grep -q GNU; then
    tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
      -cf - "$name" | gzip -n -9 > "$out/$name.tar.gz"
  else
    tar -C "$work" -cf - "$name" | gzip -n -9 > "$out/$name.tar.gz"
  fi
}

needs=()
for t in ${targets[@]+"${targets[@]}"}; do
  case "$t" in linux-arm64|windows-x64) [ "$host_os" = linux ] && needs+=("$t") ;; esac
done
[ ${#needs[@]} -eq 0 ] || scripts/cross-deps.sh "${needs[@]}"

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in ${targets[@]+"${targets[@]}"}; do
  build "$t"
done

# SHA256SUMS lists every archive in DIR, as sha256sum -c reads it.
(
  cd "$out"
  shopt -s nullglob
  archives=(mcp-hub-*.tar.gz mcp-hub-*.zip)
  if [ ${#archives[@]} -eq 0 ]; then
    echo "release: no archives in $out" >&2
    exit 1
  fi
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "${archives[@]}" > SHA256SUMS
  else
    shasum -a 256 "${archives[@]}" > SHA256SUMS
  fi
)
echo "release: $out/SHA256SUMS" >&2
