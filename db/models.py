"""ORM tables (docs/architecture.md, storage). Portable types only (Uuid-as-string, JSON, timezone-aware DateTime)."""

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from db.base import Base
from db.types import UTCDateTime

BigIntPK = BigInteger().with_variant(Integer(), "sqlite")
"""64-bit autoincrement key on PostgreSQL; INTEGER PRIMARY KEY (the rowid) on SQLite."""


class ApiKey(Base):
    __tablename__ = "api_key"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(128))
    scopes: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_by: Mapped[str | None] = mapped_column(String(36), nullable=True)
    benchmark_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    """Set on a participant's key: the one benchmark it may write to (no foreign key: the column was added in
    place on SQLite)."""


class Run(Base):
    __tablename__ = "run"
    __table_args__ = (
        Index(
            "uq_run_cache_key_owner",
            "kind",
            "name",
            "version",
            "params_sha256",
            text("coalesce(api_key_id, '')"),
            unique=True,
        ),
        Index("ix_run_kind_name_seq", "kind", "name", "seq"),
        Index(
            "ix_run_params_jsonb",
            text("(CAST(params AS jsonb)) jsonb_path_ops"),
            postgresql_using="gin",
        ).ddl_if(dialect="postgresql"),
    )

    seq: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(128))
    version: Mapped[str] = mapped_column(String(32))
    code_version: Mapped[str] = mapped_column(String(64))
    params: Mapped[Any] = mapped_column(Text)
    params_sha256: Mapped[str] = mapped_column(String(64))
    result: Mapped[Any] = mapped_column(Text)
    duration_ms: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    api_key_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("api_key.id", ondelete="SET NULL"), nullable=True, index=True
    )


class RunAnnotation(Base):
    """The tags and note a key keeps on a run it obtained: its own view, stored apart from the immutable run."""

    __tablename__ = "run_annotation"

    run_id: Mapped[str] = mapped_column(String(36), ForeignKey("run.id", ondelete="CASCADE"), primary_key=True)
    api_key_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("api_key.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    tags: Mapped[dict[str, str]] = mapped_column(JSON)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Benchmark(Base):
    __tablename__ = "benchmark"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    scorer: Mapped[str] = mapped_column(String(64))
    description: Mapped[str] = mapped_column(Text)
    scorer_params: Mapped[str] = mapped_column(Text)
    max_submissions_per_day: Mapped[int] = mapped_column(Integer)
    owner_key_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("api_key.id", ondelete="SET NULL"), nullable=True
    )
    current_version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class AnswerKeyVersion(Base):
    __tablename__ = "answer_key_version"
    __table_args__ = (
        UniqueConstraint("benchmark_id", "version", name="uq_answer_key_version_benchmark_version"),
        Index("ix_answer_key_version_benchmark_sha256", "benchmark_id", "sha256"),
    )

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    benchmark_id: Mapped[str] = mapped_column(String(36), ForeignKey("benchmark.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    items: Mapped[str] = mapped_column(Text)
    n_public: Mapped[int] = mapped_column(Integer)
    n_private: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Submission(Base):
    __tablename__ = "submission"
    __table_args__ = (
        Index("ix_submission_benchmark_key_created", "benchmark_id", "api_key_id", "created_at"),
        Index("ix_submission_benchmark_model", "benchmark_id", "model"),
        Index("ix_submission_phase_key_created", "phase_id", "api_key_id", "created_at"),
    )

    seq: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    benchmark_id: Mapped[str] = mapped_column(String(36), ForeignKey("benchmark.id", ondelete="CASCADE"))
    model: Mapped[str] = mapped_column(String(128))
    meta: Mapped[str] = mapped_column(Text)
    api_key_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("api_key.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    withdrawn_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    public: Mapped[bool] = mapped_column(Boolean, server_default=true())
    baseline: Mapped[bool] = mapped_column(Boolean, server_default=false())
    phase_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    """The phase open when it was made (or, when ``late``, the phase it came after); no foreign key: the column
    was added in place on SQLite."""
    late: Mapped[bool] = mapped_column(Boolean, server_default=false())
    """Made after its phase ended, in a phase accepting late submissions: stored and scored, never ranked."""


class Scoring(Base):
    __tablename__ = "scoring"
    __table_args__ = (Index("ix_scoring_submission_version", "submission_id", "answer_key_version"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    submission_id: Mapped[str] = mapped_column(String(36), ForeignKey("submission.id", ondelete="CASCADE"))
    answer_key_version: Mapped[int] = mapped_column(Integer)
    scorer_version: Mapped[str] = mapped_column(String(32))
    details: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Score(Base):
    __tablename__ = "score"
    __table_args__ = (UniqueConstraint("scoring_id", "split", "metric", name="uq_score_scoring_split_metric"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    scoring_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("scoring.id", ondelete="CASCADE"))
    split: Mapped[str] = mapped_column(String(16))
    metric: Mapped[str] = mapped_column(String(64))
    value: Mapped[float] = mapped_column(Float)
    ci_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    n: Mapped[int | None] = mapped_column(Integer, nullable=True)


class ItemOrder(Base):
    """The item ids of one split of an answer-key version in item_id order, stored once: the order of every
    scoring's per-item values against that version (``ItemScoreArray``)."""

    __tablename__ = "item_order"

    answer_key_version_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("answer_key_version.id", ondelete="CASCADE"), primary_key=True
    )
    split: Mapped[str] = mapped_column(String(16), primary_key=True)
    n: Mapped[int] = mapped_column(Integer)
    item_ids: Mapped[str] = mapped_column(Text)


class ItemScoreArray(Base):
    """One metric's per-item values of one split of a scoring, as one array aligned to the version's
    ``ItemOrder`` (format byte first: ``db.item_arrays``)."""

    __tablename__ = "item_score_array"

    scoring_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("scoring.id", ondelete="CASCADE"), primary_key=True)
    split: Mapped[str] = mapped_column(String(16), primary_key=True)
    metric: Mapped[str] = mapped_column(String(64), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class SubmissionPredictions(Base):
    """A submission's validated predictions as JSON text, compressed (format byte first: ``db.item_arrays``), with
    the SHA-256 of the text."""

    __tablename__ = "submission_predictions"

    submission_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("submission.id", ondelete="CASCADE"), primary_key=True
    )
    sha256: Mapped[str] = mapped_column(String(64))
    data: Mapped[bytes] = mapped_column(LargeBinary)


class LeaderboardEntry(Base):
    """One model's row on one leaderboard (benchmark, split, metric, rank_by): the submission chosen for it (best or
    latest) with its effective scoring, and the sort key of the documented order computed when the scoring landed
    (docs/architecture.md, leaderboards). ``baseline`` is true on a baseline's row (unranked), else null;
    ``phase_id``, ``team_id``, ``hidden`` and ``late`` are reserved for later board kinds and null today."""

    __tablename__ = "leaderboard_entry"
    __table_args__ = (
        Index(
            "uq_leaderboard_entry_model",
            "benchmark_id",
            "model",
            "split",
            "metric",
            "rank_by",
            text("coalesce(phase_id, '')"),
            unique=True,
        ),
        Index(
            "ix_leaderboard_entry_order",
            "benchmark_id",
            "split",
            "metric",
            "rank_by",
            "sort_value",
            "ci_missing",
            "sort_ci",
            "submitted_at",
            "submission_id",
            "phase_id",
        ),
        Index(
            "ix_leaderboard_entry_key_order",
            "benchmark_id",
            "api_key_id",
            "split",
            "metric",
            "rank_by",
            "sort_value",
            "ci_missing",
            "sort_ci",
            "submitted_at",
            "submission_id",
            "phase_id",
        ),
    )

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    benchmark_id: Mapped[str] = mapped_column(String(36), ForeignKey("benchmark.id", ondelete="CASCADE"))
    split: Mapped[str] = mapped_column(String(16))
    metric: Mapped[str] = mapped_column(String(64))
    rank_by: Mapped[str] = mapped_column(String(8))
    phase_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    model: Mapped[str] = mapped_column(String(128))
    submission_id: Mapped[str] = mapped_column(String(36), ForeignKey("submission.id", ondelete="CASCADE"), index=True)
    scoring_id: Mapped[int] = mapped_column(BigInteger)
    answer_key_version: Mapped[int] = mapped_column(Integer)
    api_key_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    submitted_at: Mapped[datetime] = mapped_column(UTCDateTime())
    sort_value: Mapped[float] = mapped_column(Float)
    ci_missing: Mapped[bool] = mapped_column(Boolean)
    sort_ci: Mapped[float] = mapped_column(Float)
    team_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    baseline: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    hidden: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    late: Mapped[bool | None] = mapped_column(Boolean, nullable=True)


Index(
    "ix_leaderboard_entry_baseline",
    LeaderboardEntry.benchmark_id,
    LeaderboardEntry.split,
    LeaderboardEntry.metric,
    LeaderboardEntry.rank_by,
    LeaderboardEntry.sort_value,
    LeaderboardEntry.ci_missing,
    LeaderboardEntry.sort_ci,
    LeaderboardEntry.submitted_at,
    LeaderboardEntry.submission_id,
    sqlite_where=LeaderboardEntry.baseline.is_(True),
    postgresql_where=LeaderboardEntry.baseline.is_(True),
)
"""The baseline rows of each board in its order (partial): a rank counts the rows ahead minus the baselines ahead."""


class BenchmarkOwner(Base):
    """A co-owner of a benchmark, added by an owner; the creator is ``benchmark.owner_key_id``."""

    __tablename__ = "benchmark_owner"

    benchmark_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("benchmark.id", ondelete="CASCADE"), primary_key=True
    )
    api_key_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("api_key.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    added_by: Mapped[str | None] = mapped_column(String(36), nullable=True)
    added_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Participant(Base):
    """A participant of a benchmark: a display name, an optional team and the key bound to that benchmark."""

    __tablename__ = "participant"
    __table_args__ = (Index("ix_participant_benchmark_seq", "benchmark_id", "seq"),)

    seq: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    benchmark_id: Mapped[str] = mapped_column(String(36), ForeignKey("benchmark.id", ondelete="CASCADE"))
    api_key_id: Mapped[str] = mapped_column(String(36), ForeignKey("api_key.id", ondelete="CASCADE"), unique=True)
    display_name: Mapped[str] = mapped_column(String(128))
    team: Mapped[str | None] = mapped_column(String(128), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[str | None] = mapped_column(String(36), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class AuditEntry(Base):
    """One action on a benchmark, written in the action's transaction: what, by which key, when, on what."""

    __tablename__ = "audit_entry"
    __table_args__ = (Index("ix_audit_entry_benchmark_seq", "benchmark_id", "seq"),)

    seq: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    benchmark_id: Mapped[str] = mapped_column(String(36), ForeignKey("benchmark.id", ondelete="CASCADE"))
    action: Mapped[str] = mapped_column(String(32))
    actor_key_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    subject: Mapped[str | None] = mapped_column(String(64), nullable=True)
    details: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Phase(Base):
    """A period of a benchmark run as a challenge: its times, the splits its board scores and shows, per-participant
    (per-team) limits, who sees its board before the end and what happens to a submission after it."""

    __tablename__ = "phase"
    __table_args__ = (
        Index("ix_phase_benchmark_starts", "benchmark_id", "starts_at"),
        Index("ix_phase_ends_at", "ends_at"),
    )

    seq: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    benchmark_id: Mapped[str] = mapped_column(String(36), ForeignKey("benchmark.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ends_at: Mapped[datetime] = mapped_column(UTCDateTime())
    splits: Mapped[list[str]] = mapped_column(JSON)
    max_submissions_per_day: Mapped[int | None] = mapped_column(Integer, nullable=True)
    max_submissions_total: Mapped[int | None] = mapped_column(Integer, nullable=True)
    leaderboard_visibility: Mapped[str] = mapped_column(String(16))
    late_submissions: Mapped[str] = mapped_column(String(8))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[str | None] = mapped_column(String(36), nullable=True)


class PhaseSnapshot(Base):
    """A phase's leaderboards frozen at its end: written once (its primary key makes a second freeze a no-op)."""

    __tablename__ = "phase_snapshot"

    phase_id: Mapped[str] = mapped_column(String(36), ForeignKey("phase.id", ondelete="CASCADE"), primary_key=True)
    frozen_at: Mapped[datetime] = mapped_column(UTCDateTime())
    answer_key_version: Mapped[int] = mapped_column(Integer)


class PhaseBoard(Base):
    """One frozen board of a phase (``split/metric/rank_by``): its rows in order, as JSON, read one board a time."""

    __tablename__ = "phase_board"

    phase_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("phase_snapshot.phase_id", ondelete="CASCADE"), primary_key=True
    )
    board: Mapped[str] = mapped_column(String(100), primary_key=True)
    rows: Mapped[str] = mapped_column(Text)


class IdempotencyRecord(Base):
    __tablename__ = "idempotency_record"
    __table_args__ = (UniqueConstraint("scope", "idem_key", name="uq_idempotency_record_scope_key"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    scope: Mapped[str] = mapped_column(String(128))
    idem_key: Mapped[str] = mapped_column(String(255))
    request_sha256: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    response: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Job(Base):
    """A queued computation (api/jobs.py); this row, not the queue, is the source of truth."""

    __tablename__ = "job"
    __table_args__ = (
        Index("ix_job_status_heartbeat", "status", "heartbeat_at"),
        Index("ix_job_api_key_status", "api_key_id", "status"),
        Index("ix_job_client_status", "client", "status"),
    )

    seq: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(128))
    version: Mapped[str] = mapped_column(String(32))
    params: Mapped[str] = mapped_column(Text)
    params_sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    progress_fraction: Mapped[float] = mapped_column(Float, default=0.0)
    progress_message: Mapped[str] = mapped_column(String(500), default="")
    timeout_s: Mapped[float] = mapped_column(Float)
    problem: Mapped[str | None] = mapped_column(Text, nullable=True)
    run_id: Mapped[str | None] = mapped_column(String(36), ForeignKey("run.id", ondelete="SET NULL"), nullable=True)
    api_key_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("api_key.id", ondelete="SET NULL"), nullable=True
    )
    client: Mapped[str | None] = mapped_column(String(64), nullable=True)
    worker: Mapped[str | None] = mapped_column(String(128), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    enqueued_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class ArrayBlob(Base):
    """An uploaded numeric array (``POST /v1/arrays``), addressed by the SHA-256 of its canonical npy bytes."""

    __tablename__ = "array_blob"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    dtype: Mapped[str] = mapped_column(String(8))
    shape: Mapped[list[int]] = mapped_column(JSON)
    nbytes: Mapped[int] = mapped_column(BigInteger)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    api_key_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("api_key.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ArrayGrant(Base):
    """A key that may use a keyed upload: its uploader, and every key that uploaded the same content since."""

    __tablename__ = "array_grant"

    sha256: Mapped[str] = mapped_column(
        String(64), ForeignKey("array_blob.sha256", ondelete="CASCADE"), primary_key=True
    )
    api_key_id: Mapped[str] = mapped_column(String(36), ForeignKey("api_key.id", ondelete="CASCADE"), primary_key=True)


class RunArtifact(Base):
    """A file a run produced besides its JSON result (e.g. trained weights as npz), addressed by (run, name)."""

    __tablename__ = "run_artifact"

    run_id: Mapped[str] = mapped_column(String(36), ForeignKey("run.id", ondelete="CASCADE"), primary_key=True)
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64))
    media_type: Mapped[str] = mapped_column(String(64))
    nbytes: Mapped[int] = mapped_column(BigInteger)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ReproductionReport(Base):
    """One run of a paper's reproduction check: verdict, figures, the runs it used and the code version."""

    __tablename__ = "reproduction_report"
    __table_args__ = (Index("ix_reproduction_report_paper_seq", "paper", "seq"),)

    seq: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    paper: Mapped[str] = mapped_column(String(64))
    verdict: Mapped[str] = mapped_column(String(32))
    claim: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    figures: Mapped[str] = mapped_column(Text)
    run_ids: Mapped[str] = mapped_column(Text)
    code_version: Mapped[str] = mapped_column(String(64))
    duration_ms: Mapped[float] = mapped_column(Float)
    job_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
