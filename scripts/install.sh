#!/usr/bin/env sh
# Install estibench into a virtual environment (default .venv) from the hashed locks in requirements/ (`make lock`
# writes them from pyproject.toml). Used by `make serve`, `make test`, the Dockerfile and CI, so all of them install
# the same pinned, hash-checked distributions; the project itself goes in last with --no-deps.
#   scripts/install.sh [VENV_DIR] [EXTRAS] [MODE]   e.g. scripts/install.sh .venv dev
# EXTRAS: empty (runtime.lock), dev (dev.lock) or dev,bench (bench.lock). MODE: editable (the default, for working
# on the code; skipped while VENV/.installed-EXTRAS is newer than the locks), package (a regular install, for the
# image) or deps (the locks alone: the image's dependency layer).
set -eu
VENV="${1:-.venv}"
EXTRAS="${2:-}"
MODE="${3:-editable}"
PY="${PYTHON:-python3}"
case "$EXTRAS" in
    "") LOCK=requirements/runtime.lock ;;
    dev) LOCK=requirements/dev.lock ;;
    dev,bench) LOCK=requirements/bench.lock ;;
    *) echo "install.sh: no lock for extras '$EXTRAS' (use '', dev or dev,bench)" >&2; exit 2 ;;
esac
case "$MODE" in
    editable) PROJECT="-e ." ;;
    package | deps) PROJECT="." ;;
    *) echo "install.sh: MODE is editable, package or deps, not '$MODE'" >&2; exit 2 ;;
esac
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.installed-${EXTRAS:-base}"
if [ "$MODE" != editable ] || [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ] || [ "$LOCK" -nt "$STAMP" ] \
    || [ requirements/build.lock -nt "$STAMP" ]; then
    PIP="$VENV/bin/python -m pip install --quiet --disable-pip-version-check"
    $PIP --require-hashes --no-deps -r requirements/build.lock
    $PIP --require-hashes --no-deps -r "$LOCK"
    if [ "$MODE" != deps ]; then
        # shellcheck disable=SC2086  # PROJECT is "-e ." or "."
        $PIP --no-deps --no-build-isolation $PROJECT
        "$VENV/bin/python" -m pip check --disable-pip-version-check
    fi
    if [ "$MODE" = editable ]; then
        touch "$STAMP"
    fi
fi
