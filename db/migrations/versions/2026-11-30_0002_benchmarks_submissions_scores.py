"""benchmarks submissions scores

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 04:46:40.809953
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "idempotency_record",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=128), nullable=False),
        sa.Column("idem_key", sa.String(length=255), nullable=False),
        sa.Column("request_sha256", sa.String(length=64), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("response", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_idempotency_record")),
        sa.UniqueConstraint("scope", "idem_key", name="uq_idempotency_record_scope_key"),
    )
    op.create_table(
        "benchmark",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("scorer", sa.String(length=64), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("scorer_params", sa.Text(), nullable=False),
        sa.Column("max_submissions_per_day", sa.Integer(), nullable=False),
        sa.Column("owner_key_id", sa.String(length=36), nullable=True),
        sa.Column("current_version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_key_id"], ["api_key.id"], name=op.f("fk_benchmark_owner_key_id_api_key"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_benchmark")),
        sa.UniqueConstraint("name", name=op.f("uq_benchmark_name")),
    )
    op.create_table(
        "answer_key_version",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("benchmark_id", sa.String(length=36), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("items", sa.Text(), nullable=False),
        sa.Column("n_public", sa.Integer(), nullable=False),
        sa.Column("n_private", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["benchmark_id"],
            ["benchmark.id"],
            name=op.f("fk_answer_key_version_benchmark_id_benchmark"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_answer_key_version")),
        sa.UniqueConstraint("benchmark_id", "sha256", name="uq_answer_key_version_benchmark_sha256"),
        sa.UniqueConstraint("benchmark_id", "version", name="uq_answer_key_version_benchmark_version"),
    )
    op.create_table(
        "submission",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("benchmark_id", sa.String(length=36), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("meta", sa.Text(), nullable=False),
        sa.Column("predictions", sa.Text(), nullable=False),
        sa.Column("api_key_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("withdrawn_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_key.id"], name=op.f("fk_submission_api_key_id_api_key"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["benchmark_id"], ["benchmark.id"], name=op.f("fk_submission_benchmark_id_benchmark"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_submission")),
        sa.UniqueConstraint("id", name=op.f("uq_submission_id")),
    )
    with op.batch_alter_table("submission", schema=None) as batch_op:
        batch_op.create_index(
            "ix_submission_benchmark_key_created", ["benchmark_id", "api_key_id", "created_at"], unique=False
        )

    op.create_table(
        "scoring",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("submission_id", sa.String(length=36), nullable=False),
        sa.Column("answer_key_version", sa.Integer(), nullable=False),
        sa.Column("scorer_version", sa.String(length=32), nullable=False),
        sa.Column("details", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"], ["submission.id"], name=op.f("fk_scoring_submission_id_submission"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scoring")),
    )
    with op.batch_alter_table("scoring", schema=None) as batch_op:
        batch_op.create_index("ix_scoring_submission_version", ["submission_id", "answer_key_version"], unique=False)

    op.create_table(
        "item_score",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("scoring_id", sa.BigInteger(), nullable=False),
        sa.Column("split", sa.String(length=16), nullable=False),
        sa.Column("item_id", sa.String(length=128), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["scoring_id"], ["scoring.id"], name=op.f("fk_item_score_scoring_id_scoring"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_item_score")),
    )
    with op.batch_alter_table("item_score", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_item_score_scoring_id"), ["scoring_id"], unique=False)

    op.create_table(
        "score",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("scoring_id", sa.BigInteger(), nullable=False),
        sa.Column("split", sa.String(length=16), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("n", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["scoring_id"], ["scoring.id"], name=op.f("fk_score_scoring_id_scoring"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_score")),
        sa.UniqueConstraint("scoring_id", "split", "metric", name="uq_score_scoring_split_metric"),
    )


def downgrade() -> None:
    op.drop_table("score")
    with op.batch_alter_table("item_score", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_item_score_scoring_id"))

    op.drop_table("item_score")
    with op.batch_alter_table("scoring", schema=None) as batch_op:
        batch_op.drop_index("ix_scoring_submission_version")

    op.drop_table("scoring")
    with op.batch_alter_table("submission", schema=None) as batch_op:
        batch_op.drop_index("ix_submission_benchmark_key_created")

    op.drop_table("submission")
    op.drop_table("answer_key_version")
    op.drop_table("benchmark")
    op.drop_table("idempotency_record")
