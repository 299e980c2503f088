#!/usr/bin/env bash
# Runs a throwaway PostgreSQL server for the tests, in a directory of its
# own, on 127.0.0.1, as an unprivileged user (PostgreSQL refuses to run as
# root: as root the server runs as the user postgres, which Debian's package
# creates).
#
#   scripts/pg.sh start DIR [PORT]  initdb DIR (when new) and start the server
#                                   on 127.0.0.1:PORT (default: a free port);
#                                   prints the DSN of its database "mcphub"
#   scripts/pg.sh stop DIR          stop it (fast shutdown)
#   scripts/pg.sh kill DIR          stop it at once (immediate shutdown)
#   scripts/pg.sh restart DIR       start it again on the same port
#   scripts/pg.sh destroy DIR       stop it and remove DIR
#   scripts/pg.sh run CMD ARGS...   start one in a temporary directory, run
#                                   CMD with MCPHUB_TEST_POSTGRES set to its
#                                   DSN, then destroy it; exits with CMD's code
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/pg_ctl" ] && { echo "$d"; return; }
  done
  command -v pg_ctl >/dev/null && { dirname "$(command -v pg_ctl)"; return; }
  echo "pg.sh: no PostgreSQL server binaries (run scripts/team-deps.sh postgres)" >&2
  exit 1
}

# as runs a command as the server's user.
as() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@") # from a directory it may read
  else
    "$@"
  fi
}

freeport() {
  python3 - <<'EOF' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
EOF
}

dsn() { echo "postgres://mcphub@127.0.0.1:$(cat "$1/port")/mcphub?sslmode=disable"; }

start() {
  local dir=$1 port=${2:-} bin
  bin=$(bindir)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ "$(id -u)" -eq 0 ] && chown postgres "$dir" && chmod 0700 "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as "$bin/initdb" -D "$dir/data" -U mcphub --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
  fi
  if as "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    dsn "$dir" # already running
    return
  fi
  [ -n "$port" ] || port=$(cat "$dir/port" 2>/dev/null || freeport)
  echo "$port" >"$dir/port"
  as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/data -c fsync=off -c max_connections=300" start >/dev/null ||
    { cat "$dir/server.log" >&2; exit 1; }
  if ! as "$bin/psql" -h 127.0.0.1 -p "$port" -U mcphub -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'mcphub'" | grep -q 1; then
    as "$bin/createdb" -h 127.0.0.1 -p "$port" -U mcphub mcphub
  fi
  dsn "$dir"
}

stop() {
  local dir=$1 mode=${2:-fast} bin
  bin=$(bindir)
  [ -f "$dir/data/postmaster.pid" ] || return 0
  as "$bin/pg_ctl" -D "$dir/data" -m "$mode" -w -t 60 stop >/dev/null
}

case "${1:-}" in
  start) start "$2" "${3:-}" ;;
  stop) stop "$2" fast ;;
  kill) stop "$2" immediate ;;
  restart) start "$2" "$(cat "$2/port")" >/dev/null ;;
  destroy)
    stop "$2" immediate || true
    rm -rf "$2"
    ;;
  run)
    shift
    dir=$(mktemp -d "${TMPDIR:-/tmp}/mcp-hub-pg.XXXXXX")
    trap '"$here/pg.sh" destroy "$dir"' EXIT
    MCPHUB_TEST_POSTGRES=$(start "$dir")
    export MCPHUB_TEST_POSTGRES
    echo "pg.sh: PostgreSQL for the tests at $MCPHUB_TEST_POSTGRES" >&2
    set +e
    "$@"
    code=$?
    set -e
    exit $code
    ;;
  *)
    sed -n '2,20p' "$0" >&2
    exit 2
    ;;
esac
