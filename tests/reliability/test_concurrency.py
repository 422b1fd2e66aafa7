"""Concurrency: 8 clients write for a bounded time to one uvicorn process on SQLite (runs, arrays, jobs, reads):
zero 5xx and zero "database is locked" (BEGIN IMMEDIATE on one write connection; WAL readers)."""

import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import numpy as np
import pytest

from db.migrate import upgrade
from tests.factories import NPY, npy
from tests.reliability import procs

pytestmark = [pytest.mark.slow, pytest.mark.processes]

NAME = "test.slow_sum"
CLIENTS = 8
SECONDS = 6.0


def client_loop(base: str, k: int, statuses: Counter, errors: list[str], lock: threading.Lock) -> None:
    deadline = time.monotonic() + SECONDS
    i = 0
    with httpx.Client(base_url=base, timeout=30) as c:
        while time.monotonic() < deadline:
            i += 1
            op = i % 5
            try:
                if op == 0:
                    r = c.post("/v1/arrays", content=npy(np.full(32, k * 10**6 + i, dtype=np.float64)), headers=NPY)
                elif op == 1:
                    job = {"kind": "estimator", "name": NAME, "params": {"values": [k, i]}}
                    r = c.post("/v1/jobs", json=job)
                elif op == 2:
                    r = c.get("/v1/runs", params={"limit": 20})
                else:
                    r = c.post(f"/v1/estimators/{NAME}", json={"values": [k * 10**6 + i]})
            except httpx.HTTPError as exc:
                with lock:
                    errors.append(repr(exc))
                continue
            with lock:
                statuses[r.status_code] += 1
                if r.status_code >= 500:
                    errors.append(r.text)


@pytest.mark.timeout(600)
def test_eight_writers_no_5xx_no_locked(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    upgrade(url)
    env = procs.env_for(url, tmp_path, ESTIBENCH_WORKERS="1", ESTIBENCH_MAX_JOBS_PER_KEY="100000")
    port = procs.free_port()
    log = tmp_path / "api.log"
    statuses: Counter = Counter()
    errors: list[str] = []
    lock = threading.Lock()
    with procs.running("worker", env, log=tmp_path / "worker.log"), procs.running("api", env, port, log=log):
        threads = [
            threading.Thread(target=client_loop, args=(f"http://127.0.0.1:{port}", k, statuses, errors, lock))
            for k in range(CLIENTS)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=SECONDS + 60)
    assert errors == [], errors[:3]
    assert sum(statuses.values()) > 200 and set(statuses) <= {200, 201, 202}, statuses
    text = log.read_text() + (tmp_path / "worker.log").read_text()
    assert "database is locked" not in text and "Traceback" not in text
