"""maintained leaderboards: one row per model and board (benchmark, split, metric, rank_by) with its sort key,
backfilled from the stored submissions; submissions indexed by (benchmark, model)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 10:00:00
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOWER_IS_BETTER: dict[str, frozenset[str]] = {
    "film_mcq": frozenset({"chance", "p_value_vs_chance", "clustered_se"}),
    "raven": frozenset({"parse_failure_rate"}),
    "stakebench": frozenset({"odds_sign_test_p"}),
    "televal": frozenset({"caption_trap_rate"}),
    "ubench": frozenset({"hd95", "assd"}),
}
"""The scorers' metrics ranked lower-first at this revision (every other metric ranks higher-first)."""
RANK_BY = ("best", "latest")
ORDER = ("sort_value", "ci_missing", "sort_ci", "submitted_at", "submission_id")

benchmark = sa.table("benchmark", sa.column("id", sa.String), sa.column("scorer", sa.String))
submission = sa.table(
    "submission",
    sa.column("id", sa.String),
    sa.column("benchmark_id", sa.String),
    sa.column("model", sa.String),
    sa.column("api_key_id", sa.String),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("withdrawn_at", sa.DateTime(timezone=True)),
)
scoring = sa.table(
    "scoring", sa.column("id", sa.BigInteger), sa.column("submission_id", sa.String), sa.column("answer_key_version")
)
score = sa.table(
    "score",
    sa.column("scoring_id", sa.BigInteger),
    sa.column("split", sa.String),
    sa.column("metric", sa.String),
    sa.column("value", sa.Float),
    sa.column("ci_low", sa.Float),
)


def _create() -> sa.Table:
    return op.create_table(
        "leaderboard_entry",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("benchmark_id", sa.String(length=36), nullable=False),
        sa.Column("split", sa.String(length=16), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False),
        sa.Column("rank_by", sa.String(length=8), nullable=False),
        sa.Column("phase_id", sa.String(length=36), nullable=True),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("submission_id", sa.String(length=36), nullable=False),
        sa.Column("scoring_id", sa.BigInteger(), nullable=False),
        sa.Column("answer_key_version", sa.Integer(), nullable=False),
        sa.Column("api_key_id", sa.String(length=36), nullable=True),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sort_value", sa.Float(), nullable=False),
        sa.Column("ci_missing", sa.Boolean(), nullable=False),
        sa.Column("sort_ci", sa.Float(), nullable=False),
        sa.Column("team_id", sa.String(length=36), nullable=True),
        sa.Column("baseline", sa.Boolean(), nullable=True),
        sa.Column("hidden", sa.Boolean(), nullable=True),
        sa.Column("late", sa.Boolean(), nullable=True),
        sa.ForeignKeyConstraint(
            ["benchmark_id"],
            ["benchmark.id"],
            name=op.f("fk_leaderboard_entry_benchmark_id_benchmark"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submission.id"],
            name=op.f("fk_leaderboard_entry_submission_id_submission"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_leaderboard_entry")),
    )


def _rows(benchmark_id: str, scorer: str) -> list[dict[str, Any]]:
    """Every board row of one benchmark: per model its best (lowest sort key) or latest live submission, each
    with its effective scoring (the latest against the newest answer-key version it was scored against)."""
    newest = sa.func.row_number().over(
        partition_by=scoring.c.submission_id, order_by=(scoring.c.answer_key_version.desc(), scoring.c.id.desc())
    )
    live = (submission.c.benchmark_id == benchmark_id, submission.c.withdrawn_at.is_(None))
    ranked = (
        sa.select(scoring.c.id, scoring.c.submission_id, scoring.c.answer_key_version, newest.label("n"))
        .join(submission, submission.c.id == scoring.c.submission_id)
        .where(*live)
        .subquery()
    )
    stmt = (
        sa.select(
            submission.c.id,
            submission.c.model,
            submission.c.api_key_id,
            submission.c.created_at,
            ranked.c.id,
            ranked.c.answer_key_version,
            score.c.split,
            score.c.metric,
            score.c.value,
            score.c.ci_low,
        )
        .join(ranked, (ranked.c.submission_id == submission.c.id) & (ranked.c.n == 1))
        .join(score, score.c.scoring_id == ranked.c.id)
    )
    lower = LOWER_IS_BETTER.get(scorer, frozenset())
    chosen: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for sid, model, key_id, created, scoring_id, version, split, metric, value, ci_low in op.get_bind().execute(stmt):
        sign = 1.0 if metric in lower else -1.0
        row = {
            "benchmark_id": benchmark_id,
            "split": split,
            "metric": metric,
            "model": model,
            "submission_id": sid,
            "scoring_id": scoring_id,
            "answer_key_version": version,
            "api_key_id": key_id,
            "submitted_at": created,
            "sort_value": sign * value,
            "ci_missing": ci_low is None,
            "sort_ci": 0.0 if ci_low is None else sign * ci_low,
        }
        for rank_by in RANK_BY:
            slot = (split, metric, rank_by, model)
            held = chosen.get(slot)
            if held is None:
                chosen[slot] = {**row, "rank_by": rank_by}
                continue
            if rank_by == "latest":
                newer = (created, sid) > (held["submitted_at"], held["submission_id"])
            else:
                newer = tuple(row[c] for c in ORDER) < tuple(held[c] for c in ORDER)
            if newer:
                chosen[slot] = {**row, "rank_by": rank_by}
    return list(chosen.values())


def upgrade() -> None:
    op.create_index("ix_submission_benchmark_model", "submission", ["benchmark_id", "model"])
    table = _create()
    op.create_index(
        "uq_leaderboard_entry_model",
        "leaderboard_entry",
        ["benchmark_id", "model", "split", "metric", "rank_by", sa.text("coalesce(phase_id, '')")],
        unique=True,
    )
    op.create_index(
        "ix_leaderboard_entry_order",
        "leaderboard_entry",
        ["benchmark_id", "split", "metric", "rank_by", *ORDER, "phase_id"],
    )
    op.create_index(
        "ix_leaderboard_entry_key_order",
        "leaderboard_entry",
        ["benchmark_id", "api_key_id", "split", "metric", "rank_by", *ORDER, "phase_id"],
    )
    op.create_index("ix_leaderboard_entry_submission_id", "leaderboard_entry", ["submission_id"])
    conn = op.get_bind()
    for benchmark_id, scorer in conn.execute(sa.select(benchmark.c.id, benchmark.c.scorer)).all():
        rows = _rows(benchmark_id, scorer)
        if rows:
            conn.execute(table.insert(), rows)


def downgrade() -> None:
    op.drop_table("leaderboard_entry")
    op.drop_index("ix_submission_benchmark_model", table_name="submission")
