"""The job repository on its own: every state change is a conditional UPDATE that writes exactly the columns its
docstring names, for the one job and the attempt that holds it; the reaper's queries select by time boundaries;
listings and caps select by owner (a key, or an anonymous client address)."""

import json
import uuid
from datetime import UTC, datetime, timedelta

from db.engine import Engines
from db.repositories import api_keys, jobs
from db.repositories.api_keys import ApiKeyRow

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _key(engines: Engines, name: str) -> str:
    row = ApiKeyRow(str(uuid.uuid4()), uuid.uuid4().hex[:8], name, ["estimators:run"], T0, None, None)
    with engines.write.begin() as conn:
        assert api_keys.insert(conn, row, uuid.uuid4().hex)
    return row.id


def _job(
    engines: Engines,
    *,
    status: str = "queued",
    api_key_id: str | None = None,
    client: str | None = "c1",
    timeout_s: float = 60.0,
    enqueued_at: datetime | None = T0,
) -> str:
    job_id = str(uuid.uuid4())
    values = {
        "id": job_id, "kind": "estimator", "name": "x.y", "version": "1", "params": "{}", "params_sha256": "0" * 64,
        "status": status, "cancel_requested": False, "attempts": 0, "progress_fraction": 0.0,
        "progress_message": "", "timeout_s": timeout_s, "api_key_id": api_key_id, "client": client,
        "created_at": T0, "enqueued_at": enqueued_at,
    }  # fmt: skip
    with engines.write.begin() as conn:
        jobs.insert(conn, values)
    return job_id


def _get(engines: Engines, job_id: str) -> jobs.JobRow:
    with engines.read.connect() as conn:
        row = jobs.get(conn, job_id)
    assert row is not None
    return row


def _claimed(engines: Engines, at: datetime = T0, **kw: object) -> tuple[str, int]:
    job_id = _job(engines, **kw)  # type: ignore[arg-type]
    with engines.write.begin() as conn:
        attempt = jobs.claim(conn, job_id, worker="w1", now=at)
    assert attempt == 1
    return job_id, attempt


def test_heartbeat_writes_liveness_and_progress_of_the_holding_attempt_only(engines: Engines) -> None:
    job_id, attempt = _claimed(engines)
    other, _ = _claimed(engines)
    later = T0 + timedelta(seconds=7)
    with engines.write.begin() as conn:
        assert jobs.heartbeat(conn, job_id, attempt, now=later, fraction=0.25, message="a quarter") is False
        assert jobs.heartbeat(conn, job_id, attempt + 1, now=later, fraction=0.5, message="stale") is None
    row = _get(engines, job_id)
    assert (row.heartbeat_at, row.progress_fraction, row.progress_message) == (later, 0.25, "a quarter")
    untouched = _get(engines, other)
    assert (untouched.heartbeat_at, untouched.progress_fraction, untouched.progress_message) == (T0, 0.0, "")
    with engines.write.begin() as conn:
        jobs.request_cancel(conn, job_id, now=later)
        assert jobs.heartbeat(conn, job_id, attempt, now=later, fraction=0.5, message="") is True
        assert jobs.finish(conn, job_id, attempt, status="cancelled", now=later)
        assert jobs.heartbeat(conn, job_id, attempt, now=later, fraction=0.5, message="") is None


def test_finish_stamps_terminal_states_and_requeues_with_an_enqueue_time(engines: Engines) -> None:
    done, attempt = _claimed(engines)
    back, attempt_b = _claimed(engines)
    t = T0 + timedelta(seconds=3)
    with engines.write.begin() as conn:
        assert jobs.finish(conn, done, attempt, status="succeeded", now=t, fraction=1.0, message="done")
        assert jobs.finish(conn, back, attempt_b, status="queued", now=t)
    row = _get(engines, done)
    assert (row.status, row.finished_at, row.enqueued_at, row.progress_fraction) == ("succeeded", t, T0, 1.0)
    assert row.progress_message == "done"
    again = _get(engines, back)
    assert (again.status, again.finished_at, again.enqueued_at, again.progress_message) == ("queued", None, t, "")


def test_a_late_finish_cannot_overwrite_a_job_the_reaper_already_ended(engines: Engines) -> None:
    """The reaper failed attempt 1 (still the job's attempt number); that attempt's own finish then matches nothing."""
    job_id, attempt = _claimed(engines)
    claimed = _get(engines, job_id)
    assert (claimed.status, claimed.worker, claimed.started_at, claimed.heartbeat_at) == ("running", "w1", T0, T0)
    problem = json.dumps({"status": 503})
    t = T0 + timedelta(seconds=90)
    with engines.write.begin() as conn:
        assert jobs.release(conn, _get(engines, job_id), status="failed", now=t, problem=problem)
        assert not jobs.finish(conn, job_id, attempt, status="succeeded", now=t + timedelta(seconds=1), run_id="r1")
    row = _get(engines, job_id)
    assert (row.status, row.attempts, row.run_id, row.problem, row.finished_at) == ("failed", 1, None, problem, t)


def test_cancel_stops_a_queued_job_at_once_and_flags_a_running_one(engines: Engines) -> None:
    queued = _job(engines)
    running, _ = _claimed(engines)
    done, attempt = _claimed(engines)
    t = T0 + timedelta(seconds=1)
    with engines.write.begin() as conn:
        assert jobs.finish(conn, done, attempt, status="succeeded", now=t)
        jobs.request_cancel(conn, queued, now=t)
        jobs.request_cancel(conn, running, now=t)
        jobs.request_cancel(conn, done, now=t)
    assert (_get(engines, done).status, _get(engines, done).cancel_requested) == ("succeeded", False)
    q, r = _get(engines, queued), _get(engines, running)
    assert (q.status, q.cancel_requested, q.finished_at) == ("cancelled", True, t)
    assert (r.status, r.cancel_requested, r.finished_at) == ("running", True, None)


def test_fail_queued_fails_only_that_queued_job(engines: Engines) -> None:
    target, bystander = _job(engines), _job(engines)
    running, _ = _claimed(engines)
    problem = json.dumps({"status": 503})
    t = T0 + timedelta(seconds=2)
    with engines.write.begin() as conn:
        jobs.fail_queued(conn, target, now=t, problem=problem)
        jobs.fail_queued(conn, running, now=t, problem=problem)
    row = _get(engines, target)
    assert (row.status, row.finished_at, row.problem) == ("failed", t, problem)
    assert _get(engines, bystander).status == "queued"
    assert (_get(engines, running).status, _get(engines, running).problem) == ("running", None)


def test_stale_and_overdue_running_jobs_are_selected_by_strict_time_boundaries(engines: Engines) -> None:
    old, _ = _claimed(engines, at=T0)
    fresh, _ = _claimed(engines, at=T0 + timedelta(seconds=10), timeout_s=5.0)
    _job(engines)  # queued: never stale or overdue
    done, attempt = _claimed(engines, at=T0)
    with engines.write.begin() as conn:
        jobs.finish(conn, done, attempt, status="failed", now=T0)  # finished with an old heartbeat: not stale
    with engines.read.connect() as conn:
        assert [j.id for j in jobs.stale_running(conn, heartbeat_before=T0 + timedelta(seconds=10))] == [old]
        assert jobs.stale_running(conn, heartbeat_before=T0) == []
        # fresh started at T0+10 with timeout 5 s: overdue only when now − started > 5 + grace (strictly)
        at_limit = T0 + timedelta(seconds=10 + 5 + 30)
        assert jobs.overdue_running(conn, now=at_limit, grace_s=30.0) == []
        past = at_limit + timedelta(milliseconds=1)
        assert [j.id for j in jobs.overdue_running(conn, now=past, grace_s=30.0)] == [fresh]
        assert [j.id for j in jobs.overdue_running(conn, now=past + timedelta(seconds=15), grace_s=30.0)] == [fresh]
        assert [j.id for j in jobs.overdue_running(conn, now=T0 + timedelta(seconds=91), grace_s=30.0)] == [old, fresh]


def test_an_interrupted_attempt_goes_back_to_queued_without_an_enqueue_time(engines: Engines) -> None:
    job_id, attempt = _claimed(engines)
    other, _ = _claimed(engines)
    t = T0 + timedelta(seconds=4)
    with engines.write.begin() as conn:
        assert not jobs.interrupted(conn, job_id, attempt + 1, now=t)
        assert jobs.interrupted(conn, job_id, attempt, now=t)
        assert not jobs.interrupted(conn, job_id, attempt, now=t)  # no longer running
    row = _get(engines, job_id)
    assert (row.status, row.enqueued_at, row.heartbeat_at, row.attempts) == ("queued", None, t, 1)
    assert (_get(engines, other).status, _get(engines, other).enqueued_at) == ("running", T0)


def test_old_queued_lists_unsent_and_long_waiting_jobs_until_marked_enqueued(engines: Engines) -> None:
    unsent = _job(engines, enqueued_at=None)
    waiting = _job(engines, enqueued_at=T0)
    _job(engines, enqueued_at=T0 + timedelta(seconds=60))
    running, _ = _claimed(engines, enqueued_at=None)  # running: not queued
    cut = T0 + timedelta(seconds=30)
    with engines.read.connect() as conn:
        assert [j.id for j in jobs.old_queued(conn, enqueued_before=cut)] == [unsent, waiting]
        assert [j.id for j in jobs.old_queued(conn, enqueued_before=T0)] == [unsent]
    with engines.write.begin() as conn:
        jobs.mark_enqueued(conn, unsent, now=cut)
        jobs.mark_enqueued(conn, running, now=cut)  # claimed meanwhile: left alone
    assert _get(engines, running).enqueued_at is None
    assert _get(engines, unsent).enqueued_at == cut
    assert _get(engines, waiting).enqueued_at == T0
    with engines.read.connect() as conn:
        assert [j.id for j in jobs.old_queued(conn, enqueued_before=cut)] == [waiting]


def test_release_moves_only_the_stale_attempt_and_stamps_the_right_time(engines: Engines) -> None:
    requeue, _ = _claimed(engines)
    fail, _ = _claimed(engines)
    t = T0 + timedelta(seconds=50)
    rows = {j: _get(engines, j) for j in (requeue, fail)}
    with engines.write.begin() as conn:
        assert jobs.release(conn, rows[requeue], status="queued", now=t)
        assert jobs.release(conn, rows[fail], status="failed", now=t, problem='{"status": 503}')
        assert not jobs.release(conn, rows[requeue], status="failed", now=t)  # already moved
    q, f = _get(engines, requeue), _get(engines, fail)
    assert (q.status, q.enqueued_at, q.finished_at, q.problem) == ("queued", t, None, None)
    assert (f.status, f.enqueued_at, f.finished_at, f.problem) == ("failed", T0, t, '{"status": 503}')
    with engines.write.begin() as conn:
        assert jobs.claim(conn, requeue, worker="w2", now=t) == 2
        assert not jobs.release(conn, rows[requeue], status="queued", now=t)  # attempt 1 lost the job


def test_listing_and_the_active_cap_select_by_key_or_by_anonymous_address(engines: Engines) -> None:
    alice, bob = _key(engines, "alice"), _key(engines, "bob")
    a1 = _job(engines, api_key_id=alice, client="10.0.0.1")
    anon_same_ip = _job(engines, client="10.0.0.1")
    anon_other_ip = _job(engines, client="10.0.0.2")
    a2, _ = _claimed(engines, api_key_id=alice, client="10.0.0.3")
    b1 = _job(engines, api_key_id=bob, client="10.0.0.1")
    a_done, attempt = _claimed(engines, api_key_id=alice)
    with engines.write.begin() as conn:
        jobs.finish(conn, a_done, attempt, status="succeeded", now=T0)

    def ids(owner: tuple[str | None, str | None] | None, **kw: object) -> list[str]:
        with engines.read.connect() as conn:
            args = {"status": None, "limit": 10, "before_seq": None, **kw}
            return [j.id for j in jobs.list_page(conn, owner=owner, **args)]  # type: ignore[arg-type]

    assert ids((alice, None)) == [a_done, a2, a1]
    assert ids((bob, None)) == [b1]
    assert ids((None, "10.0.0.1")) == [anon_same_ip]
    assert ids((None, "10.0.0.2")) == [anon_other_ip]
    assert ids(None) == [a_done, b1, a2, anon_other_ip, anon_same_ip, a1]
    assert ids((alice, None), status="running") == [a2]
    assert ids(None, limit=2) == [a_done, b1]
    with engines.read.connect() as conn:
        seq_a2 = jobs.get(conn, a2).seq  # type: ignore[union-attr]
        assert jobs.count_active(conn, api_key_id=alice, client=None) == 2  # queued a1 + running a2
        assert jobs.count_active(conn, api_key_id=None, client="10.0.0.1") == 1
        assert jobs.count_active(conn, api_key_id=None, client="10.0.0.9") == 0
        assert jobs.counts_by_status(conn) == {"queued": 4, "running": 1, "succeeded": 1}
    assert ids(None, before_seq=seq_a2) == [anon_other_ip, anon_same_ip, a1]
