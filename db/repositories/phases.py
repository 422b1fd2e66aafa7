"""A benchmark's phases (``phase``), the frozen snapshot of each ended phase's board (``phase_snapshot``) and the
counts behind the phases' submission limits."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from db.models import AnswerKeyVersion, Participant, Phase, PhaseBoard, PhaseSnapshot, Score, Scoring, Submission
from db.repositories.rankings import LiveScore, effective_scores


@dataclass(frozen=True)
class PhaseRow:
    seq: int
    id: str
    benchmark_id: str
    name: str
    starts_at: datetime
    ends_at: datetime
    splits: list[str]
    max_submissions_per_day: int | None
    max_submissions_total: int | None
    leaderboard_visibility: str
    late_submissions: str
    created_at: datetime
    created_by: str | None


@dataclass(frozen=True)
class SnapshotRow:
    phase_id: str
    frozen_at: datetime
    answer_key_version: int


_P = [getattr(Phase, f) for f in PhaseRow.__dataclass_fields__]
_SN = [getattr(PhaseSnapshot, f) for f in SnapshotRow.__dataclass_fields__]


def insert(conn: Connection, row: PhaseRow) -> None:
    values = {k: v for k, v in row.__dict__.items() if k != "seq"}
    conn.execute(Phase.__table__.insert().values(**values))


def get(conn: Connection, phase_id: str) -> PhaseRow | None:
    r = conn.execute(select(*_P).where(Phase.id == phase_id)).first()
    return PhaseRow(*r) if r else None


def list_for(conn: Connection, benchmark_id: str) -> list[PhaseRow]:
    """Every phase of a benchmark, earliest start first."""
    stmt = select(*_P).where(Phase.benchmark_id == benchmark_id).order_by(Phase.starts_at, Phase.seq)
    return [PhaseRow(*r) for r in conn.execute(stmt)]


def update_fields(conn: Connection, phase_id: str, **fields: Any) -> None:
    conn.execute(update(Phase).where(Phase.id == phase_id).values(**fields))


def remove(conn: Connection, phase_id: str) -> None:
    conn.execute(delete(Phase).where(Phase.id == phase_id))


def has_submissions(conn: Connection, phase_id: str) -> bool:
    stmt = select(Submission.id).where(Submission.phase_id == phase_id).limit(1)
    return conn.execute(stmt).first() is not None


def ended_unfrozen(conn: Connection, now: datetime, limit: int, benchmark_id: str | None = None) -> list[PhaseRow]:
    """Up to ``limit`` phases (of ``benchmark_id`` when given) that ended at or before ``now`` and have no snapshot
    yet, earliest end first."""
    stmt = (
        select(*_P)
        .outerjoin(PhaseSnapshot, PhaseSnapshot.phase_id == Phase.id)
        .where(Phase.ends_at <= now, PhaseSnapshot.phase_id.is_(None))
        .order_by(Phase.ends_at, Phase.seq)
        .limit(limit)
    )
    if benchmark_id is not None:
        stmt = stmt.where(Phase.benchmark_id == benchmark_id)
    return [PhaseRow(*r) for r in conn.execute(stmt)]


def models_in(conn: Connection, phase_id: str) -> list[str]:
    """The models of the phase's on-time submissions."""
    stmt = select(Submission.model).where(Submission.phase_id == phase_id, Submission.late.is_(False)).distinct()
    return list(conn.execute(stmt).scalars())


def version_at(conn: Connection, benchmark_id: str, when: datetime) -> int | None:
    """The benchmark's answer-key version current at ``when`` (the newest made at or before it)."""
    stmt = select(func.max(AnswerKeyVersion.version)).where(
        AnswerKeyVersion.benchmark_id == benchmark_id, AnswerKeyVersion.created_at <= when
    )
    return conn.execute(stmt).scalar()


def snapshot(conn: Connection, phase_id: str) -> SnapshotRow | None:
    r = conn.execute(select(*_SN).where(PhaseSnapshot.phase_id == phase_id)).first()
    return SnapshotRow(*r) if r else None


def insert_snapshot(conn: Connection, row: SnapshotRow) -> bool:
    """Insert the phase's snapshot unless it has one (``INSERT ... ON CONFLICT DO NOTHING`` on the primary key: of
    two concurrent freezes exactly one inserts); True when this call inserted it."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    stmt = (
        dialect.insert(PhaseSnapshot)
        .values(**row.__dict__)
        .on_conflict_do_nothing(index_elements=["phase_id"])
        .returning(PhaseSnapshot.phase_id)
    )
    return conn.execute(stmt).scalar() is not None


def insert_boards(conn: Connection, phase_id: str, boards: dict[str, str]) -> None:
    """The frozen boards of a phase: board key (``split/metric/rank_by``) -> its rows as JSON text."""
    if boards:
        conn.execute(
            PhaseBoard.__table__.insert(), [{"phase_id": phase_id, "board": k, "rows": v} for k, v in boards.items()]
        )


def board_rows(conn: Connection, phase_id: str, board: str) -> str | None:
    """One frozen board's rows (JSON text); None for a board the phase did not have."""
    stmt = select(PhaseBoard.rows).where(PhaseBoard.phase_id == phase_id, PhaseBoard.board == board)
    return conn.execute(stmt).scalar()


def counted_keys(conn: Connection, benchmark_id: str, api_key_id: str) -> tuple[str, list[str]]:
    """Whose submissions count together against a phase's limits: (a lock name, the keys). A participant in a team
    counts with every key of the team's participants in this benchmark; any other key counts alone."""
    team = conn.execute(
        select(Participant.team).where(Participant.benchmark_id == benchmark_id, Participant.api_key_id == api_key_id)
    ).scalar()
    if team is None:
        return f"key:{api_key_id}", [api_key_id]
    keys = conn.execute(
        select(Participant.api_key_id).where(Participant.benchmark_id == benchmark_id, Participant.team == team)
    ).scalars()
    return f"team:{team}", sorted(keys)


def count_in_phase(conn: Connection, phase_id: str, api_key_ids: list[str], since: datetime | None) -> int:
    """On-time submissions of ``api_key_ids`` in the phase (made since ``since`` when given)."""
    where = [Submission.phase_id == phase_id, Submission.api_key_id.in_(api_key_ids), Submission.late.is_(False)]
    if since is not None:
        where.append(Submission.created_at >= since)
    return int(conn.execute(select(func.count()).where(*where)).scalar_one())


@dataclass(frozen=True)
class PhaseScore:
    """One metric value of a phase submission's effective scoring, with its interval's upper end and count."""

    live: LiveScore
    ci_high: float | None
    n: int | None


def phase_scores(
    conn: Connection, phase_id: str, splits: list[str], ends_at: datetime, version: int
) -> list[PhaseScore]:
    """The effective scorings (latest against the newest answer-key version up to ``version`` each was scored
    against) metric values in ``splits`` of the phase's submissions live at ``ends_at``: not withdrawn before it,
    public, not late. While the phase is open every withdrawal is before its end."""
    live = [
        Submission.phase_id == phase_id,
        or_(Submission.withdrawn_at.is_(None), Submission.withdrawn_at >= ends_at),
        Submission.public.is_(True),
        Submission.late.is_(False),
    ]
    stmt = (
        effective_scores([*live, Scoring.answer_key_version <= version])
        .add_columns(Score.ci_high, Score.n)
        .where(Score.split.in_(splits))
    )
    return [PhaseScore(LiveScore(*r[:11]), r[11], r[12]) for r in conn.execute(stmt)]
