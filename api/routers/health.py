"""``GET /v1/health``: liveness plus a database round trip."""

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from api.deps import ServicesDep
from api.problems import problem_response, responses
from usecases.version import CODE_VERSION

router = APIRouter(prefix="/v1", tags=["health"])


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    database: Literal["ok"]


@router.get("/health", response_model=Health, responses=responses(500, 503))
def health(request: Request, services: ServicesDep) -> JSONResponse:
    """200 when the service and its database answer; 503 problem when the database is unreachable."""
    if not services.database_ok():
        return problem_response(request, 503, "The database is unreachable.")
    return JSONResponse({"status": "ok", "version": CODE_VERSION, "database": "ok"})
