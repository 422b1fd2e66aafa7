"""Worker supervision on this machine's loopback: no worker child outlives its consumer, the consumer's own reaper
recovers a dead child's job (worker-only deployment), and ``scripts/serve.sh`` restarts a killed worker while the
API stays up and trusts ``X-Forwarded-For`` only from ``ESTIBENCH_TRUSTED_PROXIES``."""

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from db.migrate import upgrade
from tests.reliability import procs
from tests.reliability.test_worker_crash import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.processes]

NAME = "test.slow_sum"


def live_children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if int(ppid) == pid and state != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def until(pred: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.timeout(600)
def test_worker_children_die_with_their_consumer(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    upgrade(url)
    worker = procs.start("worker", procs.env_for(url, tmp_path, ESTIBENCH_WORKERS="3"), log=tmp_path / "w.log")
    try:
        kids = until(lambda: (k := live_children(worker.pid)) and len(k) == 4 and k, 180, "3 workers + scheduler")
        os.kill(worker.pid, signal.SIGKILL)  # the consumer only, not its process group
        worker.wait(timeout=5)
        until(lambda: not any(alive(k) for k in kids), 60, "the children to die with the consumer")
    finally:
        procs.kill(worker)


@pytest.mark.timeout(600)
def test_a_worker_only_deployment_recovers_a_dead_childs_job(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    common = {"ESTIBENCH_WORKERS": "1", "ESTIBENCH_JOB_HEARTBEAT_S": "0.3", "ESTIBENCH_JOB_STALE_AFTER_S": "2"}
    api_env = procs.env_for(url, tmp_path, ESTIBENCH_JOB_REAPER_INTERVAL_S="0", **common)  # no reaper in the API
    worker_env = procs.env_for(url, tmp_path, ESTIBENCH_JOB_REAPER_INTERVAL_S="0.5", **common)
    port = procs.free_port()
    with (
        procs.running("api", api_env, port, log=tmp_path / "api.log"),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c,
    ):
        worker = procs.start("worker", worker_env, log=tmp_path / "w.log")
        try:
            params = {"values": [2, 3], "steps": 20, "step_s": 0.1}
            loc = c.post("/v1/jobs", json={"kind": "estimator", "name": NAME, "params": params}).headers["location"]
            wait_for(c, loc, lambda j: j["status"] == "running" and j["progress"]["fraction"] > 0, 180)
            for child in live_children(worker.pid):  # the process running the job (and the scheduler) die
                os.kill(child, signal.SIGKILL)
            done = wait_for(c, loc, lambda j: j["status"] in ("succeeded", "failed", "cancelled"), 180)
        finally:
            procs.kill(worker, signal.SIGTERM)
        assert done["status"] == "succeeded" and done["attempts"] == 2, done
        assert c.get(f"/v1/runs/{done['run_id']}").json()["result"] == {"total": 5.0, "n": 2, "steps": 20}


@contextmanager
def serving(tmp_path: Path, **extra: str) -> Iterator[tuple[subprocess.Popen, httpx.Client]]:
    """``sh scripts/serve.sh`` as ``make serve`` runs it, on a free loopback port."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    upgrade(url)
    port = procs.free_port()
    env = procs.env_for(
        url,
        tmp_path,
        ESTIBENCH_HOST="127.0.0.1",
        ESTIBENCH_PORT=str(port),
        ESTIBENCH_WORKERS="1",
        ESTIBENCH_RATE_LIMIT_PER_MINUTE="60",
        ESTIBENCH_RATE_LIMIT_BURST="3",
        **extra,
    )
    venv = str(Path(os.environ.get("VIRTUAL_ENV", procs.ROOT / ".venv")))
    with open(tmp_path / "serve.log", "ab") as log:
        proc = subprocess.Popen(
            ["sh", "scripts/serve.sh", venv], env=env, cwd=procs.ROOT, stdout=log, stderr=log, start_new_session=True
        )
    try:
        procs.wait_ready(port, proc)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
            yield proc, c
    finally:
        procs.kill(proc, signal.SIGTERM)


def forwarded_codes(c: httpx.Client) -> list[int]:
    return [
        c.get("/v1/estimators", headers={"X-Forwarded-For": f"10.9.{i}.{uuid.uuid4().int % 250}"}).status_code
        for i in range(5)
    ]


@pytest.mark.timeout(600)
def test_serve_restarts_a_killed_worker_keeps_the_api_up_and_ignores_forged_forwarding(tmp_path: Path) -> None:
    with serving(tmp_path) as (serve, c):
        assert 429 in forwarded_codes(c)  # X-Forwarded-For from an untrusted client: one address, one bucket

        def worker_pid() -> int | None:
            for pid in live_children(serve.pid):
                if b"-m\0worker" in (Path("/proc") / str(pid) / "cmdline").read_bytes():
                    return pid
            return None

        old = until(worker_pid, 180, "the worker")
        kids = until(lambda: live_children(old), 180, "the worker's children")
        os.kill(old, signal.SIGKILL)
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            assert c.get("/v1/health", timeout=30).status_code == 200
            time.sleep(0.2)
        assert not any(alive(k) for k in kids)
        new = until(lambda: (pid := worker_pid()) not in (None, old) and pid, 180, "a new worker")
        time.sleep(3)  # past the rate limit window of the forged requests
        r = c.post(
            "/v1/jobs",
            json={"kind": "estimator", "name": "compression.nml_regret", "params": {"n": 50, "num_symbols": 3}},
        )
        assert r.status_code == 202, r.text
        done = wait_for(c, r.headers["location"], lambda j: j["status"] in ("succeeded", "failed"), 180)
        assert done["status"] == "succeeded", done
        assert alive(new)


@pytest.mark.timeout(600)
def test_serve_trusts_forwarding_from_configured_proxies(tmp_path: Path) -> None:
    with serving(tmp_path, ESTIBENCH_TRUSTED_PROXIES="127.0.0.1") as (_serve, c):
        assert forwarded_codes(c) == [200] * 5  # each forwarded address has its own bucket
