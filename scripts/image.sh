#!/usr/bin/env bash
# Builds mcp-hub's container image with podman (Debian's podman, storage
# driver vfs; scripts/podman.sh installs it).
#
#   scripts/image.sh [-t TAG] [-o OCI-ARCHIVE] [ARCH...]
#
# ARCH is amd64 or arm64 (default: this machine's). For each, the static
# binary is built with scripts/release.sh's flags and the image from
# Containerfile; with several, TAG names a manifest list of them. -o also
# saves the image (one ARCH) as an OCI archive. TAG defaults to
# mcp-hub:VERSION (git describe). Labels: version, revision, source,
# licenses (Containerfile).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

tag="" archive=""
while getopts "t:o:" opt; do
  case "$opt" in
    t) tag=$OPTARG ;;
    o) archive=$OPTARG ;;
    *) echo "usage: $0 [-t TAG] [-o OCI-ARCHIVE] [ARCH...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=("$(go env GOARCH)")

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
SOURCE=${SOURCE:-https://github.com/mcp-hub/mcp-hub}
export VERSION COMMIT
[ -n "$tag" ] || tag="mcp-hub:$VERSION"

scripts/podman.sh
podman=(podman --storage-driver vfs)

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/bin" "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp" "$ctx/rootfs-data" "$ctx/dist"
cp Containerfile "$ctx/"
# The user the hub runs as (no shell, home in the volume) and the CA
# certificates HTTPS upstreams are checked against.
printf 'root:x:0:0:root:/root:/sbin/nologin\nmcp-hub:x:65532:65532:mcp-hub:/data:/sbin/nologin\n' > "$ctx/rootfs/etc/passwd"
printf 'root:x:0:\nmcp-hub:x:65532:\n' > "$ctx/rootfs/etc/group"
cp /etc/ssl/certs/ca-certificates.crt "$ctx/rootfs/etc/ssl/certs/"
# The licence of mcp-hub and the notices of what its binary embeds (WordNet).
mkdir -p "$ctx/rootfs/usr/share/doc/mcp-hub"
cp LICENSE NOTICE "$ctx/rootfs/usr/share/doc/mcp-hub/"
chmod 1777 "$ctx/rootfs/tmp"
chmod 0700 "$ctx/rootfs-data"

platforms=()
for arch in "${arches[@]}"; do
  case "$arch" in
    amd64) target=linux-x64 ;;
    arm64) target=linux-arm64 ;;
    *) echo "image: unknown architecture $arch (want amd64 or arm64)" >&2; exit 2 ;;
  esac
  scripts/release.sh -o "$ctx/dist" "$target"
  tar -xzf "$ctx/dist/mcp-hub-$VERSION-$target.tar.gz" -C "$ctx/dist"
  install -m 0755 "$ctx/dist/mcp-hub-$VERSION-$target/mcp-hub" "$ctx/bin/mcp-hub-$arch"
  platforms+=("linux/$arch")
done
# No RUN step, so every platform builds here without emulation; buildah
# sets TARGETARCH for each.
out=(-t "$tag")
if [ ${#arches[@]} -gt 1 ]; then
  "${podman[@]}" manifest rm "$tag" >/dev/null 2>&1 || true
  out=(--manifest "$tag")
fi
platform_list=$(IFS=,; echo "${platforms[*]}")
echo "image: building $tag ($platform_list)" >&2
"${podman[@]}" build --platform "$platform_list" -f "$ctx/Containerfile" \
  --build-arg "VERSION=$VERSION" --build-arg "REVISION=$COMMIT" --build-arg "SOURCE=$SOURCE" \
  "${out[@]}" "$ctx" >&2
if [ -n "$archive" ]; then
  rm -f "$archive"
  "${podman[@]}" save --format oci-archive -o "$archive" "$tag" >&2
fi
echo "$tag"
