"""Submissions, their scorings (one per scoring event), metric scores and per-item scores."""

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, insert, select, update

from db.models import ItemScore, Score, Scoring, Submission


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


@dataclass(frozen=True)
class ScoreRow:
    split: str
    metric: str
    value: float
    ci_low: float | None
    ci_high: float | None
    n: int | None


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
    values = {k: v for k, v in row.__dict__.items() if k != "seq"}
    conn.execute(Submission.__table__.insert().values(predictions=predictions_json, **values))


def insert_scoring(
    conn: Connection,
    *,
    submission_id: str,
    answer_key_version: int,
    scorer_version: str,
    details: str,
    when: datetime,
    scores: Sequence[ScoreRow],
    item_scores: Iterable[tuple[str, str, str, float]],
) -> int:
    """One scoring with its metric rows and per-item rows (``(split, item_id, metric, value)``), bulk-inserted."""
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
    insert_item_scores(conn, scoring_id, item_scores)
    return scoring_id


def insert_item_scores(conn: Connection, scoring_id: int, rows: Iterable[tuple[str, str, str, float]]) -> None:
    """Bulk insert of ``(split, item_id, metric, value)`` rows inside the caller's transaction: driver-level
    executemany of plain tuples in chunks (the per-row dict and bind processing of Core costs half the rate
    here)."""
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    marks = ", ".join([mark] * 5)
    sql = f"INSERT INTO item_score (scoring_id, split, item_id, metric, value) VALUES ({marks})"
    it = iter(rows)
    while chunk := [(scoring_id, s, i, m, float(v)) for s, i, m, v in itertools.islice(it, 50_000)]:
        conn.exec_driver_sql(sql, chunk)


def get(conn: Connection, submission_id: str) -> SubmissionRow | None:
    r = conn.execute(select(*_S).where(Submission.id == submission_id)).first()
    return SubmissionRow(*r) if r else None


def predictions(conn: Connection, submission_id: str) -> str:
    return conn.execute(select(Submission.predictions).where(Submission.id == submission_id)).scalar_one()


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


def item_scores(conn: Connection, scoring_id: int, splits: Sequence[str], metric: str) -> list[tuple[str, str, float]]:
    """``(split, item_id, value)`` of one metric's per-item scores of a scoring, in insertion order."""
    stmt = (
        select(ItemScore.split, ItemScore.item_id, ItemScore.value)
        .where(ItemScore.scoring_id == scoring_id, ItemScore.metric == metric, ItemScore.split.in_(splits))
        .order_by(ItemScore.id)
    )
    return [(r[0], r[1], r[2]) for r in conn.execute(stmt)]


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
