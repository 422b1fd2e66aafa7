#!/bin/sh
# `redis-server ...`: as root, give /data to the redis user and run again as that user, with protected mode off
# ahead of the given arguments (which may set it back). Any other command runs as is.
set -eu
if [ "${1:-}" != redis-server ]; then
    exec "$@"
fi
if [ "$(id -u)" = 0 ]; then
    chown -R redis:redis .
    exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi
shift
exec redis-server --protected-mode no "$@"
