"""The rate limiter gives a bucket of its own only to a valid key: random tokens share their address's bucket."""

import uuid
from contextlib import AbstractContextManager

from fastapi.testclient import TestClient

from tests.factories import ADMIN, api_key, serving
from usecases.settings import Settings


def limited(settings: Settings) -> AbstractContextManager[TestClient]:
    update = {"rate_limit_per_minute": 1, "rate_limit_burst": 3}  # no token refills during a test, however slow
    return serving(settings, **update)


def test_a_random_token_per_request_does_not_bypass_the_limit(settings: Settings) -> None:
    with limited(settings) as c:
        codes = [c.get("/v1/estimators", headers={"X-API-Key": f"ek_{uuid.uuid4().hex}"}).status_code for _ in range(5)]
        assert codes == [401, 401, 401, 429, 429]
        assert c.get("/v1/estimators").status_code == 429  # the same address, anonymous
        bearer = {"Authorization": f"Bearer ek_{uuid.uuid4().hex}"}
        assert c.get("/v1/estimators", headers=bearer).status_code == 429


def test_a_valid_key_keeps_its_own_bucket_while_its_address_is_limited(settings: Settings) -> None:
    with limited(settings) as c:
        key = api_key(c, "estimators:run")  # one admin request: the admin key's bucket
        for _ in range(3):
            c.get("/v1/estimators", headers={"X-API-Key": uuid.uuid4().hex})
        assert c.get("/v1/estimators").status_code == 429
        assert [c.get("/v1/estimators", headers=key).status_code for _ in range(4)] == [200, 200, 200, 429]
        assert [c.get("/v1/estimators", headers=ADMIN).status_code for _ in range(2)] == [200, 200]
