"""challenge access: co-owners, participants with keys bound to one benchmark, the per-benchmark audit log, a
submission's public and baseline flags, and a partial index of the boards' baseline rows

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 18:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
ORDER = ("sort_value", "ci_missing", "sort_ci", "submitted_at", "submission_id")


def upgrade() -> None:
    # plain ADD COLUMN without a foreign key: SQLite adds it in place, no rebuild of api_key
    op.add_column("api_key", sa.Column("benchmark_id", sa.String(length=36), nullable=True))
    op.add_column("submission", sa.Column("public", sa.Boolean(), server_default=sa.true(), nullable=False))
    op.add_column("submission", sa.Column("baseline", sa.Boolean(), server_default=sa.false(), nullable=False))
    is_baseline = sa.column("baseline", sa.Boolean).is_(True)
    op.create_index(
        "ix_leaderboard_entry_baseline",
        "leaderboard_entry",
        ["benchmark_id", "split", "metric", "rank_by", *ORDER],
        sqlite_where=is_baseline,
        postgresql_where=is_baseline,
    )
    op.create_table(
        "benchmark_owner",
        sa.Column("benchmark_id", sa.String(length=36), nullable=False),
        sa.Column("api_key_id", sa.String(length=36), nullable=False),
        sa.Column("added_by", sa.String(length=36), nullable=True),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["benchmark_id"],
            ["benchmark.id"],
            name=op.f("fk_benchmark_owner_benchmark_id_benchmark"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_key.id"], name=op.f("fk_benchmark_owner_api_key_id_api_key"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("benchmark_id", "api_key_id", name=op.f("pk_benchmark_owner")),
    )
    op.create_index("ix_benchmark_owner_api_key_id", "benchmark_owner", ["api_key_id"])
    op.create_table(
        "participant",
        sa.Column("seq", BIG_PK, autoincrement=True, nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("benchmark_id", sa.String(length=36), nullable=False),
        sa.Column("api_key_id", sa.String(length=36), nullable=False),
        sa.Column("display_name", sa.String(length=128), nullable=False),
        sa.Column("team", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=36), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["benchmark_id"], ["benchmark.id"], name=op.f("fk_participant_benchmark_id_benchmark"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_key.id"], name=op.f("fk_participant_api_key_id_api_key"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_participant")),
        sa.UniqueConstraint("id", name=op.f("uq_participant_id")),
        sa.UniqueConstraint("api_key_id", name=op.f("uq_participant_api_key_id")),
    )
    op.create_index("ix_participant_benchmark_seq", "participant", ["benchmark_id", "seq"])
    op.create_table(
        "audit_entry",
        sa.Column("seq", BIG_PK, autoincrement=True, nullable=False),
        sa.Column("benchmark_id", sa.String(length=36), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("actor_key_id", sa.String(length=36), nullable=True),
        sa.Column("subject", sa.String(length=64), nullable=True),
        sa.Column("details", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["benchmark_id"], ["benchmark.id"], name=op.f("fk_audit_entry_benchmark_id_benchmark"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_audit_entry")),
    )
    op.create_index("ix_audit_entry_benchmark_seq", "audit_entry", ["benchmark_id", "seq"])


def downgrade() -> None:
    op.drop_index("ix_audit_entry_benchmark_seq", table_name="audit_entry")
    op.drop_table("audit_entry")
    op.drop_index("ix_participant_benchmark_seq", table_name="participant")
    op.drop_table("participant")
    op.drop_index("ix_benchmark_owner_api_key_id", table_name="benchmark_owner")
    op.drop_table("benchmark_owner")
    op.drop_index("ix_leaderboard_entry_baseline", table_name="leaderboard_entry")
    with op.batch_alter_table("submission", schema=None) as batch_op:
        batch_op.drop_column("baseline")
        batch_op.drop_column("public")
    with op.batch_alter_table("api_key", schema=None) as batch_op:
        batch_op.drop_column("benchmark_id")
