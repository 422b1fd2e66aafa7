"""Worker crash: SIGKILL the worker (consumer and its process) during a job. The heartbeat stops, the reaper puts
the idempotent job back on the queue, a new worker re-runs it: it ends succeeded with one run, never stays running."""

import signal
import time
from pathlib import Path

import httpx
import pytest

from db.migrate import upgrade
from tests.reliability import procs

pytestmark = [pytest.mark.slow, pytest.mark.processes]

NAME = "test.slow_sum"


def wait_for(c: httpx.Client, loc: str, pred, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = c.get(loc).json()
        if pred(job):
            return job
        time.sleep(0.1)
    raise AssertionError(f"timed out; last state {job}")


@pytest.mark.timeout(600)
def test_killed_worker_job_reruns_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'w.db'}"
    upgrade(url)
    env = procs.env_for(
        url,
        tmp_path,
        ESTIBENCH_WORKERS="1",
        ESTIBENCH_JOB_HEARTBEAT_S="0.3",
        ESTIBENCH_JOB_STALE_AFTER_S="2",
        ESTIBENCH_JOB_REAPER_INTERVAL_S="0.5",
    )
    port = procs.free_port()
    with (
        procs.running("api", env, port, log=tmp_path / "api.log"),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c,
    ):
        worker = procs.start("worker", env, log=tmp_path / "w1.log")
        try:
            params = {"values": [4, 5], "steps": 100, "step_s": 0.1}  # 10 s: the kill lands long before the end
            r = c.post("/v1/jobs", json={"kind": "estimator", "name": NAME, "params": params})
            assert r.status_code == 202
            loc = r.headers["location"]
            wait_for(c, loc, lambda j: j["status"] == "running" and j["progress"]["fraction"] > 0, 180)
            procs.kill(worker, signal.SIGKILL)
            stuck = c.get(loc).json()
            assert stuck["status"] == "running" and stuck["attempts"] == 1
            requeued = wait_for(c, loc, lambda j: j["status"] != "running", 120)  # reaper: heartbeat stopped
            assert requeued["status"] == "queued"
            worker = procs.start("worker", env, log=tmp_path / "w2.log")
            done = wait_for(c, loc, lambda j: j["status"] in ("succeeded", "failed", "cancelled"), 180)
        finally:
            procs.kill(worker, signal.SIGTERM)
        assert done["status"] == "succeeded" and done["attempts"] == 2, done
        runs = c.get("/v1/runs", params={"name": NAME, "limit": 100}).json()["items"]
        assert [run["id"] for run in runs] == [done["run_id"]]
        assert c.get(f"/v1/runs/{done['run_id']}").json()["result"] == {"total": 9.0, "n": 2, "steps": 100}


@pytest.mark.timeout(600)
def test_sigterm_requeues_running_job_and_worker_exits(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    upgrade(url)
    env = procs.env_for(url, tmp_path, ESTIBENCH_WORKERS="1", ESTIBENCH_JOB_REAPER_INTERVAL_S="0")
    port = procs.free_port()
    with (
        procs.running("api", env, port, log=tmp_path / "api.log"),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c,
    ):
        worker = procs.start("worker", env, log=tmp_path / "w1.log")
        params = {"values": [1], "steps": 100, "step_s": 0.1}  # 10 s: SIGTERM lands long before the end
        loc = c.post("/v1/jobs", json={"kind": "estimator", "name": NAME, "params": params}).headers["location"]
        wait_for(c, loc, lambda j: j["status"] == "running", 180)
        procs.kill(worker, signal.SIGTERM, timeout=60)
        assert worker.returncode not in (None, -signal.SIGKILL)  # it stopped by itself, not by procs.kill's SIGKILL
        requeued = c.get(loc).json()
        assert requeued["status"] == "queued", requeued
        worker = procs.start("worker", env, log=tmp_path / "w2.log")
        try:
            done = wait_for(c, loc, lambda j: j["status"] == "succeeded", 180)
        finally:
            procs.kill(worker, signal.SIGTERM)
        assert done["attempts"] == 2


@pytest.mark.timeout(600)
def test_cancel_stops_a_real_workers_job_mid_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    upgrade(url)
    env = procs.env_for(url, tmp_path, ESTIBENCH_WORKERS="1")
    port = procs.free_port()
    with (
        procs.running("worker", env, log=tmp_path / "w.log"),
        procs.running("api", env, port, log=tmp_path / "api.log"),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c,
    ):
        params = {"values": [2], "steps": 600, "step_s": 0.1}
        loc = c.post("/v1/jobs", json={"kind": "estimator", "name": NAME, "params": params}).headers["location"]
        wait_for(c, loc, lambda j: j["progress"]["fraction"] > 0, 180)
        assert c.delete(loc).status_code == 202
        done = wait_for(c, loc, lambda j: j["status"] != "running", 120)
        # Stopped at a heartbeat, long before its 600 steps of 0.1 s would have ended on their own.
        assert done["status"] == "cancelled" and done["progress"]["fraction"] < 0.5, done
        assert c.get("/v1/runs", params={"name": NAME}).json()["items"] == []
