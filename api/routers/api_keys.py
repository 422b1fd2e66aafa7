"""``/v1/api-keys`` (admin): create (the key is shown once), list, revoke."""

import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field, StringConstraints

from api.auth import SCOPES, Admin, hash_key, new_token
from api.deps import EnginesDep
from api.problems import COMMON, ApiError, responses
from db.repositories import api_keys as repo
from db.repositories.api_keys import ApiKeyRow
from service.types import StrictModel

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
AUTH = (401, 403)


def _out(row: ApiKeyRow) -> dict[str, Any]:
    return {k: getattr(row, k) for k in ApiKeyOut.model_fields}


@router.post("", status_code=201, response_model=ApiKeyCreated, responses=responses(*COMMON, *AUTH))
def create_key(body: ApiKeyIn, request: Request, admin: Admin, engines: EnginesDep) -> dict[str, Any]:
    """Create a key with the given scopes (admin only)."""
    token, prefix = new_token()
    row = ApiKeyRow(
        str(uuid.uuid4()), prefix, body.name, sorted(set(body.scopes)), datetime.now(UTC), None, admin.key_id
    )
    with engines.write.begin() as conn:
        if not repo.insert(conn, row, hash_key(request.app.state.secret_key, token)):
            raise ApiError(409, "key collision; retry")
    return {**_out(row), "key": token}


@router.get("", response_model=ApiKeyList, responses=responses(*AUTH, 500))
def list_keys(admin: Admin, engines: EnginesDep) -> dict[str, Any]:
    """Every key (never the secret), oldest first (admin only)."""
    with engines.read.connect() as conn:
        return {"items": [_out(r) for r in repo.list_all(conn)]}


@router.delete("/{key_id}", response_model=ApiKeyOut, responses=responses(*AUTH, 404, 500))
def revoke_key(key_id: str, admin: Admin, engines: EnginesDep) -> dict[str, Any]:
    """Revoke a key; it answers 401 from now on. Revoking twice keeps the first revocation time."""
    with engines.write.begin() as conn:
        repo.revoke(conn, key_id, datetime.now(UTC))
        row = repo.get(conn, key_id)
    if row is None:
        raise ApiError(404, f"no API key {key_id!r}")
    return _out(row)
