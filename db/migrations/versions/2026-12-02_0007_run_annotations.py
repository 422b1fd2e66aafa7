"""run annotations: the tags and note each key keeps on a run it obtained, apart from the immutable run

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 16:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_annotation",
        sa.Column("run_id", sa.String(length=36), sa.ForeignKey("run.id", ondelete="CASCADE"), nullable=False),
        sa.Column("api_key_id", sa.String(length=36), sa.ForeignKey("api_key.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "api_key_id"),
    )
    op.create_index("ix_run_annotation_api_key_id", "run_annotation", ["api_key_id"])


def downgrade() -> None:
    op.drop_index("ix_run_annotation_api_key_id", table_name="run_annotation")
    op.drop_table("run_annotation")
