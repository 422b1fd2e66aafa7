"""Maintained leaderboards: one row per model and board (benchmark, split, metric, rank_by) with the sort key of
the board's order, read a page at a time through ``ix_leaderboard_entry_order``; and the submissions' effective
scorings the rows are chosen from."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    delete,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    tuple_,
    update,
)

from db.models import LeaderboardEntry, Phase, PhaseSnapshot, Score, Scoring, Submission

E = LeaderboardEntry
SortKey = tuple[float, bool, float, datetime, str]
"""(sort_value, ci_missing, sort_ci, submitted_at, submission_id): ascending is best first."""
_ORDER = (E.sort_value, E.ci_missing, E.sort_ci, E.submitted_at, E.submission_id)


@dataclass(frozen=True)
class Board:
    benchmark_id: str
    split: str
    metric: str
    rank_by: str

    def where(self) -> tuple[ColumnElement[bool], ...]:
        return (
            E.benchmark_id == self.benchmark_id,
            E.split == self.split,
            E.metric == self.metric,
            E.rank_by == self.rank_by,
            E.phase_id.is_(None),
        )


@dataclass(frozen=True)
class EntryRow:
    """A model's row on the board ``(split, metric, rank_by)`` of its benchmark."""

    split: str
    metric: str
    rank_by: str
    model: str
    submission_id: str
    scoring_id: int
    answer_key_version: int
    api_key_id: str | None
    submitted_at: datetime
    sort_value: float
    ci_missing: bool
    sort_ci: float
    baseline: bool | None = None
    """True on a baseline's row (listed in order, never ranked), else null."""

    def key(self) -> SortKey:
        return (self.sort_value, self.ci_missing, self.sort_ci, self.submitted_at, self.submission_id)


_FIELDS = [getattr(E, f) for f in EntryRow.__dataclass_fields__]


@dataclass(frozen=True)
class LiveScore:
    """One metric value of a live (not withdrawn) submission's effective scoring: its latest scoring against the
    newest answer-key version it was scored against."""

    submission_id: str
    model: str
    api_key_id: str | None
    submitted_at: datetime
    scoring_id: int
    answer_key_version: int
    split: str
    metric: str
    value: float
    ci_low: float | None
    baseline: bool = False


def hidden_phases(benchmark_id: str) -> Any:
    """The benchmark's phases whose submissions stay off its boards: ``hidden_until_end`` and not yet frozen."""
    frozen = exists().where(PhaseSnapshot.phase_id == Phase.id)
    return select(Phase.id).where(
        Phase.benchmark_id == benchmark_id, Phase.leaderboard_visibility == "hidden_until_end", ~frozen
    )


def in_hidden_phase(conn: Connection, benchmark_id: str, phase_id: str | None) -> bool:
    """Whether a submission of phase ``phase_id`` stays off the benchmark's boards (see ``hidden_phases``)."""
    if phase_id is None:
        return False
    stmt = hidden_phases(benchmark_id).where(Phase.id == phase_id)
    return conn.execute(stmt).first() is not None


def effective_scores(where: Iterable[ColumnElement[bool]]) -> Select[Any]:
    """The statement reading the effective scorings' metric values of the submissions (and scorings) that satisfy
    ``where``, as rows of ``LiveScore``'s fields in order: per submission, of the scorings ``where`` admits, the one
    first by answer-key version then id, both descending (``row_number() = 1`` over the submission's scorings).
    Callers add columns of ``Score`` and conditions on it to the statement."""
    newest = func.row_number().over(
        partition_by=Scoring.submission_id, order_by=(Scoring.answer_key_version.desc(), Scoring.id.desc())
    )
    ranked = (
        select(Scoring.id, Scoring.submission_id, Scoring.answer_key_version, newest.label("n"))
        .join(Submission, Submission.id == Scoring.submission_id)
        .where(*where)
        .subquery()
    )
    return (
        select(
            Submission.id,
            Submission.model,
            Submission.api_key_id,
            Submission.created_at,
            ranked.c.id,
            ranked.c.answer_key_version,
            Score.split,
            Score.metric,
            Score.value,
            Score.ci_low,
            Submission.baseline,
        )
        .join(ranked, (ranked.c.submission_id == Submission.id) & (ranked.c.n == 1))
        .join(Score, Score.scoring_id == ranked.c.id)
    )


def live_scores(
    conn: Connection,
    benchmark_id: str,
    *,
    model: str | None = None,
    submission_id: str | None = None,
) -> list[LiveScore]:
    """The effective scorings' metric values of a benchmark's live submissions (not withdrawn, not taken off the
    board by their maker with ``public: false``, not made late after a phase, not in a hidden phase before its
    board is frozen; of one ``model``, or one submission, when given)."""
    live = [
        Submission.benchmark_id == benchmark_id,
        Submission.withdrawn_at.is_(None),
        Submission.public.is_(True),
        Submission.late.is_(False),
        or_(Submission.phase_id.is_(None), Submission.phase_id.not_in(hidden_phases(benchmark_id))),
    ]
    if model is not None:
        live.append(Submission.model == model)
    if submission_id is not None:
        live.append(Submission.id == submission_id)
    return [LiveScore(*r) for r in conn.execute(effective_scores(live))]


def model_rows(conn: Connection, benchmark_id: str, model: str) -> list[tuple[int, EntryRow]]:
    """(id, row) of every board row of ``model`` in the benchmark."""
    stmt = select(E.id, *_FIELDS).where(E.benchmark_id == benchmark_id, E.model == model, E.phase_id.is_(None))
    return [(r[0], EntryRow(*r[1:])) for r in conn.execute(stmt)]


def insert_rows(conn: Connection, benchmark_id: str, rows: Iterable[EntryRow]) -> None:
    values = [{"benchmark_id": benchmark_id, **r.__dict__} for r in rows]
    if values:
        conn.execute(insert(E), values)


def replace_row(conn: Connection, row_id: int, row: EntryRow) -> None:
    conn.execute(update(E).where(E.id == row_id).values(**row.__dict__))


def delete_rows(conn: Connection, row_ids: Sequence[int]) -> None:
    if row_ids:
        conn.execute(delete(E).where(E.id.in_(row_ids)))


def delete_benchmark(conn: Connection, benchmark_id: str) -> None:
    conn.execute(delete(E).where(E.benchmark_id == benchmark_id))


@dataclass(frozen=True)
class RankedRow:
    """A board row with its rank (None for a baseline) and every metric score of its scoring in the board's split."""

    rank: int | None
    row: EntryRow
    scores: dict[str, dict[str, Any]]


def _ranked_ahead(board: Board, ahead: ColumnElement[bool], outer: Any) -> Any:
    """The number of ranked rows (baselines left out) of ``board`` that satisfy ``ahead`` (correlated to ``outer``,
    or to nothing when None): the rows counted on the order index minus the baselines on their partial index."""
    rows = select(func.count()).where(*board.where(), ahead).correlate(outer).scalar_subquery()
    baselines = select(func.count()).where(*board.where(), E.baseline.is_(True), ahead).correlate(outer)
    return rows - baselines.scalar_subquery()


def _with_scores(conn: Connection, board: Board, page: Any, ordered: Sequence[Any]) -> list[RankedRow]:
    """Run ``page`` (a subquery of board rows with a ``before`` column: ranked rows ahead of its first row) joined
    with the rows' scores in the board's split, in one statement (one snapshot); rows in board order with their
    ranks (a baseline takes none)."""
    stmt = (
        select(page, Score.metric.label("score_metric"), Score.value, Score.ci_low, Score.ci_high, Score.n)
        .outerjoin(Score, (Score.scoring_id == page.c.scoring_id) & (Score.split == board.split))
        .order_by(*ordered)
    )
    out: list[RankedRow] = []
    ranked = 0
    width = len(_FIELDS)
    for r in conn.execute(stmt):
        row = EntryRow(*r[:width])
        if not out or out[-1].row.submission_id != row.submission_id:
            out.append(RankedRow(None if row.baseline else r[width] + ranked + 1, row, {}))
            ranked += 0 if row.baseline else 1
        if r[width + 1] is not None:
            value, ci_low, ci_high, n = r[width + 2 :]
            out[-1].scores[r[width + 1]] = {"value": value, "ci_low": ci_low, "ci_high": ci_high, "n": n}
    return out


def page(conn: Connection, board: Board, after: SortKey | None, limit: int) -> list[RankedRow]:
    """Up to ``limit`` rows of ``board`` after the sort key ``after`` (from the top without it), each with its rank
    (ranked rows ahead of it counted on the order index, less the baselines) and scores."""
    where = list(board.where())
    if after is None:
        before: Any = literal(0)
    else:
        where.append(tuple_(*_ORDER) > tuple_(*after))
        before = _ranked_ahead(board, tuple_(*_ORDER) <= tuple_(*after), None)
    sub = select(*_FIELDS, before.label("before")).where(*where).order_by(*_ORDER).limit(limit).subquery()
    return _with_scores(conn, board, sub, [sub.c[c.key] for c in _ORDER])


def best_of_key(conn: Connection, board: Board, api_key_id: str) -> RankedRow | None:
    """The best-ranked row of ``board`` whose submission was made with ``api_key_id`` (baselines, unranked, left
    out), with its rank."""
    mine = (
        select(*_FIELDS)
        .where(*board.where(), E.api_key_id == api_key_id, E.baseline.is_not(True))
        .order_by(*_ORDER)
        .limit(1)
        .subquery()
    )
    first = tuple_(*(mine.c[c.key] for c in _ORDER))
    before = _ranked_ahead(board, tuple_(*_ORDER) < first, mine)
    sub = select(mine, before.label("before")).subquery()
    rows = _with_scores(conn, board, sub, [sub.c[c.key] for c in _ORDER])
    return rows[0] if rows else None


def size(conn: Connection, board: Board) -> int:
    """The number of rows on ``board`` (counted on its order index)."""
    return int(conn.execute(select(func.count()).where(*board.where())).scalar_one())


def metrics_present(conn: Connection, board: Board, metrics: Sequence[str]) -> list[str]:
    """The ``metrics`` that some row of ``board`` has a score of (in the board's split), in the given order: per
    metric, the board's rows in index order until one has it (the first row, unless rows differ in their metrics)."""
    if not metrics:
        return []
    checks = [
        select(literal(1))
        .where(*board.where(), Score.scoring_id == E.scoring_id, Score.split == board.split, Score.metric == m)
        .order_by(*_ORDER)
        .limit(1)
        .correlate(None)
        .scalar_subquery()
        .label(f"m{i}")
        for i, m in enumerate(metrics)
    ]
    found = conn.execute(select(*checks)).one()
    return [m for m, hit in zip(metrics, found, strict=True) if hit is not None]
