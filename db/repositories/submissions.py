"""Submissions with their compressed predictions, their scorings (one per scoring event), metric scores and
per-item values (one array per split and metric, aligned to the answer-key version's item order)."""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import Connection, func, insert, select, update

from db.item_arrays import decode_predictions, decode_values, encode_predictions, encode_values
from db.models import (
    AnswerKeyVersion,
    ItemOrder,
    ItemScoreArray,
    Score,
    Scoring,
    Submission,
    SubmissionPredictions,
)


@dataclass(frozen=True)
class SubmissionRow:
    seq: int
    id: str
    benchmark_id: str
    model: str
    meta: str
    api_key_id: str | None
    created_at: datetime
    withdrawn_at: datetime | None
    public: bool = True
    baseline: bool = False
    phase_id: str | None = None
    late: bool = False


@dataclass(frozen=True)
class ScoreRow:
    split: str
    metric: str
    value: float
    ci_low: float | None
    ci_high: float | None
    n: int | None


@dataclass(frozen=True)
class SplitItems:
    """One split's per-item values of a scoring: the split's item ids of the answer-key version in item_id order,
    and per metric a float64 array aligned to them (NaN: the item has no value)."""

    split: str
    item_ids: list[str]
    values: dict[str, np.ndarray]


@dataclass(frozen=True)
class ScoringRow:
    id: int
    submission_id: str
    answer_key_version: int
    scorer_version: str
    details: str
    created_at: datetime


_S = [getattr(Submission, f) for f in SubmissionRow.__dataclass_fields__]
_SC = [getattr(Scoring, f) for f in ScoringRow.__dataclass_fields__]


def insert_submission(conn: Connection, row: SubmissionRow, predictions_json: str) -> None:
    """The submission row and its predictions (compressed, with the SHA-256 of the JSON text)."""
    values = {k: v for k, v in row.__dict__.items() if k != "seq"}
    conn.execute(Submission.__table__.insert().values(**values))
    conn.execute(
        SubmissionPredictions.__table__.insert().values(
            submission_id=row.id,
            sha256=hashlib.sha256(predictions_json.encode()).hexdigest(),
            data=encode_predictions(predictions_json),
        )
    )


def insert_scoring(
    conn: Connection,
    *,
    submission_id: str,
    answer_key_version: int,
    scorer_version: str,
    details: str,
    when: datetime,
    scores: Sequence[ScoreRow],
    items: Sequence[SplitItems],
) -> int:
    """One scoring with its metric rows and one per-item array per split and metric; the version's item order is
    stored with its first scoring that has per-item values."""
    scoring_id = conn.execute(
        Scoring.__table__.insert()
        .values(
            submission_id=submission_id,
            answer_key_version=answer_key_version,
            scorer_version=scorer_version,
            details=details,
            created_at=when,
        )
        .returning(Scoring.id)
    ).scalar_one()
    if scores:
        conn.execute(insert(Score), [{"scoring_id": scoring_id, **s.__dict__} for s in scores])
    arrays = [
        {"scoring_id": scoring_id, "split": part.split, "metric": metric, "data": encode_values(values)}
        for part in items
        for metric, values in part.values.items()
    ]
    if arrays:
        _store_order(conn, submission_id, answer_key_version, items)
        conn.execute(insert(ItemScoreArray), arrays)
    return scoring_id


def _version_id(conn: Connection, submission_id: str, version: int) -> int:
    stmt = select(AnswerKeyVersion.id).where(
        AnswerKeyVersion.benchmark_id
        == select(Submission.benchmark_id).where(Submission.id == submission_id).scalar_subquery(),
        AnswerKeyVersion.version == version,
    )
    return conn.execute(stmt).scalar_one()


def _store_order(conn: Connection, submission_id: str, version: int, items: Sequence[SplitItems]) -> None:
    """The item order of the splits in ``items`` for the submission's answer-key ``version``, unless stored."""
    version_id = _version_id(conn, submission_id, version)
    stored = set(conn.execute(select(ItemOrder.split).where(ItemOrder.answer_key_version_id == version_id)).scalars())
    missing = [
        {
            "answer_key_version_id": version_id,
            "split": part.split,
            "n": len(part.item_ids),
            "item_ids": json.dumps(part.item_ids, separators=(",", ":")),
        }
        for part in items
        if part.split not in stored and part.values
    ]
    if missing:
        conn.execute(insert(ItemOrder), missing)


def get(conn: Connection, submission_id: str) -> SubmissionRow | None:
    r = conn.execute(select(*_S).where(Submission.id == submission_id)).first()
    return SubmissionRow(*r) if r else None


def predictions(conn: Connection, submission_id: str) -> str:
    """The stored predictions' JSON text."""
    data = conn.execute(
        select(SubmissionPredictions.data).where(SubmissionPredictions.submission_id == submission_id)
    ).scalar_one()
    return decode_predictions(data)


def list_for_benchmark(
    conn: Connection, benchmark_id: str, *, api_key_id: str | None, all_keys: bool, limit: int, before_seq: int | None
) -> list[SubmissionRow]:
    stmt = select(*_S).where(Submission.benchmark_id == benchmark_id).order_by(Submission.seq.desc()).limit(limit)
    if not all_keys:
        stmt = stmt.where(Submission.api_key_id == api_key_id)
    if before_seq is not None:
        stmt = stmt.where(Submission.seq < before_seq)
    return [SubmissionRow(*r) for r in conn.execute(stmt)]


def all_for_benchmark(conn: Connection, benchmark_id: str) -> list[SubmissionRow]:
    stmt = select(*_S).where(Submission.benchmark_id == benchmark_id).order_by(Submission.seq)
    return [SubmissionRow(*r) for r in conn.execute(stmt)]


def count_since(conn: Connection, benchmark_id: str, api_key_id: str | None, since: datetime) -> int:
    """Successful submissions of a key to a benchmark since ``since`` (failed scorings are never stored)."""
    stmt = select(func.count()).where(
        Submission.benchmark_id == benchmark_id, Submission.api_key_id == api_key_id, Submission.created_at >= since
    )
    return int(conn.execute(stmt).scalar_one())


def withdraw(conn: Connection, submission_id: str, when: datetime) -> None:
    conn.execute(
        update(Submission)
        .where(Submission.id == submission_id, Submission.withdrawn_at.is_(None))
        .values(withdrawn_at=when)
    )


def set_flags(conn: Connection, submission_id: str, **flags: bool) -> None:
    """Set a submission's ``public`` and/or ``baseline`` flag."""
    conn.execute(update(Submission).where(Submission.id == submission_id).values(**flags))


def latest_scoring(conn: Connection, submission_id: str, version: int) -> ScoringRow | None:
    stmt = (
        select(*_SC)
        .where(Scoring.submission_id == submission_id, Scoring.answer_key_version == version)
        .order_by(Scoring.id.desc())
        .limit(1)
    )
    r = conn.execute(stmt).first()
    return ScoringRow(*r) if r else None


def scores(conn: Connection, scoring_id: int, splits: Sequence[str]) -> list[ScoreRow]:
    stmt = select(Score.split, Score.metric, Score.value, Score.ci_low, Score.ci_high, Score.n).where(
        Score.scoring_id == scoring_id, Score.split.in_(splits)
    )
    return [ScoreRow(*r) for r in conn.execute(stmt)]


def item_values(
    conn: Connection, scoring_id: int, splits: Sequence[str], metric: str, *, with_ids: bool = True
) -> list[SplitItems]:
    """One metric's per-item values of a scoring, one ``SplitItems`` per split of ``splits`` (in that order) that
    has them; ``with_ids=False`` leaves ``item_ids`` empty (the arrays of two scorings against one version align
    without them)."""
    ids_col = ItemOrder.item_ids if with_ids else ItemOrder.n
    stmt = (
        select(ItemScoreArray.split, ItemScoreArray.data, ItemOrder.n, ids_col)
        .join(Scoring, Scoring.id == ItemScoreArray.scoring_id)
        .join(Submission, Submission.id == Scoring.submission_id)
        .join(
            AnswerKeyVersion,
            (AnswerKeyVersion.benchmark_id == Submission.benchmark_id)
            & (AnswerKeyVersion.version == Scoring.answer_key_version),
        )
        .join(
            ItemOrder,
            (ItemOrder.answer_key_version_id == AnswerKeyVersion.id) & (ItemOrder.split == ItemScoreArray.split),
        )
        .where(
            ItemScoreArray.scoring_id == scoring_id, ItemScoreArray.metric == metric, ItemScoreArray.split.in_(splits)
        )
    )
    found = {split: (data, n, ids) for split, data, n, ids in conn.execute(stmt)}
    return [
        SplitItems(split, json.loads(ids) if with_ids else [], {metric: decode_values(data, n)})
        for split in splits
        if split in found
        for data, n, ids in [found[split]]
    ]


def latest_scores(conn: Connection, benchmark_id: str, version: int, split: str) -> list[dict[str, Any]]:
    """For every non-withdrawn submission: its latest scoring against ``version``, or, while it has none yet (the
    re-scoring after a new answer-key version is still running), its latest scoring against the newest earlier
    version; with that scoring's version and scores."""
    live = (Submission.benchmark_id == benchmark_id, Submission.withdrawn_at.is_(None))
    newest = (
        select(Scoring.submission_id, func.max(Scoring.answer_key_version).label("version"))
        .join(Submission, Submission.id == Scoring.submission_id)
        .where(*live, Scoring.answer_key_version <= version)
        .group_by(Scoring.submission_id)
        .subquery()
    )
    latest = (
        select(Scoring.submission_id, Scoring.answer_key_version, func.max(Scoring.id).label("scoring_id"))
        .join(
            newest,
            (newest.c.submission_id == Scoring.submission_id) & (newest.c.version == Scoring.answer_key_version),
        )
        .group_by(Scoring.submission_id, Scoring.answer_key_version)
        .subquery()
    )
    stmt = (
        select(
            Submission.id,
            Submission.model,
            Submission.created_at,
            latest.c.answer_key_version,
            Score.metric,
            Score.value,
            Score.ci_low,
            Score.ci_high,
            Score.n,
        )
        .join(latest, latest.c.submission_id == Submission.id)
        .join(Score, (Score.scoring_id == latest.c.scoring_id) & (Score.split == split))
    )
    out: dict[str, dict[str, Any]] = {}
    for sid, model, created, scored_version, metric, value, lo, hi, n in conn.execute(stmt):
        row = out.setdefault(
            sid,
            {
                "submission_id": sid,
                "model": model,
                "submitted_at": created,
                "answer_key_version": scored_version,
                "scores": {},
            },
        )
        row["scores"][metric] = {"value": value, "ci_low": lo, "ci_high": hi, "n": n}
    return list(out.values())
