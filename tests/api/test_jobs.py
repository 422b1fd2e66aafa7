"""Jobs: 202 + Location, identical runs, caps, cancellation, ownership, heartbeat reaper,
timeouts and failures. In-process: ``immediate`` runs a job inside the request, ``memory`` leaves it queued so the
test drives ``JobQueue.execute`` itself. Real worker processes are in tests/reliability."""

import json
import signal
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from functools import partial
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from huey import Huey, MemoryHuey, RedisHuey, SqliteHuey
from pydantic import BaseModel, ValidationError
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from db.repositories import jobs as repo
from service.errors import InvalidInput
from service.registry import Progress
from tests import support_estimators
from tests.factories import ADMIN, api_key, serving, wait_until
from usecases.clock import utcnow
from usecases.errors import InvalidFields, NotFound, Unavailable
from usecases.jobs import JobKind, JobQueue, JobTimeout, _failure, make_huey, worker_id
from usecases.runs import canonical_params, sha256_hex
from usecases.settings import Settings

NAME = support_estimators.NAME


def job_body(**params: object) -> dict:
    return {"kind": "estimator", "name": NAME, "params": {"values": [1.0, 2.0], **params}}


@pytest.fixture
def immediate(settings: Settings, test_estimator: str) -> Iterator[TestClient]:
    with serving(settings, queue="immediate") as c:
        yield c


@pytest.fixture
def queued(settings: Settings, test_estimator: str) -> Iterator[TestClient]:
    with serving(settings, queue="memory", job_heartbeat_s=0.05, max_jobs_per_key=3) as c:
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
    assert r.json()["progress"] == {"fraction": 1.0, "message": "identical run found"}
    row = ctx_of(immediate).get(r.json()["id"])
    assert row is not None and row.finished_at == row.created_at and row.enqueued_at is None


def test_over_budget_call_answers_202_and_hard_cap_422(queued: TestClient) -> None:
    r = queued.post(f"/v1/estimators/{NAME}", json={"values": [1], "steps": 10, "step_s": 0.1})  # 1 s > 0.5 s
    assert r.status_code == 202, r.text
    assert r.json()["status"] == "queued" and r.headers["location"].startswith("/v1/jobs/")
    over = queued.post(f"/v1/estimators/{NAME}", json={"values": [1], "steps": 200, "step_s": 5})  # 1000 s > 600
    assert over.status_code == 422 and over.json()["errors"][0]["type"] == "cost_cap"
    assert queued.post("/v1/jobs", json=job_body(steps=200, step_s=5)).status_code == 422


def test_over_budget_without_queue_is_422(settings: Settings, test_estimator: str) -> None:
    with serving(settings, queue="off") as c:
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
    key = api_key(queued, "estimators:run")
    for tag in range(3):
        assert queued.post("/v1/jobs", json=job_body(tag=tag), headers=key).status_code == 202
    r = queued.post("/v1/jobs", json=job_body(tag=9), headers=key)
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    # Another caller (anonymous) is not affected.
    assert queued.post("/v1/jobs", json=job_body(tag=9)).status_code == 202


def test_cancel_queued_job_and_ownership(queued: TestClient) -> None:
    owner, other = api_key(queued, "estimators:run", name="a"), api_key(queued, "estimators:run", name="b")
    loc = queued.post("/v1/jobs", json=job_body(), headers=owner).headers["location"]
    assert queued.delete(loc).status_code == 401
    assert queued.delete(loc, headers=other).status_code == 403
    r = queued.delete(loc, headers=owner)
    assert r.status_code == 200 and r.json()["status"] == "cancelled" and r.json()["finished_at"] is not None
    ctx_of(queued).execute(r.json()["id"])  # the queued message arrives later: nothing runs
    assert queued.get(loc).json()["status"] == "cancelled" and queued.get(loc).json()["attempts"] == 0
    anon = queued.post("/v1/jobs", json=job_body(tag=1)).headers["location"]
    assert queued.delete(anon, headers=other).status_code == 403
    assert queued.delete(anon, headers=ADMIN).status_code == 200


def test_cancel_running_job_through_progress(queued: TestClient) -> None:
    job = queued.post("/v1/jobs", json=job_body(steps=400, step_s=0.01)).json()
    worker = threading.Thread(target=ctx_of(queued).execute, args=(job["id"],))
    worker.start()
    deadline = time.monotonic() + 60
    while queued.get(f"/v1/jobs/{job['id']}").json()["progress"]["fraction"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    r = queued.delete(f"/v1/jobs/{job['id']}")
    assert r.status_code == 202 and r.json()["cancel_requested"] is True
    worker.join(timeout=60)  # a hang guard: the fraction below shows the job stopped before its 400 steps
    assert not worker.is_alive()
    final = queued.get(f"/v1/jobs/{job['id']}").json()
    assert final["status"] == "cancelled" and 0 < final["progress"]["fraction"] < 1
    assert queued.delete(f"/v1/jobs/{job['id']}").status_code == 200  # cancelling again is harmless


def test_finished_job_cannot_be_cancelled(immediate: TestClient) -> None:
    loc = immediate.post("/v1/jobs", json=job_body()).headers["location"]
    r = immediate.delete(loc)
    assert (r.status_code, r.json()["detail"]) == (409, "the job has already succeeded")
    failed = immediate.post("/v1/jobs", json={"kind": "estimator", "name": NAME, "params": {"values": [-13]}})
    r = immediate.delete(failed.headers["location"])
    assert (r.status_code, r.json()["detail"]) == (409, "the job has already failed")


def test_timeout_fails_the_job(settings: Settings, test_estimator: str) -> None:
    with serving(settings, queue="immediate", job_timeout_s=0.2) as c:
        job = c.post("/v1/jobs", json=job_body(steps=100, step_s=0.01)).json()
        assert job["status"] == "failed" and job["problem"]["status"] == 504


def test_reaper_requeues_then_fails_a_job_whose_heartbeat_stopped(queued: TestClient) -> None:
    ctx = ctx_of(queued)
    ctx.settings = ctx.settings.model_copy(update={"job_max_attempts": 2, "job_stale_after_s": 5})
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]
    for attempt in (1, 2):
        with ctx.engines.write.begin() as conn:  # a worker claims it, then dies (no heartbeat)
            assert repo.claim(conn, job_id, worker="dead", now=utcnow() - timedelta(seconds=60)) == attempt
        assert ctx.reap()["requeued" if attempt == 1 else "failed"] == 1
    job = queued.get(f"/v1/jobs/{job_id}").json()
    assert job["status"] == "failed" and job["attempts"] == 2 and job["problem"]["status"] == 503
    assert ctx.reap() == {"requeued": 0, "failed": 0, "cancelled": 0, "reenqueued": 0}


def test_reaper_leaves_live_jobs_and_a_lost_attempt_cannot_write(queued: TestClient) -> None:
    ctx = ctx_of(queued)
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]
    with ctx.engines.write.begin() as conn:
        attempt = repo.claim(conn, job_id, worker="w", now=utcnow())
    assert ctx.reap()["requeued"] == 0
    with ctx.engines.write.begin() as conn:
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
    assert queued.get("/v1/jobs", params={"limit": 3}).json()["next_cursor"] is None  # exactly a page: no cursor
    seen, cursor = [], None
    while True:
        page = queued.get("/v1/jobs", params={"limit": 1, **({"cursor": cursor} if cursor else {})}).json()
        seen += [j["id"] for j in page["items"]]
        if (cursor := page["next_cursor"]) is None:
            break
    assert seen == ids[::-1]


def test_require_keys_hides_other_keys_jobs(settings: Settings, test_estimator: str) -> None:
    with serving(settings, queue="memory", require_keys=True) as c:
        a, b = api_key(c, "estimators:run", name="a"), api_key(c, "estimators:run", name="b")
        assert c.post("/v1/jobs", json=job_body()).status_code == 401
        job_id = c.post("/v1/jobs", json=job_body(), headers=a).json()["id"]
        assert c.get(f"/v1/jobs/{job_id}", headers=b).status_code == 404
        assert c.get(f"/v1/jobs/{job_id}", headers=a).status_code == 200
        assert c.get("/v1/jobs", headers=b).json()["items"] == []
        assert [j["id"] for j in c.get("/v1/jobs", headers=a).json()["items"]] == [job_id]
        assert len(c.get("/v1/jobs", headers=ADMIN).json()["items"]) == 1
        assert c.delete(f"/v1/jobs/{job_id}", headers=b).status_code == 404
        assert c.delete(f"/v1/jobs/{job_id}", headers=a).json()["status"] == "cancelled"


def test_job_params_are_the_canonical_cache_key(queued: TestClient) -> None:
    job = queued.post("/v1/jobs", json=job_body()).json()
    spec = support_estimators.SPEC
    params = spec.params_model.model_validate({"values": [1.0, 2.0]})
    assert job["params_sha256"] == sha256_hex(canonical_params(params))


def _claim(ctx: JobQueue, job_id: str, started_s_ago: float) -> None:
    with ctx.engines.write.begin() as conn:
        assert repo.claim(conn, job_id, worker="w", now=utcnow() - timedelta(seconds=started_s_ago)) == 1


@pytest.mark.parametrize(("heartbeat_s", "grace_s"), [(0.05, 30.0), (10.0, 50.0)])
def test_reaper_fails_a_running_job_only_past_its_timeout_plus_the_grace(
    queued: TestClient, heartbeat_s: float, grace_s: float
) -> None:
    """Grace = max(30 s, 5 heartbeats); a live heartbeat does not save a job past it."""
    ctx = ctx_of(queued)
    ctx.settings = ctx.settings.model_copy(update={"job_heartbeat_s": heartbeat_s, "job_stale_after_s": 3600})
    inside, past = (queued.post("/v1/jobs", json=job_body(tag=i)).json() for i in range(2))
    timeout = inside["timeout_s"]
    _claim(ctx, inside["id"], timeout + grace_s - 1.5)
    _claim(ctx, past["id"], timeout + grace_s + 0.5)
    assert ctx.reap() == {"requeued": 0, "failed": 1, "cancelled": 0, "reenqueued": 0}
    assert queued.get(f"/v1/jobs/{inside['id']}").json()["status"] == "running"
    failed = queued.get(f"/v1/jobs/{past['id']}").json()
    assert failed["status"] == "failed"
    assert failed["problem"]["detail"] == f"the job exceeded its timeout of {timeout:g} s"


def test_reaper_handles_every_stale_job_once_and_says_why_it_failed(queued: TestClient) -> None:
    """One pass over [overdue, stale]: a job in both lists is handled once and the jobs after it still are; a
    stale job with a cancel request ends cancelled; the last attempt's failure names the attempts."""
    ctx = ctx_of(queued)
    ctx.settings = ctx.settings.model_copy(update={"job_max_attempts": 1, "job_stale_after_s": 5})
    both, cancelled, exhausted = (queued.post("/v1/jobs", json=job_body(tag=i)).json() for i in range(3))
    _claim(ctx, both["id"], both["timeout_s"] + 60)
    _claim(ctx, cancelled["id"], 60)
    _claim(ctx, exhausted["id"], 60)
    with ctx.engines.write.begin() as conn:
        repo.request_cancel(conn, cancelled["id"], now=utcnow())
    assert ctx.reap() == {"requeued": 0, "failed": 2, "cancelled": 1, "reenqueued": 0}
    assert queued.get(f"/v1/jobs/{cancelled['id']}").json()["status"] == "cancelled"
    problem = queued.get(f"/v1/jobs/{exhausted['id']}").json()["problem"]
    assert (problem["status"], problem["detail"]) == (
        503,
        "the worker running this job stopped (no heartbeat for 5 s) after 1 attempt(s)",
    )


def test_reaper_reenqueues_only_jobs_queued_longer_than_the_requeue_delay(queued: TestClient) -> None:
    ctx = ctx_of(queued)
    old, fresh = (queued.post("/v1/jobs", json=job_body(tag=i)).json()["id"] for i in range(2))
    long_ago = utcnow() - timedelta(seconds=ctx.settings.job_requeue_after_s + 5)
    with ctx.engines.write.begin() as conn:
        conn.execute(repo.Job.__table__.update().where(repo.Job.id == old).values(enqueued_at=long_ago))
    depth = ctx.queue_depth()
    assert depth == 2
    assert ctx.reap()["reenqueued"] == 1
    assert ctx.queue_depth() == depth + 1
    assert ctx.huey.pending()[-1].args == (old,)
    assert ctx.reap()["reenqueued"] == 0  # its enqueue time was renewed
    assert ctx.get(fresh).enqueued_at == ctx.get(fresh).created_at  # type: ignore[union-attr]


def test_job_counts_cover_every_status_and_read_zero_without_a_database(queued: TestClient) -> None:
    ctx = ctx_of(queued)
    ids = [queued.post("/v1/jobs", json=job_body(tag=i)).json()["id"] for i in range(3)]
    queued.delete(f"/v1/jobs/{ids[0]}")
    _claim(ctx, ids[1], 0)
    assert ctx.counts_by_status() == {"queued": 1, "running": 1, "succeeded": 0, "failed": 0, "cancelled": 1}
    engine = ctx.engines.read

    def refuse(*_: object) -> None:
        raise OperationalError("SELECT 1", {}, ConnectionRefusedError("database stopped"))

    event.listen(engine, "before_cursor_execute", refuse)
    try:
        assert ctx.counts_by_status() == dict.fromkeys(("queued", "running", "succeeded", "failed", "cancelled"), 0)
    finally:
        event.remove(engine, "before_cursor_execute", refuse)


def test_a_stopping_worker_puts_its_job_back_and_the_next_start_enqueues_it(queued: TestClient) -> None:
    """KeyboardInterrupt (SIGINT/SIGTERM of the worker): further signals are ignored while the job is re-queued
    without a message; ``enqueue_interrupted`` sends it again at the next worker start."""
    ctx = ctx_of(queued)
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]

    def interrupted(job: object, progress: object) -> str:
        raise KeyboardInterrupt

    stopping = ctx.with_kinds({"estimator": JobKind(run=interrupted)})
    saved = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(KeyboardInterrupt):
            stopping.execute(job_id)
        assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == (signal.SIG_IGN, signal.SIG_IGN)
    finally:
        signal.signal(signal.SIGTERM, saved[0])
        signal.signal(signal.SIGINT, saved[1])
    row = ctx.get(job_id)
    assert row is not None and (row.status, row.enqueued_at, row.attempts) == ("queued", None, 1)
    assert row.heartbeat_at is not None and row.heartbeat_at >= row.started_at  # type: ignore[operator]
    depth = ctx.queue_depth()
    assert ctx.enqueue_interrupted() == 1
    assert ctx.queue_depth() == depth + 1  # type: ignore[operator]
    assert ctx.huey.pending()[-1].args == (job_id,)
    assert ctx.get(job_id).enqueued_at is not None  # type: ignore[union-attr]
    assert ctx.enqueue_interrupted() == 0


def test_queue_depth_is_none_without_a_queue(settings: Settings, test_estimator: str) -> None:
    with serving(settings, queue="off") as c:
        assert ctx_of(c).queue_depth() is None


def test_a_thread_worker_stopping_mid_job_also_puts_it_back(queued: TestClient) -> None:
    """Outside the main thread signal handlers cannot be changed; the re-queue still happens."""
    ctx = ctx_of(queued)
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]

    def interrupted(job: object, progress: object) -> str:
        raise KeyboardInterrupt

    raised: list[BaseException] = []

    def work() -> None:
        try:
            ctx.with_kinds({"estimator": JobKind(run=interrupted)}).execute(job_id)
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(timeout=10)
    assert [type(e) for e in raised] == [KeyboardInterrupt]
    assert (ctx.get(job_id).status, ctx.get(job_id).enqueued_at) == ("queued", None)  # type: ignore[union-attr]


def test_a_failed_requeue_is_logged_with_the_job_id(queued: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    ctx = ctx_of(queued)
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]
    engine = ctx.engines.write

    def refuse(*_: object) -> None:
        raise OperationalError("UPDATE job", {}, ConnectionRefusedError("database stopped"))

    event.listen(engine, "before_cursor_execute", refuse)
    try:
        with caplog.at_level("ERROR", logger="estibench.jobs"):
            ctx._requeue(job_id, 1)
    finally:
        event.remove(engine, "before_cursor_execute", refuse)
    [record] = [r for r in caplog.records if r.name == "estibench.jobs"]
    assert (record.getMessage(), record.job_id, record.exc_info is not None) == (  # type: ignore[attr-defined]
        "could not re-queue an interrupted job",
        job_id,
        True,
    )


def _problem(status: int, title: str, detail: str, errors: list | None = None) -> dict:
    out = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    return out if errors is None else {**out, "errors": errors}


def test_a_failed_job_stores_the_problem_its_exception_maps_to() -> None:
    class Params(BaseModel):
        n: int

    with pytest.raises(ValidationError) as bad:
        Params.model_validate({"n": "x"})
    cases = [
        (JobTimeout(), _problem(504, "Gateway Timeout", "the job exceeded its timeout of 2.5 s")),
        (
            InvalidInput("k must be below n", loc=("k",)),
            _problem(422, "Unprocessable Entity", "k must be below n", [
                {"loc": ["params", "k"], "msg": "k must be below n", "type": "invalid_input"}
            ]),
        ),
        (
            bad.value,
            _problem(422, "Unprocessable Entity", "the params failed validation", [
                {"loc": ["params", "n"], "msg": bad.value.errors()[0]["msg"], "type": "int_parsing"}
            ]),
        ),
        (
            InvalidFields("bad array", [{"loc": ["body", "a"], "msg": "m", "type": "t"}]),
            _problem(422, "Unprocessable Entity", "bad array", [{"loc": ["body", "a"], "msg": "m", "type": "t"}]),
        ),
        (NotFound("no array 'x'"), _problem(404, "Not Found", "no array 'x'")),
        (Unavailable("queue down"), _problem(503, "Service Unavailable", "queue down")),
    ]  # fmt: skip
    for exc, want in cases:
        assert json.loads(_failure(exc, 2.5)) == want, exc


def test_reaper_skips_a_job_a_worker_moved_meanwhile_and_goes_on(
    queued: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Between the reaper's read and its conditional UPDATE a worker finishes the first stale job: that job is left
    alone and the next ones are still re-queued (fresh enqueue time, a message with their id), each logged."""
    ctx = ctx_of(queued)
    ctx.settings = ctx.settings.model_copy(update={"job_stale_after_s": 5})
    first, *others = (queued.post("/v1/jobs", json=job_body(tag=i)).json()["id"] for i in range(3))
    for job_id in (first, *others):
        _claim(ctx, job_id, 60)
    release = repo.release

    def racing(conn, job, **kw):  # type: ignore[no-untyped-def]
        if job.id == first:
            repo.finish(conn, first, 1, status="succeeded", now=utcnow())
        return release(conn, job, **kw)

    monkeypatch.setattr(repo, "release", racing)
    before, depth = utcnow(), ctx.queue_depth()
    with caplog.at_level("WARNING", logger="estibench.jobs"):
        assert ctx.reap() == {"requeued": 2, "failed": 0, "cancelled": 0, "reenqueued": 0}
    assert ctx.get(first).status == "succeeded"  # type: ignore[union-attr]
    for job_id in others:
        row = ctx.get(job_id)
        assert row is not None and row.status == "queued" and row.enqueued_at >= before  # type: ignore[operator]
    assert [m.args for m in ctx.huey.pending()[depth:]] == [(job_id,) for job_id in others]
    records = [r for r in caplog.records if r.name == "estibench.jobs"]
    assert [(r.getMessage(), r.job_id, r.to) for r in records] == [  # type: ignore[attr-defined]
        ("reaped job", job_id, "queued") for job_id in others
    ]


def beaten(row: repo.JobRow | None) -> repo.JobRow | None:
    """``row`` once a heartbeat has stored liveness after the job's start, else None."""
    started = row is not None and row.started_at is not None and row.heartbeat_at is not None
    return row if started and row.heartbeat_at > row.started_at else None  # type: ignore[operator,union-attr]


def stored_progress(row: repo.JobRow | None) -> tuple[float, str]:
    assert row is not None
    return row.progress_fraction, row.progress_message


def test_a_job_that_never_reports_progress_keeps_its_initial_progress(queued: TestClient) -> None:
    """The heartbeat stores liveness from the start, with fraction 0 and an empty message until the job reports."""
    ctx = ctx_of(queued)
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]
    seen: list[repo.JobRow | None] = []

    def silent_then_invalid(job: object, progress: object) -> str:
        seen.append(wait_until(lambda: beaten(ctx.get(job_id)), what="a heartbeat after the start"))
        raise InvalidInput("no", loc=("values",))

    ctx.with_kinds({"estimator": JobKind(run=silent_then_invalid)}).execute(job_id)
    [mid] = seen
    assert mid is not None and mid.status == "running" and mid.started_at is not None
    assert mid.heartbeat_at is not None and mid.heartbeat_at > mid.started_at
    assert (mid.progress_fraction, mid.progress_message) == (0.0, "")
    row = ctx.get(job_id)
    assert row is not None and (row.status, row.progress_fraction, row.progress_message) == ("failed", 0.0, "")


def test_the_heartbeat_survives_a_failed_write(queued: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    """A heartbeat UPDATE that fails (database briefly unreachable) is skipped with a warning naming the job, and
    the next ones still run."""
    ctx = ctx_of(queued)
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]
    failures: list[str] = []

    def refuse_first_heartbeat(conn, cursor, statement, *_: object) -> None:  # type: ignore[no-untyped-def]
        assignments = statement.split(" WHERE ")[0]
        heartbeat = assignments.startswith("UPDATE job SET") and "progress_message" in assignments
        if heartbeat and "status" not in assignments and not failures:
            failures.append(statement)
            raise OperationalError(statement, {}, ConnectionRefusedError("database restarting"))

    seen: list[repo.JobRow | None] = []

    def slow(job: object, progress: object) -> str:
        seen.append(wait_until(lambda: failures and beaten(ctx.get(job_id)), what="a heartbeat after the failed one"))
        raise InvalidInput("no", loc=("values",))

    engine = ctx.engines.write
    event.listen(engine, "before_cursor_execute", refuse_first_heartbeat)
    try:
        with caplog.at_level("WARNING", logger="estibench.jobs"):
            ctx.with_kinds({"estimator": JobKind(run=slow)}).execute(job_id)
    finally:
        event.remove(engine, "before_cursor_execute", refuse_first_heartbeat)
    [mid] = seen
    assert len(failures) == 1
    [warning] = [r for r in caplog.records if r.name == "estibench.jobs"]
    assert (warning.getMessage(), warning.job_id) == ("heartbeat failed", job_id)  # type: ignore[attr-defined]
    assert mid is not None and mid.heartbeat_at is not None and mid.heartbeat_at > mid.started_at  # type: ignore[operator]


def test_an_unexpected_exception_fails_the_job_with_a_500_and_a_logged_traceback(
    queued: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug in a job (any exception the failure map does not know) fails it with a generic 500 problem, never the
    exception's text, and logs the traceback with the job id; the row names the worker and its end time."""
    ctx = ctx_of(queued)
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]

    def buggy(job: object, progress: Progress) -> str:
        progress(0.5)
        wait_until(lambda: ctx.get(job_id).progress_fraction == 0.5, what="a heartbeat storing the progress")  # type: ignore[union-attr]
        raise ZeroDivisionError("secret internals")

    with caplog.at_level("ERROR", logger="estibench.jobs"):
        ctx.with_kinds({"estimator": JobKind(run=buggy)}).execute(job_id)
    job = queued.get(f"/v1/jobs/{job_id}").json()
    assert (job["status"], job["problem"]) == (
        "failed",
        _problem(500, "Internal Server Error", "the job failed with an internal error"),
    )
    assert job["progress"] == {"fraction": 0.5, "message": ""}  # progress() without a message reports ""
    row = ctx.get(job_id)
    assert row is not None and row.worker == worker_id()
    assert row.started_at is not None and row.finished_at is not None and row.finished_at >= row.started_at
    [record] = [r for r in caplog.records if r.name == "estibench.jobs"]
    assert (record.getMessage(), record.job_id) == ("job failed", job_id)  # type: ignore[attr-defined]
    assert record.exc_info is not None and record.exc_info[0] is ZeroDivisionError


def test_progress_is_clamped_to_the_unit_interval_and_its_message_to_500_characters(queued: TestClient) -> None:
    ctx = ctx_of(queued)
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]
    seen: list[tuple[float, str]] = []

    def changed(before: tuple[float, str]) -> tuple[float, str] | None:
        now = stored_progress(ctx.get(job_id))
        return now if now != before else None

    def reports(job: object, progress: Progress) -> str:
        for fraction, message in ((1.7, "m" * 600), (-0.5, 12345)):
            progress(fraction, message)  # type: ignore[arg-type]
            seen.append(wait_until(partial(changed, seen[-1] if seen else (0.0, "")), what="a heartbeat storing it"))
        raise InvalidInput("no", loc=("values",))

    ctx.with_kinds({"estimator": JobKind(run=reports)}).execute(job_id)
    assert seen == [(1.0, "m" * 500), (0.0, "12345")]


def test_a_job_whose_code_exits_stops_its_heartbeat(queued: TestClient) -> None:
    """SystemExit from a job's code propagates, but the heartbeat stops with it, so the reaper sees the attempt
    go stale instead of a dead job renewing its liveness forever."""
    ctx = ctx_of(queued)
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]

    def exits(job: object, progress: Progress) -> str:
        wait_until(lambda: beaten(ctx.get(job_id)), what="a heartbeat after the start")
        raise SystemExit(3)

    with pytest.raises(SystemExit):
        ctx.with_kinds({"estimator": JobKind(run=exits)}).execute(job_id)
    before = ctx.get(job_id)
    time.sleep(0.3)  # six heartbeat periods
    after = ctx.get(job_id)
    assert before is not None and after is not None and before.status == after.status == "running"
    assert before.heartbeat_at is not None and after.heartbeat_at == before.heartbeat_at


def test_a_queued_job_starts_at_zero_progress_and_its_huey_task_outlives_the_job_timeout(queued: TestClient) -> None:
    """The queue message's own timeout is the job's plus five heartbeats, so the job's clock (504) fires first."""
    ctx = ctx_of(queued)
    job = queued.post("/v1/jobs", json=job_body()).json()
    assert (job["status"], job["progress"]) == ("queued", {"fraction": 0.0, "message": ""})
    [task] = ctx.huey.pending()
    assert task.args == (job["id"],)
    assert task.timeout == pytest.approx(ctx.settings.job_timeout_s + 5 * 0.05, abs=1e-12)


def test_an_unreachable_queue_fails_the_job_with_a_503_and_frees_the_callers_slot(
    queued: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = ctx_of(queued)

    def down(job_id: str, timeout_s: float) -> None:
        raise ConnectionError("redis is down")

    monkeypatch.setattr(ctx, "enqueue", down)
    with caplog.at_level("ERROR", logger="estibench.jobs"):
        r = queued.post("/v1/jobs", json=job_body())
    assert r.status_code == 503 and r.json()["detail"] == "the job queue is unreachable"
    [row] = ctx.page(None, status=None, limit=10, cursor=None)[0]
    assert (row.status, json.loads(row.problem or "null")) == (
        "failed",
        _problem(503, "Service Unavailable", "the job queue is unreachable"),
    )
    assert row.finished_at is not None and row.finished_at >= row.created_at
    [record] = [r for r in caplog.records if r.name == "estibench.jobs"]
    assert (record.getMessage(), record.job_id) == ("enqueue failed", row.id)  # type: ignore[attr-defined]
    monkeypatch.undo()
    for _ in range(3):  # the failed job does not count toward the cap of 3
        assert queued.post("/v1/jobs", json=job_body()).status_code == 202


def test_anonymous_callers_are_capped_by_address_with_a_retry_after(queued: TestClient) -> None:
    for _ in range(3):
        assert queued.post("/v1/jobs", json=job_body()).status_code == 202
    r = queued.post("/v1/jobs", json=job_body())
    assert (r.status_code, r.headers["retry-after"]) == (429, "5")
    assert "3 jobs are queued or running" in r.json()["detail"]
    assert queued.post("/v1/jobs", json=job_body(), headers=api_key(queued, "estimators:run")).status_code == 202


def test_the_reaper_thread_runs_a_pass_every_interval_until_stopped(queued: TestClient) -> None:
    ctx = ctx_of(queued)
    ctx.settings = ctx.settings.model_copy(update={"job_reaper_interval_s": 0.05, "job_stale_after_s": 5})
    job_id = queued.post("/v1/jobs", json=job_body()).json()["id"]
    with ctx.engines.write.begin() as conn:  # a worker claimed it a minute ago and died
        assert repo.claim(conn, job_id, worker="dead", now=utcnow() - timedelta(seconds=60)) == 1
    before = set(threading.enumerate())
    stop = ctx.start_reaper()
    [thread] = set(threading.enumerate()) - before
    try:
        assert (thread.name, thread.daemon) == ("estibench-reaper", True)  # never holds the process open
        deadline = time.monotonic() + 5
        while ctx.get(job_id).status == "running" and time.monotonic() < deadline:  # type: ignore[union-attr]
            time.sleep(0.02)
    finally:
        stop()
    assert not thread.is_alive()  # stopping waits for the thread
    assert ctx.get(job_id).status == "queued"  # type: ignore[union-attr]
    with ctx.engines.write.begin() as conn:  # dies again, after the reaper was stopped
        assert repo.claim(conn, job_id, worker="dead", now=utcnow() - timedelta(seconds=60)) == 2
    time.sleep(0.25)  # five intervals
    assert ctx.get(job_id).status == "running"  # type: ignore[union-attr]


def test_make_huey_builds_the_configured_queue(settings: Settings, tmp_path: Path) -> None:
    """off → no queue; memory/immediate in-process; a Redis URL → Redis; otherwise a SQLite file (default
    data_dir/queue.db, parent directories created). Every queue has the configured name and keeps no results."""

    def make(**update: object) -> Huey | None:
        return make_huey(settings.model_copy(update={"queue_name": "q1", **update}))

    assert make(queue="off") is None
    for queue, immediate in (("memory", False), ("immediate", True)):
        mem = make(queue=queue)
        assert isinstance(mem, MemoryHuey) and (mem.name, mem.results, mem.immediate) == ("q1", False, immediate)
    red = make(queue="auto", redis_url="redis://127.0.0.1:6379/3")
    assert isinstance(red, RedisHuey) and (red.name, red.results) == ("q1", False)
    assert red.storage.conn.connection_pool.connection_kwargs["db"] == 3
    path = tmp_path / "a" / "b" / "jobs.db"
    for _ in range(2):  # the directory may already exist
        lite = make(queue="auto", queue_path=path)
        assert isinstance(lite, SqliteHuey) and (lite.name, lite.results) == ("q1", False)
        assert lite.storage.filename == str(path) and path.parent.is_dir()
    default = make(queue="auto", data_dir=tmp_path / "data")
    assert isinstance(default, SqliteHuey) and default.storage.filename == str(tmp_path / "data" / "queue.db")


def test_the_stored_client_address_is_cut_to_its_column_and_none_when_unknown(queued: TestClient) -> None:
    ctx = ctx_of(queued)

    def submit(client: str | None) -> repo.JobRow:
        params = json.dumps({"values": [1.0]})
        return ctx.submit(kind="estimator", name=NAME, version="1", params_json=params, api_key_id=None, client=client)

    assert submit(None).client is None
    assert submit("").client is None
    assert submit("2001:db8::" + "f" * 90).client == ("2001:db8::" + "f" * 90)[:64]
