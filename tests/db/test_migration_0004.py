"""Migration 0004: stored per-item scores get their scorer's primary metric; afterwards every insert names one."""

from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import NullPool

from db.migrate import downgrade, upgrade

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _seed(conn, bench: str, scorer: str) -> None:
    conn.execute(
        text(
            "INSERT INTO benchmark (id, name, scorer, description, scorer_params, max_submissions_per_day, "
            "owner_key_id, current_version, created_at) VALUES (:b, :b, :s, '', '{}', 10, NULL, 1, :t)"
        ),
        {"b": bench, "s": scorer, "t": NOW},
    )
    conn.execute(
        text(
            "INSERT INTO submission (id, benchmark_id, model, meta, predictions, api_key_id, created_at) "
            "VALUES (:sub, :b, 'm', '{}', '[]', NULL, :t)"
        ),
        {"sub": f"sub-{bench}", "b": bench, "t": NOW},
    )
    scoring_id = conn.execute(
        text(
            "INSERT INTO scoring (submission_id, answer_key_version, scorer_version, details, created_at) "
            "VALUES (:sub, 1, '1', '{}', :t) RETURNING id"
        ),
        {"sub": f"sub-{bench}", "t": NOW},
    ).scalar_one()
    for i in range(3):
        conn.execute(
            text("INSERT INTO item_score (scoring_id, split, item_id, value) VALUES (:s, 'public', :i, 1.0)"),
            {"s": scoring_id, "i": f"q{i}"},
        )


def test_existing_item_scores_get_the_primary_metric(db_url: str) -> None:
    downgrade(db_url, "0003")
    eng = create_engine(db_url, poolclass=NullPool)
    with eng.begin() as conn:
        _seed(conn, "films", "film_mcq")
        _seed(conn, "tele", "televal")
    upgrade(db_url, "0011")  # the rows stay rows until 0012 makes arrays of them (with their answer-key version)
    with eng.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT benchmark.scorer, item_score.metric, count(*) FROM item_score "
                "JOIN scoring ON scoring.id = item_score.scoring_id "
                "JOIN submission ON submission.id = scoring.submission_id "
                "JOIN benchmark ON benchmark.id = submission.benchmark_id "
                "GROUP BY benchmark.scorer, item_score.metric ORDER BY benchmark.scorer"
            )
        ).all()
        assert [tuple(r) for r in rows] == [("film_mcq", "accuracy", 3), ("televal", "overall", 3)]
        scoring_id = conn.execute(text("SELECT min(id) FROM scoring")).scalar_one()
    with pytest.raises(IntegrityError), eng.begin() as conn:  # the temporary default is gone
        conn.execute(
            text("INSERT INTO item_score (scoring_id, split, item_id, value) VALUES (:s, 'public', 'x', 0.0)"),
            {"s": scoring_id},
        )
    eng.dispose()
