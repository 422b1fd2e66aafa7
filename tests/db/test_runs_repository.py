"""The run repository: insert, cache-key race, keyset pagination."""

import uuid
from datetime import UTC, datetime

from db.repositories import api_keys, runs
from db.repositories.api_keys import ApiKeyRow
from db.repositories.runs import RunRow


def _row(sha: str, name: str = "x.y", owner: str | None = None) -> RunRow:
    now = datetime.now(UTC)
    return RunRow(0, str(uuid.uuid4()), "estimator", name, "1", "0", "{}", sha, '{"v":1}', 1.5, now, owner)


def _key(engines) -> str:
    row = ApiKeyRow(str(uuid.uuid4()), uuid.uuid4().hex[:8], "k", ["estimators:run"], datetime.now(UTC), None, None)
    with engines.write.begin() as conn:
        assert api_keys.insert(conn, row, uuid.uuid4().hex)
    return row.id


def test_insert_then_find_cached(engines) -> None:
    with engines.write.begin() as conn:
        stored = runs.insert(conn, _row("a" * 64))
    with engines.read.connect() as conn:
        found = runs.find_cached(conn, "estimator", "x.y", "1", "a" * 64, None)
        assert found == stored
        assert runs.find_cached(conn, "estimator", "x.y", "2", "a" * 64, None) is None


def test_duplicate_cache_key_returns_the_first_run(engines) -> None:
    with engines.write.begin() as conn:
        first = runs.insert(conn, _row("b" * 64))
        second = runs.insert(conn, _row("b" * 64))
    assert second.id == first.id


def test_a_cache_key_is_stored_once_per_owner_and_found_by_its_owner_or_anonymously(engines) -> None:
    alice, bob = _key(engines), _key(engines)
    with engines.write.begin() as conn:
        own = runs.insert(conn, _row("c" * 64, owner=alice))
        again = runs.insert(conn, _row("c" * 64, owner=alice))
    assert again.id == own.id
    with engines.read.connect() as conn:
        assert runs.find_cached(conn, "estimator", "x.y", "1", "c" * 64, alice) == own
        assert runs.find_cached(conn, "estimator", "x.y", "1", "c" * 64, bob) is None
        assert runs.find_cached(conn, "estimator", "x.y", "1", "c" * 64, None) is None
        assert runs.find_any(conn, "estimator", "x.y", "1", "c" * 64) == own
    with engines.write.begin() as conn:
        anonymous = runs.insert(conn, _row("c" * 64))
        bobs = runs.insert(conn, _row("c" * 64, owner=bob))
    assert len({own.id, anonymous.id, bobs.id}) == 3
    with engines.read.connect() as conn:
        assert runs.find_cached(conn, "estimator", "x.y", "1", "c" * 64, alice) == own
        assert runs.find_cached(conn, "estimator", "x.y", "1", "c" * 64, None) == anonymous
        assert runs.find_any(conn, "estimator", "x.y", "1", "c" * 64) == own


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
