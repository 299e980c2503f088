#!/usr/bin/env bash
# Installs Debian's podman for make image, with the vfs storage driver
# (works in containers and on kernels without overlay for unprivileged
# users). Idempotent: does nothing when podman is present and its storage
# configuration says vfs.
#
#   scripts/podman.sh                  install podman (builds need no more)
#   scripts/podman.sh run-flags IMAGE  also find what `podman run` needs on
#                                      this host to run mcp-hub's IMAGE
#
# run-flags tries `podman run --rm IMAGE --version` with podman's defaults
# first, and adds a flag only when a failure this host gives says it is
# needed, one fix per failure:
#   - "setrlimit RLIMIT_NOFILE: Operation not permitted" (crun) or "error
#     setting rlimit type N" (runc): podman, as root, raises the container's
#     nofile and nproc limits to 1048576, and a sandbox without
#     CAP_SYS_RESOURCE refuses that. Fix: --ulimit nofile=N:N and
#     nproc=P:P, N this shell's hard limit, P its hard limit capped at
#     kernel.pid_max (there cannot be more processes than pids; a sandbox's
#     podman may hold a lower nproc than the shell, 32768 = pid_max where the
#     shell had 96364).
#   - "crun: cgroups in hybrid mode not supported" (crun 1.8, Debian 12, on
#     a host with cgroup v1 controllers and a cgroup v2 hierarchy mounted
#     side by side). Fix: Debian's runc, installed here if missing, and
#     --runtime runc.
# It prints the flags, one a line (nothing when the defaults work), for
# `podman --storage-driver vfs run FLAGS...`. When running stays refused it
# says why on stderr and exits 1.
set -euo pipefail

conf=/etc/containers/storage.conf

# apt_install PKG...: installs Debian packages (as root), updating the
# package lists only when a first try cannot find them.
apt_install() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "podman.sh: $* missing; install it (as root: apt-get install -y $*)" >&2
    return 1
  fi
  echo "podman.sh: installing $*" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends "$@" >&2 2>/dev/null; then
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "$@" >&2
  fi
}

if ! command -v podman >/dev/null; then
  apt_install podman uidmap fuse-overlayfs slirp4netns catatonit runc
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

[ "${1:-}" = run-flags ] || exit 0
if [ $# -ne 2 ]; then
  echo "usage: $0 run-flags IMAGE" >&2
  exit 2
fi
image=$2

# hard LIMIT: this shell's hard limit (ulimit -H LIMIT), "unlimited" as
# podman's own default.
hard() {
  local v
  v=$(ulimit -H "$1")
  if [ "$v" = unlimited ]; then v=1048576; fi
  echo "$v"
}

flags=() ulimits="" runtime=""
for _ in 1 2 3; do
  if out=$(podman --storage-driver vfs run --rm --pull never "${flags[@]}" "$image" --version 2>&1); then
    if [ ${#flags[@]} -gt 0 ]; then
      echo "podman.sh: podman run needs here: ${flags[*]}" >&2
      printf '%s\n' "${flags[@]}"
    fi
    exit 0
  fi
  case "$out" in
    *setrlimit*|*"setting rlimit"*)
      [ -z "$ulimits" ] || break
      ulimits=1
      nofile=$(hard -n) nproc=$(hard -u) pidmax=$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 32768)
      if [ "$nproc" -gt "$pidmax" ]; then nproc=$pidmax; fi
      flags+=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")
      ;;
    *"cgroups in hybrid mode"*)
      [ -z "$runtime" ] || break
      runtime=1
      command -v runc >/dev/null || apt_install runc
      flags+=(--runtime runc)
      ;;
    *) break ;;
  esac
done
echo "podman.sh: podman cannot run $image here (flags tried: ${flags[*]:-none}): $(printf '%s\n' "$out" | tail -n 1)" >&2
exit 1
