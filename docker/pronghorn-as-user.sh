#!/bin/sh
# `pronghorn` in the image (first on PATH, before /opt/venv/bin). Run as root — `docker
# compose exec gateway pronghorn ...` in a container the compose file starts as root (see
# entrypoint.sh) — it becomes uid/gid 10001 with no capabilities first, so a command never
# writes root-owned files into /data nor checks the sandbox as root.
set -eu
if [ "$(id -u)" = 0 ]; then
    export HOME=/home/pronghorn USER=pronghorn LOGNAME=pronghorn
    exec setpriv --reuid=10001 --regid=10001 --clear-groups \
        --inh-caps=-all --bounding-set=-all --no-new-privs -- /opt/venv/bin/pronghorn "$@"
fi
exec /opt/venv/bin/pronghorn "$@"
