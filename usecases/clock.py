"""UTC time: the current instant and the ISO-8601 form every response and sort key uses."""

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def utc_iso(ts: datetime) -> str:
    """ISO-8601 UTC with microseconds and ``Z``; SQLite returns naive datetimes, which are UTC here."""
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
