#!/usr/bin/env bash
# A private PostgreSQL server for tests and benchmarks: Debian's postgresql package (initdb,
# pg_ctl), in a new folder under /tmp, listening on a Unix socket in that folder and on a free
# TCP port of 127.0.0.1, trust authentication, one database "scalebench". As root the server runs
# as the postgres user (PostgreSQL refuses root). It is stopped and its folder removed by `stop`,
# or by its lifeline as soon as the process it watches has ended, so a killed test leaves nothing.
#
#   pg_temp_server.sh start STATE [WATCH_PID [WATCH_PATH]]
#                                               start; write DIR, PID, URI, TCP_URI lines to the
#                                               file STATE; print the Unix-socket URI. The server
#                                               stops when WATCH_PID (default: the caller) ends
#                                               or WATCH_PATH no longer exists
#   pg_temp_server.sh stop STATE                stop the server of STATE and remove its folder
#   pg_temp_server.sh with COMMAND [ARG]..      start, run COMMAND with PG_URI and PG_TCP_URI in
#                                               its environment, stop; exit with COMMAND's status
# Exit 77 when no PostgreSQL server is installed (Debian: the postgresql package).
set -euo pipefail

bindir=""
for d in "$(pg_config --bindir 2>/dev/null || true)" $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -Vr); do
  if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then bindir=$d; break; fi
done

as_owner() {  # runs a command as the server's owner
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local state=$1 watch=${2:-$PPID} watch_path=${3:-/}
  [ -n "$bindir" ] || { echo "pg_temp_server.sh: no PostgreSQL server (Debian: apt-get install postgresql)" >&2; exit 77; }
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    echo "pg_temp_server.sh: running as root but there is no postgres user to run the server" >&2; exit 77
  fi
  local dir
  dir=$(mktemp -d /tmp/sb-pg.XXXXXX)
  chmod 0755 "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync \
    --no-instructions >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; rm -rf "$dir"; exit 1; }
  local port attempt ok=0
  for attempt in 1 2 3; do  # a port taken between free_port and the start: try another one
    port=$(free_port)
    if as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
         -o "-k $dir -p $port -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60" \
         start >/dev/null 2>&1; then
      ok=1; break
    fi
  done
  if [ "$ok" -ne 1 ]; then
    cat "$dir/server.log" >&2 || true
    rm -rf "$dir"; exit 1
  fi
  local pid
  pid=$(head -n 1 "$dir/data/postmaster.pid")
  "$bindir/psql" -q -X -h "$dir" -p "$port" -U postgres -d postgres -c "CREATE DATABASE scalebench" >/dev/null
  {
    echo "DIR=$dir"
    echo "PID=$pid"
    echo "URI=postgresql:///scalebench?host=$dir&port=$port&user=postgres"
    echo "TCP_URI=postgresql://postgres@127.0.0.1:$port/scalebench"
    echo "BINDIR=$bindir"
  } >"$state"
  # The lifeline: its own session, so that it outlives a kill of the caller's process group.
  setsid bash -c '
    while kill -0 "$1" 2>/dev/null && [ -d "$2/data" ] && [ -e "$3" ]; do sleep 0.5; done
    if [ -d "$2/data" ]; then "$0" stop-dir "$2"; fi' "$0" "$watch" "$dir" "$watch_path" \
    </dev/null >/dev/null 2>&1 &
  echo "URI=postgresql:///scalebench?host=$dir&port=$port&user=postgres" | sed 's/^URI=//'
}

stop_dir() {
  local dir=$1 pid=""
  [ -d "$dir" ] || return 0
  [ -f "$dir/data/postmaster.pid" ] && pid=$(head -n 1 "$dir/data/postmaster.pid")
  as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}

value() {  # value STATE KEY
  sed -n "s/^$2=//p" "$1" | head -n 1
}

case "${1:-}" in
  start)
    [ $# -ge 2 ] || { echo "usage: pg_temp_server.sh start STATE [WATCH_PID [WATCH_PATH]]" >&2; exit 2; }
    start "$2" "${3:-$PPID}" "${4:-/}" ;;
  stop)
    [ $# -ge 2 ] || { echo "usage: pg_temp_server.sh stop STATE" >&2; exit 2; }
    [ -f "$2" ] || exit 0
    stop_dir "$(value "$2" DIR)"
    rm -f "$2" ;;
  stop-dir)
    stop_dir "$2" ;;
  with)
    shift
    [ $# -ge 1 ] || { echo "usage: pg_temp_server.sh with COMMAND [ARG].." >&2; exit 2; }
    state=$(mktemp /tmp/sb-pg-state.XXXXXX)
    trap 'stop_dir "$(value "$state" DIR)"; rm -f "$state"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    start "$state" $$ >/dev/null
    rc=0
    PG_URI=$(value "$state" URI) PG_TCP_URI=$(value "$state" TCP_URI) "$@" || rc=$?
    exit "$rc" ;;
  *)
    echo "usage: pg_temp_server.sh start STATE [WATCH_PID [WATCH_PATH]] | stop STATE | with COMMAND [ARG].." >&2
    exit 2 ;;
esac
