#!/usr/bin/env bash
# Build the estibench image with podman on a Debian bookworm base made here with debootstrap, run it, and check it
# as a deploying engineer would: health check, an estimator call and a benchmark walkthrough through the published
# port, the same runs after a restart, uid 10001, the refusal to start without a secret key, no tests in the image,
# its size, and (when the scorer offers it) one caption set scored with the PTB tokenizer jar and METEOR in Java.
# Prints each step's time. Skips with a message where podman or debootstrap cannot run, except with CI=true.
#   scripts/container_check.sh            (root; reuses the base image when it exists)
#   ESTIBENCH_CHECK_FRESH=1 scripts/container_check.sh    (debootstrap again and build without the layer cache)
# Podman's settings come from deploy/containers.conf (CONTAINERS_CONF) and --runtime runc: no system file changes.
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF="$PWD/deploy/containers.conf"
BASE=localhost/estibench-base:bookworm
IMAGE=localhost/estibench:check
NAME=estibench-check
VOLUME=estibench-check-data
PORT="${ESTIBENCH_CHECK_PORT:-18431}"
WORK="${ESTIBENCH_CHECK_DIR:-/tmp/estibench-container-check}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PODMAN=(quiet_podman --runtime runc)
START=$(date +%s)
LAST=$START

quiet_podman() {
    # Without systemd, podman says on every container start that it cannot register the health-check timer; the
    # health checks are run by hand below (podman healthcheck run), so that line is dropped.
    podman "$@" 2> >(grep -v "unable to get systemd connection" >&2)
}
skip() {
    if [ "${CI:-}" = true ]; then
        echo "container_check: FAILED: $1 (CI must run this check)" >&2
        exit 1
    fi
    echo "container_check: SKIPPED: $1"
    exit 0
}
fail() {
    echo "container_check: FAILED: $1" >&2
    [ -z "${2:-}" ] || "${PODMAN[@]}" logs --tail 40 "$2" >&2 || true
    exit 1
}
timed() {
    local now
    now=$(date +%s)
    printf 'container_check: %-58s %5d s (total %d s)\n' "$1" "$((now - LAST))" "$((now - START))"
    LAST=$now
}
cleanup() {
    "${PODMAN[@]}" rm -f -t 2 "$NAME" >/dev/null 2>&1 || true
    "${PODMAN[@]}" volume rm -f "$VOLUME" >/dev/null 2>&1 || true
    podman secret rm estibench-check-secret estibench-check-admin >/dev/null 2>&1 || true
    rm -rf "$WORK/secrets"
}

[ "$(id -u)" = 0 ] || skip "needs root (rootful podman, debootstrap)"
command -v podman >/dev/null || skip "podman is not installed (apt-get install podman runc debootstrap)"
command -v runc >/dev/null || skip "runc is not installed (apt-get install runc)"
"${PODMAN[@]}" info >/dev/null 2>&1 || skip "podman cannot run here: $("${PODMAN[@]}" info 2>&1 | tail -1)"
trap cleanup EXIT
cleanup
mkdir -p "$WORK"

# 1. The base image: Debian bookworm (python3 3.11) from debootstrap, without apt's caches, imported into podman.
if [ "${ESTIBENCH_CHECK_FRESH:-}" = 1 ] || ! podman image exists "$BASE"; then
    command -v debootstrap >/dev/null || skip "debootstrap is not installed (apt-get install debootstrap)"
    rm -rf "$WORK/rootfs"
    nice -n 10 debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm \
        "$WORK/rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || fail "debootstrap (log: $WORK/debootstrap.log)"
    rm -rf "$WORK"/rootfs/var/cache/apt/archives/*.deb "$WORK"/rootfs/var/lib/apt/lists/*
    tar -C "$WORK/rootfs" -c . | podman import --quiet - "$BASE" >/dev/null
    rm -rf "$WORK/rootfs"
    timed "base image: debootstrap bookworm + podman import"
else
    timed "base image: $BASE exists (ESTIBENCH_CHECK_FRESH=1 rebuilds it)"
fi

# 2. The image. --format docker keeps HEALTHCHECK (the OCI format drops it); --network host reaches the package
# registries; the host's CA bundle is mounted for pip during the build only (machines behind a TLS-inspecting proxy).
BUILD=(--format docker --network host --build-arg "BASE_IMAGE=$BASE" -t "$IMAGE")
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    BUILD+=(-v /etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro --build-arg PIP_CERT=/run/host-ca.crt)
fi
[ "${ESTIBENCH_CHECK_FRESH:-}" = 1 ] && BUILD+=(--no-cache)
nice -n 10 podman --runtime runc build "${BUILD[@]}" . >"$WORK/build.log" 2>&1 || fail "podman build (log: $WORK/build.log)"
SIZE=$(podman image inspect --format '{{.Size}}' "$IMAGE")
timed "image built: $IMAGE, $((SIZE / 1000000)) MB"

# 3. What the image holds and how it starts.
[ "$("${PODMAN[@]}" run --rm "$IMAGE" id -u)" = 10001 ] || fail "the image does not run as uid 10001"
"${PODMAN[@]}" run --rm "$IMAGE" sh -c 'for d in /app/tests /app/bench /app/docs /app/.venv/lib/python3*/site-packages/tests;
    do [ ! -e "$d" ] || { echo "$d exists"; exit 1; }; done; [ "$(ls /app)" = serve.sh ]' || fail "the image ships tests/"
set +e
REFUSAL=$("${PODMAN[@]}" run --rm "$IMAGE" 2>&1)
CODE=$?
set -e
[ "$CODE" = 78 ] && grep -q "ESTIBENCH_SECRET_KEY is not set" <<<"$REFUSAL" \
    || fail "without ESTIBENCH_SECRET_KEY: exit $CODE, '$REFUSAL' (want 78 and the message)"
timed "uid 10001, no tests/, refuses to start without a secret key (exit 78)"

# 4. Run it with a named volume and the secret key and admin key as podman secrets; wait for a healthy check (with
# no systemd, podman runs health checks only when asked: `podman healthcheck run`).
mkdir -p "$WORK/secrets"
python3 -c 'import secrets; print(secrets.token_hex(32))' >"$WORK/secrets/secret_key"
ADMIN="ek_admin_$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')"
printf '%s\n' "$ADMIN" >"$WORK/secrets/admin_key"
podman secret create estibench-check-secret "$WORK/secrets/secret_key" >/dev/null
podman secret create estibench-check-admin "$WORK/secrets/admin_key" >/dev/null
"${PODMAN[@]}" volume create "$VOLUME" >/dev/null
"${PODMAN[@]}" run -d --name "$NAME" -p "127.0.0.1:$PORT:8000" -v "$VOLUME:/data" \
    --secret estibench-check-secret,type=mount,target=secret_key,uid=10001,mode=0400 \
    --secret estibench-check-admin,type=mount,target=admin_key,uid=10001,mode=0400 \
    -e ESTIBENCH_SECRET_KEY_FILE=/run/secrets/secret_key -e ESTIBENCH_ADMIN_KEY_FILE=/run/secrets/admin_key \
    "$IMAGE" >/dev/null
wait_healthy() {
    local i status
    for i in $(seq 1 90); do
        "${PODMAN[@]}" healthcheck run "$NAME" >/dev/null 2>&1 || true
        status=$(podman inspect --format '{{.State.Health.Status}}' "$NAME" 2>/dev/null || echo gone)
        [ "$status" = healthy ] && return 0
        [ "$(podman inspect --format '{{.State.Running}}' "$NAME")" = true ] || fail "the container stopped" "$NAME"
        sleep 2
    done
    fail "not healthy after 180 s (status $status)" "$NAME"
}
wait_healthy
timed "container healthy (HEALTHCHECK on /v1/health)"

# 5. Through the published port: an estimator call, a benchmark walkthrough (create with the admin key, submit,
# leaderboard); after a restart, the same runs and leaderboard from the volume.
export ESTIBENCH_CHECK_URL="http://127.0.0.1:$PORT" ESTIBENCH_CHECK_ADMIN="$ADMIN" ESTIBENCH_CHECK_STATE="$WORK/state.json"
python3 scripts/container_walkthrough.py before || fail "walkthrough" "$NAME"
timed "estimator call + benchmark walkthrough through port $PORT"
"${PODMAN[@]}" restart -t 20 "$NAME" >/dev/null
wait_healthy
python3 scripts/container_walkthrough.py after || fail "the runs after a restart" "$NAME"
timed "restarted: the same runs and leaderboard from the volume"

# 6. Java in the image: one caption set with the PTB tokenizer jar and METEOR 1.5, when the scorer offers them.
python3 scripts/container_walkthrough.py java || fail "caption scoring with Java" "$NAME"
timed "caption scoring with the Java tools"

echo "container_check: passed; image $IMAGE is $((SIZE / 1000000)) MB; $(($(date +%s) - START)) s in all"
