# estibench service image: installs through scripts/install.sh (the same script as `make serve`),
# runs as a non-root user, migrates the database, then starts the API (uvicorn --factory) and the worker through
# scripts/serve.sh.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
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
COPY --chown=estibench:estibench . /app
USER estibench
RUN sh scripts/install.sh /app/.venv

VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/app/.venv/bin/python", "-c", "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/v1/health', timeout=4).status == 200 else 1)"]
CMD ["sh", "-c", "/app/.venv/bin/python -m db.migrate \"$ESTIBENCH_DATABASE_URL\" && exec sh scripts/serve.sh /app/.venv"]
