"""run params searchable on PostgreSQL: a GIN index on the params as jsonb serves equality filters (containment)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 16:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE INDEX ix_run_params_jsonb ON run USING gin ((CAST(params AS jsonb)) jsonb_path_ops)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX ix_run_params_jsonb")
