"""Access control and quotas: exact daily quotas and job caps under concurrency (the race runs on PostgreSQL in
``make test-postgres``), quota days in UTC, running jobs in the cap, the reaper's timeout grace, owner-only listings
and the case-insensitive ``Bearer`` scheme."""

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from db.models import Job, Submission
from db.repositories import jobs as job_repo
from tests import support_estimators
from tests.factories import ADMIN, api_key, benchmark, film_key_items, film_predictions, post_submission, serving
from usecases.clock import utcnow
from usecases.settings import Settings
from usecases.submissions import _next_utc_midnight


def concurrently(n: int, call: Callable[[int], int]) -> Counter[int]:
    """Run ``call(i)`` for i < n in n threads released together; the count of each returned status."""
    barrier = threading.Barrier(n)
    statuses: list[int] = []
    lock = threading.Lock()

    def run(i: int) -> None:
        barrier.wait()
        status = call(i)
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return Counter(statuses)


@pytest.fixture
def queued(settings: Settings, test_estimator: str) -> Iterator[TestClient]:
    """Jobs stay queued (nobody runs them); the cap is 8 active jobs per caller."""
    with serving(settings, queue="memory", max_jobs_per_key=8) as c:
        yield c


def job_body(i: int) -> dict:
    return {"kind": "estimator", "name": support_estimators.NAME, "params": {"values": [float(i)]}}


# -- exact under concurrency ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_daily_quota_is_exact_under_20_concurrent_submissions(client: TestClient) -> None:
    bench_id = benchmark(client, max_submissions_per_day=5)["id"]
    alice = api_key(client, "submissions:write", name="alice")
    statuses = concurrently(20, lambda i: post_submission(client, bench_id, alice, model=f"m{i}").status_code)
    assert statuses == Counter({201: 5, 429: 15})
    listed = client.get(f"/v1/benchmarks/{bench_id}/submissions", headers=alice).json()["items"]
    assert len(listed) == 5


def test_job_cap_is_exact_under_12_concurrent_job_submissions(queued: TestClient) -> None:
    alice = api_key(queued, "estimators:run", name="alice")
    statuses = concurrently(12, lambda i: queued.post("/v1/jobs", json=job_body(i), headers=alice).status_code)
    assert statuses == Counter({202: 8, 429: 4})
    jobs = queued.get("/v1/jobs", params={"status": "queued"}, headers=ADMIN).json()["items"]
    assert len(jobs) == 8


# -- quota day, running jobs, timeout grace ------------------------------------------------------------------------


def test_a_submission_from_yesterday_does_not_count_toward_todays_quota(client: TestClient, settings) -> None:
    bench_id = benchmark(client, max_submissions_per_day=1)["id"]
    alice = api_key(client, "submissions:write", name="alice")
    assert post_submission(client, bench_id, alice).status_code == 201
    assert post_submission(client, bench_id, alice).status_code == 429
    services = client.app.state.services  # type: ignore[attr-defined]
    yesterday = datetime.now(UTC).replace(hour=23, minute=59, second=59) - timedelta(days=1)
    with services.engines.write.begin() as conn:
        conn.execute(update(Submission).values(created_at=yesterday))
    assert post_submission(client, bench_id, alice).status_code == 201
    assert post_submission(client, bench_id, alice).status_code == 429


def test_a_submission_at_todays_utc_midnight_counts_and_the_429_says_when_the_quota_resets(client: TestClient) -> None:
    bench_id = benchmark(client, max_submissions_per_day=1)["id"]
    alice = api_key(client, "submissions:write", name="alice")
    assert post_submission(client, bench_id, alice).status_code == 201
    midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    services = client.app.state.services  # type: ignore[attr-defined]
    with services.engines.write.begin() as conn:
        conn.execute(update(Submission).values(created_at=midnight))  # the first instant of the quota day
    body = {"model": "m", "predictions": film_predictions(5), "metadata": {}}
    before = datetime.now(UTC)
    r = client.post(f"/v1/benchmarks/{bench_id}/submissions", json=body, headers=alice)
    after = datetime.now(UTC)
    assert r.status_code == 429, r.text
    reset = midnight + timedelta(days=1)  # Retry-After: whole seconds until then, rounded up past the boundary
    low, high = int((reset - after).total_seconds()) + 1, int((reset - before).total_seconds()) + 1
    assert low <= int(r.headers["retry-after"]) <= high


def test_the_daily_quota_is_per_benchmark(client: TestClient) -> None:
    first, second = (
        benchmark(client, max_submissions_per_day=1, name="a")["id"],
        benchmark(client, max_submissions_per_day=1, name="b")["id"],
    )
    alice = api_key(client, "submissions:write", name="alice")
    assert [post_submission(client, b, alice).status_code for b in (first, second, first, second)] == [
        201,
        201,
        429,
        429,
    ]


def test_running_jobs_count_toward_the_cap(settings: Settings, test_estimator: str) -> None:
    with serving(settings, queue="memory", max_jobs_per_key=2) as c:
        alice = api_key(c, "estimators:run", name="alice")
        first = c.post("/v1/jobs", json=job_body(1), headers=alice).json()["id"]
        services = c.app.state.services  # type: ignore[attr-defined]
        with services.engines.write.begin() as conn:
            assert job_repo.claim(conn, first, worker="test", now=utcnow()) == 1
        assert c.post("/v1/jobs", json=job_body(2), headers=alice).status_code == 202
        r = c.post("/v1/jobs", json=job_body(3), headers=alice)
        assert r.status_code == 429, r.text
        assert "2 jobs are queued or running" in r.json()["detail"]


def test_a_running_job_is_not_failed_before_its_timeout_plus_grace(settings: Settings, test_estimator: str) -> None:
    """Grace is max(30 s, 5 heartbeats): with a 10 s timeout the job is overdue only after 40 s of running."""
    with serving(settings, queue="memory", job_timeout_s=10.0, job_heartbeat_s=1.0) as c:
        job_id = c.post("/v1/jobs", json=job_body(1)).json()["id"]
        services = c.app.state.services  # type: ignore[attr-defined]
        queue = services.jobs

        def running_for(seconds: float) -> str:
            now = utcnow()
            with services.engines.write.begin() as conn:
                conn.execute(
                    update(Job)
                    .where(Job.id == job_id)
                    .values(started_at=now - timedelta(seconds=seconds), heartbeat_at=now)
                )
            queue.reap()
            return c.get(f"/v1/jobs/{job_id}").json()["status"]

        with services.engines.write.begin() as conn:
            job_repo.claim(conn, job_id, worker="test", now=utcnow())
        assert running_for(15.0) == "running"  # past the timeout, within the grace
        assert running_for(38.0) == "running"
        assert running_for(42.0) == "failed"
        assert c.get(f"/v1/jobs/{job_id}").json()["problem"]["status"] == 504


# -- who sees what -------------------------------------------------------------------------------------------------


def test_a_non_admin_key_lists_only_its_own_submissions(client: TestClient) -> None:
    bench_id = benchmark(client, max_submissions_per_day=10)["id"]
    alice = api_key(client, "submissions:write", name="alice")
    bob = api_key(client, "submissions:write", name="bob")
    assert post_submission(client, bench_id, alice, model="a1").status_code == 201
    assert post_submission(client, bench_id, alice, model="a2").status_code == 201
    assert post_submission(client, bench_id, bob, model="b1").status_code == 201

    def models(headers: dict) -> list[str]:
        r = client.get(f"/v1/benchmarks/{bench_id}/submissions", headers=headers)
        assert r.status_code == 200, r.text
        return sorted(s["model"] for s in r.json()["items"])

    assert models(alice) == ["a1", "a2"]
    assert models(bob) == ["b1"]
    assert models(ADMIN) == ["a1", "a2", "b1"]


def test_the_bearer_scheme_is_case_insensitive(client: TestClient) -> None:
    token = ADMIN["Authorization"].split(" ", 1)[1]
    for scheme in ("bearer", "BEARER", "Bearer"):
        r = client.get("/v1/api-keys", headers={"Authorization": f"{scheme} {token}"})
        assert r.status_code == 200, (scheme, r.text)
    assert client.get("/v1/api-keys", headers={"Authorization": f"Basic {token}"}).status_code == 401


def test_a_run_made_with_a_key_is_seen_only_by_that_key_and_admins(client: TestClient) -> None:
    """A maintainer's stateless scoring of a key with private items: not listed, nor readable, anonymously or by
    another key (open mode); a run made without a key stays open to everyone."""
    maintainer = api_key(client, "benchmarks:write", name="maintainer")
    other = api_key(client, "submissions:write", name="other")
    body = {"answer_key": {"items": film_key_items()}, "predictions": film_predictions(7, 3)}
    keyed = client.post("/v1/scorers/film_mcq/score", json=body, headers=maintainer)
    assert keyed.status_code == 200, keyed.text
    open_body = {"answer_key": {"items": film_key_items(n_private=0)}, "predictions": film_predictions(4, n_private=0)}
    anonymous = client.post("/v1/scorers/film_mcq/score", json=open_body)
    assert anonymous.status_code == 200, anonymous.text
    keyed_id, open_id = keyed.json()["id"], anonymous.json()["id"]

    def listed(headers: dict) -> set[str]:
        r = client.get("/v1/runs", headers=headers)
        assert r.status_code == 200, r.text
        return {run["id"] for run in r.json()["items"]}

    assert listed({}) == {open_id}
    assert listed(other) == {open_id}
    assert listed(maintainer) == {keyed_id, open_id}
    assert listed(ADMIN) == {keyed_id, open_id}
    for headers, status in (({}, 404), (other, 404), (maintainer, 200), (ADMIN, 200)):
        assert client.get(f"/v1/runs/{keyed_id}", headers=headers).status_code == status
        assert client.get(f"/v1/runs/{open_id}", headers=headers).status_code == 200


def test_the_quota_resets_at_the_next_utc_midnight() -> None:
    late = datetime(2026, 3, 1, 23, 59, 59, 999999, tzinfo=UTC)
    assert _next_utc_midnight(datetime(2026, 3, 1, 13, 45, 30, 123456, tzinfo=UTC)) == datetime(2026, 3, 2, tzinfo=UTC)
    assert _next_utc_midnight(late) == datetime(2026, 3, 2, tzinfo=UTC)
    assert _next_utc_midnight(datetime(2026, 12, 31, tzinfo=UTC)) == datetime(2027, 1, 1, tzinfo=UTC)
