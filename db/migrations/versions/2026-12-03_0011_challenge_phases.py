"""challenge phases: a benchmark's phases (times, splits shown, limits, visibility, late policy), the frozen snapshot
of a phase's leaderboards (one per phase, each board's rows apart), and a submission's phase and late flag

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 20:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "phase",
        sa.Column("seq", BIG_PK, autoincrement=True, nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("benchmark_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("splits", sa.JSON(), nullable=False),
        sa.Column("max_submissions_per_day", sa.Integer(), nullable=True),
        sa.Column("max_submissions_total", sa.Integer(), nullable=True),
        sa.Column("leaderboard_visibility", sa.String(length=16), nullable=False),
        sa.Column("late_submissions", sa.String(length=8), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=36), nullable=True),
        sa.ForeignKeyConstraint(
            ["benchmark_id"], ["benchmark.id"], name=op.f("fk_phase_benchmark_id_benchmark"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_phase")),
        sa.UniqueConstraint("id", name=op.f("uq_phase_id")),
    )
    op.create_index("ix_phase_benchmark_starts", "phase", ["benchmark_id", "starts_at"])
    op.create_index("ix_phase_ends_at", "phase", ["ends_at"])
    op.create_table(
        "phase_snapshot",
        sa.Column("phase_id", sa.String(length=36), nullable=False),
        sa.Column("frozen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answer_key_version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["phase_id"], ["phase.id"], name=op.f("fk_phase_snapshot_phase_id_phase"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("phase_id", name=op.f("pk_phase_snapshot")),
    )
    op.create_table(
        "phase_board",
        sa.Column("phase_id", sa.String(length=36), nullable=False),
        sa.Column("board", sa.String(length=100), nullable=False),
        sa.Column("rows", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["phase_id"],
            ["phase_snapshot.phase_id"],
            name=op.f("fk_phase_board_phase_id_phase_snapshot"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("phase_id", "board", name=op.f("pk_phase_board")),
    )
    # plain ADD COLUMN without a foreign key: SQLite adds it in place, no rebuild of submission
    op.add_column("submission", sa.Column("phase_id", sa.String(length=36), nullable=True))
    op.add_column("submission", sa.Column("late", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.create_index("ix_submission_phase_key_created", "submission", ["phase_id", "api_key_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_submission_phase_key_created", table_name="submission")
    with op.batch_alter_table("submission", schema=None) as batch_op:
        batch_op.drop_column("late")
        batch_op.drop_column("phase_id")
    op.drop_table("phase_board")
    op.drop_table("phase_snapshot")
    op.drop_index("ix_phase_ends_at", table_name="phase")
    op.drop_index("ix_phase_benchmark_starts", table_name="phase")
    op.drop_table("phase")
