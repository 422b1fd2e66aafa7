"""Synchronous work against a real uvicorn process: the issue's ``minhash.jaccard`` of 100k + 100k items at
K = 4096 is queued (202), not computed in the request; while 16 of the largest synchronous calls and 6 hostile
8 MiB bodies arrive at once, ``/v1/health`` answers within 100 times its idle latency measured just before (so the
bound holds on a loaded machine) and the API grows by under 500 MB."""

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from db.migrate import upgrade
from tests.api.test_sync_bounds import empty_lists_body
from tests.reliability import procs
from tests.reliability.test_hostile import rss_mb

pytestmark = [pytest.mark.slow, pytest.mark.processes]

JSON = {"content-type": "application/json"}


def jaccard_body(seed: int) -> bytes:
    return json.dumps(
        {"items_a": list(range(100_000)), "items_b": list(range(50_000, 150_000)), "num_perm": 4096, "seed": seed}
    ).encode()


def sketch_body(seed: int) -> bytes:
    """The largest synchronous ``minhash.sketch``: 100k items at K = 4096."""
    return json.dumps({"items": list(range(100_000)), "num_perm": 4096, "seed": seed}).encode()


def health_latencies(base: str, until: float) -> list[float]:
    """``/v1/health`` latencies every 0.1 s until ``until``: at least one, however late the probe starts."""
    out: list[float] = []
    with httpx.Client(base_url=base, timeout=120) as c:
        while not out or time.monotonic() < until:
            start = time.monotonic()
            assert c.get("/v1/health").status_code == 200
            out.append(time.monotonic() - start)
            time.sleep(0.1)
    return out


@pytest.mark.timeout(600)
def test_bursts_of_heavy_calls_leave_health_fast_and_memory_bounded(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    upgrade(url)
    env = procs.env_for(url, tmp_path, ESTIBENCH_QUEUE="memory", ESTIBENCH_MAX_JOBS_PER_KEY="100")
    port = procs.free_port()
    base = f"http://127.0.0.1:{port}"
    with (
        procs.running("api", env, port, log=tmp_path / "api.log") as proc,
        httpx.Client(base_url=base, timeout=120) as c,
    ):
        assert c.post("/v1/estimators/minhash.sketch", json={"items": [1, 2], "num_perm": 8}).status_code == 200
        before = rss_mb(proc.pid)
        idle = max(health_latencies(base, time.monotonic() + 3))  # the baseline: this server, this machine, now

        def post(path: str, body: bytes) -> int:
            with httpx.Client(base_url=base, timeout=120) as one:
                return one.post(path, content=body, headers=JSON).status_code

        for label, path, bodies, allowed in (
            (
                "jaccard 100k+100k, K=4096",
                "/v1/estimators/minhash.jaccard",
                [jaccard_body(s) for s in range(16)],
                {202},
            ),
            ("sketch 100k, K=4096", "/v1/estimators/minhash.sketch", [sketch_body(s) for s in range(16)], {200, 503}),
            ("8 MiB of empty lists", "/v1/estimators/compression.batch_regret", [empty_lists_body()] * 6, {422}),
        ):
            with ThreadPoolExecutor(len(bodies) + 1) as pool:
                probe = pool.submit(health_latencies, base, time.monotonic() + 6)
                codes = list(pool.map(lambda b, p=path: post(p, b), bodies))
                latencies = probe.result()
            assert set(codes) <= allowed, (label, codes)
            # Health never waits behind the computations: at most 100 times its idle worst case (a computation on
            # the event loop would hold every probe for whole computations, 16 of them queued behind each other).
            assert max(latencies) < 100 * idle, (label, max(latencies), idle)
        grown = rss_mb(proc.pid) - before
        assert grown < 500, f"the API grew by {grown:.0f} MB"
