"""Migration 0012: item_score rows become one array per (scoring, split, metric) aligned to the answer-key version's
item order, and predictions move out of the submission row compressed; the downgrade gives back the same rows and
text. Seeded with bulk SQL at revision 0011 (a small store in the fast suite, 10^6 item rows in the slow one)."""

import hashlib
import json
from datetime import UTC, datetime

import numpy as np
import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.pool import NullPool

from db.migrate import downgrade, upgrade
from db.repositories import submissions as repo

NOW = datetime(2026, 12, 3, tzinfo=UTC)
ROWS = "SELECT scoring_id, split, item_id, metric, value FROM item_score ORDER BY scoring_id, split, metric, item_id"


def _ids(n: int) -> list[str]:
    return [f"q{i:07d}" for i in range(n)]


def _seed(conn, n_items: int, n_scorings: int) -> None:
    """One benchmark whose version 1 has ``n_items`` items (every fifth private), ``n_scorings`` submissions each
    scored once; item rows for accuracy (0/1, every item) and score (float, none for every seventh item)."""
    conn.execute(
        text(
            "INSERT INTO benchmark (id, name, scorer, description, scorer_params, max_submissions_per_day, "
            "owner_key_id, current_version, created_at) VALUES ('b', 'b', 'film_mcq', '', '{}', 10, NULL, 1, :t)"
        ),
        {"t": NOW},
    )
    items = [
        {
            "item_id": i,
            "answer_idx": 0,
            "num_options": 4,
            "film_id": "f",
            "split": "private" if k % 5 == 0 else "public",
        }
        for k, i in enumerate(_ids(n_items))
    ]
    conn.execute(
        text(
            "INSERT INTO answer_key_version (benchmark_id, version, sha256, items, n_public, n_private, created_at) "
            "VALUES ('b', 1, '', :items, 0, 0, :t)"
        ),
        {"items": json.dumps(items), "t": NOW},
    )
    for s in range(n_scorings):
        conn.execute(
            text(
                "INSERT INTO submission (id, benchmark_id, model, meta, predictions, api_key_id, created_at) "
                "VALUES (:sub, 'b', :m, '{}', :p, NULL, :t)"
            ),
            {"sub": f"sub-{s:04d}", "m": f"m{s}", "p": json.dumps([{"item_id": "é", "choice_idx": s}] * 3), "t": NOW},
        )
        conn.execute(
            text(
                "INSERT INTO scoring (submission_id, answer_key_version, scorer_version, details, created_at) "
                "VALUES (:sub, 1, '1', '{}', :t)"
            ),
            {"sub": f"sub-{s:04d}", "t": NOW},
        )
    series = (
        "generate_series(0, :n - 1) AS g(i)"
        if conn.dialect.name == "postgresql"
        else "(WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < :n - 1) SELECT i FROM c) g"
    )
    item_id = "'q' || lpad(CAST(g.i AS text), 7, '0')" if conn.dialect.name == "postgresql" else "printf('q%07d', g.i)"
    split = "CASE WHEN g.i % 5 = 0 THEN 'private' ELSE 'public' END"
    conn.execute(
        text(
            f"INSERT INTO item_score (scoring_id, split, item_id, metric, value) "
            f"SELECT sc.id, {split}, {item_id}, 'accuracy', CAST((g.i * 7 + sc.id) % 2 AS float) FROM scoring sc, "
            f"{series}"
        ),
        {"n": n_items},
    )
    conn.execute(
        text(
            f"INSERT INTO item_score (scoring_id, split, item_id, metric, value) "
            f"SELECT sc.id, {split}, {item_id}, 'score', ((g.i * 13 + sc.id) % 10) / 4.0 - 1 FROM scoring sc, "
            f"{series} WHERE g.i % 7 <> 3"
        ),
        {"n": n_items},
    )


def _expected(scoring_id: int, split: str, metric: str, n_items: int) -> np.ndarray:
    i = np.arange(n_items)
    i = i[(i % 5 == 0) == (split == "private")]
    if metric == "accuracy":
        return ((i * 7 + scoring_id) % 2).astype(float)
    return np.where(i % 7 == 3, np.nan, ((i * 13 + scoring_id) % 10) / 4.0 - 1)


def _migrate_there_and_back(db_url: str, n_items: int, n_scorings: int) -> None:
    downgrade(db_url, "0011")
    eng = create_engine(db_url, poolclass=NullPool)
    with eng.begin() as conn:
        _seed(conn, n_items, n_scorings)
    with eng.connect() as conn:
        n_rows = conn.execute(text("SELECT count(*) FROM item_score")).scalar_one()
        rows = conn.execute(text(ROWS)).all() if n_rows <= 10_000 else None
        sums = conn.execute(text("SELECT metric, count(*), sum(value) FROM item_score GROUP BY metric")).all()
        predictions = dict(conn.execute(text("SELECT id, predictions FROM submission")).all())
    assert n_rows == n_scorings * (n_items + n_items - len(range(3, n_items, 7)))
    upgrade(db_url, "0012")
    names = inspect(eng).get_table_names()
    assert "item_score" not in names
    assert "predictions" not in {c["name"] for c in inspect(eng).get_columns("submission")}
    with eng.connect() as conn:
        scorings = conn.execute(text("SELECT id, submission_id FROM scoring ORDER BY id")).all()
        for scoring_id, sid in scorings:
            for part in repo.item_values(conn, scoring_id, ["public", "private"], "score"):
                expected = _expected(scoring_id, part.split, "score", n_items)
                np.testing.assert_array_equal(part.values["score"], expected)
            for part in repo.item_values(conn, scoring_id, ["public", "private"], "accuracy"):
                assert part.item_ids == [
                    i for k, i in enumerate(_ids(n_items)) if (k % 5 == 0) == (part.split == "private")
                ]
                np.testing.assert_array_equal(
                    part.values["accuracy"], _expected(scoring_id, part.split, "accuracy", n_items)
                )
            assert repo.predictions(conn, sid) == predictions[sid]
        stored = dict(conn.execute(text("SELECT submission_id, sha256 FROM submission_predictions")).all())
        assert stored == {sid: hashlib.sha256(p.encode()).hexdigest() for sid, p in predictions.items()}
        size = conn.execute(
            text("SELECT metric, sum(length(data)) FROM item_score_array GROUP BY metric ORDER BY metric")
        ).all()
    # accuracy: one bit per item; score: 8 bytes per item (NaN where none); one format byte per array
    assert [tuple(r) for r in size] == [
        ("accuracy", n_scorings * (2 + (n_items // 5 + 7) // 8 + (n_items - n_items // 5 + 7) // 8)),
        ("score", n_scorings * (2 + 8 * n_items)),
    ]
    downgrade(db_url, "0011")
    with eng.connect() as conn:
        if rows is not None:
            assert conn.execute(text(ROWS)).all() == rows
        assert conn.execute(text("SELECT metric, count(*), sum(value) FROM item_score GROUP BY metric")).all() == sums
        assert dict(conn.execute(text("SELECT id, predictions FROM submission")).all()) == predictions
    upgrade(db_url)
    eng.dispose()


def test_item_rows_become_arrays_and_come_back(db_url: str) -> None:
    _migrate_there_and_back(db_url, n_items=40, n_scorings=3)


@pytest.mark.slow
def test_a_million_item_rows_become_arrays_and_come_back(db_url: str) -> None:
    _migrate_there_and_back(db_url, n_items=10_000, n_scorings=55)
