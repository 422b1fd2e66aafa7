"""``GET /v1/runs/{id}`` and the keyset-paginated ``GET /v1/runs``."""

import base64
import binascii
import json
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from api.deps import EnginesDep
from api.envelope import RunEnvelope, envelope_json
from api.problems import ApiError, responses
from db.repositories import runs as runs_repo


class RunPage(BaseModel):
    items: list[RunEnvelope]
    next_cursor: str | None


router = APIRouter(prefix="/v1/runs", tags=["runs"])


def _encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"s": seq}).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> int:
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        seq = data["s"]
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise ValueError
        return seq
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError) as exc:
        raise ApiError(
            422,
            "invalid cursor",
            errors=[{"loc": ["query", "cursor"], "msg": "invalid cursor", "type": "value_error"}],
        ) from exc


@router.get("", response_model=RunPage, responses=responses(422, 500))
def list_runs(
    engines: EnginesDep,
    kind: Literal["estimator", "scorer"] | None = None,
    name: Annotated[str | None, Query(max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=256)] = None,
) -> Response:
    """Runs, newest first; pass ``next_cursor`` back as ``cursor`` for the next page."""
    before = _decode_cursor(cursor) if cursor else None
    with engines.read.connect() as conn:
        rows = runs_repo.list_page(conn, kind=kind, name=name, limit=limit + 1, before_seq=before)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = _encode_cursor(page[-1].seq) if more else None
    body = b'{"items":[' + b",".join(envelope_json(r, cached=True) for r in page) + b"],"
    body += b'"next_cursor":' + json.dumps(next_cursor).encode() + b"}"
    return Response(body, media_type="application/json")


@router.get("/{run_id}", response_model=RunEnvelope, responses=responses(404, 500))
def get_run(run_id: str, engines: EnginesDep) -> Response:
    """One stored run (``cached`` is true: it is read from the store)."""
    with engines.read.connect() as conn:
        row = runs_repo.get(conn, run_id)
    if row is None:
        raise ApiError(404, f"no run {run_id!r}")
    return Response(envelope_json(row, cached=True), media_type="application/json")
