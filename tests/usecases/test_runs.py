"""usecases/runs.py: which stored runs a caller lists and reads. An admin sees every run; a run made with a key
only that key (and admins); anonymous runs everyone, except with ``REQUIRE_KEYS``."""

from collections.abc import Iterator

import pytest

from tests.factories import admin, principal, stored_run
from usecases.errors import NotFound, Unauthorized
from usecases.runs import get_run, list_runs
from usecases.services import Services
from usecases.settings import Settings


def listed(services: Services, who: object) -> list[str]:
    return [r.id for r in list_runs(services, who, kind=None, name=None, limit=50, cursor=None).items]


def test_runs_are_visible_to_their_key_admins_and_anonymous_runs_to_all(services: Services) -> None:
    alice = principal(services, "estimators:run", name="alice")
    bob = principal(services, "estimators:run", name="bob")
    anon, mine = stored_run(services, None), stored_run(services, alice, result={"total": 7.0})
    assert listed(services, alice) == [mine.id, anon.id]  # newest first
    assert listed(services, bob) == listed(services, None) == [anon.id]
    assert listed(services, admin(services)) == [mine.id, anon.id]
    got = get_run(services, alice, mine.id)
    assert (got.result, got.api_key_id, got.kind, got.name) == ('{"total": 7.0}', alice.key_id, "estimator", "test.run")
    with pytest.raises(NotFound):  # another key's run does not exist for bob
        get_run(services, bob, mine.id)
    assert get_run(services, bob, anon.id).id == anon.id


@pytest.fixture
def locked(settings: Settings) -> Iterator[Services]:
    s = Services(settings.model_copy(update={"queue": "off", "require_keys": True}))
    yield s
    s.dispose()


def test_with_required_keys_each_key_sees_only_its_own_runs(locked: Services) -> None:
    alice = principal(locked, "estimators:run", name="alice")
    anon, mine = stored_run(locked, None), stored_run(locked, alice)
    assert listed(locked, alice) == [mine.id]
    with pytest.raises(NotFound):
        get_run(locked, alice, anon.id)
    with pytest.raises(Unauthorized):
        listed(locked, None)
    assert listed(locked, admin(locked)) == [mine.id, anon.id]
