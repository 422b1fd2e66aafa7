"""runs owned per key: the cache key is unique per (key, owner), and grants of keyed array uploads

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 15:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OWNED_CACHE_KEY = ("kind", "name", "version", "params_sha256", sa.text("coalesce(api_key_id, '')"))
"""A run with a given cache key is stored once per owner: once anonymously, and once for each key that asked for
it (a keyed run is never handed to another caller, who gets a run of its own with the result reused)."""


def upgrade() -> None:
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.drop_constraint("uq_run_cache_key", type_="unique")
    op.create_index("uq_run_cache_key_owner", "run", list(OWNED_CACHE_KEY), unique=True)
    op.create_table(
        "array_grant",
        sa.Column("sha256", sa.String(length=64), sa.ForeignKey("array_blob.sha256", ondelete="CASCADE")),
        sa.Column("api_key_id", sa.String(length=36), sa.ForeignKey("api_key.id", ondelete="CASCADE")),
        sa.PrimaryKeyConstraint("sha256", "api_key_id"),
    )
    op.execute(
        "INSERT INTO array_grant (sha256, api_key_id) SELECT sha256, api_key_id FROM array_blob "
        "WHERE api_key_id IS NOT NULL"
    )


def downgrade() -> None:
    op.drop_table("array_grant")
    op.execute(
        "DELETE FROM run WHERE api_key_id IS NOT NULL AND EXISTS (SELECT 1 FROM run AS other WHERE "
        "other.kind = run.kind AND other.name = run.name AND other.version = run.version AND "
        "other.params_sha256 = run.params_sha256 AND other.seq < run.seq)"
    )
    op.drop_index("uq_run_cache_key_owner", table_name="run")
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.create_unique_constraint("uq_run_cache_key", ["kind", "name", "version", "params_sha256"])
