# estibench service image, in two stages. The build stage installs the hashed runtime lock (requirements/; that
# layer is rebuilt only when the locks or install.sh change, not pyproject.toml), then the project as a regular
# package, both through scripts/install.sh (the same script as `make serve`). The runtime stage holds that
# virtualenv, scripts/serve.sh and Debian's Java (the caption scorers run METEOR and the PTB tokenizer from
# pycocoevalcap's jars): no tests, benchmarks, docs or sources tree.
# It runs as uid 10001 in production mode (ESTIBENCH_SECRET_KEY or ESTIBENCH_SECRET_KEY_FILE required), migrates
# the database, then starts the API (uvicorn --factory) and the worker through serve.sh.
# BASE_IMAGE: any Debian-based image whose python3 is 3.11, e.g. a debootstrap'ed bookworm imported with podman
# (scripts/container_check.sh); both stages use it, so the virtualenv's python3 is the same file in each.
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS build
# PIP_CERT: the CA bundle pip trusts during the build; a machine behind a TLS-inspecting proxy mounts its own bundle
# for the build only (podman build -v HOST_BUNDLE:/run/host-ca.crt:ro --build-arg PIP_CERT=/run/host-ca.crt).
ARG PIP_CERT=/etc/ssl/certs/ca-certificates.crt
ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY requirements/ /src/requirements/
COPY scripts/install.sh /src/scripts/install.sh
RUN sh scripts/install.sh /app/.venv "" deps
COPY . /src
RUN sh scripts/install.sh /app/.venv "" package

FROM ${BASE_IMAGE}
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends default-jre-headless \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 estibench \
    && mkdir -p /app /data \
    && chown estibench:estibench /data
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/app/.venv/bin:$PATH \
    ESTIBENCH_ENV=production \
    ESTIBENCH_HOST=0.0.0.0 \
    ESTIBENCH_PORT=8000 \
    ESTIBENCH_DATA_DIR=/data \
    ESTIBENCH_DATABASE_URL=sqlite:////data/estibench.db \
    ESTIBENCH_TRUSTED_PROXIES=
# ESTIBENCH_TRUSTED_PROXIES: the reverse proxy's address(es), comma separated (uvicorn --forwarded-allow-ips, set by
# serve.sh); only those may set X-Forwarded-For. Empty (the default): proxy headers are ignored, so behind a proxy
# every caller would share the proxy's address for rate limits and anonymous job ownership.
# /data is where the SQLite store, its secret key file and queue live: mount a named volume there (no VOLUME
# instruction, so containers that use PostgreSQL, as in compose.yaml, get no anonymous volume).
COPY --from=build /app/.venv /app/.venv
COPY scripts/serve.sh /app/serve.sh
WORKDIR /app
USER 10001
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/app/.venv/bin/python", "-c", "import os, sys, urllib.request; url = f\"http://127.0.0.1:{os.environ.get('ESTIBENCH_PORT', '8000')}/v1/health\"; sys.exit(0 if urllib.request.urlopen(url, timeout=4).status == 200 else 1)"]
CMD test -n "${ESTIBENCH_SECRET_KEY:-}${ESTIBENCH_SECRET_KEY_FILE:-}" \
    || { echo "estibench: ESTIBENCH_SECRET_KEY is not set (production mode). Make one with python3 -c 'import secrets; print(secrets.token_hex(32))' and pass it: docker run -e ESTIBENCH_SECRET_KEY=<that value> ... (or a file: ESTIBENCH_SECRET_KEY_FILE=/run/secrets/...)" >&2; exit 78; } \
    && /app/.venv/bin/python -c 'from db.migrate import upgrade; from usecases.settings import Settings; upgrade(Settings().database_url)' \
    && exec sh /app/serve.sh /app/.venv
