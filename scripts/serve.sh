#!/usr/bin/env sh
# Start the API (uvicorn, app factory) on ESTIBENCH_HOST:ESTIBENCH_PORT and the job worker (python -m worker).
# A worker that dies is restarted (its child processes die with it) while the API stays up; if the API exits, the
# worker is stopped. Ctrl-C / SIGTERM stops both cleanly (running jobs go back on the queue).
# X-Forwarded-For / X-Forwarded-Proto are trusted only from the addresses in ESTIBENCH_TRUSTED_PROXIES (comma
# separated, uvicorn --forwarded-allow-ips); when it is empty, proxy headers are ignored (--no-proxy-headers).
set -eu
VENV="${1:-.venv}"
HOST="${ESTIBENCH_HOST:-127.0.0.1}"
PORT="${ESTIBENCH_PORT:-8000}"
PROXIES="${ESTIBENCH_TRUSTED_PROXIES:-}"
if [ -n "$PROXIES" ]; then
    set -- --proxy-headers --forwarded-allow-ips "$PROXIES"
else
    set -- --no-proxy-headers
fi
"$VENV/bin/python" -m worker &
WORKER=$!
"$VENV/bin/uvicorn" api.app:create_app --factory --host "$HOST" --port "$PORT" --timeout-keep-alive 5 \
    --no-access-log "$@" &
API=$!
STOP=0
trap 'STOP=1' INT TERM
while [ "$STOP" = 0 ] && kill -0 "$API" 2>/dev/null; do
    if ! kill -0 "$WORKER" 2>/dev/null; then
        wait "$WORKER" 2>/dev/null || true
        echo "serve.sh: the worker (pid $WORKER) exited; starting another" >&2
        sleep 1
        [ "$STOP" = 0 ] || break
        "$VENV/bin/python" -m worker &
        WORKER=$!
    fi
    sleep 0.5
done
kill -TERM "$API" "$WORKER" 2>/dev/null || true
wait "$API" 2>/dev/null || true
wait "$WORKER" 2>/dev/null || true
