#!/usr/bin/env bash
# A throwaway PostgreSQL cluster (Debian's `postgresql` package) for tests: nothing system-wide is touched.
#   scripts/postgres.sh start DIR [PORT]   init a cluster under DIR, start it on 127.0.0.1:PORT (default: a free
#                                          port), create database `airflow`; prints its SQLAlchemy URL
#   scripts/postgres.sh restart DIR        start that cluster again on its port (after a stop or a kill -9: crash
#                                          recovery first)
#   scripts/postgres.sh stop DIR           stop it (DIR can then be deleted)
#   scripts/postgres.sh bindir             print the directory of the server binaries (exit 1 if absent)
# As root, the server runs as the `postgres` user (PostgreSQL refuses to run as root): DIR and its parents must be
# traversable by it.
set -euo pipefail

bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return 0; fi
  if command -v initdb >/dev/null 2>&1; then dirname "$(readlink -f "$(command -v initdb)")"; return 0; fi
  return 1
}

as_owner() {  # run a server binary as the cluster's owner
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {  # BIN DIR PORT TIMEOUT: start the cluster in DIR on 127.0.0.1:PORT (crash recovery first if it died)
  # Trust auth on a private socket dir and loopback only: a test database, never reachable from outside.
  as_owner "$1/pg_ctl" -D "$2/data" -l "$2/server.log" -w -t "$4" \
    -o "-p $3 -k $2 -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off" start >/dev/null || {
    tail -n 50 "$2/server.log" >&2; exit 1; }
}

cmd=${1:-}
case "$cmd" in
  bindir)
    bindir || { echo "postgres.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }
    ;;
  start)
    dir=${2:?usage: postgres.sh start DIR [PORT]}
    port=${3:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
    bin=$(bindir) || { echo "postgres.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ "$(id -u)" = "0" ]; then
      id postgres >/dev/null 2>&1 || { echo "postgres.sh: running as root needs a 'postgres' user" >&2; exit 1; }
      chown postgres "$dir"
      runuser -u postgres -- test -w "$dir" || { echo "postgres.sh: user postgres cannot write $dir (parents not traversable?)" >&2; exit 1; }
    fi
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || {
      cat "$dir/initdb.log" >&2; exit 1; }
    pg_start "$bin" "$dir" "$port" 60
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres airflow
    echo "$port" >"$dir/port"
    echo "postgresql+psycopg2://postgres@127.0.0.1:$port/airflow"
    ;;
  restart)
    dir=${2:?usage: postgres.sh restart DIR}
    dir=$(cd "$dir" && pwd)
    bin=$(bindir)
    port=$(cat "$dir/port")
    pg_start "$bin" "$dir" "$port" 300
    ;;
  stop)
    dir=${2:?usage: postgres.sh stop DIR}
    bin=$(bindir)
    if [ -f "$dir/data/postmaster.pid" ]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; fi
    ;;
  *)
    echo "usage: $0 start DIR [PORT] | restart DIR | stop DIR | bindir" >&2; exit 2
    ;;
esac
