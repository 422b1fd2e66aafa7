"""The run envelope: every estimator and scorer call answers with a stored run, serialised here."""

import functools
import json
from collections import OrderedDict
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from usecases.runs import RunRow, envelope_head


class RunEnvelope(BaseModel):
    """Every estimator and scorer call is a run; identical params return the stored run with ``cached: true``."""

    id: str
    kind: Literal["estimator", "scorer"]
    name: str
    version: str
    params_sha256: str = Field(description="SHA-256 of the canonical params JSON (sorted keys, compact).")
    cached: bool = Field(
        description="True only on the answer to a call that found an identical stored run (not when a run is read "
        "by id or listed)."
    )
    duration_ms: float
    created_at: datetime
    artifacts: list[str] = Field(
        description="Names of files stored with the run (e.g. trained weights): GET /v1/runs/{id}/artifacts/{name}."
    )
    result: dict[str, Any]


@functools.cache
def typed_envelope(model_name: str, result_model: type[BaseModel]) -> type[RunEnvelope]:
    """A per-estimator subclass whose ``result`` is the estimator's own result model (for OpenAPI); built once per
    name and result model and shared by every app the process builds (pydantic's model building is most of an
    app's start-up otherwise)."""
    return create_model(model_name, __base__=RunEnvelope, result=(result_model, ...))


def envelope_json(row: RunRow, *, cached: bool) -> bytes:
    """Serialise a stored run; the result text is embedded unchanged, so a cached answer is the stored one."""
    head = envelope_head(row, cached=cached)
    return (json.dumps(head, separators=(",", ":"))[:-1] + ',"result":' + row.result + "}").encode()


_REMEMBERED: OrderedDict[str, bytes] = OrderedDict()
_REMEMBERED_SIZE = 1024


def remembered_envelope_json(row: RunRow) -> bytes:
    """``envelope_json(row, cached=True)`` kept per run id for the fast path (runs are immutable, so the bytes
    never change): a repeated call costs no serialisation. Event loop only (no lock)."""
    body = _REMEMBERED.get(row.id)
    if body is None:
        body = _REMEMBERED[row.id] = envelope_json(row, cached=True)
        if len(_REMEMBERED) > _REMEMBERED_SIZE:
            _REMEMBERED.popitem(last=False)
    else:
        _REMEMBERED.move_to_end(row.id)
    return body
