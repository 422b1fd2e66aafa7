"""Crash: a real uvicorn process takes a stream of writes (runs, arrays, benchmark submissions) and is SIGKILLed
mid-stream; after a restart every write acknowledged with 2xx is present and ``PRAGMA integrity_check`` is ok."""

import signal
import sqlite3
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from db.migrate import upgrade
from tests.factories import NPY, film_key_items, film_predictions, npy
from tests.reliability import procs

pytestmark = [pytest.mark.slow, pytest.mark.processes]

ADMIN = {"X-API-Key": "ek_admin_reliability_key"}
NAME = "test.slow_sum"


def writer(
    base: str, kind: str, bench_id: str, start: int, acked: list[tuple[str, str]], stop: threading.Event
) -> None:
    """Write until the server dies; record (kind, id) of every 2xx answer."""
    with httpx.Client(base_url=base, timeout=5) as c:
        i = start
        while not stop.is_set():
            i += 1
            try:
                if kind == "run":
                    r = c.post(f"/v1/estimators/{NAME}", json={"values": [i, 0.5]})
                elif kind == "array":
                    r = c.post("/v1/arrays", content=npy(np.full(64, float(i))), headers=NPY)
                else:
                    body = {"model": f"m{i}", "predictions": film_predictions(i % 10)}
                    r = c.post(f"/v1/benchmarks/{bench_id}/submissions", json=body, headers=ADMIN)
            except httpx.HTTPError:
                return
            if 200 <= r.status_code < 300:
                acked.append((kind, r.json()["id"]))


@pytest.mark.timeout(600)
def test_sigkill_mid_stream_loses_no_acknowledged_write(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'crash.db'}"
    upgrade(url)
    env = procs.env_for(url, tmp_path, ESTIBENCH_SUBMISSIONS_PER_DAY="100000")
    port = procs.free_port()
    base = f"http://127.0.0.1:{port}"
    proc = procs.start("api", env, port, log=tmp_path / "api.log")
    acked: list[tuple[str, str]] = []
    try:
        procs.wait_ready(port, proc)
        bench = httpx.post(
            f"{base}/v1/benchmarks",
            json={"name": "crash", "scorer": "film_mcq", "answer_key": {"items": film_key_items()}},
            headers=ADMIN,
        )
        assert bench.status_code == 201, bench.text
        stop = threading.Event()
        threads = [
            threading.Thread(target=writer, args=(base, kind, bench.json()["id"], k * 10**6, acked, stop))
            for k, kind in enumerate(["run", "run", "array", "submission"])
        ]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120  # kill mid-stream once every kind has been acknowledged, however slow
        while not ({k for k, _ in acked} == {"run", "array", "submission"} and len(acked) > 20):
            assert time.monotonic() < deadline, acked
            time.sleep(0.05)
        procs.kill(proc, signal.SIGKILL)
        stop.set()
        for t in threads:
            t.join(timeout=10)
    finally:
        procs.kill(proc, signal.SIGKILL)
    kinds = {k for k, _ in acked}
    assert kinds == {"run", "array", "submission"} and len(acked) > 20, (len(acked), kinds)
    with sqlite3.connect(tmp_path / "crash.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with procs.running("api", env, port, log=tmp_path / "api2.log"), httpx.Client(base_url=base, timeout=10) as c:
        paths = {"run": "/v1/runs/{}", "array": "/v1/arrays/{}", "submission": "/v1/submissions/{}"}
        missing = [(k, i) for k, i in acked if c.get(paths[k].format(i), headers=ADMIN).status_code != 200]
        assert missing == []
