#!/usr/bin/env bash
# Start a throwaway PostgreSQL on 127.0.0.1 for the tracker's store tests.
#   eval "$(.ci/start-postgres.sh)"   -> exports MESHNET_TEST_POSTGRES_URL
# Idempotent: installs Debian's postgresql only if missing, reuses a running server.
# Runs as root (the server itself runs as the 'postgres' user). Only the export
# line goes to stdout; everything else goes to stderr.
set -euo pipefail

PORT="${MESHNET_PG_PORT:-55432}"
DATA="${MESHNET_PG_DATA:-/var/tmp/meshnet-postgres}"
DB_NAME=meshnet_test
DB_USER=meshnet
DB_PASS=meshnet

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

BIN="$(find_bin || true)"
if [ -z "$BIN" ] || [ ! -x "$BIN/pg_ctl" ]; then
    echo "installing postgresql from Debian packages..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y --no-install-recommends postgresql >&2
    BIN="$(find_bin)"
fi
id postgres >/dev/null 2>&1 || useradd --system --home-dir "$DATA" postgres

as_pg() { runuser -u postgres -- "$@"; }

if [ ! -f "$DATA/PG_VERSION" ]; then
    mkdir -p "$DATA"
    chown postgres: "$DATA"
    chmod 700 "$DATA"
    # trust on loopback only: a test server, bound to 127.0.0.1, never a real one.
    as_pg "$BIN/initdb" -D "$DATA" -U postgres -A trust --no-sync >&2
fi

if ! as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    # Durability off: this cluster only ever holds test data.
    as_pg "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DATA -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start >&2
fi

psql_pg() { as_pg "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }

if [ "$(psql_pg -c "SELECT 1 FROM pg_roles WHERE rolname='$DB_USER'")" != "1" ]; then
    psql_pg -c "CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASS'" >&2
fi
if [ "$(psql_pg -c "SELECT 1 FROM pg_database WHERE datname='$DB_NAME'")" != "1" ]; then
    psql_pg -c "CREATE DATABASE $DB_NAME OWNER $DB_USER" >&2
fi

echo "export MESHNET_TEST_POSTGRES_URL=postgresql+psycopg://$DB_USER:$DB_PASS@127.0.0.1:$PORT/$DB_NAME"
