"""The submission repository on its own: the quota count's time boundary, the owner filter of listings, withdrawal
that keeps its first time, and which scoring a submission's scores and leaderboard row come from."""

import hashlib
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import text

from db.engine import Engines
from db.models import AnswerKeyVersion, Benchmark
from db.repositories import api_keys
from db.repositories import submissions as repo
from db.repositories.api_keys import ApiKeyRow
from db.repositories.submissions import ScoreRow, SplitItems, SubmissionRow

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
            items=items or [],
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


def test_item_values_are_one_array_per_split_and_metric_aligned_to_the_versions_item_order(
    engines: Engines, bench: str
) -> None:
    with engines.write.begin() as conn:
        conn.execute(
            AnswerKeyVersion.__table__.insert().values(
                benchmark_id=bench, version=1, sha256="0" * 64, items="[]", n_public=2, n_private=1, created_at=T0
            )
        )
    sid = _submit(engines, bench, None, T0)
    items = [
        SplitItems("public", ["q1", "q9"], {"acc": np.array([0.0, 1.0]), "f1": np.array([0.25, np.nan])}),
        SplitItems("private", ["p1"], {"acc": np.array([1.0])}),
    ]
    scoring = _score(engines, sid, 1, 0.5, items)
    again = _score(engines, sid, 1, 0.5, items[:1])  # the version's item order is stored once
    with engines.read.connect() as conn:
        public = repo.item_values(conn, scoring, ["public"], "acc")
        assert [(p.split, p.item_ids, p.values["acc"].tolist()) for p in public] == [("public", ["q1", "q9"], [0, 1])]
        (f1,) = repo.item_values(conn, again, ["private", "public"], "f1")
        assert f1.split == "public" and f1.values["f1"][0] == 0.25 and np.isnan(f1.values["f1"][1])
        both = repo.item_values(conn, scoring, ["private", "public"], "acc", with_ids=False)
        assert [(p.split, p.item_ids, p.values["acc"].tolist()) for p in both] == [
            ("private", [], [1.0]),
            ("public", [], [0.0, 1.0]),
        ]
        sizes = conn.execute(
            text("SELECT metric, length(data) FROM item_score_array WHERE scoring_id = :s AND split = 'public'"),
            {"s": scoring},
        ).all()
        assert dict(sizes) == {"acc": 1 + 1, "f1": 1 + 16}  # one bit per 0/1 value, else 8 bytes
        assert conn.execute(text("SELECT count(*) FROM item_order")).scalar_one() == 2
        assert [s.split for s in repo.scores(conn, scoring, ["public"])] == ["public"]


def test_predictions_are_stored_compressed_and_read_back_as_the_same_text(engines: Engines, bench: str) -> None:
    text_in = '[{"item_id":"q1","choice_idx":2},{"item_id":"é","choice_idx":0}]' * 50
    sid = str(uuid.uuid4())
    with engines.write.begin() as conn:
        repo.insert_submission(conn, SubmissionRow(0, sid, bench, "m", "{}", None, T0, None), text_in)
    with engines.read.connect() as conn:
        assert repo.predictions(conn, sid) == text_in
        sha, size = conn.execute(text("SELECT sha256, length(data) FROM submission_predictions")).one()
    assert sha == hashlib.sha256(text_in.encode()).hexdigest()
    assert size < len(text_in) / 20


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
