"""Transaction-scoped named locks that make check-then-insert sequences (daily quotas, job caps) exact."""

from sqlalchemy import Connection, text

_PG_LOCK = text("SELECT pg_advisory_xact_lock(hashtext(:name))")


def serialize_on(conn: Connection, name: str) -> None:
    """Hold the lock ``name`` until the caller's transaction ends, so a second transaction taking it waits and then
    counts the first one's committed rows. PostgreSQL: ``pg_advisory_xact_lock(hashtext(name))`` (a hash collision
    only serialises two callers more than needed). SQLite: every write transaction already holds the database's
    write lock from ``BEGIN IMMEDIATE`` on (db/engine.py), so nothing more is taken."""
    if conn.dialect.name == "postgresql":
        conn.execute(_PG_LOCK, {"name": name})
