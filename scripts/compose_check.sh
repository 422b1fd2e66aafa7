#!/usr/bin/env bash
# Run compose.yaml's whole stack with Debian's podman-compose (1.0.3) and rootful podman, as a deploying engineer
# would: PostgreSQL, Redis, `migrate`, two API replicas behind the Caddy proxy, two workers. Through the proxy's
# published port: an estimator call and a benchmark walkthrough (scripts/container_walkthrough.py), a job run by a
# worker (scripts/compose_traffic.py), then one API replica killed while clients send GET requests (none may fail;
# the proxy retries them on the other replica). Then everything down, volumes and networks removed.
# Images: postgres, redis and caddy built from Debian bookworm's packages (deploy/images/) and the estibench image
# (Dockerfile), all on the debootstrap base that scripts/container_check.sh makes (run that first), reusing the
# layer cache; deploy/compose.podman.yaml names them. Prints each step's time. Skips with a message where podman or
# podman-compose cannot run, except with CI=true.
# podman-compose 1.0.3 ignores `depends_on` conditions, `ipam` and `ipv4_address`, and fails on a service's
# `networks` written as a mapping: it gets a copy of compose.yaml with that mapping as a list, creates the containers
# (--no-start), and this script starts them in the order compose.yaml's conditions give, waiting for each, after
# creating the `frontend` network with its subnet and IP range and reconnecting the proxy with its fixed address.
#   scripts/compose_check.sh                          (root; ESTIBENCH_STACK_PORT, default 18432)
#   ESTIBENCH_STACK_KEEP=1 scripts/compose_check.sh   (stop after the walkthrough and leave the stack up)
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF="$PWD/deploy/containers.conf"
BASE=localhost/estibench-base:bookworm
APP=localhost/estibench-stack-app:latest
PROJECT=estibench-stack
PORT="${ESTIBENCH_STACK_PORT:-18432}"
WORK="${ESTIBENCH_STACK_DIR:-/tmp/estibench-compose-check}"
# compose.yaml's defaults for the frontend network and the proxy's address on it.
SUBNET="${ESTIBENCH_FRONTEND_SUBNET:-172.31.240.0/24}"
IP_RANGE="${ESTIBENCH_FRONTEND_IP_RANGE:-172.31.240.128/25}"
PROXY_ADDRESS="${ESTIBENCH_PROXY_ADDRESS:-172.31.240.2}"
NETWORKS=(edge frontend data-api data-jobs)
# podman-compose 1.0.3 reads a service's `networks` only as a list (the mapping form, which the proxy needs for its
# ipv4_address, fails with "missing networks: edge"), so it gets a copy of compose.yaml in $WORK where each such
# mapping is replaced by its keys and relative bind-mount sources are made absolute; nothing else changes.
COMPOSE=(podman-compose -p "$PROJECT" -f "$WORK/compose.yaml" -f deploy/compose.podman.yaml)
START=$(date +%s)
LAST=$START

podman_q() {
    # Without systemd, podman says on every container start that it cannot register the health-check timer; the
    # health checks are run by hand below (podman healthcheck run), so that line is dropped.
    podman --runtime runc "$@" 2> >(grep -v "unable to get systemd connection" >&2)
}
skip() {
    if [ "${CI:-}" = true ]; then
        echo "compose_check: FAILED: $1 (CI must run this check)" >&2
        exit 1
    fi
    echo "compose_check: SKIPPED: $1"
    exit 0
}
fail() {
    echo "compose_check: FAILED: $1" >&2
    local name
    for name in "${@:2}"; do
        echo "--- podman logs --tail 30 $name" >&2
        podman logs --tail 30 "$name" >&2 || true
    done
    exit 1
}
timed() {
    local now
    now=$(date +%s)
    printf 'compose_check: %-60s %5d s (total %d s)\n' "$1" "$((now - LAST))" "$((now - START))"
    LAST=$now
}
cleanup() {
    "${COMPOSE[@]}" down -v >>"$WORK/compose.log" 2>&1 || true
    local net
    for net in "${NETWORKS[@]}"; do
        podman network rm -f "${PROJECT}_$net" >/dev/null 2>&1 || true
    done
    rm -rf "$WORK/secrets"
}

[ "$(id -u)" = 0 ] || skip "needs root (rootful podman)"
command -v podman >/dev/null || skip "podman is not installed (apt-get install podman runc)"
command -v runc >/dev/null || skip "runc is not installed (apt-get install runc)"
command -v podman-compose >/dev/null || skip "podman-compose is not installed (apt-get install podman-compose)"
podman_q info >/dev/null 2>&1 || skip "podman cannot run here: $(podman_q info 2>&1 | tail -1)"
podman image exists "$BASE" || skip "no base image $BASE (scripts/container_check.sh makes it)"
mkdir -p "$WORK"
: >"$WORK/compose.log"
/usr/bin/python3 - compose.yaml "$WORK/compose.yaml" <<'PY'
import os, sys, yaml
compose = yaml.safe_load(open(sys.argv[1]))
for service in compose["services"].values():
    if isinstance(service.get("networks"), dict):
        service["networks"] = list(service["networks"])
    mounts = [v.split(":", 1) for v in service.get("volumes", [])]
    service["volumes"] = [":".join([os.path.abspath(m[0]) if m[0].startswith("./") else m[0], *m[1:]]) for m in mounts]
    if not service["volumes"]:
        del service["volumes"]
yaml.safe_dump(compose, open(sys.argv[2], "w"), sort_keys=False)
PY
trap cleanup EXIT
cleanup

# 1. The images, on the base, with the layer cache: postgres, redis, caddy from Debian's packages, and estibench.
BUILD=(--format docker --network host --build-arg "BASE_IMAGE=$BASE")
for image in postgres:15 redis:7 caddy:2; do
    name=${image%%:*}
    nice -n 10 podman --runtime runc build "${BUILD[@]}" -t "localhost/estibench-stack-$image" "deploy/images/$name" \
        >"$WORK/build-$name.log" 2>&1 || fail "podman build deploy/images/$name (log: $WORK/build-$name.log)"
done
# The same build arguments as scripts/container_check.sh, so its layers are reused.
APP_BUILD=("${BUILD[@]}")
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    APP_BUILD+=(-v /etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro --build-arg PIP_CERT=/run/host-ca.crt)
fi
nice -n 10 podman --runtime runc build "${APP_BUILD[@]}" -t "$APP" . >"$WORK/build-app.log" 2>&1 \
    || fail "podman build . (log: $WORK/build-app.log)"
sizes=""
for image in postgres:15 redis:7 caddy:2; do
    size=$(podman image inspect --format '{{.Size}}' "localhost/estibench-stack-$image")
    sizes+=" ${image%%:*} $((size / 1000000)) MB"
done
timed "images built:$sizes"

# 2. Secrets as files (mode 644 in a 700 directory: the containers read them as uid 10001 and postgres).
mkdir -p "$WORK/secrets"
chmod 700 "$WORK/secrets"
python3 -c 'import secrets; print(secrets.token_hex(32))' >"$WORK/secrets/secret_key"
ADMIN="ek_admin_$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')"
printf '%s\n' "$ADMIN" >"$WORK/secrets/admin_key"
python3 -c 'import secrets; print(secrets.token_urlsafe(24))' >"$WORK/secrets/postgres_password"
chmod 644 "$WORK"/secrets/*
export ESTIBENCH_SECRETS_DIR="$WORK/secrets" ESTIBENCH_PORT="$PORT"

# 3. The containers, created but not started; the frontend network first, with its subnet; the proxy's fixed address.
podman network create --internal --subnet "$SUBNET" --ip-range "$IP_RANGE" \
    --label "io.podman.compose.project=$PROJECT" "${PROJECT}_frontend" >/dev/null
# (podman-compose 1.0.3 exits 0 even when a `podman create` failed: the count below is the check.)
"${COMPOSE[@]}" up --no-build --no-start proxy worker >>"$WORK/compose.log" 2>&1 \
    || fail "podman-compose up --no-start (log: $WORK/compose.log)"
count() { "$@" --filter "label=io.podman.compose.project=$PROJECT" -q | wc -l; }
created=$(count podman ps -a)
[ "$created" = 8 ] || fail "podman-compose created $created containers, not 8 (log: $WORK/compose.log)"
c() { echo "${PROJECT}_$1"; }
podman network disconnect "$(c frontend)" "$(c proxy_1)"
podman network connect --ip "$PROXY_ADDRESS" "$(c frontend)" "$(c proxy_1)"
timed "created: $created containers, $(count podman network ls) networks, $(count podman volume ls) volumes"

wait_healthy() {
    local name i status
    for name in "$@"; do
        for i in $(seq 1 120); do
            podman_q healthcheck run "$name" >/dev/null 2>&1 || true
            status=$(podman inspect --format '{{.State.Health.Status}}' "$name" 2>/dev/null || echo gone)
            [ "$status" = healthy ] && continue 2
            [ "$(podman inspect --format '{{.State.Running}}' "$name")" = true ] || fail "$name stopped" "$name"
            sleep 2
        done
        fail "$name is not healthy after 240 s (status $status)" "$name"
    done
}

# 4. Start in compose.yaml's order: postgres and redis healthy; migrate completed successfully; the API replicas
# healthy and the workers started; the proxy healthy.
podman_q start "$(c postgres_1)" "$(c redis_1)" >/dev/null
wait_healthy "$(c postgres_1)" "$(c redis_1)"
timed "postgres (initialised from the secret) and redis healthy"
podman_q start "$(c migrate_1)" >/dev/null
code=$(podman wait "$(c migrate_1)")
[ "$code" = 0 ] || fail "migrate exited with $code" "$(c migrate_1)"
timed "migrate completed successfully"
podman_q start "$(c api_1)" "$(c api_2)" "$(c worker_1)" "$(c worker_2)" >/dev/null
wait_healthy "$(c api_1)" "$(c api_2)"
timed "two API replicas healthy, two workers started"
podman_q start "$(c proxy_1)" >/dev/null
wait_healthy "$(c proxy_1)"
timed "proxy healthy"

# 5. What podman made of the file: the proxy's address, both replicas behind the name `api`, no route from a
# worker to the API.
address=$(podman inspect --format "{{(index .NetworkSettings.Networks \"$(c frontend)\").IPAddress}}" "$(c proxy_1)")
[ "$address" = "$PROXY_ADDRESS" ] || fail "the proxy is at $address on frontend, not $PROXY_ADDRESS"
replicas=$(podman exec "$(c proxy_1)" getent ahostsv4 api | awk '{print $1}' | sort -u | xargs)
given=$(for n in 1 2; do
    podman inspect --format "{{(index .NetworkSettings.Networks \"$(c frontend)\").IPAddress}}" "$(c api_$n)"
done | sort | xargs)
[ "$replicas" = "$given" ] || fail "the proxy resolves api to '$replicas', not the two replicas' '$given'"
podman exec "$(c worker_1)" getent hosts api >/dev/null && fail "a worker resolves api"
timed "proxy at $PROXY_ADDRESS; api = $replicas; workers cannot resolve api"

# 6. Through the proxy: an estimator call, a benchmark walkthrough, a job run by a worker.
export ESTIBENCH_CHECK_URL="http://127.0.0.1:$PORT" ESTIBENCH_CHECK_ADMIN="$ADMIN"
export ESTIBENCH_CHECK_STATE="$WORK/state.json"
python3 scripts/container_walkthrough.py before || fail "walkthrough" "$(c proxy_1)" "$(c api_1)" "$(c api_2)"
python3 -m scripts.compose_traffic job || fail "job" "$(c worker_1)" "$(c worker_2)"
timed "estimator call, benchmark walkthrough and a job through the proxy"

if [ "${ESTIBENCH_STACK_KEEP:-}" = 1 ]; then
    trap - EXIT
    echo "compose_check: ESTIBENCH_STACK_KEEP=1: the stack stays up on port $PORT"
    echo "  (admin key in $WORK/secrets/admin_key);"
    echo "  down: ${COMPOSE[*]} down -v, then podman network rm ${NETWORKS[*]/#/${PROJECT}_}"
    exit 0
fi

# 7. One API replica killed (SIGKILL to its process, as a crash or the OOM killer would) 5 s into 25 s of GET requests
# from 4 clients; its restart policy brings it back (`podman kill` would not: podman counts that as a stop).
python3 -m scripts.compose_traffic load 25 >"$WORK/load.log" 2>&1 &
LOAD=$!
sleep 5
kill -KILL "$(podman inspect --format '{{.State.Pid}}' "$(c api_2)")"
wait "$LOAD" || { cat "$WORK/load.log"; fail "requests failed while a replica was killed" "$(c proxy_1)"; }
cat "$WORK/load.log"
timed "api_2 killed under load: no request failed"
wait_healthy "$(c api_2)"
restarts=$(podman inspect --format '{{.RestartCount}}' "$(c api_2)")
[ "$restarts" -ge 1 ] || fail "api_2 was not restarted by its restart policy" "$(c api_2)"
timed "api_2 restarted by its restart policy ($restarts restart) and healthy"

# 8. Down: containers, volumes (pgdata, redisdata) and networks removed.
trap - EXIT
cleanup
left=$(podman ps -a --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}}' 2>/dev/null)
[ -z "$left" ] || fail "containers left after down: $left"
[ -z "$(count podman volume ls 2>/dev/null | tr -d 0)" ] || fail "volumes left after down"
[ -z "$(count podman network ls 2>/dev/null | tr -d 0)" ] || fail "networks left after down"
timed "down: containers, volumes and networks removed"
echo "compose_check: passed; $(($(date +%s) - START)) s in all"
