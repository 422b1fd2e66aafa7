"""usecases/api_keys.py: keys are created, listed and revoked by an admin only; a token authenticates as its key
until revoked; scopes are checked by ``require``."""

import pytest

from tests.factories import admin, principal
from usecases.api_keys import authenticate, create_key, hash_key, list_keys, require, revoke_key
from usecases.errors import Forbidden, NotFound, Unauthorized
from usecases.services import Services


def test_a_created_key_authenticates_with_its_scopes_and_is_stored_only_as_its_hmac(services: Services) -> None:
    row, token = create_key(services, admin(services), "alice", ["submissions:write", "submissions:write"])
    assert row.scopes == ["submissions:write"] and row.name == "alice" and row.revoked_at is None
    assert token.startswith(f"ek_{row.prefix}_") and len(row.prefix) == 8
    who = authenticate(services, token)
    assert (who.key_id, who.name, who.scopes) == (row.id, "alice", frozenset({"submissions:write"}))
    assert who.has("submissions:write") and not who.has("benchmarks:write") and not who.is_admin
    with services.engines.read.connect() as conn:
        stored = conn.exec_driver_sql("SELECT key_hash FROM api_key WHERE id = ?", (row.id,)).scalar()
    assert stored == hash_key(services.secret_key, token) and token not in stored


def test_only_an_admin_manages_keys(services: Services) -> None:
    alice = principal(services, "benchmarks:write", name="alice")
    with pytest.raises(Forbidden):
        create_key(services, alice, "bob", ["submissions:write"])
    with pytest.raises(Forbidden):
        list_keys(services, alice)
    with pytest.raises(Forbidden):
        revoke_key(services, alice, alice.key_id)
    with pytest.raises(Unauthorized):
        require(None, "admin")
    assert require(alice, "benchmarks:write") is alice
    boss = admin(services)
    assert boss.has("benchmarks:write") and boss.has("estimators:run")  # admin holds every scope
    assert sorted(k.name for k in list_keys(services, boss)) == sorted(["alice", boss.name])


def test_a_revoked_key_no_longer_authenticates_and_keeps_its_first_revocation(services: Services) -> None:
    boss = admin(services)
    row, token = create_key(services, boss, "temp", ["estimators:run"])
    first = revoke_key(services, boss, row.id)
    assert first.revoked_at is not None
    assert revoke_key(services, boss, row.id).revoked_at == first.revoked_at
    with pytest.raises(Unauthorized):
        authenticate(services, token)
    with pytest.raises(NotFound):
        revoke_key(services, boss, "no-such-key")


def test_authentication_without_unknown_and_overlong_tokens(services: Services) -> None:
    assert authenticate(services, None) is None  # anonymous
    for token in ("ek_00000000_unknown", "ek_" + "x" * 254):
        with pytest.raises(Unauthorized):
            authenticate(services, token)
