"""Jobs: 202 + Location, identical runs, caps, cancellation, ownership, heartbeat reaper,
timeouts and failures. In-process: ``immediate`` runs a job inside the request, ``memory`` leaves it queued so the
test drives ``JobQueue.execute`` itself. Real worker processes are in tests/reliability."""

import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from db.repositories import jobs as repo
from tests import support_estimators
from tests.api.conftest import ADMIN, make_key
from usecases.clock import utcnow
from usecases.jobs import JobQueue
from usecases.runs import canonical_params, sha256_hex
from usecases.settings import Settings

NAME = support_estimators.NAME


def job_body(**params: object) -> dict:
    return {"kind": "estimator", "name": NAME, "params": {"values": [1.0, 2.0], **params}}


@pytest.fixture
def estimator() -> Iterator[None]:
    support_estimators.register()
    yield
    support_estimators.unregister()


def _client(settings: Settings, **overrides: object) -> TestClient:
    return TestClient(create_app(settings.model_copy(update=overrides)), raise_server_exceptions=False)


@pytest.fixture
def immediate(settings: Settings, estimator: None) -> Iterator[TestClient]:
    with _client(settings, queue="immediate") as c:
        yield c


@pytest.fixture
def queued(settings: Settings, estimator: None) -> Iterator[TestClient]:
    with _client(settings, queue="memory", job_heartbeat_s=0.05, max_jobs_per_key=3) as c:
        yield c


def ctx_of(client: TestClient) -> JobQueue:
    return client.app.state.services.jobs  # type: ignore[attr-defined]


def test_job_runs_and_points_to_its_run(immediate: TestClient) -> None:
    r = immediate.post("/v1/jobs", json=job_body(steps=3))
    assert r.status_code == 202, r.text
    job = r.json()
    assert r.headers["location"] == f"/v1/jobs/{job['id']}"
    polled = immediate.get(r.headers["location"]).json()
    assert polled["status"] == "succeeded" and polled["attempts"] == 1
    assert polled["progress"] == {"fraction": 1.0, "message": "step 3 of 3"}
    run = immediate.get(f"/v1/runs/{polled['run_id']}").json()
    assert run["result"] == {"total": 3.0, "n": 2, "steps": 3}
    # The run is stored exactly like a synchronous one: same cache key, so the direct call is a cache hit.
    direct = immediate.post(f"/v1/estimators/{NAME}", json=job_body(steps=3)["params"])
    assert direct.status_code == 200 and direct.json()["id"] == polled["run_id"] and direct.json()["cached"] is True


def test_identical_run_makes_the_job_succeed_at_once(immediate: TestClient) -> None:
    first = immediate.post(f"/v1/estimators/{NAME}", json={"values": [5]}).json()
    r = immediate.post("/v1/jobs", json={"kind": "estimator", "name": NAME, "params": {"values": [5]}})
    assert r.status_code == 202
    assert r.json()["status"] == "succeeded" and r.json()["run_id"] == first["id"] and r.json()["attempts"] == 0


def test_over_budget_call_answers_202_and_hard_cap_422(queued: TestClient) -> None:
    r = queued.post(f"/v1/estimators/{NAME}", json={"values": [1], "steps": 10, "step_s": 0.1})  # 1 s > 0.5 s
    assert r.status_code == 202, r.text
    assert r.json()["status"] == "queued" and r.headers["location"].startswith("/v1/jobs/")
    over = queued.post(f"/v1/estimators/{NAME}", json={"values": [1], "steps": 200, "step_s": 5})  # 1000 s > 600
    assert over.status_code == 422 and over.json()["errors"][0]["type"] == "cost_cap"
    assert queued.post("/v1/jobs", json=job_body(steps=200, step_s=5)).status_code == 422


def test_over_budget_without_queue_is_422(settings: Settings, estimator: None) -> None:
    with _client(settings, queue="off") as c:
        r = c.post(f"/v1/estimators/{NAME}", json={"values": [1], "steps": 10, "step_s": 0.1})
        assert r.status_code == 422 and r.json()["errors"][0]["type"] == "cost_budget"
        assert c.post("/v1/jobs", json=job_body()).status_code == 503


def test_invalid_jobs_are_refused(immediate: TestClient) -> None:
    assert immediate.post("/v1/jobs", json={"kind": "estimator", "name": "nope", "params": {}}).status_code == 404
    r = immediate.post("/v1/jobs", json=job_body(steps=0))
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "params", "steps"]
    assert immediate.post("/v1/jobs", json={**job_body(), "extra": 1}).status_code == 422
    assert immediate.post("/v1/jobs", json={"kind": "scorer", "name": NAME, "params": {}}).status_code == 404
    assert immediate.post("/v1/jobs", json={"kind": "rescore", "name": NAME, "params": {}}).status_code == 422
    assert immediate.get("/v1/jobs/does-not-exist").status_code == 404


def test_domain_error_fails_the_job_with_a_problem(immediate: TestClient) -> None:
    job = immediate.post("/v1/jobs", json={"kind": "estimator", "name": NAME, "params": {"values": [-13]}}).json()
    assert job["status"] == "failed" and job["run_id"] is None
    assert job["problem"]["status"] == 422
    assert job["problem"]["errors"][0]["loc"] == ["params", "values", 0]


def test_per_key_cap_on_active_jobs(queued: TestClient) -> None:
    key = make_key(queued, "estimators:run")
    for tag in range(3):
        assert queued.post("/v1/jobs", json=job_body(tag=tag), headers=key).status_code == 202
    r = queued.post("/v1/jobs", json=job_body(tag=9), headers=key)
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    # Another caller (anonymous) is not affected.
    assert queued.post("/v1/jobs", json=job_body(tag=9)).status_code == 202


def test_cancel_queued_job_and_ownership(queued: TestClient) -> None:
    owner, other = make_key(queued, "estimators:run", name="a"), make_key(queued, "estimators:run", name="b")
    loc = queued.post("/v1/jobs", json=job_body(), headers=owner).headers["location"]
    assert queued.delete(loc).status_code == 401
    assert queued.delete(loc, headers=other).status_code == 403
    r = queued.delete(loc, headers=owner)
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    ctx_of(queued).execute(r.json()["id"])  # the queued message arrives later: nothing runs
    assert queued.get(loc).json()["status"] == "cancelled" and queued.get(loc).json()["attempts"] == 0
    anon = queued.post("/v1/jobs", json=job_body(tag=1)).headers["location"]
    assert queued.delete(anon, headers=other).status_code == 403
    assert queued.delete(anon, headers=ADMIN).status_code == 200


def test_cancel_running_job_through_progress(queued: TestClient) -> None:
    job = queued.post("/v1/jobs", json=job_body(steps=400, step_s=0.01)).json()
    worker = threading.Thread(target=ctx_of(queued).execute, args=(job["id"],))
    worker.start()
    deadline = time.monotonic() + 5
    while queued.get(f"/v1/jobs/{job['id']}").json()["progress"]["fraction"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    start = time.monotonic()
    r = queued.delete(f"/v1/jobs/{job['id']}")
    assert r.status_code == 202 and r.json()["cancel_requested"] is True
    worker.join(timeout=5)
    assert not worker.is_alive() and time.monotonic() - start < 5
    final = queued.get(f"/v1/jobs/{job['id']}").json()
    assert final["status"] == "cancelled" and 0 < final["progress"]["fraction"] < 1
    assert queued.delete(f"/v1/jobs/{job['id']}").status_code == 200  # cancelling again is harmless


def test_finished_job_cannot_be_cancelled(immediate: TestClient) -> None:
    loc = immediate.post("/v1/jobs", json=job_body()).headers["location"]
    assert immediate.delete(loc).status_code == 409


def test_timeout_fails_the_job(settings: Settings, estimator: None) -> None:
    with _client(settings, queue="immediate", job_timeout_s=0.2) as c:
        job = c.post("/v1/jobs", json=job_body(steps=100, step_s=0.01)).json()
        assert job["status"] == "failed" and job["problem"]["status"] == 504


def test_reaper_requeues_then_fails_a_job_whose_heartbeat_stopped(queued: TestClient) -> None:
    ctx = ctx_of(queued)
    ctx.settings = ctx.settings.model_copy(update={"job_max_attempts": 2, "job_stale_after_s": 5})
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]
    for attempt in (1, 2):
        with ctx.services.engines.write.begin() as conn:  # a worker claims it, then dies (no heartbeat)
            assert repo.claim(conn, job_id, worker="dead", now=utcnow() - timedelta(seconds=60)) == attempt
        assert ctx.reap()["requeued" if attempt == 1 else "failed"] == 1
    job = queued.get(f"/v1/jobs/{job_id}").json()
    assert job["status"] == "failed" and job["attempts"] == 2 and job["problem"]["status"] == 503
    assert ctx.reap() == {"requeued": 0, "failed": 0, "cancelled": 0, "reenqueued": 0}


def test_reaper_leaves_live_jobs_and_a_lost_attempt_cannot_write(queued: TestClient) -> None:
    ctx = ctx_of(queued)
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]
    with ctx.services.engines.write.begin() as conn:
        attempt = repo.claim(conn, job_id, worker="w", now=utcnow())
    assert ctx.reap()["requeued"] == 0
    with ctx.services.engines.write.begin() as conn:
        repo.claim(conn, job_id, worker="w2", now=utcnow())  # no-op: not queued
        conn.execute(repo.Job.__table__.update().values(status="queued"))
        assert repo.claim(conn, job_id, worker="w2", now=utcnow()) == attempt + 1
        assert not repo.finish(conn, job_id, attempt, status="succeeded", now=utcnow())


def test_list_jobs_pages_and_filters(queued: TestClient) -> None:
    ids = [queued.post("/v1/jobs", json=job_body(tag=i)).json()["id"] for i in range(3)]
    queued.delete(f"/v1/jobs/{ids[0]}")
    page = queued.get("/v1/jobs", params={"limit": 2}).json()
    assert [j["id"] for j in page["items"]] == ids[::-1][:2] and page["next_cursor"]
    rest = queued.get("/v1/jobs", params={"limit": 2, "cursor": page["next_cursor"]}).json()
    assert [j["id"] for j in rest["items"]] == [ids[0]] and rest["next_cursor"] is None
    assert [j["id"] for j in queued.get("/v1/jobs", params={"status": "cancelled"}).json()["items"]] == [ids[0]]
    assert queued.get("/v1/jobs", params={"cursor": "!!"}).status_code == 422


def test_require_keys_hides_other_keys_jobs(settings: Settings, estimator: None) -> None:
    with _client(settings, queue="memory", require_keys=True) as c:
        a, b = make_key(c, "estimators:run", name="a"), make_key(c, "estimators:run", name="b")
        assert c.post("/v1/jobs", json=job_body()).status_code == 401
        job_id = c.post("/v1/jobs", json=job_body(), headers=a).json()["id"]
        assert c.get(f"/v1/jobs/{job_id}", headers=b).status_code == 404
        assert c.get(f"/v1/jobs/{job_id}", headers=a).status_code == 200
        assert c.get("/v1/jobs", headers=b).json()["items"] == []
        assert len(c.get("/v1/jobs", headers=ADMIN).json()["items"]) == 1


def test_job_params_are_the_canonical_cache_key(queued: TestClient) -> None:
    job = queued.post("/v1/jobs", json=job_body()).json()
    spec = support_estimators.SPEC
    params = spec.params_model.model_validate({"values": [1.0, 2.0]})
    assert job["params_sha256"] == sha256_hex(canonical_params(params))
