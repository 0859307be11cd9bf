#!/bin/sh
# Container entrypoint of the Pronghorn image.
#
#   (no arguments)        pronghorn serve --host $PRONGHORN_HOST --port $PRONGHORN_PORT
#                                         --workers $PRONGHORN_WORKERS [--config $PRONGHORN_CONFIG]
#   --flag ...            the same, with extra flags for `pronghorn serve`
#   doctor|migrate|...    pronghorn <subcommand> ...   (e.g. `docker compose exec gateway pronghorn doctor`)
#   any other command     run as is (e.g. `sh`)
#
# The server replaces this shell (exec), so SIGTERM from `docker stop` reaches it directly.
set -eu

log() { printf 'pronghorn-entrypoint: %s\n' "$*" >&2; }

# config.yaml is optional: without it Pronghorn runs on defaults plus PRONGHORN_* variables.
if [ -n "${PRONGHORN_CONFIG:-}" ]; then
    if [ -d "$PRONGHORN_CONFIG" ]; then
        log "error: $PRONGHORN_CONFIG is a directory, not a file."
        log "hint: Docker creates a directory when a bind-mounted file is missing on the host;"
        log "      remove it there and create config.yaml (cp config.example.yaml config.yaml)."
        exit 64
    elif [ ! -e "$PRONGHORN_CONFIG" ]; then
        log "no config file at $PRONGHORN_CONFIG; using defaults and PRONGHORN_* variables"
        unset PRONGHORN_CONFIG
    fi
fi

data_dir="${PRONGHORN_DATA_DIR:-/data}"
if [ -d "$data_dir" ] && [ ! -w "$data_dir" ]; then
    log "warning: $data_dir is not writable by uid $(id -u); fix with:"
    log "         docker run --rm -u 0 -v <volume>:$data_dir <image> chown -R $(id -u):$(id -g) $data_dir"
fi

serve() {
    if [ -n "${PRONGHORN_CONFIG:-}" ]; then
        set -- --config "$PRONGHORN_CONFIG" "$@"
    fi
    exec pronghorn serve \
        --host "${PRONGHORN_HOST:-0.0.0.0}" \
        --port "${PRONGHORN_PORT:-2026}" \
        --workers "${PRONGHORN_WORKERS:-1}" \
        "$@"
}

if [ "$#" -eq 0 ]; then
    serve
fi

case "$1" in
    -*) serve "$@" ;;
    pronghorn) exec "$@" ;;
esac

if command -v "$1" >/dev/null 2>&1; then
    exec "$@"
fi
exec pronghorn "$@"
