"""ORM tables (ARCHITECTURE §4). Portable types only (Uuid-as-string, JSON, timezone-aware DateTime)."""

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from db.base import Base

BigIntPK = BigInteger().with_variant(Integer(), "sqlite")
"""64-bit autoincrement key on PostgreSQL; INTEGER PRIMARY KEY (the rowid) on SQLite."""


class ApiKey(Base):
    __tablename__ = "api_key"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(128))
    scopes: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
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
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    api_key_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("api_key.id", ondelete="SET NULL"), nullable=True, index=True
    )
