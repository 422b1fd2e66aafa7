"""usecases/audit.py: ``record`` appends one entry in the caller's transaction (none when it rolls back): the
action, the actor's key id (None for a phase's freeze), the subject, the details as canonical JSON (sorted keys,
no spaces) and the time it was written; an action outside ``ACTIONS`` is refused."""

import json
from datetime import UTC, datetime

import pytest

from db.repositories import audit as audit_repo
from tests.factories import principal, stored_benchmark
from usecases import audit
from usecases.services import Services


def _entries(services: Services, benchmark_id: str) -> list[audit_repo.AuditRow]:
    with services.engines.read.connect() as conn:
        return audit_repo.page(conn, benchmark_id, 100, None)


def test_an_entry_records_action_actor_subject_and_canonical_details(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="owner")
    bench = stored_benchmark(services, owner).row
    before_rows = len(_entries(services, bench.id))
    start = datetime.now(UTC)
    with services.engines.write.begin() as conn:
        audit.record(conn, bench.id, "owner.added", owner, "key-42", name="bob", b={"y": 2, "x": [1, "é"]})
    end = datetime.now(UTC)
    rows = _entries(services, bench.id)
    assert len(rows) == before_rows + 1
    entry = rows[0]  # newest first
    assert (entry.benchmark_id, entry.action, entry.actor_key_id, entry.subject) == (
        bench.id,
        "owner.added",
        owner.key_id,
        "key-42",
    )
    assert entry.details == '{"b":{"x":[1,"\\u00e9"],"y":2},"name":"bob"}'
    assert json.loads(entry.details) == {"b": {"x": [1, "é"], "y": 2}, "name": "bob"}
    written = entry.created_at if entry.created_at.tzinfo else entry.created_at.replace(tzinfo=UTC)
    assert start <= written <= end


def test_an_entry_without_actor_or_details(services: Services) -> None:
    bench = stored_benchmark(services, principal(services, "benchmarks:write")).row
    with services.engines.write.begin() as conn:
        audit.record(conn, bench.id, "phase.frozen", None, None)
    entry = _entries(services, bench.id)[0]
    assert (entry.action, entry.actor_key_id, entry.subject, entry.details) == ("phase.frozen", None, None, "{}")


def test_an_entry_exists_exactly_when_its_transaction_commits(services: Services) -> None:
    owner = principal(services, "benchmarks:write")
    bench = stored_benchmark(services, owner).row
    n = len(_entries(services, bench.id))
    with pytest.raises(RuntimeError), services.engines.write.begin() as conn:
        audit.record(conn, bench.id, "rescore", owner, None)
        raise RuntimeError("the action failed")
    assert len(_entries(services, bench.id)) == n


def test_an_unknown_action_is_refused(services: Services) -> None:
    owner = principal(services, "benchmarks:write")
    bench = stored_benchmark(services, owner).row
    n = len(_entries(services, bench.id))
    with pytest.raises(AssertionError), services.engines.write.begin() as conn:
        audit.record(conn, bench.id, "benchmark.deleted", owner, None)
    assert len(_entries(services, bench.id)) == n
