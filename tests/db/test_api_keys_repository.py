"""The API-key repository on its own: lookup by hash or id, unique id/prefix/hash, revocation that keeps its first
time, reinstatement, and the server-made (bootstrap) keys."""

import uuid
from datetime import UTC, datetime, timedelta

from db.engine import Engines
from db.repositories import api_keys as repo
from db.repositories.api_keys import ApiKeyRow

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def _row(prefix: str, at: datetime, created_by: str | None = None, scopes: tuple[str, ...] = ("admin",)) -> ApiKeyRow:
    return ApiKeyRow(str(uuid.uuid4()), prefix, f"key {prefix}", list(scopes), at, None, created_by)


def test_keys_are_found_by_hash_and_id_and_duplicates_are_refused(engines: Engines) -> None:
    a = _row("aaaa", T0)
    with engines.write.begin() as conn:
        assert repo.insert(conn, a, "h" * 64)
        assert not repo.insert(conn, _row("bbbb", T0), "h" * 64)  # same hash
        assert not repo.insert(conn, _row("aaaa", T0), "g" * 64)  # same prefix
        assert repo.insert(conn, _row("cccc", T0 + timedelta(seconds=1), scopes=("estimators:run",)), "c" * 64)
    with engines.read.connect() as conn:
        assert repo.by_hash(conn, "h" * 64) == a
        assert repo.by_hash(conn, "x" * 64) is None
        assert repo.get(conn, a.id) == a
        assert repo.get(conn, str(uuid.uuid4())) is None
        assert [r.prefix for r in repo.list_all(conn)] == ["aaaa", "cccc"]


def test_keys_made_at_the_same_instant_are_listed_by_id(engines: Engines) -> None:
    rows = [
        ApiKeyRow(f"{i}0000000-0000-0000-0000-000000000000", f"p{i}", "k", ["admin"], T0, None, None) for i in (3, 1, 2)
    ]
    with engines.write.begin() as conn:
        for i, row in enumerate(rows):
            assert repo.insert(conn, row, f"{i}" * 64)
    with engines.read.connect() as conn:
        assert [r.prefix for r in repo.list_all(conn)] == ["p1", "p2", "p3"]


def test_revocation_keeps_its_first_time_and_reinstatement_clears_it(engines: Engines) -> None:
    a, b = _row("aaaa", T0), _row("bbbb", T0)
    first, second = T0 + timedelta(hours=1), T0 + timedelta(hours=2)
    with engines.write.begin() as conn:
        repo.insert(conn, a, "a" * 64)
        repo.insert(conn, b, "b" * 64)
        assert repo.revoke(conn, a.id, first)
        assert not repo.revoke(conn, a.id, second)
        assert not repo.revoke(conn, str(uuid.uuid4()), first)
    with engines.read.connect() as conn:
        assert repo.get(conn, a.id).revoked_at == first  # type: ignore[union-attr]
        assert repo.get(conn, b.id).revoked_at is None  # type: ignore[union-attr]
    with engines.write.begin() as conn:
        repo.reinstate(conn, a.id)
    with engines.read.connect() as conn:
        assert repo.get(conn, a.id).revoked_at is None  # type: ignore[union-attr]


def test_server_made_keys_are_the_unrevoked_ones_without_a_creator_oldest_first(engines: Engines) -> None:
    newer, older = _row("n000", T0 + timedelta(minutes=5)), _row("o000", T0)
    revoked, made_by_admin = _row("r000", T0), _row("m000", T0, created_by=older.id)
    with engines.write.begin() as conn:
        for i, row in enumerate((newer, older, revoked, made_by_admin)):
            repo.insert(conn, row, f"{i}" * 64)
        repo.revoke(conn, revoked.id, T0)
    with engines.read.connect() as conn:
        assert [r.id for r in repo.active_server_made(conn)] == [older.id, newer.id]
