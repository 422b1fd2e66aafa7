"""Challenge phases (docs/challenges.md, phases): a benchmark's periods with their own limits and leaderboard.

A submission goes to the phase open at its time (``starts_at <= t < ends_at``); after a phase that accepts late
submissions it is stored ``late`` (scored, never ranked); otherwise, and before the first phase, it is refused. A
phase's per-day and total limits count per participant, per team where the participant has one, and replace the
benchmark's daily quota while the phase is open. At its end a phase's board is frozen once into a stored snapshot
(on its first read after the end, a read of the benchmark's board, or the reaper's pass): the board as it was at
the end (submissions withdrawn after it kept, scorings against the answer-key version current at it), which later
re-scorings and withdrawals leave alone. A ``hidden_until_end`` phase's submissions join the benchmark's boards
in the freezing transaction.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from db import locks
from db.repositories import participants as part_repo
from db.repositories import phases as repo
from db.repositories.benchmarks import BenchmarkRow
from db.repositories.phases import PhaseRow, SnapshotRow
from usecases import audit, cursors, rankings
from usecases.access import Access, access, require_owner
from usecases.api_keys import Principal
from usecases.benchmarks import Loaded, load
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, NotFound, QuotaExceeded, invalid

if TYPE_CHECKING:
    from usecases.services import Services

FIELDS = (
    "name",
    "starts_at",
    "ends_at",
    "splits",
    "max_submissions_per_day",
    "max_submissions_total",
    "leaderboard_visibility",
    "late_submissions",
)
FIXED_ONCE_STARTED = ("starts_at", "splits")
RANK_BY = ("best", "latest")
FREEZE_BATCH = 100
"""Phases frozen in one reaper pass at most."""


@dataclass(frozen=True)
class PhaseView:
    """A phase as listed: its settings, ``status`` (upcoming, open, ended) at the time of the read and, once its
    board is frozen, ``frozen_at``."""

    id: str
    benchmark_id: str
    name: str
    starts_at: str
    ends_at: str
    splits: list[str]
    max_submissions_per_day: int | None
    max_submissions_total: int | None
    leaderboard_visibility: str
    late_submissions: str
    status: str
    frozen_at: str | None
    created_at: str


def _status(phase: PhaseRow, now: datetime) -> str:
    return "upcoming" if now < phase.starts_at else "open" if now < phase.ends_at else "ended"


def _view(phase: PhaseRow, now: datetime, snap: SnapshotRow | None) -> PhaseView:
    return PhaseView(
        id=phase.id,
        benchmark_id=phase.benchmark_id,
        name=phase.name,
        starts_at=utc_iso(phase.starts_at),
        ends_at=utc_iso(phase.ends_at),
        splits=list(phase.splits),
        max_submissions_per_day=phase.max_submissions_per_day,
        max_submissions_total=phase.max_submissions_total,
        leaderboard_visibility=phase.leaderboard_visibility,
        late_submissions=phase.late_submissions,
        status=_status(phase, now),
        frozen_at=utc_iso(snap.frozen_at) if snap else None,
        created_at=utc_iso(phase.created_at),
    )


def _times(phase: PhaseRow) -> str:
    return f"{utc_iso(phase.starts_at)} to {utc_iso(phase.ends_at)}"


def _check(fields: dict[str, Any], others: list[PhaseRow], now: datetime) -> None:
    """A phase's settings after a change: ends after it starts and in the future, splits without repeats, and no
    overlap with the benchmark's other phases (each a 422 naming the field)."""
    starts, ends = fields["starts_at"], fields["ends_at"]
    if ends <= starts:
        raise invalid("ends_at must be after starts_at", ("body", "ends_at"), "value_error", "after starts_at")
    if ends <= now:
        raise invalid("ends_at must be in the future", ("body", "ends_at"), "value_error", f"after {utc_iso(now)}")
    if len(set(fields["splits"])) != len(fields["splits"]):
        raise invalid("a split is listed twice", ("body", "splits"), "value_error", "distinct splits")
    for other in others:
        if other.starts_at < ends and starts < other.ends_at:
            field = "starts_at" if other.starts_at <= starts < other.ends_at else "ends_at"
            raise invalid(
                f"overlaps phase {other.name!r} ({_times(other)})",
                ("body", field),
                "value_error",
                "no overlap with another phase",
            )


def _owned(conn: Connection, principal: Principal | None, benchmark_id: str, what: str) -> Loaded:
    loaded = load(conn, benchmark_id)
    require_owner(access(conn, loaded.benchmark, principal), what)
    return loaded


def _phase_of(conn: Connection, benchmark_id: str, phase_id: str) -> PhaseRow:
    phase = repo.get(conn, phase_id)
    if phase is None or phase.benchmark_id != benchmark_id:
        raise NotFound(f"no phase {phase_id!r} in this benchmark")
    return phase


def _audit_fields(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: utc_iso(v) if isinstance(v, datetime) else v for k, v in fields.items()}


def create(services: Services, principal: Principal | None, benchmark_id: str, fields: dict[str, Any]) -> PhaseView:
    """A new phase (owners and admins); its settings are checked against the benchmark's other phases in the write
    transaction, which a benchmark's phase writers take in turn."""
    now = services.clock()
    with services.engines.write.begin() as conn:
        _owned(conn, principal, benchmark_id, "phase changes")
        locks.serialize_on(conn, f"phases:{benchmark_id}")
        _check(fields, repo.list_for(conn, benchmark_id), now)
        row = PhaseRow(
            0,
            str(uuid.uuid4()),
            benchmark_id,
            created_at=now,
            created_by=principal.key_id if principal else None,
            **fields,
        )
        repo.insert(conn, row)
        audit.record(conn, benchmark_id, "phase.created", principal, row.id, **_audit_fields(fields))
    return _view(row, now, None)


def list_phases(services: Services, benchmark_id: str) -> list[PhaseView]:
    """Every phase of the benchmark, earliest start first, with its times and status (anyone: the benchmark is
    public). Ended phases not yet frozen are frozen first."""
    now = services.clock()
    with services.engines.read.connect() as conn:
        load(conn, benchmark_id)
        phases = repo.list_for(conn, benchmark_id)
        snaps = {p.id: repo.snapshot(conn, p.id) for p in phases if p.ends_at <= now}
    for p in phases:
        if p.ends_at <= now and snaps[p.id] is None:
            snaps[p.id] = freeze(services, p)
    return [_view(p, now, snaps.get(p.id)) for p in phases]


def get(services: Services, benchmark_id: str, phase_id: str) -> PhaseView:
    """One phase (anyone); an ended one is frozen first."""
    now = services.clock()
    with services.engines.read.connect() as conn:
        load(conn, benchmark_id)
        phase = _phase_of(conn, benchmark_id, phase_id)
        snap = repo.snapshot(conn, phase_id)
    if phase.ends_at <= now and snap is None:
        snap = freeze(services, phase)
    return _view(phase, now, snap)


def update(
    services: Services, principal: Principal | None, benchmark_id: str, phase_id: str, changes: dict[str, Any]
) -> PhaseView:
    """Change a phase's settings (owners and admins). An ended phase is frozen (``Conflict``); once a phase has
    started its ``starts_at`` and ``splits`` stay (``Conflict``). The changed settings are checked as at creation;
    a change to what a phase already has writes no audit entry."""
    now = services.clock()
    with services.engines.write.begin() as conn:
        loaded = _owned(conn, principal, benchmark_id, "phase changes")
        locks.serialize_on(conn, f"phases:{benchmark_id}")
        phase = _phase_of(conn, benchmark_id, phase_id)
        if phase.ends_at <= now:
            raise Conflict(f"phase {phase.name!r} ended at {utc_iso(phase.ends_at)}; its board is frozen")
        changed = {k: v for k, v in changes.items() if getattr(phase, k) != v}
        fixed = [k for k in FIXED_ONCE_STARTED if k in changed and phase.starts_at <= now]
        if fixed:
            raise Conflict(f"phase {phase.name!r} started at {utc_iso(phase.starts_at)}: {fixed[0]} cannot change")
        if changed:
            merged = {k: changed.get(k, getattr(phase, k)) for k in FIELDS}
            others = [p for p in repo.list_for(conn, benchmark_id) if p.id != phase_id]
            _check(merged, others, now)
            repo.update_fields(conn, phase_id, **changed)
            if "leaderboard_visibility" in changed:
                rankings.hold_phase(conn, phase_id)
                rankings.refresh_models(conn, benchmark_id, repo.models_in(conn, phase_id), loaded.spec.metrics)
            audit.record(conn, benchmark_id, "phase.changed", principal, phase_id, **_audit_fields(changed))
        updated = repo.get(conn, phase_id)
    assert updated is not None
    return _view(updated, now, None)


def delete(services: Services, principal: Principal | None, benchmark_id: str, phase_id: str) -> None:
    """Delete a phase (owners and admins) that holds no submission and has no frozen board (``Conflict``)."""
    with services.engines.write.begin() as conn:
        _owned(conn, principal, benchmark_id, "phase changes")
        locks.serialize_on(conn, f"phases:{benchmark_id}")
        phase = _phase_of(conn, benchmark_id, phase_id)
        if repo.has_submissions(conn, phase_id) or repo.snapshot(conn, phase_id) is not None:
            raise Conflict(f"phase {phase.name!r} has submissions or a frozen board; it stays")
        repo.remove(conn, phase_id)
        audit.record(conn, benchmark_id, "phase.deleted", principal, phase_id, name=phase.name)


# -- submissions -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """Where a submission made now goes: its phase (None on a benchmark without phases) and whether it is late."""

    phase: PhaseRow | None = None
    late: bool = False

    def flags(self) -> dict[str, Any]:
        """The submission's ``phase_id`` and ``late``."""
        return {"phase_id": self.phase.id if self.phase else None, "late": self.late}

    def daily_quota(self, benchmark: BenchmarkRow) -> int | None:
        """The benchmark's daily quota, unless the open phase's per-day limit replaces it (None)."""
        replaced = self.phase is not None and not self.late and self.phase.max_submissions_per_day is not None
        return None if replaced else benchmark.max_submissions_per_day


def place(conn: Connection, benchmark_id: str, now: datetime) -> Placement:
    """The phase open at ``now``, or the late placement after the latest ended phase that accepts late submissions;
    ``Conflict`` (with the phase times) before the first phase or after one that refuses them."""
    phases = repo.list_for(conn, benchmark_id)
    if not phases:
        return Placement()
    for p in phases:
        if p.starts_at <= now < p.ends_at:
            return Placement(p)
    ended = [p for p in phases if p.ends_at <= now]
    upcoming = [p for p in phases if now < p.starts_at]
    after = f"; the next phase {upcoming[0].name!r} runs {_times(upcoming[0])}" if upcoming else ""
    if not ended:
        raise Conflict(f"submissions open when phase {phases[0].name!r} starts (it runs {_times(phases[0])})")
    last = max(ended, key=lambda p: p.ends_at)
    if last.late_submissions == "accept":
        return Placement(last, late=True)
    raise Conflict(f"phase {last.name!r} ran {_times(last)} and refuses late submissions{after}")


def check_limits(
    conn: Connection, placed: Placement, benchmark_id: str, api_key_id: str, now: datetime, *, lock: bool
) -> None:
    """Refuse (``QuotaExceeded``) a submission over its open phase's total or per-day limit, counted over the
    submitter's team (or its key alone). With ``lock`` the counters' writers take turns until the caller's
    transaction ends, so the count is exact."""
    phase = placed.phase
    if phase is None or placed.late:
        return
    if phase.max_submissions_total is None and phase.max_submissions_per_day is None:
        return
    who, keys = repo.counted_keys(conn, benchmark_id, api_key_id)
    if lock:
        locks.serialize_on(conn, f"phase:{phase.id}:{who}")
    whose = f" by team {who.removeprefix('team:')!r}" if who.startswith("team:") else ""
    total = phase.max_submissions_total
    if total is not None and repo.count_in_phase(conn, phase.id, keys, None) >= total:
        retry = int((phase.ends_at - now).total_seconds()) + 1
        raise QuotaExceeded(f"the {total} submissions allowed in phase {phase.name!r} are used{whose}", retry)
    per_day = phase.max_submissions_per_day
    if per_day is not None:
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        if repo.count_in_phase(conn, phase.id, keys, day) >= per_day:
            retry = int((day + timedelta(days=1) - now).total_seconds()) + 1
            raise QuotaExceeded(f"the {per_day} submissions a day of phase {phase.name!r} are used{whose}", retry)


# -- leaderboards ------------------------------------------------------------------------------------------------


def _boards(
    conn: Connection, loaded: Loaded, phase: PhaseRow, version: int, only: tuple[str, str, str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Every board of the phase (or ``only`` the board (split, metric, rank_by)), ``"split/metric/rank_by"`` -> its
    rows in order: one row per model (its best or latest public, on-time submission of the phase not withdrawn
    before the phase's end, scored against answer-key ``version`` or an earlier one), ranks as on the benchmark's
    boards (a baseline listed without one), each with every metric of its scoring in the board's split."""
    metrics = loaded.spec.metrics
    splits = [only[0]] if only else list(phase.splits)
    found = repo.phase_scores(conn, phase.id, splits, phase.ends_at, version)
    scores = [s for s in found if s.live.metric in metrics]
    by_scoring: dict[tuple[int, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    slots: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for s in scores:
        by_scoring[(s.live.scoring_id, s.live.split)][s.live.metric] = {
            "value": s.live.value,
            "ci_low": s.live.ci_low,
            "ci_high": s.ci_high,
            "n": s.n,
        }
        slots[(s.live.split, s.live.metric)].append(s.live)
    shown_as = part_repo.shown_as(conn, [s.live.api_key_id for s in scores])
    out: dict[str, list[dict[str, Any]]] = {}
    for split in splits:
        for metric, info in metrics.items():
            for rank_by in RANK_BY:
                if only is not None and (split, metric, rank_by) != only:
                    continue
                per_model: dict[str, list[Any]] = defaultdict(list)
                for live in slots.get((split, metric), []):
                    per_model[live.model].append(rankings.entry(live, rank_by, info.higher_is_better))
                chosen = sorted(
                    (c for c in (rankings.choose(rank_by, rows) for rows in per_model.values()) if c is not None),
                    key=lambda r: r.key(),
                )
                rows, rank = [], 0
                for r in chosen:
                    rank += 0 if r.baseline else 1
                    rows.append(
                        {
                            "rank": None if r.baseline else rank,
                            "baseline": bool(r.baseline),
                            "participant": shown_as.get(r.api_key_id or ""),
                            "submission_id": r.submission_id,
                            "model": r.model,
                            "submitted_at": utc_iso(r.submitted_at),
                            "answer_key_version": r.answer_key_version,
                            "pending": r.answer_key_version != version,
                            "scores": by_scoring[(r.scoring_id, split)],
                        }
                    )
                out[f"{split}/{metric}/{rank_by}"] = rows
    return out


def freeze(services: Services, phase: PhaseRow) -> SnapshotRow:
    """The phase's snapshot, taken now unless it exists: the boards as they were at the phase's end (against the
    answer-key version current then) are computed and inserted with insert-or-ignore on the snapshot's primary key,
    so of any number of concurrent freezes (threads or processes) exactly one stores it, with its boards, brings a
    ``hidden_until_end`` phase's submissions onto the benchmark's boards (``rankings.refresh_models``) and writes
    the ``phase.frozen`` audit entry; every caller returns the stored one."""
    with services.engines.write.begin() as conn:
        rankings.hold_phase(conn, phase.id)
        snap = repo.snapshot(conn, phase.id)
        if snap is None:
            loaded = load(conn, phase.benchmark_id)
            version = repo.version_at(conn, phase.benchmark_id, phase.ends_at) or loaded.benchmark.current_version
            frozen = _boards(conn, loaded, phase, version)
            boards = {k: json.dumps(v, separators=(",", ":")) for k, v in frozen.items()}
            snap = SnapshotRow(phase.id, services.clock(), version)
            if repo.insert_snapshot(conn, snap):
                repo.insert_boards(conn, phase.id, boards)
                if phase.leaderboard_visibility == "hidden_until_end":
                    models = repo.models_in(conn, phase.id)
                    rankings.refresh_models(conn, phase.benchmark_id, models, loaded.spec.metrics)
                audit.record(
                    conn, phase.benchmark_id, "phase.frozen", None, phase.id, answer_key_version=snap.answer_key_version
                )
    with services.engines.read.connect() as conn:
        stored = repo.snapshot(conn, phase.id)
    assert stored is not None
    return stored


def freeze_ended(services: Services, benchmark_id: str) -> None:
    """Freeze the benchmark's ended phases that are not yet frozen, before a read of its boards (so a hidden
    phase's submissions are on them from its end, not from the reaper's next pass): one indexed read when none
    is due."""
    with services.engines.read.connect() as conn:
        due = repo.ended_unfrozen(conn, services.clock(), FREEZE_BATCH, benchmark_id)
    for phase in due:
        freeze(services, phase)


def freeze_due(services: Services) -> int:
    """The reaper's pass: freeze every ended phase without a snapshot (up to ``FREEZE_BATCH``); returns how many
    this pass found."""
    with services.engines.read.connect() as conn:
        due = repo.ended_unfrozen(conn, services.clock(), FREEZE_BATCH)
    for phase in due:
        freeze(services, phase)
    return len(due)


@dataclass(frozen=True)
class PhaseBoardPage:
    benchmark_id: str
    phase_id: str
    split: str
    metric: str
    higher_is_better: bool
    rank_by: str
    answer_key_version: int
    frozen_at: str | None
    rows: list[dict[str, Any]]
    next_cursor: str | None


def _check_visible(found: Access, phase: PhaseRow, split: str, now: datetime) -> None:
    """Owners and admins see every split of a phase's board at any time. Others see nothing of a
    ``hidden_until_end`` phase's board before its end; then, and at any time for a ``public`` phase, they see the
    splits the phase shows, its private split included."""
    if split not in phase.splits:
        raise invalid(
            f"phase {phase.name!r} shows the splits {phase.splits}", ("query", "split"), "enum", str(phase.splits)
        )
    if found.sees_everything or phase.leaderboard_visibility == "public" or phase.ends_at <= now:
        return
    raise Forbidden(f"the board of phase {phase.name!r} is hidden until its end, {utc_iso(phase.ends_at)}")


def leaderboard(
    services: Services,
    principal: Principal | None,
    benchmark_id: str,
    phase_id: str,
    *,
    split: str,
    metric: str | None,
    rank_by: str,
    limit: int,
    cursor: str | None,
) -> PhaseBoardPage:
    """A page of the phase's board: live while the phase is open (its on-time submissions only), the frozen
    snapshot with ``frozen_at`` once it has ended (frozen on this read if no earlier read or reaper pass did)."""
    now = services.clock()
    offset = cursors.decode_seq(cursor) or 0
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        phase = _phase_of(conn, benchmark_id, phase_id)
        _check_visible(access(conn, loaded.benchmark, principal), phase, split, now)
        chosen = metric or loaded.spec.primary_metric
        if chosen not in loaded.spec.metrics:
            raise invalid(
                f"unknown metric {chosen!r}", ("query", "metric"), "enum", f"one of {sorted(loaded.spec.metrics)}"
            )
        board = f"{split}/{chosen}/{rank_by}"
        snap = repo.snapshot(conn, phase_id) if phase.ends_at <= now else None
        version = loaded.benchmark.current_version
        live = None if phase.ends_at <= now else _boards(conn, loaded, phase, version, (split, chosen, rank_by))
    if live is None:
        snap = snap or freeze(services, phase)
        with services.engines.read.connect() as conn:
            stored = repo.board_rows(conn, phase_id, board)
        rows, version = json.loads(stored) if stored else [], snap.answer_key_version
    else:
        rows = live.get(board, [])
    more = len(rows) > offset + limit
    return PhaseBoardPage(
        benchmark_id=benchmark_id,
        phase_id=phase_id,
        split=split,
        metric=chosen,
        higher_is_better=loaded.spec.metrics[chosen].higher_is_better,
        rank_by=rank_by,
        answer_key_version=version,
        frozen_at=utc_iso(snap.frozen_at) if snap else None,
        rows=rows[offset : offset + limit],
        next_cursor=cursors.encode(offset + limit) if more else None,
    )
