#!/bin/sh
# The official postgres image's start-up, as far as compose.yaml uses it. `postgres ...`: as root, give $PGDATA to
# the postgres user and run again as that user; on the first start (no PG_VERSION), initdb with POSTGRES_USER as the
# superuser and the password from POSTGRES_PASSWORD_FILE or POSTGRES_PASSWORD, accept password logins from any
# address, create POSTGRES_DB; then exec the server. Any other command (the backup service's `sh -c ...`) runs as is.
set -eu
if [ "${1:-}" != postgres ]; then
    exec "$@"
fi
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    user="${POSTGRES_USER:-postgres}"
    if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
        if [ -n "${POSTGRES_PASSWORD:-}" ]; then
            echo "entrypoint: set POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE, not both" >&2
            exit 1
        fi
        password="$(cat "$POSTGRES_PASSWORD_FILE")"
    else
        password="${POSTGRES_PASSWORD:-}"
    fi
    [ -n "$password" ] || { echo "entrypoint: POSTGRES_PASSWORD_FILE or POSTGRES_PASSWORD is required" >&2; exit 1; }
    db="${POSTGRES_DB:-$user}"
    pwfile="$(mktemp)"
    printf '%s\n' "$password" >"$pwfile"
    initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA"
    rm -f "$pwfile"
    echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        # A temporary server on a private socket and no TCP: pg_isready (the health check) and clients see nothing
        # until the real server below starts.
        socket="$(mktemp -d)"
        pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -c unix_socket_directories=$socket" start
        psql -v ON_ERROR_STOP=1 -h "$socket" -U "$user" -d postgres -c "CREATE DATABASE \"$db\""
        pg_ctl -D "$PGDATA" -w -m fast stop
        rmdir "$socket"
    fi
    echo "entrypoint: initialised $PGDATA (user $user, database $db)"
fi
exec "$@"
