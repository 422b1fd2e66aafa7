#!/usr/bin/env sh
# Start the API (uvicorn) on ESTIBENCH_HOST:ESTIBENCH_PORT. Ctrl-C / SIGTERM stops it cleanly.
set -eu
VENV="${1:-.venv}"
HOST="${ESTIBENCH_HOST:-127.0.0.1}"
PORT="${ESTIBENCH_PORT:-8000}"
exec "$VENV/bin/uvicorn" api.app:app --host "$HOST" --port "$PORT" --timeout-keep-alive 5 --no-access-log
