"""``/v1/api-keys``: create (the key is shown once), list, revoke (admin); any key reads itself and rotates its
secret."""

from typing import Any

from fastapi import APIRouter

from api.auth import Admin, AnyKey
from api.deps import ServicesDep
from api.problems import COMMON, responses
from api.schemas.api_keys import ApiKeyCreated, ApiKeyIn, ApiKeyList, ApiKeyOut
from usecases import api_keys
from usecases.errors import Conflict, Forbidden, NotFound, Unauthorized

router = APIRouter(prefix="/v1/api-keys", tags=["api-keys"])
AUTH = (Unauthorized, Forbidden)


def _out(row: Any) -> dict[str, Any]:
    return {k: getattr(row, k) for k in ApiKeyOut.model_fields}


@router.post("", status_code=201, response_model=ApiKeyCreated, responses=responses(*COMMON, *AUTH, Conflict))
def create_key(body: ApiKeyIn, caller: Admin, services: ServicesDep) -> dict[str, Any]:
    """Create a key with the given scopes (admin only)."""
    row, token = api_keys.create_key(services, caller, body.name, body.scopes)
    return {**_out(row), "key": token}


@router.get("/self", response_model=ApiKeyOut, responses=responses(Unauthorized, NotFound, 500))
def own_key(caller: AnyKey, services: ServicesDep) -> dict[str, Any]:
    """The caller's own key (its id, e.g. to be made a benchmark's co-owner; never the secret)."""
    return _out(api_keys.own_key(services, caller))


@router.post("/self/rotate", response_model=ApiKeyCreated, responses=responses(Unauthorized, NotFound, Conflict, 500))
def rotate_own_key(caller: AnyKey, services: ServicesDep) -> dict[str, Any]:
    """A new secret for the caller's own key, shown once (same id, scopes and benchmark; new prefix): the old secret
    is refused from now on."""
    row, token = api_keys.rotate_own(services, caller)
    return {**_out(row), "key": token}


@router.get("", response_model=ApiKeyList, responses=responses(*AUTH, 500))
def list_keys(caller: Admin, services: ServicesDep) -> dict[str, Any]:
    """Every key (never the secret), oldest first (admin only)."""
    return {"items": [_out(r) for r in api_keys.list_keys(services, caller)]}


@router.delete("/{key_id}", response_model=ApiKeyOut, responses=responses(*AUTH, NotFound, 500))
def revoke_key(key_id: str, caller: Admin, services: ServicesDep) -> dict[str, Any]:
    """Revoke a key; it answers 401 from now on. Revoking twice keeps the first revocation time."""
    return _out(api_keys.revoke_key(services, caller, key_id))
