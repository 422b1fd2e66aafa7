"""Scale-out proof: two API processes and two worker processes on one PostgreSQL database, the queue on Redis.
50 jobs submitted alternately to both APIs each run exactly once, and both APIs list the same runs."""

import time
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from db.engine import make_single_engine
from db.migrate import upgrade
from db.models import Job
from tests.conftest import create_pg_database, drop_pg_database
from tests.reliability import procs

NAME = "test.slow_sum"
JOBS = 50


@pytest.mark.slow
@pytest.mark.processes
@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.timeout(600)
def test_two_apis_two_workers_run_each_job_once(postgres_server_url: str, redis_url: str, tmp_path: Path) -> None:
    db = create_pg_database(postgres_server_url, "estibench_scale")
    try:
        upgrade(db)
        env = procs.env_for(
            db,
            tmp_path,
            ESTIBENCH_REDIS_URL=redis_url,
            ESTIBENCH_QUEUE_NAME=f"scale-{uuid.uuid4().hex[:8]}",
            ESTIBENCH_WORKERS="1",
            ESTIBENCH_MAX_JOBS_PER_KEY="1000",
        )
        ports = [procs.free_port(), procs.free_port()]
        with (
            procs.running("worker", env, log=tmp_path / "w1.log"),
            procs.running("worker", env, log=tmp_path / "w2.log"),
            procs.running("api", env, ports[0], log=tmp_path / "a1.log"),
            procs.running("api", env, ports[1], log=tmp_path / "a2.log"),
        ):
            apis = [httpx.Client(base_url=f"http://127.0.0.1:{p}", timeout=20) for p in ports]
            ids = []
            for i in range(JOBS):
                body = {"kind": "estimator", "name": NAME, "params": {"values": [i], "steps": 2, "step_s": 0.05}}
                r = apis[i % 2].post("/v1/jobs", json=body)
                assert r.status_code == 202, r.text
                ids.append(r.json()["id"])
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                jobs = [apis[(i + 1) % 2].get(f"/v1/jobs/{j}").json() for i, j in enumerate(ids)]
                if all(j["status"] in ("succeeded", "failed", "cancelled") for j in jobs):
                    break
                time.sleep(0.5)
            assert [j["status"] for j in jobs] == ["succeeded"] * JOBS
            assert all(j["attempts"] == 1 for j in jobs)
            run_ids = {j["run_id"] for j in jobs}
            assert len(run_ids) == JOBS
            listed = [
                {r["id"] for r in api.get("/v1/runs", params={"name": NAME, "limit": 100}).json()["items"]}
                for api in apis
            ]
            assert listed[0] == listed[1] == run_ids
            results = {apis[0].get(f"/v1/runs/{r}").json()["result"]["total"] for r in run_ids}
            assert results == {float(i) for i in range(JOBS)}
            for api in apis:
                api.close()
        eng = make_single_engine(db)
        with eng.connect() as conn:
            by_worker = dict(conn.execute(select(Job.worker, func.count()).group_by(Job.worker)).all())
        eng.dispose()
        assert len(by_worker) == 2 and sum(by_worker.values()) == JOBS, by_worker  # both workers took jobs
        logs = {line for f in ("w1.log", "w2.log") for line in (tmp_path / f).read_text().splitlines()}
        assert not any("Traceback" in line for line in logs)
    finally:
        drop_pg_database(postgres_server_url, db)
