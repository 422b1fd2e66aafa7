"""``GET /v1/health``: liveness plus a database round trip."""

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from api import limiters
from api.deps import ServicesDep
from api.problems import problem_response, responses
from api.schemas.health import HEALTHY, Health

router = APIRouter(prefix="/v1", tags=["health"])


@router.get("/health", response_model=Health, responses=responses(500, 503))
async def health(request: Request, services: ServicesDep) -> JSONResponse:
    """200 when the service and its database answer; 503 problem when the database is unreachable. The database
    round trip runs off the event loop and is reused for a second (a stopped database shows within about that)."""
    probe = services.database_probe
    ok = probe.fresh()
    if ok is None:
        ok = await anyio.to_thread.run_sync(probe.status, limiter=limiters.health())
    if not ok:
        return problem_response(request, 503, "The database is unreachable.")
    return JSONResponse(HEALTHY)
