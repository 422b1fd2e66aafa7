"""jobs and arrays

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 04:49:08.814959
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "array_blob",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("dtype", sa.String(length=8), nullable=False),
        sa.Column("shape", sa.JSON(), nullable=False),
        sa.Column("nbytes", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("api_key_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_key.id"], name=op.f("fk_array_blob_api_key_id_api_key"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("sha256", name=op.f("pk_array_blob")),
    )
    op.create_table(
        "job",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("version", sa.String(length=32), nullable=False),
        sa.Column("params", sa.Text(), nullable=False),
        sa.Column("params_sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("progress_fraction", sa.Float(), nullable=False),
        sa.Column("progress_message", sa.String(length=500), nullable=False),
        sa.Column("timeout_s", sa.Float(), nullable=False),
        sa.Column("problem", sa.Text(), nullable=True),
        sa.Column("run_id", sa.String(length=36), nullable=True),
        sa.Column("api_key_id", sa.String(length=36), nullable=True),
        sa.Column("client", sa.String(length=64), nullable=True),
        sa.Column("worker", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("enqueued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_key.id"], name=op.f("fk_job_api_key_id_api_key"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_job_run_id_run"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_job")),
        sa.UniqueConstraint("id", name=op.f("uq_job_id")),
    )
    with op.batch_alter_table("job", schema=None) as batch_op:
        batch_op.create_index("ix_job_api_key_status", ["api_key_id", "status"], unique=False)
        batch_op.create_index("ix_job_client_status", ["client", "status"], unique=False)
        batch_op.create_index("ix_job_status_heartbeat", ["status", "heartbeat_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("job", schema=None) as batch_op:
        batch_op.drop_index("ix_job_status_heartbeat")
        batch_op.drop_index("ix_job_client_status")
        batch_op.drop_index("ix_job_api_key_status")

    op.drop_table("job")
    op.drop_table("array_blob")
