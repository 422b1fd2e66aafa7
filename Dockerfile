# estibench service image: the dependencies in a layer of their own (only pyproject.toml is copied before them, so a
# source change reuses that layer), then the project through scripts/install.sh (the same script as `make serve`);
# runs as a non-root user in production mode (ESTIBENCH_SECRET_KEY required), migrates the database, then starts
# the API (uvicorn --factory) and the worker through scripts/serve.sh.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    ESTIBENCH_ENV=production \
    ESTIBENCH_HOST=0.0.0.0 \
    ESTIBENCH_PORT=8000 \
    ESTIBENCH_DATA_DIR=/data \
    ESTIBENCH_DATABASE_URL=sqlite:////data/estibench.db \
    ESTIBENCH_TRUSTED_PROXIES=
# ESTIBENCH_TRUSTED_PROXIES: the reverse proxy's address(es), comma separated (uvicorn --forwarded-allow-ips, set by
# scripts/serve.sh); only those may set X-Forwarded-For. Empty (the default): proxy headers are ignored, so behind a
# proxy every caller would share the proxy's address for rate limits and anonymous job ownership.

RUN useradd --create-home --uid 10001 estibench && mkdir -p /app /data && chown estibench:estibench /app /data
WORKDIR /app
USER estibench
COPY --chown=estibench:estibench pyproject.toml /app/
RUN python -m venv /app/.venv \
    && python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && /app/.venv/bin/python -m pip install --quiet --upgrade pip \
    && /app/.venv/bin/python -m pip install --quiet -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt
COPY --chown=estibench:estibench . /app
RUN sh scripts/install.sh /app/.venv

VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/app/.venv/bin/python", "-c", "import os, sys, urllib.request; url = f\"http://127.0.0.1:{os.environ.get('ESTIBENCH_PORT', '8000')}/v1/health\"; sys.exit(0 if urllib.request.urlopen(url, timeout=4).status == 200 else 1)"]
CMD test -n "${ESTIBENCH_SECRET_KEY:-}" \
    || { echo "estibench: ESTIBENCH_SECRET_KEY is not set (production mode). Make one with python3 -c 'import secrets; print(secrets.token_hex(32))' and pass it: docker run -e ESTIBENCH_SECRET_KEY=<that value> ..." >&2; exit 78; } \
    && /app/.venv/bin/python -m db.migrate "$ESTIBENCH_DATABASE_URL" \
    && exec sh scripts/serve.sh /app/.venv
