"""The HTTP parts of scripts/compose_check.sh beyond scripts/container_walkthrough.py, against the compose stack's
proxy (standard library only, so the host's python3 runs it without the project installed).

    python3 -m scripts.compose_traffic job             a job queued through the proxy and run by a worker to
                                                       completion; its run equals J(1-J)/K computed here, and the
                                                       same estimator call is then answered from that stored run
    python3 -m scripts.compose_traffic load SECONDS    CLIENTS threads send GET requests (the leaderboard and the
                                                       run that `before` saved), each at most 10 a second, for
                                                       SECONDS; prints the counts and latencies, exits 1 on any
                                                       failed or different answer

Environment: ESTIBENCH_CHECK_URL, ESTIBENCH_CHECK_ADMIN (the admin key), ESTIBENCH_CHECK_STATE (the JSON file that
container_walkthrough.py `before` wrote), ESTIBENCH_CHECK_CLIENTS (load threads, default 4).
The proxy retries a GET on another replica whether the first could not be reached or broke mid-request, so killing a
replica must cost no GET. POSTs are left out: the proxy does not retry one that broke mid-request (it may not be
idempotent), and Debian's Caddy 2.6 loses the body of a POST it retries after a connection error (docs/deploy.md).
"""

import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from scripts.container_walkthrough import ESTIMATOR

PACE_S = 0.1
"""At most one request per client every 0.1 s: 4 clients stay well under the API's default rate limit (6,000 a minute
per address, and every request comes from this host's address)."""
JOB_PARAMS = {"intersection": 30, "union": 120, "universe": 4099, "num_perm": 128}


def call(method: str, path: str, body: Any = None, key: str | None = None, timeout: float = 60) -> tuple[int, Any]:
    headers = {"content-type": "application/json"} if body is not None else {}
    if key:
        headers["authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(os.environ["ESTIBENCH_CHECK_URL"] + path, data, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def expect(what: str, ok: bool, seen: Any) -> None:
    if not ok:
        raise SystemExit(f"{what}: got {json.dumps(seen)[:600]}")
    print(f"  ok: {what}")


def job(admin: str) -> None:
    status, queued = call("POST", "/v1/jobs", {"kind": "estimator", "name": ESTIMATOR, "params": JOB_PARAMS}, admin)
    expect("POST /v1/jobs queues a job (202)", status == 202 and queued["status"] == "queued", queued)
    deadline = time.monotonic() + 300
    seen: dict = queued
    while time.monotonic() < deadline and seen.get("status") not in ("succeeded", "failed", "cancelled"):
        time.sleep(0.5)
        status, seen = call("GET", f"/v1/jobs/{queued['id']}", key=admin)
    expect("a worker ran the job to success", seen.get("status") == "succeeded", seen)
    status, run = call("GET", f"/v1/runs/{seen['run_id']}", key=admin)
    result = run["result"]
    j, k, d, f = 30 / 120, 128, 4099, 120
    classical = j * (1 - j) / k
    approx = classical * (1 - (k - 1) / (2 * d - f - 1))
    expect(
        f"its run: J = 0.25, J(1-J)/K = {classical:.10g}, C-MinHash approximation {approx:.10g}",
        status == 200
        and result["jaccard"] == j
        and abs(result["var_classical"] - classical) <= 1e-15
        and abs(result["var_cminhash_approx"] - approx) <= 1e-15,
        result,
    )
    status, again = call("POST", f"/v1/estimators/{ESTIMATOR}", JOB_PARAMS, admin)
    expect(
        "the same call (same key) through the proxy is answered from the worker's stored run",
        status == 200 and again["cached"] is True and again["id"] == run["id"],
        again,
    )


def load(seconds: float, clients: int, state: dict) -> None:
    paths = {
        f"/v1/benchmarks/{state['benchmark']}/leaderboard": lambda body: body == state["leaderboard"],
        f"/v1/runs/{state['run']['id']}": lambda body: body["result"] == state["run"]["result"],
    }
    counts: Counter[str] = Counter()
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(n: int) -> None:
        i = n
        while time.monotonic() < stop:
            path, same = list(paths.items())[i % 2]
            i += 1
            started = time.monotonic()
            try:
                status, body = call("GET", path, timeout=30)
                ok = status == 200 and same(body)
            except (OSError, ValueError, KeyError, TypeError) as e:
                status, ok, body = 0, False, repr(e)
            elapsed = time.monotonic() - started
            with lock:
                counts["ok" if ok else "failed"] += 1
                latencies.append(elapsed)
                if not ok:
                    failures.append(f"GET {path}: {status} {json.dumps(body)[:200]}")
            time.sleep(max(0.0, started + PACE_S - time.monotonic()))

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    latencies.sort()
    print(
        f"  {counts['ok']} GET ok, {counts['failed']} failed ({clients} clients for {seconds:g} s); latency p50 "
        f"{1000 * latencies[len(latencies) // 2]:.0f} ms, p99 {1000 * latencies[int(0.99 * len(latencies))]:.0f} ms, "
        f"max {1000 * latencies[-1]:.0f} ms"
    )
    for line in failures[:10]:
        print(f"  failed: {line}")
    expect("no request failed", counts["failed"] == 0, failures)


def main() -> None:
    mode = sys.argv[1]
    if mode == "job":
        job(os.environ["ESTIBENCH_CHECK_ADMIN"])
    elif mode == "load":
        state = json.loads(Path(os.environ["ESTIBENCH_CHECK_STATE"]).read_text())
        load(float(sys.argv[2]), int(os.environ.get("ESTIBENCH_CHECK_CLIENTS", "4")), state)
    else:
        raise SystemExit(f"unknown mode {mode!r}: job or load")


if __name__ == "__main__":
    main()
