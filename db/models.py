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


class Run(Base):
    __tablename__ = "run"
    __table_args__ = (
        UniqueConstraint("kind", "name", "version", "params_sha256", name="uq_run_cache_key"),
        Index("ix_run_kind_name_seq", "kind", "name", "seq"),
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
    __table_args__ = (Index("ix_submission_benchmark_key_created", "benchmark_id", "api_key_id", "created_at"),)

    seq: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    benchmark_id: Mapped[str] = mapped_column(String(36), ForeignKey("benchmark.id", ondelete="CASCADE"))
    model: Mapped[str] = mapped_column(String(128))
    meta: Mapped[str] = mapped_column(Text)
    predictions: Mapped[str] = mapped_column(Text)
    api_key_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("api_key.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    withdrawn_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


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


class ItemScore(Base):
    """One item's score on one metric of a scoring (every metric a scorer reports per item)."""

    __tablename__ = "item_score"
    __table_args__ = (Index("ix_item_score_scoring_metric", "scoring_id", "metric"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    scoring_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("scoring.id", ondelete="CASCADE"), index=True)
    split: Mapped[str] = mapped_column(String(16))
    item_id: Mapped[str] = mapped_column(String(128))
    metric: Mapped[str] = mapped_column(String(64))
    value: Mapped[float] = mapped_column(Float)


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
