#!/usr/bin/env sh
# Install estibench into a virtual environment (default .venv). Used by `make serve`, `make test`,
# the Dockerfile and CI, so all of them install the same way.
#   scripts/install.sh [VENV_DIR] [EXTRAS]   e.g. scripts/install.sh .venv dev
set -eu
VENV="${1:-.venv}"
EXTRAS="${2:-}"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.installed-${EXTRAS:-base}"
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    if [ -n "$EXTRAS" ]; then
        "$VENV/bin/python" -m pip install --quiet -e ".[$EXTRAS]"
    else
        "$VENV/bin/python" -m pip install --quiet -e .
    fi
    touch "$STAMP"
fi
