#!/usr/bin/env bash
# Builds every release archive this machine can build and checks each one
# (make release-check; .ci/run runs it after make test):
#
#   - SHA256SUMS verifies;
#   - each archive holds the binary, LICENSE, NOTICE and README.md;
#   - file(1) shows the right format and architecture (static ELF for
#     Linux; a PE32+ console program for Windows that imports only
#     KERNEL32.dll and msvcrt.dll);
#   - each binary reports its version, commit and target in --version and
#     answers an MCP initialize on stdio: natively, or under qemu-aarch64
#     (Debian's qemu-user) for linux-arm64. Windows and macOS binaries run
#     nowhere here; .github/workflows/release.yml runs them on their runners.
#   - the npm packages build from the archives and each names its os and cpu.
#
# Prints the archive sizes. Works in .cache/release-check.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

work="$root/.cache/release-check"
dist="$work/dist"
rm -rf "$work"
mkdir -p "$dist"
export VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
export COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}

passed=0 failed=0
bad() {
  echo "release-check: FAIL: $*" >&2
  failed=$((failed + 1))
}
ok() {
  echo "release-check: ok: $*" >&2
  passed=$((passed + 1))
}

case "$(go env GOHOSTOS)" in
  linux) targets=(linux-x64 linux-arm64 windows-x64) ;;
  darwin) targets=(darwin-x64 darwin-arm64) ;;
  *) echo "release-check: no release targets build on $(go env GOHOSTOS)" >&2; exit 1 ;;
esac
[ "$(go env GOHOSTOS)" = linux ] && scripts/cross-deps.sh "${targets[@]}" check

start=$(date +%s)
scripts/release.sh -o "$dist" "${targets[@]}"
echo "release-check: built ${targets[*]} in $(( $(date +%s) - start )) s" >&2

if (cd "$dist" && { sha256sum -c SHA256SUMS 2>/dev/null || shasum -a 256 -c SHA256SUMS; }) >&2; then
  ok "SHA256SUMS"
else
  bad "SHA256SUMS does not verify"
fi

# initialize FILE...: runs the command FILE... as a stdio MCP server with an
# empty config and its own data dir, and checks that it answers initialize
# (scripts/initialize.js).
initialize() {
  local tmp
  tmp=$(mktemp -d "$work/run.XXXXXX")
  : > "$tmp/hub.yaml"
  XDG_CONFIG_HOME="$tmp" XDG_DATA_HOME="$tmp" node scripts/initialize.js "$@" --config "$tmp/hub.yaml" --data-dir "$tmp/data" 2>"$tmp/stderr"
}

for target in "${targets[@]}"; do
  name="mcp-hub-$VERSION-$target"
  x="$work/x/$target"
  mkdir -p "$x"
  exe=mcp-hub
  case "$target" in
    windows-*) exe=mcp-hub.exe; unzip -q "$dist/$name.zip" -d "$x" ;;
    *) tar -xzf "$dist/$name.tar.gz" -C "$x" ;;
  esac
  bin="$x/$name/$exe"
  for f in "$exe" LICENSE NOTICE README.md; do
    [ -f "$x/$name/$f" ] || bad "$target: the archive lacks $f"
  done
  info=$(file -b "$bin")
  case "$target" in
    linux-x64) want="ELF 64-bit LSB executable, x86-64*statically linked*" goarch=amd64 run=() ;;
    linux-arm64) want="ELF 64-bit LSB executable, ARM aarch64*statically linked*" goarch=arm64 run=(qemu-aarch64) ;;
    windows-x64) want="PE32+ executable (console) x86-64*MS Windows*" goarch=amd64 run=(none) ;;
    darwin-x64) want="Mach-O 64-bit*x86_64*" goarch=amd64 run=(none) ;;
    darwin-arm64) want="Mach-O 64-bit*arm64*" goarch=arm64 run=() ;;
  esac
  # shellcheck disable=SC2053 # $want is a pattern
  if [[ $info == $want ]]; then ok "$target: $info"; else bad "$target: file says \"$info\", want \"$want\""; fi
  if [ "$target" = windows-x64 ] && command -v x86_64-w64-mingw32-objdump >/dev/null; then
    dlls=$(x86_64-w64-mingw32-objdump -p "$bin" | sed -n 's/^[[:space:]]*DLL Name: //p' | sort | tr '\n' ' ')
    if [ "$dlls" = "KERNEL32.dll msvcrt.dll " ]; then
      ok "$target: imports $dlls"
    else
      bad "$target: imports $dlls; want KERNEL32.dll msvcrt.dll alone"
    fi
  fi
  if [ "${run[*]-}" = none ]; then
    echo "release-check: $target: not run (no way to run it on this machine)" >&2
    continue
  fi
  if [ ${#run[@]} -gt 0 ] && ! command -v "${run[0]}" >/dev/null; then
    echo "release-check: $target: not run (${run[0]} is missing)" >&2
    continue
  fi
  goos=${target%-*}
  v=$(${run[@]+"${run[@]}"} "$bin" --version 2>/dev/null || true)
  for line in "mcp-hub $VERSION" "commit: $COMMIT" "target: $goos/$goarch"; do
    grep -qxF "$line" <<<"$v" || bad "$target: --version lacks \"$line\": $v"
  done
  if out=$(initialize ${run[@]+"${run[@]}"} "$bin") && grep -q '"name":"mcp-hub"' <<<"$out"; then
    ok "$target: --version and a stdio initialize${run[*]+ under ${run[*]}}"
  else
    bad "$target: no initialize result on stdout: $out"
  fi
done

scripts/npm.sh -i "$dist" -o "$work/npm" 2>/dev/null
for target in "${targets[@]}"; do
  os=${target%-*} cpu=${target#*-}
  [ "$os" = windows ] && os=win32
  pj="$work/npm/$os-$cpu/package.json"
  if [ -f "$pj" ] && node -e '
    const p = require(process.argv[1]);
    process.exit(p.os[0] === process.argv[2] && p.cpu[0] === process.argv[3] && !p.scripts ? 0 : 1);
  ' "$pj" "$os" "$cpu"; then
    ok "npm: @mcp-hub/$os-$cpu"
  else
    bad "npm: @mcp-hub/$os-$cpu is missing or lacks its os/cpu"
  fi
done

echo "release-check: archive sizes:" >&2
for f in "$dist"/mcp-hub-*; do
  awk -v f="$(basename "$f")" -v n="$(wc -c < "$f")" 'BEGIN { printf "  %-45s %6.1f MiB (%d bytes)\n", f, n / 1048576, n }' >&2
done
echo "release-check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
