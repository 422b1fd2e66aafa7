#!/usr/bin/env sh
# Start the API (uvicorn, app factory) on ESTIBENCH_HOST:ESTIBENCH_PORT and the job worker (python -m worker).
# Ctrl-C / SIGTERM stops both cleanly (running jobs go back on the queue); if either exits, the other is stopped.
set -eu
VENV="${1:-.venv}"
HOST="${ESTIBENCH_HOST:-127.0.0.1}"
PORT="${ESTIBENCH_PORT:-8000}"
"$VENV/bin/python" -m worker &
WORKER=$!
"$VENV/bin/uvicorn" api.app:create_app --factory --host "$HOST" --port "$PORT" --timeout-keep-alive 5 --no-access-log &
API=$!
STOP=0
trap 'STOP=1' INT TERM
while [ "$STOP" = 0 ] && kill -0 "$API" 2>/dev/null && kill -0 "$WORKER" 2>/dev/null; do
    sleep 0.5
done
kill -TERM "$API" "$WORKER" 2>/dev/null || true
wait "$API" 2>/dev/null || true
wait "$WORKER" 2>/dev/null || true
