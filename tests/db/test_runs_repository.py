"""The run repository: insert, cache-key race, keyset pagination."""

import uuid
from datetime import UTC, datetime

from db.repositories import runs
from db.repositories.runs import RunRow


def _row(sha: str, name: str = "x.y") -> RunRow:
    return RunRow(0, str(uuid.uuid4()), "estimator", name, "1", "0", "{}", sha, '{"v":1}', 1.5, datetime.now(UTC), None)


def test_insert_then_find_cached(engines) -> None:
    with engines.write.begin() as conn:
        stored = runs.insert(conn, _row("a" * 64))
    with engines.read.connect() as conn:
        found = runs.find_cached(conn, "estimator", "x.y", "1", "a" * 64)
        assert found == stored
        assert runs.find_cached(conn, "estimator", "x.y", "2", "a" * 64) is None


def test_duplicate_cache_key_returns_the_first_run(engines) -> None:
    with engines.write.begin() as conn:
        first = runs.insert(conn, _row("b" * 64))
        second = runs.insert(conn, _row("b" * 64))
    assert second.id == first.id


def test_keyset_pages_cover_every_row_once(engines) -> None:
    with engines.write.begin() as conn:
        for i in range(7):
            runs.insert(conn, _row(f"{i:064d}", name="p" if i % 2 else "q"))
    seen, before = [], None
    with engines.read.connect() as conn:
        while True:
            page = runs.list_page(conn, kind="estimator", name=None, limit=3, before_seq=before)
            if not page:
                break
            seen += [r.seq for r in page]
            before = page[-1].seq
        only_p = runs.list_page(conn, kind=None, name="p", limit=10, before_seq=None)
    assert seen == sorted(seen, reverse=True) and len(set(seen)) == 7
    assert [r.name for r in only_p] == ["p"] * 3
