# shellcheck shell=bash
# Throw-away PostgreSQL for the graphflow test suite.
#
#   source .ci/postgres.sh && pg_start   # exports GRAPHFLOW_TEST_POSTGRES_URL, stops on shell exit
#   ...pytest...
#   pg_stop                              # optional; also run by the EXIT trap
#
# Installs the Debian `postgresql` package when no server binaries are found, runs initdb as the
# `postgres` user (when run as root) into a temporary directory, starts the server on a free
# local port with its socket in that directory, and creates the database `graphflow_test`.
# Environment: GRAPHFLOW_PG_PORT (default: a free port), GRAPHFLOW_PG_DB (graphflow_test).

_gf_pg_bindir() {
    local dir
    if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
        pg_config --bindir
        return 0
    fi
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
        echo "$dir"
        return 0
    fi
    return 1
}

_gf_pg_as() {
    # run a command as the cluster owner
    if [ "$(id -u)" = "0" ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_start() {
    local bindir port db
    if ! bindir=$(_gf_pg_bindir); then
        echo "postgres.sh: installing postgresql (apt-get)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null || {
            apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null
        } || { echo "postgres.sh: cannot install postgresql" >&2; return 1; }
        bindir=$(_gf_pg_bindir) || { echo "postgres.sh: no initdb after install" >&2; return 1; }
    fi
    port=${GRAPHFLOW_PG_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')}
    db=${GRAPHFLOW_PG_DB:-graphflow_test}
    GF_PG_DIR=$(mktemp -d /tmp/graphflow-pg.XXXXXX)
    chmod 755 "$GF_PG_DIR"
    mkdir -p "$GF_PG_DIR/data" "$GF_PG_DIR/sock"
    if [ "$(id -u)" = "0" ]; then
        chown -R postgres: "$GF_PG_DIR"
    fi
    _gf_pg_as "$bindir/initdb" -D "$GF_PG_DIR/data" -U postgres -A trust --no-sync >"$GF_PG_DIR/initdb.log" 2>&1 \
        || { cat "$GF_PG_DIR/initdb.log" >&2; return 1; }
    _gf_pg_as "$bindir/pg_ctl" -D "$GF_PG_DIR/data" -l "$GF_PG_DIR/server.log" \
        -o "-p $port -k $GF_PG_DIR/sock -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
        -w -t 60 start >/dev/null || { cat "$GF_PG_DIR/server.log" >&2; return 1; }
    GF_PG_BINDIR=$bindir
    _gf_pg_as "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db" || { pg_stop; return 1; }
    export GRAPHFLOW_TEST_POSTGRES_URL="postgresql://postgres@127.0.0.1:$port/$db"
    export GF_PG_DIR GF_PG_BINDIR
    trap pg_stop EXIT
    echo "GRAPHFLOW_TEST_POSTGRES_URL=$GRAPHFLOW_TEST_POSTGRES_URL"
}

pg_stop() {
    if [ -n "${GF_PG_DIR:-}" ] && [ -d "$GF_PG_DIR/data" ]; then
        _gf_pg_as "${GF_PG_BINDIR:-$(_gf_pg_bindir)}/pg_ctl" -D "$GF_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$GF_PG_DIR"
    fi
    unset GF_PG_DIR GRAPHFLOW_TEST_POSTGRES_URL
}

# `bash .ci/postgres.sh` (not sourced): start, print the URL, keep running until interrupted
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -e
    pg_start
    echo "PostgreSQL running; Ctrl-C to stop" >&2
    trap 'pg_stop; exit 0' INT TERM
    while true; do sleep 3600 & wait $!; done
fi
