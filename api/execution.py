"""Running an estimator: cost gate, cache lookup, execution and storage of the run."""

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from weakref import WeakKeyDictionary

from pydantic import ValidationError

from api.envelope import canonical_params, sha256_hex
from api.problems import ApiError
from db.engine import Engines
from db.repositories import runs as runs_repo
from db.repositories.runs import RunRow
from service.errors import Degenerate
from service.registry import EstimatorSpec, Progress, no_progress
from service.types import StrictModel

CODE_VERSION = "0.1.0"


def check_cost(spec: EstimatorSpec, params: StrictModel, *, queue_available: bool) -> float:
    """Return the cost, or raise a 422 naming the cap (``hard_cap``; ``sync_budget`` without a queue)."""
    cost = float(spec.cost(params))
    if cost > spec.hard_cap:
        raise ApiError(
            422,
            f"cost {cost:.4g} {spec.cost_unit} exceeds the hard cap {spec.hard_cap:.4g} of {spec.name}",
            errors=[
                {
                    "loc": ["body"],
                    "msg": f"cost {cost:.4g} > hard_cap {spec.hard_cap:.4g} {spec.cost_unit}",
                    "type": "cost_cap",
                }
            ],
        )
    if cost > spec.sync_budget and not queue_available:
        raise ApiError(
            422,
            f"cost {cost:.4g} {spec.cost_unit} exceeds the synchronous budget {spec.sync_budget:.4g} of "
            f"{spec.name}; no job queue is configured",
            errors=[
                {
                    "loc": ["body"],
                    "msg": f"cost {cost:.4g} > sync_budget {spec.sync_budget:.4g} {spec.cost_unit}",
                    "type": "cost_budget",
                }
            ],
        )
    return cost


def compute(fn: Callable[[], Any]) -> tuple[str, float]:
    """Call ``fn`` and return (result JSON, duration in ms); a non-finite result is a ``Degenerate`` input."""
    start = time.perf_counter()
    try:
        result = fn()
    except ValidationError as exc:
        if all(e["type"] == "finite_number" for e in exc.errors()):
            raise Degenerate("the result is not finite for these parameters") from exc
        raise
    duration_ms = (time.perf_counter() - start) * 1000.0
    return result.model_dump_json(), duration_ms


_RUNS: WeakKeyDictionary[Engines, OrderedDict[tuple[str, str, str, str], RunRow]] = WeakKeyDictionary()
_RUNS_SIZE = 4096
_RUNS_LOCK = threading.Lock()


def remember(engines: Engines, row: RunRow) -> RunRow:
    """Keep a stored run in a per-process LRU of this database's runs. Runs are immutable, so any replica may
    serve one from memory."""
    with _RUNS_LOCK:
        lru = _RUNS.setdefault(engines, OrderedDict())
        lru[(row.kind, row.name, row.version, row.params_sha256)] = row
        if len(lru) > _RUNS_SIZE:
            lru.popitem(last=False)
    return row


def memory_cached(engines: Engines, kind: str, name: str, version: str, params_sha256: str) -> RunRow | None:
    """The run for this cache key if this process has seen it (no database round trip)."""
    key = (kind, name, version, params_sha256)
    with _RUNS_LOCK:
        lru = _RUNS.get(engines)
        row = lru.get(key) if lru is not None else None
        if row is not None:
            lru.move_to_end(key)  # type: ignore[union-attr]
        return row


def cached_run(engines: Engines, kind: str, name: str, version: str, params_json: str) -> RunRow | None:
    """The stored identical run: from the per-process LRU, else from the database."""
    sha = sha256_hex(params_json)
    row = memory_cached(engines, kind, name, version, sha)
    if row is not None:
        return row
    with engines.read.connect() as conn:
        row = runs_repo.find_cached(conn, kind, name, version, sha)
    return remember(engines, row) if row is not None else None


def store_run(
    engines: Engines,
    *,
    kind: str,
    name: str,
    version: str,
    params_json: str,
    result_json: str,
    duration_ms: float,
    api_key_id: str | None,
) -> tuple[RunRow, bool]:
    """Insert the run; returns (stored row, inserted?). A concurrent identical run wins and is returned."""
    row = RunRow(
        seq=0,
        id=str(uuid.uuid4()),
        kind=kind,
        name=name,
        version=version,
        code_version=CODE_VERSION,
        params=params_json,
        params_sha256=sha256_hex(params_json),
        result=result_json,
        duration_ms=round(duration_ms, 3),
        created_at=datetime.now(UTC),
        api_key_id=api_key_id,
    )
    with engines.write.begin() as conn:
        stored = runs_repo.insert(conn, row)
    return remember(engines, stored), stored.id == row.id


def run_cached(
    engines: Engines,
    *,
    kind: str,
    name: str,
    version: str,
    params_json: str,
    produce: Callable[[], Any],
    api_key_id: str | None,
) -> tuple[RunRow, bool]:
    """Return (run, cached): the stored run with this cache key, or a new one from ``produce()`` stored now."""
    existing = cached_run(engines, kind, name, version, params_json)
    if existing is not None:
        return existing, True
    result_json, duration_ms = compute(produce)
    stored, inserted = store_run(
        engines,
        kind=kind,
        name=name,
        version=version,
        params_json=params_json,
        result_json=result_json,
        duration_ms=duration_ms,
        api_key_id=api_key_id,
    )
    return stored, not inserted


def run_estimator(
    engines: Engines,
    spec: EstimatorSpec,
    params: StrictModel,
    *,
    api_key_id: str | None,
    progress: Progress = no_progress,
    resolved: StrictModel | None = None,
) -> tuple[RunRow, bool]:
    """Return (run, cached) for an estimator call.

    ``resolved`` is ``params`` with uploaded-array references replaced by arrays (api/arrays.py): the function
    gets it, the cache key keeps the references.
    """
    inputs = params if resolved is None else resolved
    return run_cached(
        engines,
        kind="estimator",
        name=spec.name,
        version=spec.version,
        params_json=canonical_params(params),
        produce=lambda: spec.fn(inputs, progress),
        api_key_id=api_key_id,
    )
