"""``GET /v1/runs/{id}`` and the keyset-paginated ``GET /v1/runs``."""

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel

from api import cursors
from api.auth import OptionalPrincipal, Principal
from api.deps import EnginesDep
from api.envelope import RunEnvelope, envelope_json
from api.problems import ApiError, responses
from db.repositories import runs as runs_repo


class RunPage(BaseModel):
    items: list[RunEnvelope]
    next_cursor: str | None


router = APIRouter(prefix="/v1/runs", tags=["runs"])


def _owner_filter(request: Request, principal: Principal | None) -> dict[str, Any]:
    """With ``REQUIRE_KEYS`` a key sees its own runs (an admin sees all); otherwise runs are open."""
    if not request.app.state.settings.require_keys:
        return {}
    if principal is None:
        raise ApiError(401, "an API key is required", headers={"WWW-Authenticate": "Bearer"})
    return {} if principal.is_admin else {"only_key": True, "api_key_id": principal.key_id}


@router.get("", response_model=RunPage, responses=responses(401, 422, 500))
def list_runs(
    engines: EnginesDep,
    request: Request,
    principal: OptionalPrincipal,
    kind: Literal["estimator", "scorer"] | None = None,
    name: Annotated[str | None, Query(max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=256)] = None,
) -> Response:
    """Runs, newest first; pass ``next_cursor`` back as ``cursor`` for the next page."""
    before = cursors.decode_seq(cursor) if cursor else None
    with engines.read.connect() as conn:
        rows = runs_repo.list_page(
            conn, kind=kind, name=name, limit=limit + 1, before_seq=before, **_owner_filter(request, principal)
        )
    page, more = rows[:limit], len(rows) > limit
    next_cursor = cursors.encode(page[-1].seq) if more else None
    body = b'{"items":[' + b",".join(envelope_json(r, cached=True) for r in page) + b"],"
    body += b'"next_cursor":' + json.dumps(next_cursor).encode() + b"}"
    return Response(body, media_type="application/json")


@router.get("/{run_id}", response_model=RunEnvelope, responses=responses(401, 404, 500))
def get_run(run_id: str, request: Request, principal: OptionalPrincipal, engines: EnginesDep) -> Response:
    """One stored run (``cached`` is true: it is read from the store)."""
    with engines.read.connect() as conn:
        row = runs_repo.get(conn, run_id)
    owner = _owner_filter(request, principal)
    if row is None or (owner.get("only_key") and row.api_key_id != owner["api_key_id"]):
        raise ApiError(404, f"no run {run_id!r}")
    return Response(envelope_json(row, cached=True), media_type="application/json")
