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
from db.repositories import jobs as jobs_repo
from db.repositories import run_annotations as annotations_repo
from db.repositories import runs as runs_repo
from db.repositories.artifacts import NewArtifact, StoredArtifact
from db.repositories.run_annotations import AnnotationRow
from db.repositories.runs import RunRow
from service.errors import Degenerate
from usecases import cursors, run_search
from usecases.api_keys import Principal
from usecases.clock import utc_iso
from usecases.errors import NotFound, Unauthorized, invalid
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


_LRU: WeakKeyDictionary[Engines, OrderedDict[tuple[CacheKey, str | None], RunRow]] = WeakKeyDictionary()
_LRU_SIZE = 4096
_LRU_LOCK = threading.Lock()


def remember(engines: Engines, row: RunRow) -> RunRow:
    """Keep a stored run in this process's LRU of the database's runs, under its cache key and owner. Runs are
    immutable, so any replica may answer from memory."""
    with _LRU_LOCK:
        lru = _LRU.setdefault(engines, OrderedDict())
        lru[((row.kind, row.name, row.version, row.params_sha256), row.api_key_id)] = row
        if len(lru) > _LRU_SIZE:
            lru.popitem(last=False)
    return row


def remembered_run(engines: Engines, key: CacheKey, owner: str | None) -> RunRow | None:
    """The run with this cache key that ``owner`` (a key id, None: anonymous) may be answered with, if this process
    has seen it: the owner's own, else the anonymous one (memory only, safe on the event loop)."""
    with _LRU_LOCK:
        lru = _LRU.get(engines)
        if lru is None:
            return None
        for slot in ((key, owner), (key, None)) if owner is not None else ((key, None),):
            row = lru.get(slot)
            if row is not None:
                lru.move_to_end(slot)
                return row
        return None


def _with_artifacts(conn: Connection, rows: list[RunRow]) -> list[RunRow]:
    """The rows with the names of their stored artifacts."""
    names = artifacts_repo.names(conn, [r.id for r in rows])
    return [dataclasses.replace(r, artifacts=tuple(names[r.id])) if r.id in names else r for r in rows]


def stored_run(engines: Engines, key: CacheKey, owner: str | None) -> RunRow | None:
    """The run with this cache key that ``owner`` may be answered with (its own, else the anonymous one): from
    this process's LRU, else from the database (then remembered). A run of another key is never answered here."""
    row = remembered_run(engines, key, owner)
    if row is not None:
        return row
    with engines.read.connect() as conn:
        row = runs_repo.find_cached(conn, *key, owner)
        if row is None:
            return None
        (row,) = _with_artifacts(conn, [row])
    return remember(engines, row)


def reused_run(engines: Engines, key: CacheKey, owner: str | None) -> RunRow | None:
    """When only another key holds a run with this cache key: a run of ``owner``'s own (new id and time) with that
    run's result, duration and artifacts, stored now; None when no run has this cache key."""
    with engines.read.connect() as conn:
        other = runs_repo.find_any(conn, *key)
        if other is None:
            return None
        names = artifacts_repo.names(conn, [other.id]).get(other.id, [])
        loaded = {name: artifacts_repo.load(conn, other.id, name) for name in names}
    copies = [NewArtifact(name, a.sha256, a.media_type, a.data) for name, a in loaded.items() if a is not None]
    computed = Computed(other.result, other.duration_ms, copies)
    return store_run(engines, key, other.params, computed, owner)[0]


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
    cursor: str | None,
) -> cursors.Page[RunRow]:
    """A page of the runs the caller may see (``_owner_filter``), newest first."""
    owner = _owner_filter(services, principal)
    before = cursors.decode_seq(cursor)
    with services.engines.read.connect() as conn:
        page = cursors.keyset_page(
            lambda n: runs_repo.list_page(conn, kind=kind, name=name, limit=n, before_seq=before, **owner),
            limit,
            key=lambda r: r.seq,
        )
        return cursors.Page(_with_artifacts(conn, page.items), page.next_cursor)


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


def envelope_head(row: RunRow, *, cached: bool) -> dict[str, Any]:
    """The run envelope without its result, in the order every answer lists it (``cached``: this answer found
    the run stored)."""
    return {
        "id": row.id,
        "kind": row.kind,
        "name": row.name,
        "version": row.version,
        "params_sha256": row.params_sha256,
        "cached": cached,
        "duration_ms": row.duration_ms,
        "created_at": utc_iso(row.created_at),
        "artifacts": list(row.artifacts),
    }


def envelope(row: RunRow, *, cached: bool) -> dict[str, Any]:
    """The run envelope as the HTTP API answers it once parsed: ``envelope_head`` and the stored result."""
    return {**envelope_head(row, cached=cached), "result": json.loads(row.result)}


@dataclasses.dataclass(frozen=True)
class Annotation:
    """The tags and note the caller's key keeps on a run (none for an anonymous caller)."""

    tags: dict[str, str]
    note: str | None


NO_ANNOTATION = Annotation({}, None)


def annotations(services: Services, principal: Principal | None, run_ids: list[str]) -> dict[str, Annotation]:
    """The caller's annotations of these runs, by run id (runs it has not annotated are left out)."""
    if principal is None or not run_ids:
        return {}
    with services.engines.read.connect() as conn:
        rows = annotations_repo.of_runs(conn, run_ids, principal.key_id)
    return {run_id: Annotation(r.tags, r.note) for run_id, r in rows.items()}


def annotate(
    services: Services,
    principal: Principal | None,
    run_id: str,
    *,
    tags: dict[str, str] | None,
    note: str | None,
    set_note: bool,
) -> tuple[RunRow, Annotation]:
    """Replace the caller's tags (when ``tags`` is given) and note (when ``set_note``; None clears it) on a run it
    may see; the run itself never changes. Anonymous callers cannot annotate (``Unauthorized``)."""
    if principal is None:
        raise Unauthorized("an API key is required to tag a run")
    with services.engines.write.begin() as conn:
        row = _visible(conn, services, principal, run_id)
        old = annotations_repo.get(conn, run_id, principal.key_id)
        new = Annotation(
            tags if tags is not None else (old.tags if old else {}),
            note if set_note else (old.note if old else None),
        )
        annotations_repo.put(conn, AnnotationRow(run_id, principal.key_id, new.tags, new.note, datetime.now(UTC)))
        (row,) = _with_artifacts(conn, [row])
    return row, new


def search_runs(
    services: Services,
    principal: Principal | None,
    query: run_search.SearchQuery,
    *,
    limit: int,
    cursor: str | None,
) -> cursors.Page[RunRow]:
    """A page of the runs the caller may see (``_owner_filter``, narrowed by ``query.owner``) that match
    ``query``. A search with filters or a result sort looks through at most ``run_search.MAX_SCANNED`` runs of its
    scope (kind, name, time, owner) and runs for at most ``run_search.TIME_LIMIT_S`` seconds, each a 422 beyond."""
    plan = run_search.plan(query, principal, cursor)
    visible = _owner_filter(services, principal)
    clauses = []
    if visible.get("only_key"):
        clauses.append(runs_repo.owner_clause(visible["api_key_id"], anonymous_too=visible.get("anonymous_too", False)))
    if query.owner is not None:
        mine = principal.key_id if query.owner == "me" and principal is not None else None
        clauses.append(runs_repo.owner_clause(mine, anonymous_too=False))
    by_result = plan.sort_path is not None
    with services.engines.read.connect() as conn:
        if (plan.filters or by_result) and runs_repo.count_scope(
            conn, plan, clauses, run_search.MAX_SCANNED + 1
        ) > run_search.MAX_SCANNED:
            raise run_search.too_many_rows()
        try:
            with runs_repo.time_limit(conn, run_search.TIME_LIMIT_S):
                page = cursors.keyset_page(
                    lambda n: runs_repo.search_page(conn, plan, clauses, n),
                    limit,
                    key=(lambda hit: [hit[1], hit[0].seq]) if by_result else (lambda hit: hit[0].seq),
                )
        except runs_repo.SearchTooSlow as exc:
            raise run_search.too_slow(exc) from exc
        return cursors.Page(_with_artifacts(conn, [hit[0] for hit in page.items]), page.next_cursor)


def view(row: RunRow, annotation: Annotation) -> dict[str, Any]:
    """A stored run as its reader sees it (``GET /v1/runs/{id}`` once parsed): the envelope, its params and the
    reader's tags and note."""
    return {
        **envelope(row, cached=False),
        "params": json.loads(row.params),
        "tags": annotation.tags,
        "note": annotation.note,
    }


MAX_COMPARED = 8


def _leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    """The JSON object ``value`` flattened to dotted paths (lists are leaves)."""
    if not isinstance(value, dict):
        return {prefix: value}
    out: dict[str, Any] = {}
    for key, inner in value.items():
        out.update(_leaves(inner, f"{prefix}.{key}" if prefix else str(key)))
    return out


@dataclasses.dataclass(frozen=True)
class RunComparison:
    """Two to eight runs of one estimator or scorer side by side: their params that differ and their scalar
    result fields (one value per run, ``None`` where a run has none), by dotted path; ``versions_differ`` when
    they were made by different versions of it (their results may then differ for that reason alone)."""

    kind: str
    name: str
    runs: list[RunRow]
    versions_differ: bool
    params: dict[str, list[Any]]
    result: dict[str, list[Any]]


def compare_runs(services: Services, principal: Principal | None, ids: list[str]) -> RunComparison:
    """The comparison of the runs ``ids`` (2 to 8 distinct runs the caller may see, of one estimator or scorer)."""
    loc = ("query", "ids")
    if not 2 <= len(ids) <= MAX_COMPARED or len(set(ids)) != len(ids):
        raise invalid(f"give 2 to {MAX_COMPARED} distinct run ids, comma-separated", loc, "value_error")
    rows = [get_run(services, principal, run_id) for run_id in ids]
    if len({(r.kind, r.name) for r in rows}) != 1:
        raise invalid("the runs compared must be of one estimator or scorer", loc, "value_error")
    params = [_leaves(json.loads(r.params)) for r in rows]
    results = [_leaves(json.loads(r.result)) for r in rows]
    param_paths = sorted({p for leaves in params for p in leaves})
    differing = {
        p: [leaves.get(p) for leaves in params]
        for p in param_paths
        if len({json.dumps(leaves.get(p), sort_keys=True) for leaves in params}) > 1
    }
    scalar_paths = sorted(
        {p for leaves in results for p, v in leaves.items() if v is None or isinstance(v, (bool, int, float, str))}
    )
    side_by_side = {
        p: [leaves.get(p) for leaves in results]
        for p in scalar_paths
        if all(not isinstance(leaves.get(p), (list, dict)) for leaves in results)
    }
    return RunComparison(
        kind=rows[0].kind,
        name=rows[0].name,
        runs=rows,
        versions_differ=len({r.version for r in rows}) > 1,
        params=differing,
        result=side_by_side,
    )


@dataclasses.dataclass(frozen=True)
class RunPage:
    """What the run page knows before the reader's key is sent: the run exists, and the job that made it."""

    run_id: str
    job_id: str | None


def run_page(services: Services, run_id: str) -> RunPage:
    """The run page's frame for ``run_id`` (``NotFound`` when no run has this id): the run itself is read by the
    page with the reader's key, so only its existence (run ids are random UUIDs) and its job's id are told here."""
    with services.engines.read.connect() as conn:
        if runs_repo.get(conn, run_id) is None:
            raise NotFound(f"no run {run_id!r}")
        return RunPage(run_id, jobs_repo.first_job_of_run(conn, run_id))
