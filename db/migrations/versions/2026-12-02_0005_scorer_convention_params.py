"""stored benchmarks keep today's scorer conventions: the new convention params written into scorer_params

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 14:00:00
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TODAY: dict[str, dict[str, object]] = {
    "ubench": {"surface_convention": "medpy", "empty_cases": "exclude"},
    "scene3d_grounding": {"iou_eps": "reference"},
    "scene3d_qa": {"normalize": "scanqa_clean"},
}
"""Per scorer, the value of each convention param that reproduces the results before this revision (written where a
stored benchmark's ``scorer_params`` lack it, so rescoring an existing leaderboard does not change it)."""
ADDED: dict[str, tuple[str, ...]] = {
    "ubench": ("surface_convention", "empty_cases", "nsd_tolerance"),
    "scene3d_grounding": ("iou_eps",),
}
"""Params fields this revision adds to the params models: the downgrade removes them (the older models refuse
unknown fields). Params that existed before (scene3d_qa ``normalize``) are left as they are."""


def _stored(scorer: str) -> list[tuple[str, dict[str, object]]]:
    """(id, parsed scorer_params) of every benchmark of ``scorer``."""
    rows = op.get_bind().execute(
        sa.text("SELECT id, scorer_params FROM benchmark WHERE scorer = :scorer"), {"scorer": scorer}
    )
    return [(bench_id, json.loads(text)) for bench_id, text in rows]


def _store(bench_id: str, params: dict[str, object]) -> None:
    """Write ``params`` as canonical JSON (sorted keys, no blanks: as benchmarks are created)."""
    op.get_bind().execute(
        sa.text("UPDATE benchmark SET scorer_params = :params WHERE id = :id"),
        {"params": json.dumps(params, sort_keys=True, separators=(",", ":")), "id": bench_id},
    )


def upgrade() -> None:
    for scorer, today in TODAY.items():
        for bench_id, stored in _stored(scorer):
            if not today.keys() <= stored.keys():
                _store(bench_id, {**today, **stored})


def downgrade() -> None:
    for scorer, fields in ADDED.items():
        for bench_id, stored in _stored(scorer):
            if not stored.keys().isdisjoint(fields):
                _store(bench_id, {k: v for k, v in stored.items() if k not in fields})
