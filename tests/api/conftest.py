"""Helpers for API tests: the bootstrap admin and keys with chosen scopes."""

import pytest
from fastapi.testclient import TestClient

ADMIN = {"Authorization": "Bearer ek_admin_test_bootstrap_key"}


def make_key(client: TestClient, *scopes: str, name: str = "someone") -> dict[str, str]:
    r = client.post("/v1/api-keys", json={"name": name, "scopes": list(scopes)}, headers=ADMIN)
    assert r.status_code == 201, r.text
    return {"X-API-Key": r.json()["key"]}


@pytest.fixture
def admin_headers() -> dict[str, str]:
    return ADMIN
