"""``GET /v1/runs/{id}`` and the keyset-paginated ``GET /v1/runs``."""

import json
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import BaseModel

from api.auth import OptionalCaller
from api.deps import ServicesDep
from api.envelope import RunEnvelope, envelope_json
from api.problems import responses
from usecases import cursors, runs
from usecases.errors import NotFound, Unauthorized


class RunPage(BaseModel):
    items: list[RunEnvelope]
    next_cursor: str | None


router = APIRouter(prefix="/v1/runs", tags=["runs"])


@router.get("", response_model=RunPage, responses=responses(Unauthorized, 422, 500))
def list_runs(
    services: ServicesDep,
    principal: OptionalCaller,
    kind: Literal["estimator", "scorer"] | None = None,
    name: Annotated[str | None, Query(max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=256)] = None,
) -> Response:
    """Runs, newest first (``cached`` false on every one); pass ``next_cursor`` back as ``cursor`` for the next
    page. With ``REQUIRE_KEYS`` a key sees its own runs (an admin all)."""
    page, last = runs.list_runs(
        services, principal, kind=kind, name=name, limit=limit, before_seq=cursors.decode_seq(cursor)
    )
    next_cursor = cursors.encode(last) if last is not None else None
    body = b'{"items":[' + b",".join(envelope_json(r, cached=False) for r in page) + b"],"
    body += b'"next_cursor":' + json.dumps(next_cursor).encode() + b"}"
    return Response(body, media_type="application/json")


@router.get("/{run_id}", response_model=RunEnvelope, responses=responses(Unauthorized, NotFound, 500))
def get_run(run_id: str, principal: OptionalCaller, services: ServicesDep) -> Response:
    """One stored run (``cached`` is false: reading a run is not a call that found it stored)."""
    return Response(
        envelope_json(runs.get_run(services, principal, run_id), cached=False), media_type="application/json"
    )


@router.get(
    "/{run_id}/artifacts/{name}",
    response_class=Response,
    responses={
        200: {
            "description": "The artifact's bytes (an npz archive: application/x-npz).",
            "content": {"application/x-npz": {}, "application/octet-stream": {}},
        }
    }
    | responses(Unauthorized, NotFound, 500),
)
def get_artifact(
    run_id: str,
    name: Annotated[str, Path(max_length=64, description="An artifact name listed in the run's `artifacts`.")],
    principal: OptionalCaller,
    services: ServicesDep,
) -> Response:
    """A file stored with the run (for instance ``weights`` of ``sae.hierarchical_train``), visible like the run."""
    artifact = runs.get_artifact(services, principal, run_id, name)
    suffix = ".npz" if artifact.media_type == "application/x-npz" else ""
    headers = {
        "ETag": f'"{artifact.sha256}"',
        "Content-Disposition": f'attachment; filename="{name}{suffix}"',
        "Cache-Control": "private, max-age=31536000, immutable",
    }
    return Response(artifact.data, media_type=artifact.media_type, headers=headers)
