"""usecases/runs.py, the store side: canonical params and their hash, the process's LRU of runs (its size, order
and owner rules), the database lookup behind it, a run reused for another key, computing a result (its duration,
artifacts and the ``Degenerate`` of a non-finite result) and storing it. Written for the mutation run of
``usecases.runs``; values are checked against ``hashlib``, ``json`` and hand-made rows."""

import hashlib
import io
import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Annotated, Any

import numpy as np
import pytest
from pydantic import BaseModel, Field, ValidationError

from db.repositories.artifacts import NewArtifact
from db.repositories.runs import RunRow
from service.errors import Degenerate
from service.types import FiniteFloat, StrictModel
from tests.factories import principal
from usecases import runs
from usecases.runs import CacheKey, Computed
from usecases.services import Services
from usecases.settings import Settings
from usecases.version import CODE_VERSION


def key(tag: str = "a", name: str = "test.store") -> CacheKey:
    params = json.dumps({"tag": tag})
    return ("estimator", name, "1", hashlib.sha256(params.encode()).hexdigest())


def params_of(k: CacheKey) -> str:
    return json.dumps({"tag": k[3]})


def npz_bytes() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, x=np.arange(3))
    return buf.getvalue()


@pytest.fixture
def replica(settings: Settings) -> Iterator[Services]:
    """Another process on the same database: its own, empty LRU."""
    s = Services(settings.model_copy(update={"queue": "off"}))
    yield s
    s.dispose()


# --- canonical params ------------------------------------------------------------------------------------------


class Inner(BaseModel):
    b: int = 2
    a: list[int] = Field(default_factory=lambda: [3, 1])


class Outer(BaseModel):
    z: float = 0.5
    at: datetime = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    inner: Inner = Field(default_factory=Inner)
    label: str = "é"


def test_canonical_params_are_json_mode_with_sorted_keys_and_compact_separators() -> None:
    text = runs.canonical_params(Outer())
    assert text == '{"at":"2026-01-02T03:04:05Z","inner":{"a":[3,1],"b":2},"label":"\\u00e9","z":0.5}'
    assert runs.sha256_hex(text) == hashlib.sha256(text.encode()).hexdigest()
    assert runs.sha256_hex("é") == hashlib.sha256("é".encode()).hexdigest()


def test_canonical_params_refuse_a_non_finite_float() -> None:
    class Loose(BaseModel):
        x: float

    with pytest.raises(ValueError, match="JSON compliant"):
        runs.canonical_params(Loose(x=float("nan")))


# --- the LRU ---------------------------------------------------------------------------------------------------


def fake_row(i: int, owner: str | None = None, tag: str | None = None) -> RunRow:
    k = key(tag or str(i))
    return RunRow(i, f"id-{i}", *k[:3], "code", "{}", k[3], "{}", 1.0, datetime(2026, 1, 1, tzinfo=UTC), owner)


class FakeEngines:
    """Only a key of the LRU (weakly referenced, hashed by identity)."""


def test_the_lru_answers_the_owners_run_else_the_anonymous_one_never_another_keys() -> None:
    engines: Any = FakeEngines()
    assert runs.remembered_run(engines, key("x"), None) is None  # nothing remembered for these engines yet
    anon, alices = fake_row(1, None, "x"), fake_row(2, "alice", "x")
    assert runs.remember(engines, alices) is alices
    assert runs.remembered_run(engines, key("x"), "alice") is alices
    assert runs.remembered_run(engines, key("x"), "bob") is None
    assert runs.remembered_run(engines, key("x"), None) is None
    runs.remember(engines, anon)
    assert runs.remembered_run(engines, key("x"), "alice") is alices
    assert runs.remembered_run(engines, key("x"), "bob") is anon
    assert runs.remembered_run(engines, key("x"), None) is anon
    assert runs.remembered_run(engines, key("y"), "alice") is None
    assert runs.remembered_run(FakeEngines(), key("x"), None) is None  # another database's LRU is apart


def test_the_lru_keeps_4096_runs_and_drops_the_least_recently_used() -> None:
    engines: Any = FakeEngines()
    rows = [fake_row(i) for i in range(4097)]
    for row in rows[:4096]:
        runs.remember(engines, row)
    assert runs.remembered_run(engines, key("0"), None) is rows[0]  # all 4096 kept; the first is now the newest
    runs.remember(engines, rows[4096])
    assert runs.remembered_run(engines, key("1"), None) is None  # the least recently used went
    for i in (0, 2, 4095, 4096):
        assert runs.remembered_run(engines, key(str(i)), None) is rows[i]
    runs.remember(engines, fake_row(5000))
    assert runs.remembered_run(engines, key("3"), None) is None


def test_a_hit_of_an_owners_run_refreshes_it_in_the_lru() -> None:
    engines: Any = FakeEngines()
    first = fake_row(0, "alice")
    runs.remember(engines, first)
    for i in range(1, 4096):
        runs.remember(engines, fake_row(i))
    assert runs.remembered_run(engines, key("0"), "alice") is first
    runs.remember(engines, fake_row(4096))
    assert runs.remembered_run(engines, key("0"), "alice") is first
    assert runs.remembered_run(engines, key("1"), None) is None


# --- storing ---------------------------------------------------------------------------------------------------


def test_store_run_inserts_the_row_its_artifacts_and_remembers_it(services: Services) -> None:
    alice = principal(services, "estimators:run")
    k = key("s1")
    blobs = [NewArtifact("b.bin", "h2", "application/octet-stream", b"xy"), NewArtifact("a.npz", "h1", "x/y", b"PK")]
    before = datetime.now(UTC)
    row, inserted = runs.store_run(
        services.engines, k, params_of(k), Computed('{"v":1}', 12.3456789, blobs), alice.key_id
    )
    after = datetime.now(UTC)
    assert inserted is True
    assert (row.kind, row.name, row.version, row.params_sha256) == k
    assert (row.params, row.result, row.duration_ms, row.api_key_id) == (params_of(k), '{"v":1}', 12.346, alice.key_id)
    assert row.code_version == CODE_VERSION and row.seq > 0 and len(row.id) == 36
    created = row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC)
    assert before <= created <= after
    assert row.artifacts == ("a.npz", "b.bin")
    assert runs.remembered_run(services.engines, k, alice.key_id) == row
    stored = runs.get_artifact(services, alice, row.id, "b.bin")
    assert (stored.sha256, stored.media_type, stored.data) == ("h2", "application/octet-stream", b"xy")


def test_an_identical_run_stored_twice_returns_the_first_with_its_own_artifacts(services: Services) -> None:
    k = key("s2")
    first, inserted = runs.store_run(
        services.engines, k, params_of(k), Computed("1", 1.0, [NewArtifact("one", "h", "m", b"1")]), None
    )
    again, second = runs.store_run(
        services.engines, k, params_of(k), Computed("2", 2.0, [NewArtifact("two", "h", "m", b"2")]), None
    )
    assert inserted and not second
    assert again.id == first.id and again.result == "1" and again.artifacts == ("one",)
    with pytest.raises(runs.NotFound):
        runs.get_artifact(services, None, first.id, "two")


def test_compute_and_store_says_whether_the_run_was_found_stored(services: Services) -> None:
    k = key("s3")
    made = runs.compute_and_store(services.engines, k, params_of(k), lambda: Result(total=2.0), None)
    found = runs.compute_and_store(services.engines, k, params_of(k), lambda: Result(total=9.0), None)
    assert made[1] is False and found[1] is True
    assert found[0].id == made[0].id and json.loads(found[0].result) == {"total": 2.0}


# --- the database behind the LRU -------------------------------------------------------------------------------


def test_stored_run_reads_the_database_when_the_lru_misses_and_then_remembers(
    services: Services, replica: Services
) -> None:
    alice, bob = principal(services, "estimators:run"), principal(services, "estimators:run")
    k = key("d1")
    mine, _ = runs.store_run(
        services.engines, k, params_of(k), Computed("{}", 1.0, [NewArtifact("f", "h", "m", b"z")]), alice.key_id
    )
    assert runs.remembered_run(replica.engines, k, alice.key_id) is None
    assert runs.stored_run(replica.engines, k, bob.key_id) is None
    assert runs.stored_run(replica.engines, k, None) is None
    got = runs.stored_run(replica.engines, k, alice.key_id)
    assert got is not None and got.id == mine.id and got.artifacts == ("f",)
    assert runs.remembered_run(replica.engines, k, alice.key_id) == got
    assert runs.stored_run(replica.engines, key("other"), alice.key_id) is None


def test_stored_run_prefers_the_owners_run_to_the_anonymous_one(services: Services, replica: Services) -> None:
    alice = principal(services, "estimators:run")
    k = key("d2")
    anon, _ = runs.store_run(services.engines, k, params_of(k), Computed('"anon"', 1.0, []), None)
    own, _ = runs.store_run(services.engines, k, params_of(k), Computed('"own"', 1.0, []), alice.key_id)
    assert runs.stored_run(replica.engines, k, alice.key_id).id == own.id  # type: ignore[union-attr]
    assert runs.stored_run(replica.engines, k, None).id == anon.id  # type: ignore[union-attr]


def test_a_run_of_another_key_is_reused_as_a_new_run_of_the_caller(services: Services) -> None:
    alice, bob = principal(services, "estimators:run"), principal(services, "estimators:run")
    k = key("r1")
    assert runs.reused_run(services.engines, k, bob.key_id) is None
    blobs = [NewArtifact("m.npz", "sha-m", "application/x-npz", b"PK\x03\x04.."), NewArtifact("n", "sha-n", "t", b"n")]
    original, _ = runs.store_run(services.engines, k, params_of(k), Computed('{"t":5}', 7.5, blobs), alice.key_id)
    copy = runs.reused_run(services.engines, k, bob.key_id)
    assert copy is not None and copy.id != original.id and copy.api_key_id == bob.key_id
    assert (copy.params, copy.result, copy.duration_ms, copy.artifacts) == (
        params_of(k),
        '{"t":5}',
        7.5,
        ("m.npz", "n"),
    )
    assert copy.seq > original.seq
    for name, blob in (("m.npz", blobs[0]), ("n", blobs[1])):
        got = runs.get_artifact(services, bob, copy.id, name)
        assert (got.sha256, got.media_type, got.data) == (blob.sha256, blob.media_type, blob.data)
    assert runs.stored_run(services.engines, k, bob.key_id) == copy
    assert runs.get_run(services, bob, copy.id).id == copy.id


# --- computing -------------------------------------------------------------------------------------------------


class Result(StrictModel):
    total: FiniteFloat


class WithBlobs(StrictModel):
    total: float

    def artifact_blobs(self) -> dict[str, Any]:
        return {"z.bin": bytearray(b"\x00\x01"), "a.npz": memoryview(npz_bytes()), "m.txt": b"PK\x03"}


def test_compute_returns_the_result_json_its_duration_and_its_artifacts_sorted_and_typed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter([100.0, 100.25, 0.0, 0.0])
    monkeypatch.setattr(runs, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    computed = runs.compute(lambda: WithBlobs(total=1.5))
    assert computed.result_json == '{"total":1.5}' and computed.duration_ms == 250.0
    npz = npz_bytes()
    assert zipfile.is_zipfile(io.BytesIO(npz))
    expected = [
        ("a.npz", hashlib.sha256(npz).hexdigest(), "application/x-npz", npz),
        ("m.txt", hashlib.sha256(b"PK\x03").hexdigest(), "application/octet-stream", b"PK\x03"),
        ("z.bin", hashlib.sha256(b"\x00\x01").hexdigest(), "application/octet-stream", b"\x00\x01"),
    ]
    assert [(a.name, a.sha256, a.media_type, a.data) for a in computed.artifacts] == expected
    assert all(type(a.data) is bytes for a in computed.artifacts)
    assert runs.compute(lambda: Result(total=1.0)).artifacts == []


def test_a_result_that_is_not_finite_is_degenerate_other_validation_errors_pass_through() -> None:
    def build(**values: object) -> Any:
        return lambda: TwoFields.model_validate(values)

    with pytest.raises(Degenerate):
        runs.compute(build(x=float("inf"), y=float("nan")))
    with pytest.raises(ValidationError):  # a non-finite value and a missing field: not only non-finite
        runs.compute(build(x=float("inf")))
    with pytest.raises(ValidationError):
        runs.compute(build(x=1.0))
    with pytest.raises(ZeroDivisionError):
        runs.compute(lambda: 1 / 0)


class TwoFields(StrictModel):
    x: FiniteFloat
    y: Annotated[float, Field(allow_inf_nan=False)]


def test_a_stored_runs_duration_is_rounded_to_the_microsecond(services: Services) -> None:
    k = key("dur")
    row, _ = runs.store_run(services.engines, k, params_of(k), Computed("0", 0.0004999, []), None)
    assert row.duration_ms == 0.0
    k2 = key("dur2")
    row2, _ = runs.store_run(services.engines, k2, params_of(k2), Computed("0", 2.0005001, []), None)
    assert row2.duration_ms == 2.001


def test_a_remembered_run_is_answered_without_reading_the_database(
    services: Services, replica: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = principal(services, "estimators:run")
    k = key("m1")
    anon, _ = runs.store_run(services.engines, k, params_of(k), Computed('"anon"', 1.0, []), None)
    own, _ = runs.store_run(services.engines, k, params_of(k), Computed('"own"', 1.0, []), alice.key_id)
    reads: list[str | None] = []
    real = runs.runs_repo.find_cached

    def counted(conn: Any, *args: Any) -> Any:
        reads.append(args[-1])
        return real(conn, *args)

    monkeypatch.setattr(runs.runs_repo, "find_cached", counted)
    assert runs.stored_run(replica.engines, k, alice.key_id).id == own.id  # type: ignore[union-attr]
    assert runs.stored_run(replica.engines, k, None).id == anon.id  # type: ignore[union-attr]
    assert reads == [alice.key_id, None]
    for owner, expected in ((alice.key_id, own.id), (None, anon.id), (alice.key_id, own.id)):
        assert runs.stored_run(replica.engines, k, owner).id == expected  # type: ignore[union-attr]
    assert reads == [alice.key_id, None]  # both remembered now: no further read


def test_a_run_without_artifacts_is_reused_with_none(services: Services) -> None:
    alice, bob = principal(services, "estimators:run"), principal(services, "estimators:run")
    k = key("r2")
    runs.store_run(services.engines, k, params_of(k), Computed("[1]", 3.0, []), alice.key_id)
    copy = runs.reused_run(services.engines, k, bob.key_id)
    assert copy is not None and copy.api_key_id == bob.key_id and copy.artifacts == () and copy.result == "[1]"


def test_compute_and_store_stores_the_run_under_the_callers_key(services: Services) -> None:
    alice = principal(services, "estimators:run")
    k = key("s4")
    row, cached = runs.compute_and_store(services.engines, k, params_of(k), lambda: Result(total=4.0), alice.key_id)
    assert not cached and row.api_key_id == alice.key_id
    assert runs.stored_run(services.engines, k, None) is None  # not stored as an anonymous run
