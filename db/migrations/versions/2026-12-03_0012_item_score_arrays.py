"""item score arrays: a scoring's per-item values as one array per (split, metric) aligned to the answer-key
version's item order (stored once per version), replacing the row per item; a submission's predictions compressed
with their SHA-256, out of the submission row

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03 22:00:00
"""

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa
import zstandard
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SPLITS = ("public", "private")
SCORINGS_PER_CHUNK = 100
SUBMISSIONS_PER_CHUNK = 200
FLOAT64, BITS, ZSTD_JSON = 1, 2, 1
"""The formats of db/item_arrays.py, written out here so that this migration keeps reading what it wrote."""


def _encode(values: np.ndarray) -> bytes:
    ones = values == 1.0
    if values.size and bool((ones | ((values == 0.0) & ~np.signbit(values))).all()):
        return bytes([BITS]) + np.packbits(ones, bitorder="little").tobytes()
    return bytes([FLOAT64]) + values.astype("<f8").tobytes()


def _decode(data: bytes, n: int) -> np.ndarray:
    if data[0] == BITS:
        return np.unpackbits(np.frombuffer(data, np.uint8, offset=1), count=n, bitorder="little").astype(np.float64)
    if data[0] == FLOAT64:
        return np.frombuffer(data, "<f8", offset=1).astype(np.float64)
    raise ValueError(f"unknown per-item values format {data[0]}")


def _chunks(bind: sa.Connection, sql: str, size: int, first: Any = 0) -> Iterator[list[Any]]:
    """The rows of ``sql`` (selecting its key first, ordered by it, with ``:last`` and ``:size`` placeholders) in
    keyset chunks of ``size`` from keys above ``first``: bounded memory whatever the table holds."""
    last = first
    while True:
        rows = bind.execute(sa.text(sql), {"last": last, "size": size}).all()
        if not rows:
            return
        yield rows
        last = rows[-1][0]


def _orders(bind: sa.Connection) -> dict[int, dict[str, list[str]]]:
    """Store every answer-key version's item order (ids per split in item_id order); returns version id ->
    {split: ids}, ids only for the versions read (one version's items parsed at a time)."""
    out: dict[int, dict[str, list[str]]] = {}
    sql = "SELECT id, items FROM answer_key_version WHERE id > :last ORDER BY id LIMIT :size"
    for rows in _chunks(bind, sql, 1):
        for version_id, items in rows:
            by_split: dict[str, list[str]] = {s: [] for s in SPLITS}
            for item in json.loads(items):
                by_split.setdefault(item.get("split", "public"), []).append(str(item["item_id"]))
            order = {s: sorted(ids) for s, ids in by_split.items() if ids}
            bind.execute(
                sa.text("INSERT INTO item_order (answer_key_version_id, split, n, item_ids) VALUES (:v, :s, :n, :i)"),
                [
                    {"v": version_id, "s": s, "n": len(ids), "i": json.dumps(ids, separators=(",", ":"))}
                    for s, ids in order.items()
                ],
            )
            out[version_id] = order
    return out


SCORINGS = (
    "SELECT sc.id, v.id FROM scoring sc JOIN submission su ON su.id = sc.submission_id "
    "LEFT JOIN answer_key_version v ON v.benchmark_id = su.benchmark_id AND v.version = sc.answer_key_version "
    "WHERE sc.id > :last ORDER BY sc.id LIMIT :size"
)


def _rows_to_arrays(bind: sa.Connection, orders: dict[int, dict[str, list[str]]]) -> None:
    positions: dict[tuple[int, str], dict[str, int]] = {}
    for scorings in _chunks(bind, SCORINGS, SCORINGS_PER_CHUNK):
        version_of = dict(scorings)
        rows = bind.execute(
            sa.text(
                "SELECT scoring_id, split, metric, item_id, value FROM item_score "
                "WHERE scoring_id >= :lo AND scoring_id <= :hi"
            ),
            {"lo": scorings[0][0], "hi": scorings[-1][0]},
        ).all()
        arrays: dict[tuple[int, str, str], np.ndarray] = {}
        for scoring_id, split, metric, item_id, value in rows:
            version_id = version_of[scoring_id]
            if version_id is None:
                raise RuntimeError(f"scoring {scoring_id} has per-item scores but its answer-key version is missing")
            where = positions.get((version_id, split))
            if where is None:
                if len(positions) > 64:
                    positions.clear()
                ids = orders[version_id].get(split, [])
                where = positions[(version_id, split)] = {item: n for n, item in enumerate(ids)}
            values = arrays.get((scoring_id, split, metric))
            if values is None:
                values = arrays[(scoring_id, split, metric)] = np.full(len(where), np.nan)
            if item_id not in where:
                raise RuntimeError(f"item_score row of scoring {scoring_id}: {item_id!r} is not in its answer key")
            values[where[item_id]] = value
        if arrays:
            bind.execute(
                sa.text("INSERT INTO item_score_array (scoring_id, split, metric, data) VALUES (:c, :s, :m, :d)"),
                [{"c": c, "s": s, "m": m, "d": _encode(v)} for (c, s, m), v in arrays.items()],
            )


def _predictions_out(bind: sa.Connection) -> None:
    compressor = zstandard.ZstdCompressor(level=3)
    sql = "SELECT id, predictions FROM submission WHERE id > :last ORDER BY id LIMIT :size"
    for rows in _chunks(bind, sql, SUBMISSIONS_PER_CHUNK, ""):
        bind.execute(
            sa.text("INSERT INTO submission_predictions (submission_id, sha256, data) VALUES (:i, :h, :d)"),
            [
                {
                    "i": sid,
                    "h": hashlib.sha256(text.encode()).hexdigest(),
                    "d": bytes([ZSTD_JSON]) + compressor.compress(text.encode()),
                }
                for sid, text in rows
            ],
        )


def upgrade() -> None:
    op.create_table(
        "item_order",
        sa.Column("answer_key_version_id", sa.BigInteger(), nullable=False),
        sa.Column("split", sa.String(length=16), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("item_ids", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["answer_key_version_id"],
            ["answer_key_version.id"],
            name=op.f("fk_item_order_answer_key_version_id_answer_key_version"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("answer_key_version_id", "split", name=op.f("pk_item_order")),
    )
    op.create_table(
        "item_score_array",
        sa.Column("scoring_id", sa.BigInteger(), nullable=False),
        sa.Column("split", sa.String(length=16), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["scoring_id"], ["scoring.id"], name=op.f("fk_item_score_array_scoring_id_scoring"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("scoring_id", "split", "metric", name=op.f("pk_item_score_array")),
    )
    op.create_table(
        "submission_predictions",
        sa.Column("submission_id", sa.String(length=36), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submission.id"],
            name=op.f("fk_submission_predictions_submission_id_submission"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("submission_id", name=op.f("pk_submission_predictions")),
    )
    bind = op.get_bind()
    _rows_to_arrays(bind, _orders(bind))
    _predictions_out(bind)
    op.drop_index("ix_item_score_scoring_metric", table_name="item_score")
    op.drop_index("ix_item_score_scoring_id", table_name="item_score")
    op.drop_table("item_score")
    op.drop_column("submission", "predictions")


ARRAYS = (
    "SELECT a.scoring_id, a.split, a.metric, a.data, o.n, o.item_ids FROM item_score_array a "
    "JOIN scoring sc ON sc.id = a.scoring_id JOIN submission su ON su.id = sc.submission_id "
    "JOIN answer_key_version v ON v.benchmark_id = su.benchmark_id AND v.version = sc.answer_key_version "
    "JOIN item_order o ON o.answer_key_version_id = v.id AND o.split = a.split "
    "WHERE a.scoring_id >= :lo AND a.scoring_id <= :hi"
)


def _arrays_to_rows(bind: sa.Connection) -> None:
    sql = "SELECT id FROM scoring WHERE id > :last ORDER BY id LIMIT :size"
    for scorings in _chunks(bind, sql, SCORINGS_PER_CHUNK):
        found = bind.execute(sa.text(ARRAYS), {"lo": scorings[0][0], "hi": scorings[-1][0]}).all()
        found.sort(key=lambda r: (r[0], SPLITS.index(r[1]) if r[1] in SPLITS else len(SPLITS), r[2]))
        rows = []
        for scoring_id, split, metric, data, n, item_ids in found:
            values = _decode(data, n)
            ids = json.loads(item_ids)
            rows.extend(
                {"c": scoring_id, "s": split, "i": ids[k], "m": metric, "v": float(values[k])}
                for k in np.flatnonzero(~np.isnan(values)).tolist()
            )
        if rows:
            bind.execute(
                sa.text(
                    "INSERT INTO item_score (scoring_id, split, item_id, metric, value) VALUES (:c, :s, :i, :m, :v)"
                ),
                rows,
            )


def _predictions_back(bind: sa.Connection) -> None:
    decompressor = zstandard.ZstdDecompressor()
    sql = (
        "SELECT submission_id, data FROM submission_predictions WHERE submission_id > :last "
        "ORDER BY submission_id LIMIT :size"
    )
    for rows in _chunks(bind, sql, SUBMISSIONS_PER_CHUNK, ""):
        bind.execute(
            sa.text("UPDATE submission SET predictions = :p WHERE id = :i"),
            [{"i": sid, "p": decompressor.decompress(data[1:]).decode()} for sid, data in rows],
        )


def downgrade() -> None:
    op.add_column("submission", sa.Column("predictions", sa.Text(), nullable=False, server_default=""))
    op.create_table(
        "item_score",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("scoring_id", sa.BigInteger(), nullable=False),
        sa.Column("split", sa.String(length=16), nullable=False),
        sa.Column("item_id", sa.String(length=128), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False, server_default=""),
        sa.ForeignKeyConstraint(
            ["scoring_id"], ["scoring.id"], name=op.f("fk_item_score_scoring_id_scoring"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_item_score")),
    )
    op.create_index("ix_item_score_scoring_id", "item_score", ["scoring_id"])
    op.create_index("ix_item_score_scoring_metric", "item_score", ["scoring_id", "metric"])
    bind = op.get_bind()
    _arrays_to_rows(bind)
    _predictions_back(bind)
    op.drop_table("submission_predictions")
    op.drop_table("item_score_array")
    op.drop_table("item_order")
