"""The run store: canonical params and their hash (the cache key), the per-process LRU of immutable runs,
computing and storing a run with the artifacts its result carries (``artifact_blobs()``), and reading stored runs
and their artifacts."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from pydantic import BaseModel, ValidationError
from sqlalchemy import Connection

from db.engine import Engines
from db.repositories import artifacts as artifacts_repo
from db.repositories import runs as runs_repo
from db.repositories.artifacts import NewArtifact, StoredArtifact
from db.repositories.runs import RunRow
from service.errors import Degenerate
from usecases.api_keys import Principal
from usecases.errors import NotFound, Unauthorized
from usecases.version import CODE_VERSION

if TYPE_CHECKING:
    from usecases.services import Services

CacheKey = tuple[str, str, str, str]
"""(kind, name, version, params_sha256): two calls with equal keys get the same run."""


def canonical_params(params: BaseModel) -> str:
    """The validated params with defaults filled in, as JSON with sorted keys and compact separators."""
    return json.dumps(params.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), allow_nan=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


_LRU: WeakKeyDictionary[Engines, OrderedDict[CacheKey, RunRow]] = WeakKeyDictionary()
_LRU_SIZE = 4096
_LRU_LOCK = threading.Lock()


def remember(engines: Engines, row: RunRow) -> RunRow:
    """Keep a stored run in this process's LRU of the database's runs. Runs are immutable, so any replica may
    answer from memory."""
    with _LRU_LOCK:
        lru = _LRU.setdefault(engines, OrderedDict())
        lru[(row.kind, row.name, row.version, row.params_sha256)] = row
        if len(lru) > _LRU_SIZE:
            lru.popitem(last=False)
    return row


def remembered_run(engines: Engines, key: CacheKey) -> RunRow | None:
    """The run with this cache key if this process has seen it (memory only, safe on the event loop)."""
    with _LRU_LOCK:
        lru = _LRU.get(engines)
        row = lru.get(key) if lru is not None else None
        if row is not None:
            lru.move_to_end(key)  # type: ignore[union-attr]
        return row


def _with_artifacts(conn: Connection, rows: list[RunRow]) -> list[RunRow]:
    """The rows with the names of their stored artifacts."""
    names = artifacts_repo.names(conn, [r.id for r in rows])
    return [dataclasses.replace(r, artifacts=tuple(names[r.id])) if r.id in names else r for r in rows]


def stored_run(engines: Engines, key: CacheKey) -> RunRow | None:
    """The run with this cache key: from this process's LRU, else from the database (then remembered)."""
    row = remembered_run(engines, key)
    if row is not None:
        return row
    with engines.read.connect() as conn:
        row = runs_repo.find_cached(conn, *key)
        if row is None:
            return None
        (row,) = _with_artifacts(conn, [row])
    return remember(engines, row)


ARTIFACT_MEDIA_TYPES = {b"PK\x03\x04": "application/x-npz"}
"""Media type of an artifact by its leading bytes (an npz is a zip archive); anything else is octet-stream."""


def _artifacts(result: Any) -> list[NewArtifact]:
    """The blobs a result carries beside its JSON (``result.artifact_blobs()``: name → bytes), hashed and typed."""
    blobs: dict[str, bytes] = result.artifact_blobs() if hasattr(result, "artifact_blobs") else {}
    return [
        NewArtifact(
            name=name,
            sha256=hashlib.sha256(data).hexdigest(),
            media_type=ARTIFACT_MEDIA_TYPES.get(bytes(data[:4]), "application/octet-stream"),
            data=bytes(data),
        )
        for name, data in sorted(blobs.items())
    ]


@dataclasses.dataclass(frozen=True)
class Computed:
    """A computed result: its JSON text, duration and the artifacts to store with it."""

    result_json: str
    duration_ms: float
    artifacts: list[NewArtifact]


def compute(produce: Callable[[], Any]) -> Computed:
    """Call ``produce`` and return its result JSON, duration in ms and artifacts; a non-finite result is
    ``Degenerate``."""
    start = time.perf_counter()
    try:
        result = produce()
    except ValidationError as exc:
        if all(e["type"] == "finite_number" for e in exc.errors()):
            raise Degenerate("the result is not finite for these parameters") from exc
        raise
    duration_ms = (time.perf_counter() - start) * 1000.0
    return Computed(result.model_dump_json(), duration_ms, _artifacts(result))


def store_run(
    engines: Engines, key: CacheKey, params_json: str, computed: Computed, api_key_id: str | None
) -> tuple[RunRow, bool]:
    """Insert the run and its artifacts in one transaction; returns (stored row, inserted?). A concurrent
    identical run wins and is returned (with its own artifacts)."""
    kind, name, version, params_sha256 = key
    now = datetime.now(UTC)
    row = RunRow(
        seq=0,
        id=str(uuid.uuid4()),
        kind=kind,
        name=name,
        version=version,
        code_version=CODE_VERSION,
        params=params_json,
        params_sha256=params_sha256,
        result=computed.result_json,
        duration_ms=round(computed.duration_ms, 3),
        created_at=now,
        api_key_id=api_key_id,
    )
    with engines.write.begin() as conn:
        stored = runs_repo.insert(conn, row)
        if stored.id == row.id:
            artifacts_repo.insert_many(conn, stored.id, computed.artifacts, now)
        (stored,) = _with_artifacts(conn, [stored])
    return remember(engines, stored), stored.id == row.id


def compute_and_store(
    engines: Engines, key: CacheKey, params_json: str, produce: Callable[[], Any], api_key_id: str | None
) -> tuple[RunRow, bool]:
    """Return (run, cached): a new run from ``produce()``, or the identical run a concurrent call stored first."""
    stored, inserted = store_run(engines, key, params_json, compute(produce), api_key_id)
    return stored, not inserted


def stored_or_computed(
    engines: Engines, key: CacheKey, params_json: str, produce: Callable[[], Any], api_key_id: str | None
) -> tuple[RunRow, bool]:
    """Return (run, cached): the stored run with this cache key, else a new one from ``produce()``."""
    existing = stored_run(engines, key)
    if existing is not None:
        return existing, True
    return compute_and_store(engines, key, params_json, produce, api_key_id)


def _owner_filter(services: Services, principal: Principal | None) -> dict[str, Any]:
    """Who sees which runs: an admin every run; a run made with a key only that key (and admins), in every mode;
    runs made without a key everyone, except with ``REQUIRE_KEYS``, where a key sees only its own runs."""
    if principal is not None and principal.is_admin:
        return {}
    if services.settings.require_keys:
        if principal is None:
            raise Unauthorized("an API key is required")
        return {"only_key": True, "api_key_id": principal.key_id}
    return {"only_key": True, "api_key_id": principal.key_id if principal else None, "anonymous_too": True}


def _may_see(owner: dict[str, Any], row: RunRow) -> bool:
    if not owner.get("only_key"):
        return True
    return row.api_key_id == owner["api_key_id"] or (owner.get("anonymous_too", False) and row.api_key_id is None)


def list_runs(
    services: Services,
    principal: Principal | None,
    *,
    kind: str | None,
    name: str | None,
    limit: int,
    before_seq: int | None,
) -> tuple[list[RunRow], int | None]:
    """A page of the runs the caller may see (``_owner_filter``), newest first, and the ``seq`` to continue below
    (None on the last page)."""
    owner = _owner_filter(services, principal)
    with services.engines.read.connect() as conn:
        rows = runs_repo.list_page(conn, kind=kind, name=name, limit=limit + 1, before_seq=before_seq, **owner)
        page = _with_artifacts(conn, rows[:limit])
    return page, (page[-1].seq if len(rows) > limit else None)


def _visible(conn: Connection, services: Services, principal: Principal | None, run_id: str) -> RunRow:
    owner = _owner_filter(services, principal)
    row = runs_repo.get(conn, run_id)
    if row is None or not _may_see(owner, row):
        raise NotFound(f"no run {run_id!r}")
    return row


def get_run(services: Services, principal: Principal | None, run_id: str) -> RunRow:
    """One stored run with its artifact names, if the caller may see it (``_owner_filter``)."""
    with services.engines.read.connect() as conn:
        (row,) = _with_artifacts(conn, [_visible(conn, services, principal, run_id)])
    return row


def get_artifact(services: Services, principal: Principal | None, run_id: str, name: str) -> StoredArtifact:
    """One artifact of a run the caller may see (the visibility of ``get_run``)."""
    with services.engines.read.connect() as conn:
        _visible(conn, services, principal, run_id)
        artifact = artifacts_repo.load(conn, run_id, name)
    if artifact is None:
        raise NotFound(f"run {run_id!r} has no artifact {name!r}")
    return artifact
