"""Engine recipe for SQLite and PostgreSQL (docs/architecture.md, storage).

SQLite: WAL, ``synchronous`` from settings, ``busy_timeout``, ``foreign_keys=ON``; the driver's legacy transaction
handling is disabled and every write transaction starts with ``BEGIN IMMEDIATE`` on a single write connection,
so concurrent writers queue on the lock instead of failing with "database is locked". Reads use a separate pool.
PostgreSQL: two ordinary pools; the URL picks the dialect and the hooks attach only for SQLite.
Every engine hides SQL parameters from its error messages (``hide_parameters``): they carry key hashes and
predictions, and error messages end up in logs.
"""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import NullPool, StaticPool

SQLITE_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")


@dataclass(frozen=True)
class Engines:
    """A write engine (one connection on SQLite) and a read engine over the same database."""

    write: Engine
    read: Engine

    def dispose(self) -> None:
        self.write.dispose()
        self.read.dispose()


def _sqlite_hooks(engine: Engine, *, begin: str, synchronous: str, busy_timeout_ms: int) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA synchronous={synchronous}")
        cur.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql(begin)


def make_engines(url: str, *, synchronous: str = "NORMAL", busy_timeout_ms: int = 5000) -> Engines:
    """Create the write and read engines for ``url`` (``sqlite:///…`` or ``postgresql+psycopg://…``)."""
    if url in ("sqlite://", "sqlite:///:memory:"):
        engine = create_engine(
            url, poolclass=StaticPool, connect_args={"check_same_thread": False}, hide_parameters=True
        )
        return Engines(write=engine, read=engine)
    if url.startswith("sqlite"):
        if synchronous.upper() not in SQLITE_SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {SQLITE_SYNCHRONOUS}")
        write = create_engine(url, pool_size=1, max_overflow=0, pool_timeout=30, hide_parameters=True)
        read = create_engine(url, pool_size=8, max_overflow=8, hide_parameters=True)
        _sqlite_hooks(write, begin="BEGIN IMMEDIATE", synchronous=synchronous.upper(), busy_timeout_ms=busy_timeout_ms)
        _sqlite_hooks(read, begin="BEGIN", synchronous=synchronous.upper(), busy_timeout_ms=busy_timeout_ms)
        return Engines(write=write, read=read)
    write = create_engine(url, pool_size=8, max_overflow=8, pool_pre_ping=True, hide_parameters=True)
    read = create_engine(url, pool_size=8, max_overflow=8, pool_pre_ping=True, hide_parameters=True)
    return Engines(write=write, read=read)


def make_single_engine(url: str) -> Engine:
    """A pool-less engine for one-off tasks (migrations, backups)."""
    return create_engine(url, poolclass=NullPool, hide_parameters=True)
