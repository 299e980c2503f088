#!/usr/bin/env bash
# Installs Debian's podman for make image, with the vfs storage driver
# (works in containers and on kernels without overlay for unprivileged
# users). Idempotent: does nothing when podman is present and its storage
# configuration says vfs.
set -euo pipefail

conf=/etc/containers/storage.conf
if ! command -v podman >/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "podman.sh: podman is missing; install it (as root: apt-get install -y podman)" >&2
    exit 1
  fi
  echo "podman.sh: installing podman" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends podman uidmap fuse-overlayfs slirp4netns catatonit >&2
fi
if [ "$(id -u)" -eq 0 ] && ! grep -qs '^driver *= *"vfs"' "$conf"; then
  mkdir -p "$(dirname "$conf")"
  cat > "$conf" <<'CONF'
# Written by mcp-hub's scripts/podman.sh: the vfs driver needs no kernel
# overlay support (containers inside containers, older kernels).
[storage]
driver = "vfs"
runroot = "/run/containers/storage"
graphroot = "/var/lib/containers/storage"
CONF
fi
