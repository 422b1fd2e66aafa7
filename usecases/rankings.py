"""Maintained leaderboards: when a scoring lands or a submission is withdrawn, the rows of its model on every board
of the benchmark are brought up to date in the same transaction, so a leaderboard read costs a page, not the
benchmark (docs/architecture.md, leaderboards).

A board is (benchmark, split, metric, rank_by) and holds one row per model: its best live submission (lowest sort
key) or its latest (greatest submission time, then id), each with its effective scoring (latest scoring against
the newest answer-key version it was scored against, so rows waiting for a re-scoring keep their earlier
version's scores). The sort key is the documented order: value best first, then ci_low best first (missing last),
then the earlier submission, then the submission id.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

from sqlalchemy import Connection

from db import locks
from db.repositories import rankings as rank_repo
from db.repositories import submissions as sub_repo
from db.repositories.rankings import EntryRow, LiveScore
from service.registry import MetricInfo

RANK_BY = ("best", "latest")
Slot = tuple[str, str]
"""(split, metric)."""
Chooser = Callable[[str, str, str, EntryRow | None], EntryRow | None]
"""A model's new row on the board (split, metric, rank_by), given its current row there."""


def entry(score: LiveScore, rank_by: str, higher_is_better: bool) -> EntryRow:
    """The board row of one live score, with the sort key signed so that ascending is best first (``baseline``
    True on a baseline's row, else null, as the backfilled rows have it)."""
    sign = -1.0 if higher_is_better else 1.0
    return EntryRow(
        split=score.split,
        metric=score.metric,
        rank_by=rank_by,
        model=score.model,
        submission_id=score.submission_id,
        scoring_id=score.scoring_id,
        answer_key_version=score.answer_key_version,
        api_key_id=score.api_key_id,
        submitted_at=score.submitted_at,
        sort_value=sign * score.value,
        ci_missing=score.ci_low is None,
        sort_ci=0.0 if score.ci_low is None else sign * score.ci_low,
        baseline=score.baseline or None,
    )


def choose(rank_by: str, rows: Iterable[EntryRow]) -> EntryRow | None:
    """A model's row among its candidates: the best sort key, or the latest submission."""
    rows = list(rows)
    if not rows:
        return None
    if rank_by == "latest":
        return max(rows, key=lambda r: (r.submitted_at, r.submission_id))
    return min(rows, key=EntryRow.key)


def _by_slot(scores: Iterable[LiveScore], metrics: Mapping[str, MetricInfo]) -> dict[Slot, list[LiveScore]]:
    """Scores grouped by (split, metric), metrics the scorer no longer reports left out."""
    out: dict[Slot, list[LiveScore]] = defaultdict(list)
    for s in scores:
        if s.metric in metrics:
            out[(s.split, s.metric)].append(s)
    return out


def _candidates(scores: list[LiveScore], rank_by: str, metrics: Mapping[str, MetricInfo]) -> list[EntryRow]:
    return [entry(s, rank_by, metrics[s.metric].higher_is_better) for s in scores]


def refresh(conn: Connection, benchmark_id: str, submission_id: str, metrics: Mapping[str, MetricInfo]) -> None:
    """Bring the rows of the submission's model up to date after a new scoring of it or its withdrawal, in the
    caller's transaction. Writers of one model take turns (``locks.serialize_on``), so each sees the others'
    committed rows; rows of other models are never read or written.

    Only the submission's own effective scores are read, unless the submission held a row that it no longer earns
    (withdrawn, a worse best score, a metric gone): then the model's other live submissions are read to choose
    again."""
    sub = sub_repo.get(conn, submission_id)
    assert sub is not None and sub.benchmark_id == benchmark_id
    if sub.phase_id is not None:
        hold_phase(conn, sub.phase_id)
    locks.serialize_on(conn, f"leaderboard:{benchmark_id}:{sub.model}")
    own = _by_slot(rank_repo.live_scores(conn, benchmark_id, submission_id=submission_id), metrics)
    model_scores: dict[Slot, list[LiveScore]] | None = None

    def choose_new(split: str, metric: str, rank_by: str, old: EntryRow | None) -> EntryRow | None:
        nonlocal model_scores
        mine = choose(rank_by, _candidates(own.get((split, metric), []), rank_by, metrics))
        if old is None or old.submission_id != submission_id:
            return choose(rank_by, [r for r in (old, mine) if r is not None])
        if mine is not None and (rank_by == "latest" or mine.key() <= old.key()):
            return mine
        if model_scores is None:
            model_scores = _by_slot(rank_repo.live_scores(conn, benchmark_id, model=sub.model), metrics)
        return _chooser(model_scores, metrics)(split, metric, rank_by, old)

    _rechoose(conn, benchmark_id, sub.model, set(own), choose_new)


def hold_phase(conn: Connection, phase_id: str) -> None:
    """Take turns with every other writer of the phase's submissions until the caller's transaction ends: a
    freeze or a visibility change and a submission of the phase never decide concurrently whether its submissions
    are on the boards (taken before a model's lock, never after one)."""
    locks.serialize_on(conn, f"phase:{phase_id}")


def refresh_models(
    conn: Connection, benchmark_id: str, models: Iterable[str], metrics: Mapping[str, MetricInfo]
) -> None:
    """Choose again every row of each of ``models`` from its live submissions, in the caller's transaction (after a
    change of which submissions count, such as a hidden phase's board being frozen). Models are taken in order,
    each under its writers' lock, as ``refresh`` takes it."""
    for model in sorted(set(models)):
        locks.serialize_on(conn, f"leaderboard:{benchmark_id}:{model}")
        scores = _by_slot(rank_repo.live_scores(conn, benchmark_id, model=model), metrics)
        _rechoose(conn, benchmark_id, model, set(scores), _chooser(scores, metrics))


def _chooser(scores: Mapping[Slot, list[LiveScore]], metrics: Mapping[str, MetricInfo]) -> Chooser:
    """Each board's row chosen afresh from ``scores``, whatever the current row."""

    def choose_new(split: str, metric: str, rank_by: str, old: EntryRow | None) -> EntryRow | None:
        return choose(rank_by, _candidates(scores.get((split, metric), []), rank_by, metrics))

    return choose_new


def _rechoose(
    conn: Connection,
    benchmark_id: str,
    model: str,
    slots: set[Slot],
    choose_new: Chooser,
) -> None:
    """Choose again the model's row on each board it holds or, for ``slots``, may now earn (``choose_new(split,
    metric, rank_by, current row)``); write only the rows that changed: one delete and one insert statement."""
    current = {(r.split, r.metric, r.rank_by): (i, r) for i, r in rank_repo.model_rows(conn, benchmark_id, model)}
    boards = set(current) | {(split, metric, rank_by) for split, metric in slots for rank_by in RANK_BY}
    inserts: list[EntryRow] = []
    deletes: list[int] = []
    for split, metric, rank_by in sorted(boards):
        row_id, old = current.get((split, metric, rank_by), (None, None))
        new = choose_new(split, metric, rank_by, old)
        if new == old:
            continue
        if new is None:
            assert row_id is not None
            deletes.append(row_id)
        elif row_id is None:
            inserts.append(new)
        else:
            rank_repo.replace_row(conn, row_id, new)
    rank_repo.delete_rows(conn, deletes)
    rank_repo.insert_rows(conn, benchmark_id, inserts)


def rebuild(conn: Connection, benchmark_id: str, metrics: Mapping[str, MetricInfo]) -> int:
    """Recompute every board of a benchmark from its submissions' effective scorings (the caller's transaction
    holds the write lock on SQLite; on PostgreSQL call it while no scoring of the benchmark lands); returns the
    number of rows. Used to seed stores in bulk (bench/scale.py)."""
    chosen: dict[tuple[str, str, str, str], EntryRow] = {}
    for (split, metric), scores in _by_slot(rank_repo.live_scores(conn, benchmark_id), metrics).items():
        for rank_by in RANK_BY:
            for row in _candidates(scores, rank_by, metrics):
                slot = (split, metric, rank_by, row.model)
                best = choose(rank_by, [r for r in (chosen.get(slot), row) if r is not None])
                assert best is not None
                chosen[slot] = best
    rank_repo.delete_benchmark(conn, benchmark_id)
    rank_repo.insert_rows(conn, benchmark_id, chosen.values())
    return len(chosen)
