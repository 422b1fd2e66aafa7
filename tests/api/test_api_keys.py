"""API keys: admin-only management, shown once, HMAC-hashed at rest, scopes, revocation, 401 vs 403."""

import hashlib
import hmac
import re

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from tests.factories import ADMIN, api_key


def test_create_list_revoke(client: TestClient, settings) -> None:
    r = client.post("/v1/api-keys", json={"name": "alice", "scopes": ["submissions:write"]}, headers=ADMIN)
    assert r.status_code == 201
    created = r.json()
    assert created["key"].startswith(f"ek_{created['prefix']}_")
    # 4 random bytes of prefix (8 hex digits) and 30 of secret (40 URL-safe base64 characters, 240 bits)
    assert re.fullmatch(r"ek_[0-9a-f]{8}_[A-Za-z0-9_-]{40}", created["key"]), created["key"]
    listing = client.get("/v1/api-keys", headers=ADMIN).json()["items"]
    mine = [k for k in listing if k["id"] == created["id"]]
    assert len(mine) == 1 and "key" not in mine[0] and mine[0]["scopes"] == ["submissions:write"]
    eng = create_engine(settings.database_url, poolclass=NullPool)
    with eng.connect() as conn:
        stored = conn.execute(text("SELECT key_hash FROM api_key WHERE id = :i"), {"i": created["id"]}).scalar()
    eng.dispose()
    assert stored == hmac.new(b"test-secret", created["key"].encode(), hashlib.sha256).hexdigest()
    assert created["key"] not in stored
    revoked = client.delete(f"/v1/api-keys/{created['id']}", headers=ADMIN)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    assert client.get("/v1/api-keys", headers={"X-API-Key": created["key"]}).status_code == 401


def test_management_needs_admin(client: TestClient) -> None:
    body = {"name": "x", "scopes": ["admin"]}
    assert client.post("/v1/api-keys", json=body).status_code == 401
    assert client.post("/v1/api-keys", json=body, headers={"X-API-Key": "ek_nope_nope"}).status_code == 401
    weak = api_key(client, "estimators:run")
    r = client.post("/v1/api-keys", json=body, headers=weak)
    assert r.status_code == 403 and r.headers["content-type"] == "application/problem+json"
    assert client.get("/v1/api-keys", headers=weak).status_code == 403
    assert client.delete("/v1/api-keys/whatever", headers=weak).status_code == 403


def test_bearer_and_header_forms(client: TestClient) -> None:
    key = api_key(client, "admin")["X-API-Key"]
    assert client.get("/v1/api-keys", headers={"Authorization": f"Bearer {key}"}).status_code == 200
    assert client.get("/v1/api-keys", headers={"Authorization": f"Basic {key}"}).status_code == 401


def test_unknown_scope_is_422(client: TestClient) -> None:
    r = client.post("/v1/api-keys", json={"name": "x", "scopes": ["root"]}, headers=ADMIN)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"][:2] == ["body", "scopes"]


def test_revoking_unknown_key_is_404(client: TestClient) -> None:
    assert client.delete("/v1/api-keys/nope", headers=ADMIN).status_code == 404
