"""``/v1/api-keys`` (admin): create (the key is shown once), list, revoke."""

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import BaseModel, Field, StringConstraints

from api.auth import KeyHolder
from api.deps import ServicesDep
from api.problems import COMMON, responses
from service.types import StrictModel
from usecases import api_keys
from usecases.api_keys import SCOPES
from usecases.errors import Conflict, Forbidden, NotFound, Unauthorized

Scope = Annotated[str, StringConstraints(pattern="^(estimators:run|benchmarks:write|submissions:write|admin)$")]


class ApiKeyIn(StrictModel):
    name: Annotated[str, StringConstraints(min_length=1, max_length=128)] = Field(description="Who holds the key.")
    scopes: list[Scope] = Field(min_length=1, max_length=len(SCOPES), description=f"Subset of {list(SCOPES)}.")


class ApiKeyOut(BaseModel):
    id: str
    prefix: str
    name: str
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None


class ApiKeyCreated(ApiKeyOut):
    key: str = Field(description="The secret key. It is shown only in this response; store it now.")


class ApiKeyList(BaseModel):
    items: list[ApiKeyOut]


router = APIRouter(prefix="/v1/api-keys", tags=["api-keys"])
AUTH = (Unauthorized, Forbidden)


def _out(row: Any) -> dict[str, Any]:
    return {k: getattr(row, k) for k in ApiKeyOut.model_fields}


@router.post("", status_code=201, response_model=ApiKeyCreated, responses=responses(*COMMON, *AUTH, Conflict))
def create_key(body: ApiKeyIn, caller: KeyHolder, services: ServicesDep) -> dict[str, Any]:
    """Create a key with the given scopes (admin only)."""
    row, token = api_keys.create_key(services, caller, body.name, body.scopes)
    return {**_out(row), "key": token}


@router.get("", response_model=ApiKeyList, responses=responses(*AUTH, 500))
def list_keys(caller: KeyHolder, services: ServicesDep) -> dict[str, Any]:
    """Every key (never the secret), oldest first (admin only)."""
    return {"items": [_out(r) for r in api_keys.list_keys(services, caller)]}


@router.delete("/{key_id}", response_model=ApiKeyOut, responses=responses(*AUTH, NotFound, 500))
def revoke_key(key_id: str, caller: KeyHolder, services: ServicesDep) -> dict[str, Any]:
    """Revoke a key; it answers 401 from now on. Revoking twice keeps the first revocation time."""
    return _out(api_keys.revoke_key(services, caller, key_id))
