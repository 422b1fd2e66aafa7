"""usecases/clock.py: the current instant is aware and UTC; every timestamp prints as ISO-8601 UTC with six
fraction digits and ``Z``, a naive one read as UTC."""

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest

from usecases.clock import utc_iso, utcnow


def test_now_is_an_aware_utc_instant_between_two_readings_of_the_system_clock() -> None:
    before = datetime.now(UTC)
    now = utcnow()
    after = datetime.now(UTC)
    assert now.utcoffset() == timedelta(0)
    assert before <= now <= after


def test_an_aware_utc_instant_prints_with_microseconds_and_z() -> None:
    assert utc_iso(datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)) == "2026-01-02T03:04:05.000006Z"
    assert utc_iso(datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)) == "1999-12-31T23:59:59.999999Z"


def test_a_naive_instant_is_read_as_utc() -> None:
    assert utc_iso(datetime(2026, 7, 8, 9, 10, 11, 120000)) == "2026-07-08T09:10:11.120000Z"


def test_an_instant_in_another_zone_is_converted_to_utc() -> None:
    # 01:30 at UTC+02:00 is 23:30 of the day before in UTC; 20:00 at UTC-05:00 is 01:00 of the next day.
    assert utc_iso(datetime(2026, 3, 1, 1, 30, tzinfo=timezone(timedelta(hours=2)))) == "2026-02-28T23:30:00.000000Z"
    assert utc_iso(datetime(2026, 12, 31, 20, 0, tzinfo=timezone(timedelta(hours=-5)))) == "2027-01-01T01:00:00.000000Z"


@pytest.fixture
def local_zone_kolkata(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local zone at UTC+05:30 (no daylight saving), so that local time and UTC differ."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_neither_reading_depends_on_the_local_zone(local_zone_kolkata: None) -> None:
    assert utc_iso(datetime(2026, 7, 8, 9, 10, 11)) == "2026-07-08T09:10:11.000000Z"
    assert utc_iso(datetime(2026, 7, 8, 9, 10, 11, tzinfo=UTC)) == "2026-07-08T09:10:11.000000Z"
