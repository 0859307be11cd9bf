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

# Started as root as the container's first process (the compose file does this: `user: "0:0"`
# with SYS_ADMIN, SETUID, SETGID and SETPCAP only): mount a /proc without Docker's masked
# paths at /run/pronghorn/proc — the kernel lets bubblewrap mount a fresh /proc for a
# sandboxed command only where one is fully visible — then become uid/gid 10001 with no
# capabilities (bounding set cleared, no-new-privs) and start again. Nothing else runs as
# root. Compose 1.29 cannot pass `systempaths=unconfined`, which does the same from outside.
if [ "$(id -u)" = 0 ] && [ "$$" = 1 ]; then
    if mkdir -p /run/pronghorn/proc \
        && mount -t proc -o nosuid,nodev,noexec proc /run/pronghorn/proc 2>/dev/null; then
        :
    else
        log "note: could not mount a visible /proc (needs CAP_SYS_ADMIN and a seccomp profile"
        log "      allowing mount(2)); bubblewrap may refuse to run (see docs/deployment.md)"
    fi
    export HOME=/home/pronghorn USER=pronghorn LOGNAME=pronghorn
    exec setpriv --reuid=10001 --regid=10001 --clear-groups \
        --inh-caps=-all --bounding-set=-all --no-new-privs -- "$0" "$@"
fi

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
