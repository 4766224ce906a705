#!/usr/bin/env bash
# Runs a command with SERVICE_TEST_POSTGRES_URL naming a throwaway
# PostgreSQL server: a new cluster in a temporary directory, listening on
# a free port of 127.0.0.1 with trust authentication, stopped and removed
# when the command ends. With SERVICE_TEST_POSTGRES_URL already set, the
# command runs against that server instead.
#
# The server binaries come from PG_BINDIR, else the newest
# /usr/lib/postgresql/*/bin (Debian's postgresql package). Without them
# the script exits 3, so that the caller can say so.
set -euo pipefail
if [ -n "${SERVICE_TEST_POSTGRES_URL:-}" ]; then exec "$@"; fi
bindir=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "with-postgres: no PostgreSQL server binaries (apt-get install postgresql, or set PG_BINDIR)" >&2
  exit 3
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/service-pg.XXXXXX")
as=()
# initdb and postgres refuse to run as root.
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$dir"
  as=(runuser -u postgres --)
fi
stop() {
  "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT
"${as[@]}" "$bindir/initdb" -D "$dir/data" --auth=trust --username=postgres --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
# Durability is the server's business, not the tests': fsync off makes
# the many small databases the tests create cheap. Autovacuum is off too:
# an automatic ANALYZE holds a snapshot that keeps a rewritten table's old
# row versions alive, which the tests of sealed secrets look for in the
# table's file. PG_DURABLE=1 keeps PostgreSQL's defaults, for measurements
# (scripts/load.sh).
settings="-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c autovacuum=off"
[ -n "${PG_DURABLE:-}" ] && settings=""
settings="$settings ${PG_SETTINGS:-}"
# The port is drawn below the kernel's range of ephemeral ports: a port in
# it can be the local end of any outgoing connection, which no probe sees
# and which makes the server's bind fail. A start that still loses its
# port to another process tries the next one.
low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
[ "$low" -gt 11000 ] 2>/dev/null || low=32768
port=""
for _ in $(seq 10); do
  p=$((10000 + RANDOM % (low - 10000)))
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then continue; fi
  rm -f "$dir/server.log"
  if "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-h 127.0.0.1 -p $p -k $dir $settings -c max_connections=400" >/dev/null 2>"$dir/pg_ctl.err"; then
    port=$p
    break
  fi
  grep -q "Address already in use" "$dir/server.log" || { cat "$dir/pg_ctl.err" "$dir/server.log" >&2; exit 1; }
done
[ -n "$port" ] || { cat "$dir/pg_ctl.err" "$dir/server.log" >&2; echo "with-postgres: no free port found" >&2; exit 1; }
export PG_BINDIR="$bindir" PG_DATADIR="$dir/data"
export SERVICE_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
echo "with-postgres: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
set +e
"$@"
rc=$?
set -e
exit $rc
