#!/usr/bin/env bash
# Installs what the PostgreSQL store tests and the team (load balancer)
# tests need, from Debian's packages: postgresql (initdb, pg_ctl, postgres)
# and haproxy. Idempotent: does nothing when both are present.
#
#   scripts/team-deps.sh            postgresql and haproxy
#   scripts/team-deps.sh postgres   postgresql only
set -euo pipefail
want=(postgresql haproxy)
[ "${1:-}" = postgres ] && want=(postgresql)

missing=()
for p in "${want[@]}"; do
  case $p in
    postgresql) compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null || missing+=(postgresql) ;;
    haproxy) command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing+=(haproxy) ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "team-deps: missing ${missing[*]}; install them (as root: apt-get install -y ${missing[*]})" >&2
  exit 1
fi
echo "team-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
