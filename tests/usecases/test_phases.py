"""Challenge phases (usecases/phases.py) called directly on the test database, with the services' clock set by hand:
a phase's settings and each refusal with its ``loc``, status at its edges, changes and deletions (what a refused one
leaves, the audit entries), where a submission goes (open phase, late, refused), the per-participant and per-team
limits with their retry times, live and frozen boards (rows by hand, visibility, paging), freezing once (the board
at the end, a hidden phase's models onto the benchmark's boards). Written for the mutation run of
``usecases.phases``."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from db.models import AuditEntry
from db.repositories import phases as repo
from tests.factories import admin, film_key_items, film_predictions, principal, stored_benchmark
from usecases import benchmarks, challenges, cursors, phases, submissions
from usecases.api_keys import Principal, authenticate
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, InvalidFields, NotFound, QuotaExceeded, Unauthorized
from usecases.phases import Placement
from usecases.services import Services
from usecases.submissions import NewSubmission

T0 = datetime(2030, 1, 7, 12, 0, tzinfo=UTC)
H = timedelta(hours=1)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock(services: Services) -> Clock:
    c = Clock(T0)
    services.clock = c
    return c


@pytest.fixture
def owner(services: Services) -> Principal:
    return principal(services, "benchmarks:write", "submissions:write", name="olivia")


@pytest.fixture
def bench(services: Services, clock: Clock, owner: Principal) -> str:
    return stored_benchmark(services, owner, name="challenge", max_submissions_per_day=10).row.id


def spec(
    name: str = "p1",
    start: datetime = T0 + H,
    end: datetime = T0 + 3 * H,
    splits: tuple[str, ...] = ("public",),
    per_day: int | None = None,
    total: int | None = None,
    visibility: str = "public",
    late: str = "refuse",
) -> dict[str, Any]:
    return {
        "name": name, "starts_at": start, "ends_at": end, "splits": list(splits), "max_submissions_per_day": per_day,
        "max_submissions_total": total, "leaderboard_visibility": visibility, "late_submissions": late,
    }  # fmt: skip


def submit(services: Services, who: Principal, bench: str, correct: int, model: str = "m", private: int = 0) -> dict:
    new = NewSubmission(model, film_predictions(correct, private)["items"], {})
    return json.loads(submissions.submit(services, who, bench, new, None).json)


def audit_entries(services: Services, bench: str) -> list[tuple[str, str | None, str | None, dict[str, Any]]]:
    cols = (AuditEntry.action, AuditEntry.actor_key_id, AuditEntry.subject, AuditEntry.details)
    stmt = select(*cols).where(AuditEntry.benchmark_id == bench, AuditEntry.action.like("phase.%"))
    with services.engines.read.connect() as conn:
        return [(a, k, s, json.loads(d)) for a, k, s, d in conn.execute(stmt.order_by(AuditEntry.seq))]


def board(services: Services, who: Principal | None, bench: str, phase_id: str, **kw: Any) -> phases.PhaseBoardPage:
    args: dict[str, Any] = {"split": "public", "metric": None, "rank_by": "best", "limit": 50, "cursor": None} | kw
    return phases.leaderboard(services, who, bench, phase_id, **args)


def invalid_loc(err: pytest.ExceptionInfo[InvalidFields]) -> list[tuple[list[Any], str, str]]:
    return [(e["loc"], e["type"], e["msg"]) for e in err.value.errors]


# --- settings -------------------------------------------------------------------------------------------------


def test_a_phase_is_created_with_its_settings_and_audited(services: Services, bench: str, owner: Principal) -> None:
    fields = spec(splits=("public", "private"), per_day=2, total=5, visibility="hidden_until_end", late="accept")
    view = phases.create(services, owner, bench, fields)
    assert view == phases.PhaseView(
        id=view.id, benchmark_id=bench, name="p1", starts_at="2030-01-07T13:00:00.000000Z",
        ends_at="2030-01-07T15:00:00.000000Z", splits=["public", "private"], max_submissions_per_day=2,
        max_submissions_total=5, leaderboard_visibility="hidden_until_end", late_submissions="accept",
        status="upcoming", frozen_at=None, created_at="2030-01-07T12:00:00.000000Z",
    )  # fmt: skip
    with services.engines.read.connect() as conn:
        row = repo.get(conn, view.id)
    assert row is not None and row.created_by == owner.key_id and row.created_at == T0
    details = {
        "name": "p1", "starts_at": "2030-01-07T13:00:00.000000Z", "ends_at": "2030-01-07T15:00:00.000000Z",
        "splits": ["public", "private"], "max_submissions_per_day": 2, "max_submissions_total": 5,
        "leaderboard_visibility": "hidden_until_end", "late_submissions": "accept",
    }  # fmt: skip
    assert audit_entries(services, bench) == [("phase.created", owner.key_id, view.id, details)]
    by_admin = phases.create(services, admin(services), bench, spec("p2", T0 + 3 * H, T0 + 4 * H))
    assert by_admin.status == "upcoming" and [p.name for p in phases.list_phases(services, bench)] == ["p1", "p2"]


def test_only_owners_and_admins_create_change_or_delete_phases(
    services: Services, bench: str, owner: Principal
) -> None:
    p = phases.create(services, owner, bench, spec())
    stranger = principal(services, "benchmarks:write", "submissions:write", name="stranger")
    for who, error in ((stranger, Forbidden), (None, Unauthorized)):
        with pytest.raises(error):
            phases.create(services, who, bench, spec("p2", T0 + 4 * H, T0 + 5 * H))
        with pytest.raises(error):
            phases.update(services, who, bench, p.id, {"name": "x"})
        with pytest.raises(error):
            phases.delete(services, who, bench, p.id)
    assert [(q.name, q.id) for q in phases.list_phases(services, bench)] == [("p1", p.id)]
    with pytest.raises(NotFound):
        phases.create(services, owner, "no-such-benchmark", spec("p3", T0 + 6 * H, T0 + 7 * H))


@pytest.mark.parametrize(
    ("fields", "loc", "msg"),
    [
        (spec(start=T0 + 2 * H, end=T0 + 2 * H), "ends_at", "after starts_at"),
        (spec(start=T0 + 2 * H, end=T0 + H), "ends_at", "after starts_at"),
        (spec(start=T0 - 2 * H, end=T0), "ends_at", "after 2030-01-07T12:00:00.000000Z"),
        (spec(start=T0 - 2 * H, end=T0 - H), "ends_at", "after 2030-01-07T12:00:00.000000Z"),
        (spec(splits=("public", "private", "public")), "splits", "distinct splits"),
    ],
)
def test_a_phase_must_end_after_it_starts_and_in_the_future_with_distinct_splits(
    services: Services, bench: str, owner: Principal, fields: dict[str, Any], loc: str, msg: str
) -> None:
    with pytest.raises(InvalidFields) as err:
        phases.create(services, owner, bench, fields)
    assert invalid_loc(err) == [(["body", loc], "value_error", msg)]
    assert phases.list_phases(services, bench) == [] and audit_entries(services, bench) == []


@pytest.mark.parametrize(
    ("start", "end", "loc"),
    [
        (T0 + 2 * H, T0 + 4 * H, "starts_at"),  # starts inside
        (T0 + H, T0 + 2 * H, "starts_at"),  # starts together
        (T0 + 30 * timedelta(minutes=1), T0 + 2 * H, "ends_at"),  # ends inside
        (T0, T0 + 5 * H, "ends_at"),  # encloses it
        (T0 + H + timedelta(minutes=1), T0 + 2 * H, "starts_at"),  # enclosed by it
    ],
)
def test_a_phase_may_not_overlap_another(
    services: Services, bench: str, owner: Principal, start: datetime, end: datetime, loc: str
) -> None:
    phases.create(services, owner, bench, spec("first"))
    with pytest.raises(InvalidFields) as err:
        phases.create(services, owner, bench, spec("second", start, end))
    assert invalid_loc(err) == [(["body", loc], "value_error", "no overlap with another phase")]
    assert "overlaps phase 'first' (2030-01-07T13:00:00.000000Z to 2030-01-07T15:00:00.000000Z)" in err.value.detail
    assert [p.name for p in phases.list_phases(services, bench)] == ["first"]


def test_phases_may_touch_end_to_start_and_other_benchmarks_phases_do_not_count(
    services: Services, bench: str, owner: Principal
) -> None:
    phases.create(services, owner, bench, spec("middle"))
    phases.create(services, owner, bench, spec("before", T0 + timedelta(minutes=1), T0 + H))
    phases.create(services, owner, bench, spec("after", T0 + 3 * H, T0 + 4 * H))
    assert [p.name for p in phases.list_phases(services, bench)] == ["before", "middle", "after"]
    other = stored_benchmark(services, owner, name="other").row.id
    phases.create(services, owner, other, spec("same times"))


def test_a_phases_status_follows_the_clock_at_its_edges(services: Services, bench: str, owner: Principal, clock: Clock):
    p = phases.create(services, owner, bench, spec())
    expected = [
        (T0 + H - timedelta(microseconds=1), "upcoming"), (T0 + H, "open"),
        (T0 + 3 * H - timedelta(microseconds=1), "open"), (T0 + 3 * H, "ended"),
    ]  # fmt: skip
    for now, status in expected:
        clock.now = now
        assert phases.get(services, bench, p.id).status == status
        assert phases.list_phases(services, bench)[0].status == status
    assert phases.get(services, bench, p.id).frozen_at == utc_iso(T0 + 3 * H)  # frozen at the very end


def test_a_phase_is_listed_frozen_at_the_instant_it_ends(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    p = phases.create(services, owner, bench, spec())
    q = phases.create(services, owner, bench, spec("q", T0 + 3 * H, T0 + 4 * H))
    clock.now = T0 + 4 * H
    read = phases.get(services, bench, q.id)  # read alone, at the very end
    assert (read.status, read.frozen_at) == ("ended", utc_iso(T0 + 4 * H))
    clock.now = T0 + 3 * H
    assert [(x.id, x.status, x.frozen_at) for x in phases.list_phases(services, bench)][:1] == [
        (p.id, "ended", utc_iso(T0 + 3 * H))
    ]  # fmt: skip


def test_freeze_ended_freezes_at_most_a_batch_earliest_end_first(
    services: Services, bench: str, owner: Principal, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = phases.create(services, owner, bench, spec("a"))
    b = phases.create(services, owner, bench, spec("b", T0 + 3 * H, T0 + 4 * H))
    clock.now = T0 + 5 * H
    monkeypatch.setattr(phases, "FREEZE_BATCH", 1)
    phases.freeze_ended(services, bench)
    with services.engines.read.connect() as conn:
        assert [repo.snapshot(conn, x.id) is not None for x in (a, b)] == [True, False]


def test_an_ended_phase_is_frozen_on_its_first_read_only(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    a = phases.create(services, owner, bench, spec("a"))
    b = phases.create(services, owner, bench, spec("b", T0 + 3 * H, T0 + 5 * H))
    clock.now = T0 + 4 * H
    first = phases.list_phases(services, bench)
    assert [(p.name, p.status, p.frozen_at) for p in first] == [
        ("a", "ended", utc_iso(T0 + 4 * H)), ("b", "open", None)
    ]  # fmt: skip
    clock.now = T0 + 6 * H
    assert phases.get(services, bench, a.id).frozen_at == utc_iso(T0 + 4 * H)  # not frozen again
    assert phases.get(services, bench, b.id).frozen_at == utc_iso(T0 + 6 * H)
    again = phases.list_phases(services, bench)
    assert [p.frozen_at for p in again] == [utc_iso(T0 + 4 * H), utc_iso(T0 + 6 * H)]
    frozen = [e for e in audit_entries(services, bench) if e[0] == "phase.frozen"]
    assert frozen == [
        ("phase.frozen", None, a.id, {"answer_key_version": 1}),
        ("phase.frozen", None, b.id, {"answer_key_version": 1}),
    ]


def test_a_phase_is_read_only_under_its_own_benchmark(services: Services, bench: str, owner: Principal) -> None:
    p = phases.create(services, owner, bench, spec())
    other = stored_benchmark(services, owner, name="other").row.id
    for bench_id, phase_id in ((other, p.id), (bench, "no-such-phase")):
        with pytest.raises(NotFound):
            phases.get(services, bench_id, phase_id)
        with pytest.raises(NotFound):
            phases.update(services, owner, bench_id, phase_id, {"name": "x"})
        with pytest.raises(NotFound):
            phases.delete(services, owner, bench_id, phase_id)
        with pytest.raises(NotFound):
            board(services, owner, bench_id, phase_id)
    for call in (phases.list_phases, lambda s, b: phases.get(s, b, p.id)):
        with pytest.raises(NotFound):
            call(services, "no-such-benchmark")
    assert phases.get(services, bench, p.id).name == "p1"


# --- changes and deletion -------------------------------------------------------------------------------------


def test_an_upcoming_phase_changes_and_only_real_changes_are_audited(
    services: Services, bench: str, owner: Principal
) -> None:
    p = phases.create(services, owner, bench, spec())
    view = phases.update(
        services, owner, bench, p.id, {"name": "renamed", "starts_at": T0 + 2 * H, "splits": ["private"]}
    )
    assert (view.name, view.starts_at, view.splits, view.status) == (
        "renamed", utc_iso(T0 + 2 * H), ["private"], "upcoming"
    )  # fmt: skip
    assert (view.ends_at, view.frozen_at, view.created_at, view.id) == (utc_iso(T0 + 3 * H), None, utc_iso(T0), p.id)
    same = phases.update(services, owner, bench, p.id, {"name": "renamed", "ends_at": T0 + 3 * H})
    assert same == view
    changes = [e for e in audit_entries(services, bench) if e[0] == "phase.changed"]
    assert changes == [
        ("phase.changed", owner.key_id, p.id,
         {"name": "renamed", "starts_at": utc_iso(T0 + 2 * H), "splits": ["private"]}),
    ]  # fmt: skip
    assert phases.get(services, bench, p.id) == view


def test_a_change_is_checked_like_a_new_phase_against_the_others(
    services: Services, bench: str, owner: Principal
) -> None:
    p = phases.create(services, owner, bench, spec())
    phases.create(services, owner, bench, spec("next", T0 + 4 * H, T0 + 5 * H))
    with pytest.raises(InvalidFields) as err:
        phases.update(services, owner, bench, p.id, {"ends_at": T0 + 4 * H + timedelta(minutes=1)})
    assert invalid_loc(err) == [(["body", "ends_at"], "value_error", "no overlap with another phase")]
    with pytest.raises(InvalidFields) as err:
        phases.update(services, owner, bench, p.id, {"ends_at": T0 + H})
    assert invalid_loc(err) == [(["body", "ends_at"], "value_error", "after starts_at")]
    with pytest.raises(InvalidFields) as err:
        phases.update(services, owner, bench, p.id, {"splits": ["public", "public"]})
    assert invalid_loc(err)[0][0] == ["body", "splits"]
    moved = phases.update(services, owner, bench, p.id, {"starts_at": T0 + 2 * H, "ends_at": T0 + 4 * H})
    assert (moved.starts_at, moved.ends_at) == (utc_iso(T0 + 2 * H), utc_iso(T0 + 4 * H))  # its own times: no overlap
    assert len([e for e in audit_entries(services, bench) if e[0] == "phase.changed"]) == 1


def test_a_started_phase_keeps_its_start_and_splits_and_an_ended_one_everything(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    p = phases.create(services, owner, bench, spec(splits=("public", "private")))
    clock.now = T0 + H
    for changes, field in (({"starts_at": T0 + 2 * H}, "starts_at"), ({"splits": ["public"]}, "splits")):
        with pytest.raises(Conflict, match=f"started at 2030-01-07T13:00:00.000000Z: {field} cannot change"):
            phases.update(services, owner, bench, p.id, {"name": "x", **changes})
    assert phases.get(services, bench, p.id).name == "p1"
    kept = phases.update(
        services, owner, bench, p.id,
        {"starts_at": T0 + H, "splits": ["public", "private"], "ends_at": T0 + 2 * H, "max_submissions_total": 3},
    )  # fmt: skip
    assert (kept.ends_at, kept.max_submissions_total, kept.status) == (utc_iso(T0 + 2 * H), 3, "open")
    clock.now = T0 + 2 * H
    with pytest.raises(Conflict, match=r"ended at 2030-01-07T14:00:00.000000Z"):
        phases.update(services, owner, bench, p.id, {"name": "late change"})
    assert phases.get(services, bench, p.id).name == "p1"


def test_a_phase_without_submissions_or_a_frozen_board_is_deleted(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    empty = phases.create(services, owner, bench, spec("empty", T0 + 5 * H, T0 + 6 * H))
    used = phases.create(services, owner, bench, spec("used"))
    ended = phases.create(services, owner, bench, spec("ended", T0 + timedelta(minutes=1), T0 + H))
    phases.delete(services, owner, bench, empty.id)
    with pytest.raises(NotFound):
        phases.get(services, bench, empty.id)
    assert ("phase.deleted", owner.key_id, empty.id, {"name": "empty"}) in audit_entries(services, bench)
    clock.now = T0 + 2 * H
    submit(services, owner, bench, 5)
    phases.get(services, bench, ended.id)  # frozen, without submissions
    for p in (used, ended):
        with pytest.raises(Conflict, match="has submissions or a frozen board"):
            phases.delete(services, owner, bench, p.id)
    assert [p.name for p in phases.list_phases(services, bench)] == ["ended", "used"]
    assert sum(e[0] == "phase.deleted" for e in audit_entries(services, bench)) == 1


def test_an_ended_phase_without_a_snapshot_is_still_deletable(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    p = phases.create(services, owner, bench, spec())
    clock.now = T0 + 4 * H
    phases.delete(services, owner, bench, p.id)  # never read since its end: no snapshot yet
    assert phases.list_phases(services, bench) == []


# --- where a submission goes ----------------------------------------------------------------------------------


def test_a_benchmark_without_phases_places_nowhere_and_keeps_its_quota(services: Services, bench: str) -> None:
    with services.engines.read.connect() as conn:
        placed = phases.place(conn, bench, T0)
        loaded = benchmarks.load(conn, bench)
    assert placed == Placement() and placed.flags() == {"phase_id": None, "late": False}
    assert placed.daily_quota(loaded.benchmark) == 10


def test_a_submission_goes_to_the_phase_open_at_its_time(services: Services, bench: str, owner: Principal) -> None:
    a = phases.create(services, owner, bench, spec("a", per_day=3))
    b = phases.create(services, owner, bench, spec("b", T0 + 3 * H, T0 + 5 * H))
    with services.engines.read.connect() as conn:
        loaded = benchmarks.load(conn, bench)
        at = {t: phases.place(conn, bench, T0 + t * H) for t in (1, 2, 3, 4)}
        with pytest.raises(Conflict, match=r"when phase 'a' starts \(it runs 2030-01-07T13:00:00.000000Z to"):
            phases.place(conn, bench, T0 + H - timedelta(microseconds=1))
        with pytest.raises(Conflict, match=r"phase 'b' ran .* and refuses late submissions$"):
            phases.place(conn, bench, T0 + 5 * H)
    assert [(p.phase.id if p.phase else None, p.late) for p in at.values()] == [
        (a.id, False), (a.id, False), (b.id, False), (b.id, False)
    ]  # fmt: skip
    assert at[1].flags() == {"phase_id": a.id, "late": False}
    assert at[1].daily_quota(loaded.benchmark) is None  # the phase's per-day limit replaces the benchmark's quota
    assert at[3].daily_quota(loaded.benchmark) == 10  # b has no per-day limit


def test_after_a_phase_that_accepts_them_submissions_are_late(services: Services, bench: str, owner: Principal) -> None:
    a = phases.create(services, owner, bench, spec("a", late="accept", per_day=1))
    phases.create(services, owner, bench, spec("b", T0 + 6 * H, T0 + 7 * H, late="refuse"))
    c = phases.create(services, owner, bench, spec("c", T0 + 4 * H, T0 + 5 * H, late="accept"))
    with services.engines.read.connect() as conn:
        loaded = benchmarks.load(conn, bench)
        between = phases.place(conn, bench, T0 + 3 * H)
        after_c = phases.place(conn, bench, T0 + 5 * H + timedelta(minutes=30))
        with pytest.raises(Conflict, match=r"phase 'b' ran .* refuses late submissions$"):
            phases.place(conn, bench, T0 + 8 * H)
    assert (between.phase.id if between.phase else None, between.late) == (a.id, True)
    assert between.flags() == {"phase_id": a.id, "late": True}
    assert between.daily_quota(loaded.benchmark) == 10  # a late submission keeps the benchmark's quota
    assert (after_c.phase.id if after_c.phase else None, after_c.late) == (c.id, True)


def test_a_refusal_after_a_phase_names_the_next_one(services: Services, bench: str, owner: Principal) -> None:
    phases.create(services, owner, bench, spec("a"))
    phases.create(services, owner, bench, spec("b", T0 + 5 * H, T0 + 6 * H))
    with services.engines.read.connect() as conn, pytest.raises(Conflict) as err:
        phases.place(conn, bench, T0 + 4 * H)
    assert err.value.detail == (
        "phase 'a' ran 2030-01-07T13:00:00.000000Z to 2030-01-07T15:00:00.000000Z and refuses late submissions; "
        "the next phase 'b' runs 2030-01-07T17:00:00.000000Z to 2030-01-07T18:00:00.000000Z"
    )


# --- limits ---------------------------------------------------------------------------------------------------


def test_a_phases_total_limit_counts_on_time_submissions_per_key(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    phases.create(services, owner, bench, spec(total=2, late="accept"))
    alice = principal(services, "submissions:write", name="alice")
    clock.now = T0 + H + timedelta(minutes=10)
    submit(services, alice, bench, 5)
    submit(services, alice, bench, 6)
    with pytest.raises(QuotaExceeded, match=r"the 2 submissions allowed in phase 'p1' are used$") as err:
        submit(services, alice, bench, 7)
    assert err.value.retry_after_s == 110 * 60 + 1  # until the end: 1 h 50 min, and a second
    submit(services, principal(services, "submissions:write", name="bob"), bench, 7)  # another key's count
    clock.now = T0 + 4 * H
    assert submit(services, alice, bench, 7)["late"] is True  # late submissions are not limited


def test_a_phases_daily_limit_counts_from_utc_midnight(services: Services, owner: Principal, clock: Clock) -> None:
    clock.now = T0 - 12 * H  # midnight
    bench = stored_benchmark(services, owner, name="nightly", max_submissions_per_day=0).row.id
    phases.create(services, owner, bench, spec(start=T0 + 10 * H, end=T0 + 14 * H, per_day=1))
    alice = principal(services, "submissions:write", name="alice")
    clock.now = T0 + 11 * H + timedelta(minutes=30, seconds=15)  # 23:30:15
    submit(services, alice, bench, 5)  # the benchmark's quota of 0 is replaced by the phase's
    clock.now = T0 + 11 * H + timedelta(minutes=59)
    with pytest.raises(QuotaExceeded, match=r"the 1 submissions a day of phase 'p1' are used$") as err:
        submit(services, alice, bench, 6)
    assert err.value.retry_after_s == 60 + 1
    clock.now = T0 + 12 * H  # midnight: a new day
    submit(services, alice, bench, 6)
    clock.now = T0 + 12 * H + timedelta(seconds=30, microseconds=250_000)  # 00:00:30.25
    with pytest.raises(QuotaExceeded) as err:  # the submission made at 00:00:00.000000 counts for this day
        submit(services, alice, bench, 7)
    assert err.value.retry_after_s == 86_370  # int(24 h - 30.25 s) + 1


def test_a_team_shares_its_phase_limits(services: Services, bench: str, owner: Principal, clock: Clock) -> None:
    phases.create(services, owner, bench, spec(total=2))
    members = []
    for name, team in (("ann", "red"), ("ben", "red"), ("cat", None)):
        _, token = challenges.invite(services, owner, bench, name, team)
        members.append(authenticate(services, token))
    ann, ben, cat = members
    clock.now = T0 + 2 * H
    submit(services, ann, bench, 5)
    submit(services, ben, bench, 5)
    with pytest.raises(QuotaExceeded, match=r"used by team 'red'$"):
        submit(services, ann, bench, 5)
    submit(services, cat, bench, 5)
    submit(services, cat, bench, 5)
    with pytest.raises(QuotaExceeded, match=r"are used$"):
        submit(services, cat, bench, 5)


def test_check_limits_passes_without_an_open_limited_phase(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    unlimited = phases.create(services, owner, bench, spec())
    zero = phases.create(services, owner, bench, spec("l", T0 + 3 * H, T0 + 4 * H, total=0))
    with services.engines.write.begin() as conn:
        row, limited = repo.get(conn, unlimited.id), repo.get(conn, zero.id)
        assert row is not None and limited is not None
        for lock in (False, True):
            phases.check_limits(conn, Placement(), bench, owner.key_id, T0, lock=lock)
            phases.check_limits(conn, Placement(row), bench, owner.key_id, T0, lock=lock)
            phases.check_limits(conn, Placement(limited, late=True), bench, owner.key_id, T0, lock=lock)
            with pytest.raises(QuotaExceeded) as err:
                phases.check_limits(conn, Placement(limited), bench, owner.key_id, T0 + 3 * H, lock=lock)
            assert err.value.retry_after_s == 3601


# --- boards ---------------------------------------------------------------------------------------------------


def scored(value: float, n: int) -> dict[str, Any]:
    return {"value": pytest.approx(value), "n": n}


def test_an_open_phases_board_ranks_its_on_time_submissions(services: Services, owner: Principal, clock: Clock) -> None:
    clock.now = T0 - 2 * H
    bench = stored_benchmark(services, owner, name="ch").row.id
    clock.now = T0 - H
    _, token = challenges.invite(services, owner, bench, "Ann", None)
    ann = authenticate(services, token)
    bob = principal(services, "submissions:write", name="bob")
    clock.now = T0
    phases.create(services, owner, bench, spec("warmup", T0 + timedelta(minutes=1), T0 + H, late="accept"))
    p = phases.create(services, owner, bench, spec(start=T0 + H, end=T0 + 5 * H, splits=("public", "private")))
    clock.now = T0 + 30 * timedelta(minutes=1)
    submit(services, bob, bench, 10, model="early")  # in the warm-up phase: not on this board
    clock.now = T0 + H + timedelta(minutes=1)
    a1 = submit(services, ann, bench, 8, model="ann-model", private=1)
    clock.now = T0 + H + timedelta(minutes=2)
    b1 = submit(services, bob, bench, 6, model="bob-model", private=4)
    clock.now = T0 + H + timedelta(minutes=3)
    a2 = submit(services, ann, bench, 3, model="ann-model", private=2)
    page = board(services, None, bench, p.id)
    assert (page.benchmark_id, page.phase_id, page.split, page.metric, page.rank_by) == (
        bench, p.id, "public", "accuracy", "best"
    )  # fmt: skip
    assert (page.higher_is_better, page.answer_key_version, page.frozen_at, page.next_cursor) == (True, 1, None, None)
    rows = page.rows
    assert [(r["rank"], r["model"], r["submission_id"], r["participant"]) for r in rows] == [
        (1, "ann-model", a1["id"], "Ann"), (2, "bob-model", b1["id"], None)
    ]  # fmt: skip
    first = rows[0]
    assert (first["baseline"], first["pending"], first["answer_key_version"]) == (False, False, 1)
    assert first["submitted_at"] == utc_iso(T0 + H + timedelta(minutes=1))
    assert first["scores"]["accuracy"] | {} == first["scores"]["accuracy"]
    assert {k: first["scores"]["accuracy"][k] for k in ("value", "n")} == scored(0.8, 10)
    lo, hi = first["scores"]["accuracy"]["ci_low"], first["scores"]["accuracy"]["ci_high"]
    assert lo < 0.8 < hi
    assert set(first["scores"]) == {"accuracy", "chance", "p_value_vs_chance", "clustered_se", "coverage"}
    latest = board(services, None, bench, p.id, rank_by="latest").rows
    assert [(r["rank"], r["model"], r["submission_id"]) for r in latest] == [
        (1, "bob-model", b1["id"]), (2, "ann-model", a2["id"])
    ]  # fmt: skip
    private = board(services, None, bench, p.id, split="private").rows  # shown: the phase lists the private split
    assert [(r["model"], r["scores"]["accuracy"]["value"]) for r in private] == [
        ("bob-model", pytest.approx(1.0)), ("ann-model", pytest.approx(0.5))
    ]  # fmt: skip
    chance = board(services, None, bench, p.id, metric="chance")
    assert chance.metric == "chance" and chance.higher_is_better is False and len(chance.rows) == 2


def test_a_boards_pages_follow_their_cursor(services: Services, bench: str, owner: Principal, clock: Clock) -> None:
    p = phases.create(services, owner, bench, spec())
    clock.now = T0 + 2 * H
    for i in range(3):
        submit(services, principal(services, "submissions:write", name=f"k{i}"), bench, 9 - i, model=f"m{i}")
    first = board(services, None, bench, p.id, limit=2)
    assert [r["model"] for r in first.rows] == ["m0", "m1"] and first.next_cursor == cursors.encode(2)
    second = board(services, None, bench, p.id, limit=2, cursor=first.next_cursor)
    assert [r["model"] for r in second.rows] == ["m2"] and second.next_cursor is None
    exact = board(services, None, bench, p.id, limit=3)
    assert len(exact.rows) == 3 and exact.next_cursor is None


def test_a_baseline_is_listed_without_a_rank(services: Services, bench: str, owner: Principal, clock: Clock) -> None:
    p = phases.create(services, owner, bench, spec())
    clock.now = T0 + 2 * H
    base = submit(services, owner, bench, 7, model="base")
    submissions.patch(services, owner, base["id"], baseline=True, public=None)
    submit(services, principal(services, "submissions:write"), bench, 9, model="top")
    submit(services, principal(services, "submissions:write"), bench, 5, model="low")
    rows = board(services, None, bench, p.id).rows
    assert [(r["rank"], r["model"], r["baseline"]) for r in rows] == [
        (1, "top", False), (None, "base", True), (2, "low", False)
    ]  # fmt: skip


def test_a_boards_split_and_metric_are_checked(services: Services, bench: str, owner: Principal) -> None:
    p = phases.create(services, owner, bench, spec())
    with pytest.raises(InvalidFields) as err:
        board(services, owner, bench, p.id, split="private")
    assert invalid_loc(err) == [(["query", "split"], "enum", "['public']")]
    with pytest.raises(InvalidFields) as err:
        board(services, owner, bench, p.id, metric="nope")
    (error,) = err.value.errors
    assert (error["loc"], error["type"]) == (["query", "metric"], "enum") and "accuracy" in error["msg"]


def test_a_hidden_phases_board_is_for_its_owners_until_its_end(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    p = phases.create(services, owner, bench, spec(visibility="hidden_until_end"))
    clock.now = T0 + 2 * H
    alice = principal(services, "submissions:write", name="alice")
    submit(services, alice, bench, 8, model="hidden-model")
    for who in (None, alice):
        with pytest.raises(Forbidden, match=r"hidden until its end, 2030-01-07T15:00:00.000000Z"):
            board(services, who, bench, p.id)
    assert [r["model"] for r in board(services, owner, bench, p.id).rows] == ["hidden-model"]
    assert [r["model"] for r in board(services, admin(services), bench, p.id).rows] == ["hidden-model"]
    on_benchmark = benchmarks.leaderboard(
        services, None, bench, split="public", metric=None, rank_by="best", limit=10, cursor=None
    )
    assert on_benchmark.rows == []  # not on the benchmark's board before the end
    clock.now = T0 + 3 * H
    frozen = board(services, None, bench, p.id)
    assert [r["model"] for r in frozen.rows] == ["hidden-model"] and frozen.frozen_at == utc_iso(T0 + 3 * H)
    after = benchmarks.leaderboard(
        services, None, bench, split="public", metric=None, rank_by="best", limit=10, cursor=None
    )
    assert [r["model"] for r in after.rows] == ["hidden-model"]


def test_making_a_hidden_phase_public_puts_its_models_on_the_benchmarks_board(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    p = phases.create(services, owner, bench, spec(visibility="hidden_until_end"))
    clock.now = T0 + 2 * H
    submit(services, principal(services, "submissions:write"), bench, 8, model="revealed")

    def models() -> list[str]:
        page = benchmarks.leaderboard(
            services, None, bench, split="public", metric=None, rank_by="best", limit=10, cursor=None
        )
        return [r["model"] for r in page.rows]

    assert models() == []
    phases.update(services, owner, bench, p.id, {"leaderboard_visibility": "public"})
    assert models() == ["revealed"]
    assert [r["model"] for r in board(services, None, bench, p.id).rows] == ["revealed"]
    phases.update(services, owner, bench, p.id, {"leaderboard_visibility": "hidden_until_end"})
    assert models() == []


def test_a_frozen_board_is_the_board_at_the_end(services: Services, bench: str, owner: Principal, clock: Clock) -> None:
    p = phases.create(services, owner, bench, spec(late="accept"))
    alice, bob = principal(services, "submissions:write"), principal(services, "submissions:write")
    clock.now = T0 + 2 * H
    a = submit(services, alice, bench, 8, model="a")
    b = submit(services, bob, bench, 6, model="b")
    clock.now = T0 + 3 * H
    submit(services, bob, bench, 10, model="b")  # late: scored, never ranked
    clock.now = T0 + 4 * H
    page = board(services, None, bench, p.id)
    assert [(r["model"], r["submission_id"]) for r in page.rows] == [("a", a["id"]), ("b", b["id"])]
    assert page.frozen_at == utc_iso(T0 + 4 * H) and page.answer_key_version == 1
    clock.now = T0 + 5 * H
    submissions.withdraw(services, alice, a["id"])
    items = film_key_items()
    items[0]["answer_idx"] = 3  # a new answer key after the end: the board keeps version 1's scores
    benchmarks.put_answer_key(services, owner, bench, items, None)
    again = board(services, None, bench, p.id)
    assert again.rows == page.rows and again.answer_key_version == 1 and again.frozen_at == page.frozen_at
    latest = board(services, None, bench, p.id, rank_by="latest", limit=1)
    assert [r["model"] for r in latest.rows] == ["a"] and latest.next_cursor == cursors.encode(1)
    assert sorted(r["model"] for r in board(services, None, bench, p.id, metric="coverage").rows) == ["a", "b"]


def test_a_phase_frozen_after_a_new_answer_key_uses_the_version_current_at_its_end(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    p = phases.create(services, owner, bench, spec())
    clock.now = T0 + 2 * H
    submit(services, principal(services, "submissions:write"), bench, 8, model="a")
    clock.now = T0 + 4 * H
    items = film_key_items()
    items[0]["answer_idx"] = 3  # q0 now answered wrong by every film_predictions
    benchmarks.put_answer_key(services, owner, bench, items, None)  # rescored inline against version 2
    page = board(services, None, bench, p.id)  # frozen now, against version 1 (current at the end)
    assert page.answer_key_version == 1 and page.rows[0]["scores"]["accuracy"]["value"] == pytest.approx(0.8)
    assert page.rows[0]["answer_key_version"] == 1 and page.rows[0]["pending"] is False


def test_an_open_phases_board_uses_the_current_answer_key(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    p = phases.create(services, owner, bench, spec())
    clock.now = T0 + 2 * H
    submit(services, principal(services, "submissions:write"), bench, 8, model="a")
    items = film_key_items()
    items[0]["answer_idx"] = 3
    benchmarks.put_answer_key(services, owner, bench, items, None)
    page = board(services, None, bench, p.id)
    assert page.answer_key_version == 2 and page.rows[0]["answer_key_version"] == 2
    assert page.rows[0]["scores"]["accuracy"]["value"] == pytest.approx(0.7) and page.rows[0]["pending"] is False


def test_a_freeze_stores_every_board_once(services: Services, bench: str, owner: Principal, clock: Clock) -> None:
    p = phases.create(services, owner, bench, spec(splits=("public", "private")))
    clock.now = T0 + 2 * H
    submit(services, principal(services, "submissions:write"), bench, 8, model="a")
    clock.now = T0 + 3 * H
    with services.engines.read.connect() as conn:
        row = repo.get(conn, p.id)
    assert row is not None
    snap = phases.freeze(services, row)
    assert (snap.phase_id, snap.frozen_at, snap.answer_key_version) == (p.id, T0 + 3 * H, 1)
    clock.now = T0 + 5 * H
    assert phases.freeze(services, row) == snap
    with services.engines.read.connect() as conn:
        loaded = benchmarks.load(conn, bench)
        stored = {
            key: json.loads(repo.board_rows(conn, p.id, key) or "null")
            for key in (
                f"{s}/{m}/{r}" for s in ("public", "private") for m in loaded.spec.metrics for r in phases.RANK_BY
            )
        }
        assert repo.board_rows(conn, p.id, "public/accuracy/worst") is None
    assert all(rows is not None and [r["model"] for r in rows] == ["a"] for rows in stored.values())
    assert stored["private/accuracy/best"][0]["scores"]["accuracy"]["value"] == pytest.approx(0.0)
    assert sum(e[0] == "phase.frozen" for e in audit_entries(services, bench)) == 1
    assert board(services, None, bench, p.id, rank_by="nope").rows == []  # a board it did not have


def test_freeze_ended_and_the_reapers_pass_freeze_only_ended_unfrozen_phases(
    services: Services, bench: str, owner: Principal, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = stored_benchmark(services, owner, name="other").row.id
    a = phases.create(services, owner, bench, spec("a"))
    b = phases.create(services, owner, bench, spec("b", T0 + 3 * H, T0 + 4 * H))
    c = phases.create(services, owner, other, spec("c"))
    clock.now = T0 + 3 * H + timedelta(minutes=30)

    def frozen() -> set[str]:
        with services.engines.read.connect() as conn:
            return {x.id for x in (a, b, c) if repo.snapshot(conn, x.id) is not None}

    phases.freeze_ended(services, bench)
    assert frozen() == {a.id}
    monkeypatch.setattr(phases, "FREEZE_BATCH", 0)
    assert phases.freeze_due(services) == 0 and frozen() == {a.id}
    monkeypatch.setattr(phases, "FREEZE_BATCH", 1)
    clock.now = T0 + 5 * H
    assert phases.freeze_due(services) == 1 and len(frozen()) == 2
    monkeypatch.setattr(phases, "FREEZE_BATCH", 100)
    assert phases.freeze_due(services) == 1 and frozen() == {a.id, b.id, c.id}
    assert phases.freeze_due(services) == 0


def test_a_leaderboard_plot_of_the_benchmark_freezes_its_ended_phases_first(
    services: Services, bench: str, owner: Principal, clock: Clock
) -> None:
    p = phases.create(services, owner, bench, spec(visibility="hidden_until_end"))
    clock.now = T0 + 2 * H
    submit(services, principal(services, "submissions:write"), bench, 8, model="hidden")
    clock.now = T0 + 4 * H
    phases.freeze_ended(services, bench)
    assert phases.get(services, bench, p.id).frozen_at == utc_iso(T0 + 4 * H)
    page = benchmarks.leaderboard(
        services, None, bench, split="public", metric=None, rank_by="best", limit=5, cursor=None
    )
    assert [r["model"] for r in page.rows] == ["hidden"]
