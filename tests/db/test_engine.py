"""The SQLite recipe: WAL, foreign keys, busy timeout, BEGIN IMMEDIATE on one write connection."""

import threading

import pytest
from sqlalchemy import text

from db.engine import make_engines


@pytest.fixture
def sqlite_engines(tmp_path):
    engines = make_engines(f"sqlite:///{tmp_path / 'e.db'}", synchronous="NORMAL")
    yield engines
    engines.dispose()


def test_pragmas(sqlite_engines) -> None:
    with sqlite_engines.read.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 5000
        assert conn.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL


def test_write_pool_is_one_connection(sqlite_engines) -> None:
    assert sqlite_engines.write.pool.size() == 1


def test_concurrent_read_then_write_transactions_never_lock(sqlite_engines) -> None:
    """The anchor's failure mode: deferred BEGIN lost 484/800 such transactions; BEGIN IMMEDIATE loses none."""
    with sqlite_engines.write.begin() as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
    errors: list[Exception] = []

    def worker() -> None:
        try:
            for _ in range(50):
                with sqlite_engines.write.begin() as conn:
                    n = conn.execute(text("SELECT count(*) FROM t")).scalar()
                    conn.execute(text("INSERT INTO t VALUES (:x)"), {"x": n})
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with sqlite_engines.read.connect() as conn:
        assert conn.execute(text("SELECT count(*), count(DISTINCT x) FROM t")).one() == (200, 200)


def test_bad_synchronous_setting_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError):
        make_engines(f"sqlite:///{tmp_path / 'x.db'}", synchronous="SOMETIMES")
