"""The submission repository on its own: the quota count's time boundary, the owner filter of listings, withdrawal
that keeps its first time, and which scoring a submission's scores and leaderboard row come from."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from db.engine import Engines
from db.models import Benchmark
from db.repositories import api_keys
from db.repositories import submissions as repo
from db.repositories.api_keys import ApiKeyRow
from db.repositories.submissions import ScoreRow, SubmissionRow

T0 = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)


@pytest.fixture
def bench(engines: Engines) -> str:
    bid = str(uuid.uuid4())
    values = {
        "id": bid, "name": "b", "scorer": "film_mcq", "description": "", "scorer_params": "{}",
        "max_submissions_per_day": 5, "owner_key_id": None, "current_version": 1, "created_at": T0,
    }  # fmt: skip
    with engines.write.begin() as conn:
        conn.execute(Benchmark.__table__.insert().values(**values))
    return bid


def _key(engines: Engines) -> str:
    row = ApiKeyRow(str(uuid.uuid4()), uuid.uuid4().hex[:8], "k", ["submissions:write"], T0, None, None)
    with engines.write.begin() as conn:
        api_keys.insert(conn, row, uuid.uuid4().hex)
    return row.id


def _submit(engines: Engines, bench: str, key: str | None, at: datetime, model: str = "m") -> str:
    sid = str(uuid.uuid4())
    with engines.write.begin() as conn:
        repo.insert_submission(conn, SubmissionRow(0, sid, bench, model, "{}", key, at, None), "{}")
    return sid


def _score(engines: Engines, sid: str, version: int, value: float, items: list | None = None) -> int:
    with engines.write.begin() as conn:
        return repo.insert_scoring(
            conn,
            submission_id=sid,
            answer_key_version=version,
            scorer_version="1",
            details="{}",
            when=T0,
            scores=[
                ScoreRow("public", "accuracy", value, None, None, 10),
                ScoreRow("private", "accuracy", 0.1, 0, 1, 4),
            ],
            item_scores=items or [],
        )


def test_quota_counts_a_keys_submissions_from_the_day_start_inclusive(engines: Engines, bench: str) -> None:
    alice, bob = _key(engines), _key(engines)
    day = T0 + timedelta(days=1)
    _submit(engines, bench, alice, day - timedelta(microseconds=1))  # yesterday
    _submit(engines, bench, alice, day)  # the first instant of today counts
    _submit(engines, bench, alice, day + timedelta(hours=5))
    _submit(engines, bench, bob, day + timedelta(hours=1))
    _submit(engines, bench, None, day + timedelta(hours=1))
    with engines.read.connect() as conn:
        assert repo.count_since(conn, bench, alice, day) == 2
        assert repo.count_since(conn, bench, bob, day) == 1
        assert repo.count_since(conn, bench, alice, day + timedelta(days=1)) == 0


def test_a_key_lists_only_its_own_submissions_and_an_admin_all(engines: Engines, bench: str) -> None:
    alice, bob = _key(engines), _key(engines)
    a = [_submit(engines, bench, alice, T0 + timedelta(minutes=i)) for i in range(3)]
    b = _submit(engines, bench, bob, T0)

    def ids(key: str | None, all_keys: bool, limit: int = 10, before: int | None = None) -> list[str]:
        with engines.read.connect() as conn:
            rows = repo.list_for_benchmark(
                conn, bench, api_key_id=key, all_keys=all_keys, limit=limit, before_seq=before
            )
        return [r.id for r in rows]

    assert ids(alice, False) == a[::-1]
    assert ids(bob, False) == [b]
    assert ids(None, True) == [b, *a[::-1]]
    assert ids(alice, False, limit=2) == [a[2], a[1]]
    with engines.read.connect() as conn:
        seq = repo.get(conn, a[1]).seq  # type: ignore[union-attr]
    assert ids(alice, False, before=seq) == [a[0]]


def test_withdrawing_twice_keeps_the_first_time(engines: Engines, bench: str) -> None:
    sid = _submit(engines, bench, None, T0)
    first, second = T0 + timedelta(hours=1), T0 + timedelta(hours=2)
    with engines.write.begin() as conn:
        repo.withdraw(conn, sid, first)
        repo.withdraw(conn, sid, second)
    with engines.read.connect() as conn:
        assert repo.get(conn, sid).withdrawn_at == first  # type: ignore[union-attr]
        assert repo.get(conn, str(uuid.uuid4())) is None


def test_item_scores_are_one_metrics_rows_of_the_asked_splits_in_insertion_order(engines: Engines, bench: str) -> None:
    sid = _submit(engines, bench, None, T0)
    items = [("public", "q9", "acc", 1.0), ("public", "q1", "acc", 0.0), ("private", "p1", "acc", 1.0)]
    items += [("public", "q9", "f1", 0.5), ("public", "q1", "f1", 0.25)]
    scoring = _score(engines, sid, 1, 0.5, items)
    with engines.read.connect() as conn:
        assert repo.item_scores(conn, scoring, ["public"], "acc") == [("public", "q9", 1.0), ("public", "q1", 0.0)]
        assert repo.item_scores(conn, scoring, ["public", "private"], "f1") == [
            ("public", "q9", 0.5),
            ("public", "q1", 0.25),
        ]
        assert len(repo.item_scores(conn, scoring, ["public", "private"], "acc")) == 3
        assert [s.split for s in repo.scores(conn, scoring, ["public"])] == ["public"]


def test_the_latest_scoring_of_a_version_wins_and_the_leaderboard_falls_back_to_an_earlier_version(
    engines: Engines, bench: str
) -> None:
    rescored, waiting, withdrawn = (_submit(engines, bench, None, T0, model=m) for m in ("r", "w", "x"))
    _score(engines, rescored, 1, 0.5)
    second = _score(engines, rescored, 1, 0.6)  # a rescore under the same version
    _score(engines, rescored, 2, 0.7)
    _score(engines, waiting, 1, 0.4)  # not yet rescored against version 2
    _score(engines, withdrawn, 2, 0.9)
    with engines.write.begin() as conn:
        repo.withdraw(conn, withdrawn, T0)
    with engines.read.connect() as conn:
        assert repo.latest_scoring(conn, rescored, 1).id == second  # type: ignore[union-attr]
        assert repo.latest_scoring(conn, waiting, 2) is None
        v1 = {
            r["model"]: (r["answer_key_version"], r["scores"]["accuracy"]["value"])
            for r in repo.latest_scores(conn, bench, 1, "public")
        }
        v2 = {
            r["model"]: (r["answer_key_version"], r["scores"]["accuracy"]["value"])
            for r in repo.latest_scores(conn, bench, 2, "public")
        }
        private = repo.latest_scores(conn, bench, 2, "private")
    assert v1 == {"r": (1, 0.6), "w": (1, 0.4)}
    assert v2 == {"r": (2, 0.7), "w": (1, 0.4)}
    assert {r["model"]: r["scores"]["accuracy"] for r in private}["r"] == {
        "value": 0.1,
        "ci_low": 0,
        "ci_high": 1,
        "n": 4,
    }
