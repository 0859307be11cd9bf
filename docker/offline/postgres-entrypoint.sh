#!/bin/sh
# Entrypoint of the offline PostgreSQL image (docker/offline/postgres.Dockerfile): on the
# first start, create the cluster in $PGDATA with POSTGRES_USER (superuser, password
# POSTGRES_PASSWORD, required) and the database POSTGRES_DB; then run the server in the
# foreground, listening on every address of the container with password (SCRAM) auth.
set -eu

log() { printf 'postgres-entrypoint: %s\n' "$*" >&2; }

user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
        log "error: POSTGRES_PASSWORD is required to create the database"
        exit 64
    fi
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 \
        --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        # Local socket only while the database is created.
        pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
        createdb -U "$user" "$db"
        pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    fi
    log "created the cluster in $PGDATA (user $user, database $db)"
fi

exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
