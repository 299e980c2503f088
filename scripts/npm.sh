#!/usr/bin/env bash
# Builds the npm packages from the release archives (esbuild's pattern):
#
#   scripts/npm.sh [-i DIR] [-o OUT]
#
# DIR (default dist) holds the archives scripts/release.sh wrote. For each
# one, OUT (default DIR/npm) gets a platform package, @mcp-hub/linux-x64,
# @mcp-hub/linux-arm64, @mcp-hub/darwin-x64, @mcp-hub/darwin-arm64 or
# @mcp-hub/win32-x64: the binary in bin/, with os and cpu fields so that npm
# installs only the one that matches. OUT also gets the launcher,
# @mcp-hub/cli (npm/cli: a bin that runs the platform package's binary),
# which lists all five as optionalDependencies at its own version. Every
# package is packed with npm pack into OUT/*.tgz; npm publish takes those
# (platform packages first).
#
# The version is the archives' (mcp-hub-VERSION-TARGET.*) without its
# leading v; one that is not semver (a commit, say) becomes 0.0.0-dev-VERSION.
# No package has an install script or downloads anything.
# shellcheck disable=SC2016 # the node -e scripts are in single quotes on purpose
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

in=dist
out=
while getopts "i:o:" opt; do
  case "$opt" in
    i) in=$OPTARG ;;
    o) out=$OPTARG ;;
    *) echo "usage: $0 [-i DIR] [-o OUT]" >&2; exit 2 ;;
  esac
done
in=$(cd "$in" && pwd)
out=${out:-$in/npm}
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

shopt -s nullglob
archives=("$in"/mcp-hub-*.tar.gz "$in"/mcp-hub-*.zip)
if [ ${#archives[@]} -eq 0 ]; then
  echo "npm: no release archives in $in (make release first)" >&2
  exit 1
fi

version=
for a in "${archives[@]}"; do
  base=$(basename "$a")
  base=${base%.tar.gz}
  base=${base%.zip}
  v=${base#mcp-hub-}
  v=${v%-*-*} # VERSION-OS-ARCH
  if [ -n "$version" ] && [ "$v" != "$version" ]; then
    echo "npm: archives of two versions in $in: $version and $v" >&2
    exit 1
  fi
  version=$v
done
npmversion=${version#v}
semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
if ! [[ $npmversion =~ $semver ]]; then
  npmversion=0.0.0-dev-$(echo "$version" | tr -c '0-9A-Za-z.\n-' '-')
fi
echo "npm: version $npmversion (from $version)" >&2

# The launcher.
mkdir -p "$out/cli"
cp -R "$root/npm/cli/." "$out/cli/"
cp "$root/LICENSE" "$out/cli/"
node -e '
const fs = require("fs");
const [file, version] = process.argv.slice(1);
const p = JSON.parse(fs.readFileSync(file, "utf8"));
p.version = version;
for (const dep of Object.keys(p.optionalDependencies)) p.optionalDependencies[dep] = version;
fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
' "$out/cli/package.json" "$npmversion"

# One package per archive.
for a in "${archives[@]}"; do
  base=$(basename "$a")
  base=${base%.tar.gz}
  base=${base%.zip}
  target=${base#mcp-hub-"$version"-} # linux-x64, windows-x64, …
  os=${target%-*} cpu=${target#*-} exe=mcp-hub
  [ "$os" = windows ] && os=win32 exe=mcp-hub.exe
  pkg="$out/$os-$cpu"
  mkdir -p "$pkg/bin"
  tmp=$(mktemp -d)
  case "$a" in
    *.zip) unzip -q "$a" -d "$tmp" ;;
    *) tar -xzf "$a" -C "$tmp" ;;
  esac
  cp "$tmp/$base/$exe" "$pkg/bin/$exe"
  cp "$tmp/$base/LICENSE" "$tmp/$base/NOTICE" "$pkg/"
  rm -rf "$tmp"
  chmod 755 "$pkg/bin/$exe"
  cat > "$pkg/README.md" <<EOF
# @mcp-hub/$os-$cpu

The mcp-hub binary for $os $cpu. Install @mcp-hub/cli
instead (\`npx -y @mcp-hub/cli\`): it installs this package on this platform and runs the binary.
EOF
  node -e '
const fs = require("fs");
const [file, version, os, cpu, exe] = process.argv.slice(1);
const p = {
  name: `@mcp-hub/${os}-${cpu}`,
  version,
  description: `The mcp-hub binary for ${os} ${cpu} (installed by @mcp-hub/cli)`,
  homepage: "https://github.com/mcp-hub/mcp-hub#readme",
  repository: { type: "git", url: "git+https://github.com/mcp-hub/mcp-hub.git" },
  license: "MIT",
  os: [os],
  cpu: [cpu],
  files: [`bin/${exe}`, "NOTICE"],
  preferUnplugged: true,
};
fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
' "$pkg/package.json" "$npmversion" "$os" "$cpu" "$exe"
done

for pkg in "$out"/*/; do
  (cd "$out" && npm pack --silent --ignore-scripts --pack-destination "$out" "$pkg" >/dev/null)
done
ls "$out"/*.tgz >&2
