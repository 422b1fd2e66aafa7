"""per-metric item scores, answer-key content reuse, run artifacts, reproduction reports

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 07:45:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PRIMARY_METRICS = {"vimu": "all_avg", "televal": "overall", "stakebench": "directed_accuracy", "film_mcq": "accuracy"}
"""The primary metric of each scorer that existed before this revision: the metric of its stored item scores."""


def upgrade() -> None:
    with op.batch_alter_table("item_score", schema=None) as batch_op:
        batch_op.add_column(sa.Column("metric", sa.String(length=64), nullable=False, server_default=""))
        batch_op.create_index("ix_item_score_scoring_metric", ["scoring_id", "metric"], unique=False)
    bind = op.get_bind()
    for name, metric in PRIMARY_METRICS.items():
        bind.execute(
            sa.text(
                "UPDATE item_score SET metric = :metric WHERE scoring_id IN ("
                "SELECT scoring.id FROM scoring JOIN submission ON submission.id = scoring.submission_id "
                "JOIN benchmark ON benchmark.id = submission.benchmark_id WHERE benchmark.scorer = :scorer)"
            ),
            {"metric": metric, "scorer": name},
        )
    with op.batch_alter_table("item_score", schema=None) as batch_op:
        batch_op.alter_column("metric", existing_type=sa.String(length=64), server_default=None)

    with op.batch_alter_table("answer_key_version", schema=None) as batch_op:
        batch_op.drop_constraint("uq_answer_key_version_benchmark_sha256", type_="unique")
        batch_op.create_index("ix_answer_key_version_benchmark_sha256", ["benchmark_id", "sha256"], unique=False)

    op.create_table(
        "run_artifact",
        sa.Column("run_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("media_type", sa.String(length=64), nullable=False),
        sa.Column("nbytes", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_run_artifact_run_id_run"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "name", name=op.f("pk_run_artifact")),
    )
    op.create_table(
        "reproduction_report",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("paper", sa.String(length=64), nullable=False),
        sa.Column("verdict", sa.String(length=32), nullable=False),
        sa.Column("claim", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("figures", sa.Text(), nullable=False),
        sa.Column("run_ids", sa.Text(), nullable=False),
        sa.Column("code_version", sa.String(length=64), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("job_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_reproduction_report")),
        sa.UniqueConstraint("id", name=op.f("uq_reproduction_report_id")),
    )
    with op.batch_alter_table("reproduction_report", schema=None) as batch_op:
        batch_op.create_index("ix_reproduction_report_paper_seq", ["paper", "seq"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("reproduction_report", schema=None) as batch_op:
        batch_op.drop_index("ix_reproduction_report_paper_seq")
    op.drop_table("reproduction_report")
    op.drop_table("run_artifact")
    with op.batch_alter_table("answer_key_version", schema=None) as batch_op:
        batch_op.drop_index("ix_answer_key_version_benchmark_sha256")
        batch_op.create_unique_constraint("uq_answer_key_version_benchmark_sha256", ["benchmark_id", "sha256"])
    with op.batch_alter_table("item_score", schema=None) as batch_op:
        batch_op.drop_index("ix_item_score_scoring_metric")
        batch_op.drop_column("metric")
