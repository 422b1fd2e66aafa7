"""The bootstrap admin key at every start: ``ESTIBENCH_ADMIN_KEY`` is honoured on each start (a new value replaces
and revokes the old key, a revoked configured key works again), and without one the first start generates a key,
keeps only its hash and prints it once to the terminal; the log never carries a key."""

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from db.models import ApiKey
from db.repositories import api_keys
from db.repositories.api_keys import ApiKeyRow
from tests.factories import serving
from usecases.api_keys import ensure_bootstrap_admin
from usecases.services import Services
from usecases.settings import Settings

OLD = "ek_admin_old_configured_value"
NEW = "ek_admin_new_configured_value"


@contextmanager
def started(settings: Settings, admin_key: str | None) -> Iterator[TestClient]:
    """One server start (lifespan included) with ``admin_key`` configured."""
    with serving(settings, admin_key=admin_key) as c:
        yield c


def status_as(client: TestClient, token: str) -> int:
    return client.get("/v1/api-keys", headers={"Authorization": f"Bearer {token}"}).status_code


def stored_hashes(client: TestClient) -> list[str]:
    services = client.app.state.services  # type: ignore[attr-defined]
    with services.engines.read.connect() as conn:
        return list(conn.execute(select(ApiKey.key_hash)).scalars())


@pytest.mark.slow
def test_a_new_configured_value_replaces_and_revokes_the_old_key(
    settings: Settings, capfd: pytest.CaptureFixture[str]
) -> None:
    with started(settings, OLD) as c:
        assert status_as(c, OLD) == 200
    capfd.readouterr()
    with started(settings, NEW) as c:
        assert status_as(c, NEW) == 200
        assert status_as(c, OLD) == 401
        keys = c.get("/v1/api-keys", headers={"Authorization": f"Bearer {NEW}"}).json()["items"]
    err = capfd.readouterr().err
    assert [k["revoked_at"] is None for k in keys] == [False, True]
    assert all(k["scopes"] == ["admin"] for k in keys)
    assert "ESTIBENCH_ADMIN_KEY changed" in err and keys[0]["id"] in err
    assert OLD not in err and NEW not in err
    with started(settings, NEW) as c:  # the same value again: nothing changes
        assert status_as(c, NEW) == 200
        assert len(c.get("/v1/api-keys", headers={"Authorization": f"Bearer {NEW}"}).json()["items"]) == 2


@pytest.mark.slow
def test_a_revoked_configured_key_works_again_after_a_restart(settings: Settings) -> None:
    with started(settings, OLD) as c:
        key_id = c.get("/v1/api-keys", headers={"Authorization": f"Bearer {OLD}"}).json()["items"][0]["id"]
        r = c.delete(f"/v1/api-keys/{key_id}", headers={"Authorization": f"Bearer {OLD}"})
        assert r.status_code == 200 and r.json()["revoked_at"] is not None
        assert status_as(c, OLD) == 401  # no admin key is left working
    with started(settings, OLD) as c:
        assert status_as(c, OLD) == 200
    with started(settings, NEW) as c:
        assert status_as(c, NEW) == 200
        assert status_as(c, OLD) == 401


def test_the_first_start_without_a_configured_key_prints_one_once(
    settings: Settings, capfd: pytest.CaptureFixture[str]
) -> None:
    with started(settings, None) as c:
        err = capfd.readouterr().err
        printed = [line.strip() for line in err.splitlines() if line.strip().startswith("ek_")]
        assert len(printed) == 1
        token = printed[0]
        assert status_as(c, token) == 200
        assert "ESTIBENCH_ADMIN_KEY=" in err and "DELETE /v1/api-keys/" in err
        assert token not in stored_hashes(c) and len(stored_hashes(c)) == 1
        logged = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
        assert logged and not any(token in json.dumps(rec) for rec in logged)
    with started(settings, None) as c:  # a second start: an admin key exists, nothing is generated or printed
        assert "ek_" not in capfd.readouterr().err
        assert len(stored_hashes(c)) == 1
        assert status_as(c, token) == 200
    with started(settings, NEW) as c:  # configuring a key later replaces the generated one
        assert status_as(c, NEW) == 200
        assert status_as(c, token) == 401


def test_no_key_is_generated_when_an_admin_key_exists(settings: Settings, capfd: pytest.CaptureFixture[str]) -> None:
    with started(settings, OLD) as c:
        assert status_as(c, OLD) == 200
    capfd.readouterr()
    with started(settings, None) as c:
        assert "ek_" not in capfd.readouterr().err
        assert len(stored_hashes(c)) == 1
        assert status_as(c, OLD) == 200


def test_a_configured_key_of_the_maximum_token_length_works(settings: Settings) -> None:
    """Presented tokens are refused unread above 256 characters; a configured admin key of exactly 256 works."""
    longest = "k" * 256
    with started(settings, longest) as client:
        assert status_as(client, longest) == 200
        assert status_as(client, longest + "k") == 401


def test_a_key_is_generated_when_only_non_admin_keys_are_active(
    settings: Settings, capfd: pytest.CaptureFixture[str]
) -> None:
    """Active keys without the admin scope do not count: with the only admin key revoked, a new one is generated."""
    with started(settings, OLD) as c:
        auth = {"Authorization": f"Bearer {OLD}"}
        r = c.post("/v1/api-keys", json={"name": "runner", "scopes": ["estimators:run"]}, headers=auth)
        assert r.status_code == 201, r.text
        admin_id = next(k["id"] for k in c.get("/v1/api-keys", headers=auth).json()["items"] if "admin" in k["scopes"])
        assert c.delete(f"/v1/api-keys/{admin_id}", headers=auth).status_code == 200
    capfd.readouterr()
    with started(settings, None) as c:
        err = capfd.readouterr().err
        [token] = [w for w in err.split() if w.startswith("ek_")]
        assert status_as(c, token) == 200 and len(stored_hashes(c)) == 3
        names = {k["name"] for k in c.get("/v1/api-keys", headers={"Authorization": f"Bearer {token}"}).json()["items"]}
        assert "bootstrap admin (generated)" in names
        assert ensure_bootstrap_admin(c.app.state.services) == "none"  # type: ignore[attr-defined]


def test_each_start_reports_what_it_did_and_logs_which_key(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """The start-up step directly, through every outcome: created, replaced, kept, reinstated (which also revokes
    the key that replaced it), generated (announced once with its id), none. The log names key ids, never keys."""
    notices: list[str] = []

    def start(admin_key: str | None) -> tuple[str, list[str]]:
        services = Services(settings.model_copy(update={"admin_key": admin_key}))
        caplog.clear()
        with caplog.at_level("INFO", logger="estibench"):
            action = ensure_bootstrap_admin(services, announce=notices.append)
        services.dispose()
        return action, [r.getMessage() for r in caplog.records if r.name.startswith("estibench")]

    def revoke(key_id: str) -> None:
        services = Services(settings)
        with services.engines.write.begin() as conn:
            assert api_keys.revoke(conn, key_id, datetime.now(UTC))
        services.dispose()

    def keys() -> dict[str, ApiKeyRow]:
        services = Services(settings)
        with services.engines.read.connect() as conn:
            rows = {r.id: r for r in api_keys.list_all(conn)}
        services.dispose()
        return rows

    action, logged = start(OLD)
    [old] = keys().values()
    assert action == "created" and logged == [f"stored ESTIBENCH_ADMIN_KEY as the bootstrap admin key {old.id}"]
    assert (old.name, old.scopes, old.created_by) == ("bootstrap admin", ["admin"], None)
    assert re.fullmatch(r"bootstrap-[0-9a-f]{6}", old.prefix)
    action, logged = start(NEW)
    [new] = [k for k in keys().values() if k.id != old.id]
    assert action == "replaced" and logged == [
        f"ESTIBENCH_ADMIN_KEY changed: bootstrap admin key {new.id} is active, the previous one ({old.id}) is revoked"
    ]
    assert start(NEW) == ("kept", [])
    action, logged = start(OLD)  # OLD was revoked: reinstated, and NEW (server-made) is revoked in its place
    assert action == "reinstated" and keys()[new.id].revoked_at is not None and keys()[old.id].revoked_at is None
    assert logged == [
        f"ESTIBENCH_ADMIN_KEY changed: bootstrap admin key {old.id} is active, the previous one ({new.id}) is revoked"
    ]
    revoke(old.id)
    action, logged = start(OLD)
    assert action == "reinstated" and logged == [
        f"the bootstrap admin key {old.id} had been revoked; ESTIBENCH_ADMIN_KEY holds it, so it works again"
    ]
    revoke(old.id)
    action, logged = start(None)
    [generated] = [k for k in keys().values() if k.id not in (old.id, new.id)]
    assert action == "generated" and (generated.name, generated.scopes) == ("bootstrap admin (generated)", ["admin"])
    assert logged == [f"generated the bootstrap admin key {generated.id}; it is printed once on the terminal"]
    [notice] = notices
    assert f"(id {generated.id}) with DELETE /v1/api-keys/{generated.id}" in notice
    assert start(None) == ("none", []) and len(notices) == 1
    revoke(generated.id)
    assert start(None)[0] == "generated" and len(keys()) == 4 and len(notices) == 2  # each generated key is new
