"""Maintained leaderboards against a full recomputation: generated submissions (scores drawn from a few values, so
values, intervals and submission times tie), withdrawals, same-version rescores that lower a model's best, and a
new answer-key version reached by only part of the rescoring (pending rows). The reference reads every live
submission's latest scores (``submissions.latest_scores``, the read the leaderboard made before the table existed)
and ranks them with ``reference_board`` below, written apart from the service's code. Also: the migration's
backfill and ``rankings.rebuild`` give the same rows, and writers in threads (SQLite and PostgreSQL) leave the
board exact, also while a hidden phase's board is frozen and its submissions join the boards."""

import importlib.util
import random
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import cmp_to_key
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from db.migrate import downgrade, upgrade
from db.models import Benchmark, LeaderboardEntry
from db.repositories import api_keys
from db.repositories import phases as phase_repo
from db.repositories import submissions as sub_repo
from db.repositories.api_keys import ApiKeyRow
from db.repositories.submissions import ScoreRow, SubmissionRow
from service.registry import SCORERS, load_all
from tests.conftest import create_pg_database, drop_pg_database
from usecases import phases, rankings
from usecases.benchmarks import leaderboard
from usecases.services import Services
from usecases.settings import Settings

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
BOARDS = [
    (split, metric, rank_by)
    for split, metric in (("public", "accuracy"), ("public", "chance"), ("private", "accuracy"))
    for rank_by in ("best", "latest")
]
"""accuracy ranks higher-first, film_mcq's chance lower-first."""


def _services(settings: Settings, url: str | None = None) -> Services:
    update_ = {"queue": "off"} | ({"database_url": url} if url else {})
    return Services(settings.model_copy(update=update_))


@pytest.fixture
def services(settings: Settings) -> Iterator[Services]:
    s = _services(settings)
    yield s
    s.dispose()


def _metrics() -> dict:
    load_all()
    return SCORERS["film_mcq"].metrics


def new_benchmark(services: Services) -> str:
    bid = str(uuid.uuid4())
    values = {
        "id": bid, "name": f"b-{bid[:8]}", "scorer": "film_mcq", "description": "", "scorer_params": "{}",
        "max_submissions_per_day": 1000, "owner_key_id": None, "current_version": 1, "created_at": T0,
    }  # fmt: skip
    with services.engines.write.begin() as conn:
        conn.execute(Benchmark.__table__.insert().values(**values))
    return bid


def new_keys(services: Services, n: int) -> list[str]:
    ids = [str(uuid.uuid4()) for _ in range(n)]
    with services.engines.write.begin() as conn:
        for kid in ids:
            api_keys.insert(conn, ApiKeyRow(kid, uuid.uuid4().hex[:8], "k", ["submissions:write"], T0, None, None), kid)
    return ids


def _scores(rng: random.Random) -> list[ScoreRow]:
    ci = rng.choice([None, 0.1, 0.2])
    return [
        ScoreRow("public", "accuracy", rng.choice([0.25, 0.5, 0.75]), ci, None if ci is None else 0.9, 10),
        ScoreRow("public", "chance", rng.choice([0.2, 0.25]), rng.choice([None, 0.05]), None, 10),
        ScoreRow("private", "accuracy", rng.choice([0.0, 0.5]), None, None, 4),
    ]


def store(services: Services, bench: str, sid: str, version: int, scores: list[ScoreRow]) -> None:
    """A scoring stored as ``usecases.benchmarks.store_scoring`` stores it: the rows, then the board update."""
    with services.engines.write.begin() as conn:
        sub_repo.insert_scoring(
            conn, submission_id=sid, answer_key_version=version, scorer_version="1", details="{}",
            when=T0, scores=scores, items=[],
        )  # fmt: skip
        rankings.refresh(conn, bench, sid, _metrics())


def submit(
    services: Services,
    bench: str,
    model: str,
    key: str | None,
    at: datetime,
    scores: list[ScoreRow],
    phase_id: str | None = None,
) -> str:
    sid = str(uuid.uuid4())
    with services.engines.write.begin() as conn:
        row = SubmissionRow(0, sid, bench, model, "{}", key, at, None, phase_id=phase_id)
        sub_repo.insert_submission(conn, row, "[]")
    store(services, bench, sid, 1, scores)
    return sid


def withdraw(services: Services, bench: str, sid: str) -> None:
    with services.engines.write.begin() as conn:
        sub_repo.withdraw(conn, sid, T0)
        rankings.refresh(conn, bench, sid, _metrics())


def reference_board(
    rows: list[dict[str, Any]], metric: str, higher: bool, rank_by: str
) -> list[tuple[int, str, str, int, float]]:
    """(rank, model, submission_id, answer_key_version, value): per model its best row (value, then ci_low with a
    missing one last, then the earlier submission, then the smaller id) or its latest submission; ranked by the
    same comparison."""

    def before(a: dict[str, Any], b: dict[str, Any]) -> int:
        sa, sb = a["scores"][metric], b["scores"][metric]
        if sa["value"] != sb["value"]:
            return -1 if (sa["value"] > sb["value"]) == higher else 1
        if (sa["ci_low"] is None) != (sb["ci_low"] is None):
            return 1 if sa["ci_low"] is None else -1
        if sa["ci_low"] is not None and sa["ci_low"] != sb["ci_low"]:
            return -1 if (sa["ci_low"] > sb["ci_low"]) == higher else 1
        if a["submitted_at"] != b["submitted_at"]:
            return -1 if a["submitted_at"] < b["submitted_at"] else 1
        return -1 if a["submission_id"] < b["submission_id"] else 1

    per_model: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if metric in r["scores"]:
            per_model.setdefault(r["model"], []).append(r)
    if rank_by == "best":
        chosen = [sorted(rs, key=cmp_to_key(before))[0] for rs in per_model.values()]
    else:
        chosen = [max(rs, key=lambda r: (r["submitted_at"], r["submission_id"])) for rs in per_model.values()]
    return [
        (i + 1, r["model"], r["submission_id"], r["answer_key_version"], r["scores"][metric]["value"])
        for i, r in enumerate(sorted(chosen, key=cmp_to_key(before)))
    ]


def maintained_board(services: Services, bench: str, split: str, metric: str, rank_by: str) -> list[tuple]:
    """Every page of the leaderboard use case (7 rows a page, through its cursors)."""
    admin = type("Admin", (), {"is_admin": True, "key_id": "admin"})()
    out, cursor = [], None
    while True:
        page = leaderboard(services, admin, bench, split=split, metric=metric, rank_by=rank_by, limit=7, cursor=cursor)  # type: ignore[arg-type]
        version = page.answer_key_version
        for r in page.rows:
            assert r["pending"] == (r["answer_key_version"] != version)
            out.append(
                (r["rank"], r["model"], r["submission_id"], r["answer_key_version"], r["scores"][metric]["value"])
            )
        cursor = page.next_cursor
        if cursor is None:
            return out


def assert_boards_exact(services: Services, bench: str, leave_out: frozenset[str] = frozenset()) -> int:
    """Every board equals the reference over the live submissions (those in ``leave_out`` left out)."""
    metrics = _metrics()
    with services.engines.read.connect() as conn:
        version = conn.execute(select(Benchmark.current_version).where(Benchmark.id == bench)).scalar_one()
        rows = {
            split: [
                r for r in sub_repo.latest_scores(conn, bench, version, split) if r["submission_id"] not in leave_out
            ]
            for split in ("public", "private")
        }
    total = 0
    for split, metric, rank_by in BOARDS:
        expected = reference_board(rows[split], metric, metrics[metric].higher_is_better, rank_by)
        assert maintained_board(services, bench, split, metric, rank_by) == expected, (split, metric, rank_by)
        total += len(expected)
    return total


def _table(services: Services, bench: str) -> list[tuple]:
    cols = [c for c in LeaderboardEntry.__table__.c if c.name != "id"]
    with services.engines.read.connect() as conn:
        rows = conn.execute(select(*cols).where(LeaderboardEntry.benchmark_id == bench)).all()
    return sorted(tuple(r) for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_the_maintained_board_equals_a_full_recomputation(services: Services, seed: int) -> None:
    rng = random.Random(seed)
    bench = new_benchmark(services)
    keys = [*new_keys(services, 2), None]
    times = [T0 + timedelta(minutes=rng.randrange(5)) for _ in range(60)]  # five instants: times tie
    subs = [
        submit(services, bench, f"m{rng.randrange(12)}", rng.choice(keys), times[i], _scores(rng)) for i in range(60)
    ]
    assert assert_boards_exact(services, bench) > 0

    live = list(subs)
    for sid in rng.sample(subs, 12):
        withdraw(services, bench, sid)
        live.remove(sid)
    assert_boards_exact(services, bench)

    for sid in rng.sample(live, 15):  # rescored under the same version: a best may get worse and lose its row
        store(services, bench, sid, 1, _scores(rng))
    assert_boards_exact(services, bench)

    with services.engines.write.begin() as conn:
        conn.execute(update(Benchmark).where(Benchmark.id == bench).values(current_version=2))
    for sid in rng.sample(live, len(live) // 2):  # half reached by the rescoring: the others stay pending
        store(services, bench, sid, 2, _scores(rng))
    late = submit(services, bench, "m3", keys[0], T0 + timedelta(minutes=9), _scores(rng))
    store(services, bench, late, 2, _scores(rng))
    withdraw(services, bench, rng.choice(live))
    assert assert_boards_exact(services, bench) > 0

    before = _table(services, bench)
    with services.engines.write.begin() as conn:
        assert rankings.rebuild(conn, bench, _metrics()) == len(before)
    assert _table(services, bench) == before


def test_the_migration_backfills_the_same_rows(services: Services, settings: Settings) -> None:
    rng = random.Random(7)
    bench = new_benchmark(services)
    (key,) = new_keys(services, 1)
    subs = [submit(services, bench, f"m{i % 5}", key, T0 + timedelta(minutes=i % 3), _scores(rng)) for i in range(20)]
    withdraw(services, bench, subs[0])
    store(services, bench, subs[1], 1, _scores(rng))
    maintained = _table(services, bench)
    services.dispose()
    downgrade(settings.database_url, "0008")
    upgrade(settings.database_url)
    assert _table(services, bench) == maintained
    assert_boards_exact(services, bench)


def _race(services: Services, bench: str, seed: int) -> None:
    """Four threads submitting to four shared models and withdrawing some of their own submissions."""
    errors: list[BaseException] = []
    keys = new_keys(services, 4)

    def work(t: int) -> None:
        rng = random.Random(seed * 10 + t)
        mine: list[str] = []
        try:
            for i in range(12):
                at = T0 + timedelta(seconds=rng.randrange(3))
                mine.append(submit(services, bench, f"m{rng.randrange(4)}", keys[t], at, _scores(rng)))
                if i % 4 == 3:
                    withdraw(services, bench, mine.pop(rng.randrange(len(mine))))
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


def test_concurrent_writers_leave_the_board_exact_on_sqlite(services: Services) -> None:
    bench = new_benchmark(services)
    _race(services, bench, 1)
    assert assert_boards_exact(services, bench) > 0


@pytest.mark.slow
def test_concurrent_writers_leave_the_board_exact_on_postgres(settings: Settings, postgres_server_url: str) -> None:
    url = create_pg_database(postgres_server_url, "estibench_rankings")
    try:
        upgrade(url)
        services = _services(settings, url)
        try:
            bench = new_benchmark(services)
            _race(services, bench, 2)
            assert assert_boards_exact(services, bench) > 0
        finally:
            services.dispose()
    finally:
        drop_pg_database(postgres_server_url, url)


def _hidden_phase(services: Services, bench: str) -> phase_repo.PhaseRow:
    row = phase_repo.PhaseRow(
        0, str(uuid.uuid4()), bench, "hidden", T0 - timedelta(hours=1), T0 + timedelta(hours=1), ["public"],
        None, None, "hidden_until_end", "refuse", T0 - timedelta(days=1), None,
    )  # fmt: skip
    with services.engines.write.begin() as conn:
        phase_repo.insert(conn, row)
    return row


def _phase_race(services: Services, bench: str, seed: int) -> None:
    """Submissions outside and inside a hidden phase, then three threads scoring more of both (same models) while
    a fourth freezes the phase mid-way: before the freeze the boards leave the phase's submissions out, after it
    they hold every live submission, exactly."""
    rng = random.Random(seed)
    phase = _hidden_phase(services, bench)
    keys = new_keys(services, 3)
    hidden = frozenset(
        submit(services, bench, f"m{i % 4}", keys[i % 3], T0 + timedelta(seconds=i % 3), _scores(rng), phase.id)
        for i in range(8)
    )
    for i in range(8):
        submit(services, bench, f"m{i % 5}", keys[i % 3], T0 + timedelta(seconds=i % 2), _scores(rng))
    assert assert_boards_exact(services, bench, leave_out=hidden) > 0
    errors: list[BaseException] = []
    started = threading.Barrier(4)

    def work(t: int) -> None:
        r = random.Random(seed * 10 + t)
        try:
            started.wait()
            for i in range(8):
                in_phase = phase.id if i % 2 == 0 else None
                submit(services, bench, f"m{r.randrange(5)}", keys[t], T0 + timedelta(seconds=r.randrange(3)),
                       _scores(r), in_phase)  # fmt: skip
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    def freeze() -> None:
        try:
            started.wait()
            time.sleep(0.05)
            phases.freeze(services, phase)
        except BaseException as exc:
            errors.append(exc)

    threads = [*(threading.Thread(target=work, args=(t,)) for t in range(3)), threading.Thread(target=freeze)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert assert_boards_exact(services, bench) > 0
    before = _table(services, bench)
    with services.engines.write.begin() as conn:
        rankings.rebuild(conn, bench, _metrics())
    assert _table(services, bench) == before


def test_a_hidden_phase_joins_the_board_exactly_at_its_freeze_on_sqlite(services: Services) -> None:
    _phase_race(services, new_benchmark(services), 3)


@pytest.mark.slow
def test_a_hidden_phase_joins_the_board_exactly_at_its_freeze_on_postgres(
    settings: Settings, postgres_server_url: str
) -> None:
    url = create_pg_database(postgres_server_url, "estibench_rankings_phase")
    try:
        upgrade(url)
        services = _services(settings, url)
        try:
            _phase_race(services, new_benchmark(services), 4)
        finally:
            services.dispose()
    finally:
        drop_pg_database(postgres_server_url, url)


def test_the_migrations_lower_is_better_metrics_are_the_scorers() -> None:
    """The backfill's snapshot of metric directions matches the registry it was written from."""
    path = Path(__file__).resolve().parents[2] / "db/migrations/versions/2026-12-03_0009_leaderboard_entries.py"
    spec = importlib.util.spec_from_file_location("migration_0009", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    load_all()
    lower = {name: {m for m, info in s.metrics.items() if not info.higher_is_better} for name, s in SCORERS.items()}
    assert {k: set(v) for k, v in module.LOWER_IS_BETTER.items()} == {k: v for k, v in lower.items() if v}


def test_a_freeze_waits_for_a_phase_scoring_in_flight_on_postgres(settings: Settings, postgres_server_url: str) -> None:
    """A hidden phase's scoring of a new model is stored (its board update done, the phase not yet frozen in its
    view) but not committed while the freeze runs: the freeze waits for it, so once both commit the model is on
    the board. Without the wait the freeze, not seeing the model, leaves it off the board for good."""
    url = create_pg_database(postgres_server_url, "estibench_rankings_inflight")
    try:
        upgrade(url)
        services = _services(settings, url)
        try:
            bench = new_benchmark(services)
            phase = _hidden_phase(services, bench)
            (key,) = new_keys(services, 1)
            submit(services, bench, "m0", key, T0, _scores(random.Random(0)), phase.id)
            sid = str(uuid.uuid4())
            froze = threading.Event()
            freezer = threading.Thread(target=lambda: (phases.freeze(services, phase), froze.set()))
            with services.engines.write.begin() as conn:  # one transaction, as a submission's write is
                row = SubmissionRow(0, sid, bench, "late-model", "{}", key, T0, None, phase_id=phase.id)
                sub_repo.insert_submission(conn, row, "[]")
                sub_repo.insert_scoring(
                    conn, submission_id=sid, answer_key_version=1, scorer_version="1", details="{}",
                    when=T0, scores=_scores(random.Random(1)), items=[],
                )  # fmt: skip
                rankings.refresh(conn, bench, sid, _metrics())
                freezer.start()
                froze.wait(1.0)
            freezer.join()
            assert assert_boards_exact(services, bench) > 0
            assert "late-model" in {r[1] for r in maintained_board(services, bench, "public", "accuracy", "best")}
        finally:
            services.dispose()
    finally:
        drop_pg_database(postgres_server_url, url)
