"""usecases/access.py: a caller's role on a benchmark is the first that holds of admin, owner (the creator or a
co-owner), participant (a key bound to it), key, anonymous; owners and admins see everything, a participant's key
writes to its own benchmark only, and a submission is seen in full by its maker, the owners and admins."""

import dataclasses
from datetime import UTC, datetime

import pytest

from db.repositories.benchmarks import BenchmarkRow
from db.repositories.submissions import SubmissionRow
from tests.factories import admin, principal, stored_benchmark
from usecases.access import (
    Access,
    access,
    check_bound,
    check_split,
    on_public_board,
    require_owner,
    sees_submission,
)
from usecases.api_keys import Principal
from usecases.challenges import add_owner
from usecases.errors import Forbidden, Unauthorized
from usecases.services import Services

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _bench(owner_key_id: str | None, bench_id: str = "b1") -> BenchmarkRow:
    return BenchmarkRow(bench_id, "films", "film_mcq", "", "{}", 0, owner_key_id, 1, NOW)


def _key(key_id: str, *scopes: str, bound_to: str | None = None) -> Principal:
    return Principal(key_id, key_id, frozenset(scopes), bound_to)


def _sub(api_key_id: str | None, *, withdrawn: bool = False, public: bool = True) -> SubmissionRow:
    return SubmissionRow(1, "s1", "b1", "m", "{}", api_key_id, NOW, NOW if withdrawn else None, public)


def test_the_role_of_every_kind_of_caller(services: Services) -> None:
    creator = principal(services, "benchmarks:write", name="creator")
    co = principal(services, "benchmarks:write", name="co")
    other = principal(services, "submissions:write", name="other")
    bench = stored_benchmark(services, creator).row
    add_owner(services, creator, bench.id, co.key_id)
    boss = admin(services)
    with services.engines.read.connect() as conn:
        assert access(conn, bench, None) == Access("anonymous", creator=False)
        assert access(conn, bench, boss) == Access("admin", creator=True)
        assert access(conn, bench, creator) == Access("owner", creator=True)
        assert access(conn, bench, co) == Access("owner", creator=False)
        assert access(conn, bench, other) == Access("key", creator=False)
        bound = dataclasses.replace(other, benchmark_id=bench.id)
        assert access(conn, bench, bound) == Access("participant", creator=False)
        elsewhere = dataclasses.replace(other, benchmark_id="another-benchmark")
        assert access(conn, bench, elsewhere) == Access("key", creator=False)
        # an admin key bound to the benchmark is still an admin; a co-owner bound to it is still an owner
        assert access(conn, bench, dataclasses.replace(boss, benchmark_id=bench.id)).role == "admin"
        assert access(conn, bench, dataclasses.replace(co, benchmark_id=bench.id)).role == "owner"
        # a benchmark without a creator key (its key deleted) has no creator: only co-owners own it
        orphan = dataclasses.replace(bench, owner_key_id=None)
        assert access(conn, orphan, creator) == Access("key", creator=False)
        assert access(conn, orphan, co) == Access("owner", creator=False)


def test_the_creator_is_recognised_without_a_co_owner_row(services: Services) -> None:
    with services.engines.read.connect() as conn:
        assert access(conn, _bench("k-creator"), _key("k-creator")) == Access("owner", creator=True)
        assert access(conn, _bench("k-creator"), _key("k-someone")) == Access("key", creator=False)
        assert access(conn, _bench("k-creator"), _key("k-p", bound_to="b1")) == Access("participant", creator=False)


@pytest.mark.parametrize(
    ("role", "sees"),
    [("admin", True), ("owner", True), ("participant", False), ("key", False), ("anonymous", False)],
)
def test_only_owners_and_admins_see_everything(role: str, sees: bool) -> None:
    assert Access(role).sees_everything is sees


def test_owner_actions_need_an_owners_key() -> None:
    with pytest.raises(Unauthorized):
        require_owner(Access("anonymous"), "the audit log")
    for role in ("participant", "key"):
        with pytest.raises(Forbidden):
            require_owner(Access(role), "the audit log")
    for role in ("owner", "admin"):
        require_owner(Access(role), "the audit log")
    require_owner(Access("owner"))


def test_the_private_split_is_for_owners_and_admins() -> None:
    for role in ("participant", "key", "anonymous"):
        with pytest.raises(Forbidden):
            check_split(Access(role), "private")
        check_split(Access(role), "public")
    for role in ("owner", "admin"):
        check_split(Access(role), "private")
        check_split(Access(role), "public")


def test_a_bound_key_writes_to_its_own_benchmark_only() -> None:
    check_bound(_key("k1", "submissions:write"), "b1")  # not bound
    check_bound(_key("k1", "submissions:write", bound_to="b1"), "b1")
    with pytest.raises(Forbidden):
        check_bound(_key("k1", "submissions:write", bound_to="b2"), "b1")
    check_bound(_key("k1", "admin", bound_to="b2"), "b1")


def test_a_submission_is_seen_by_its_maker_the_owners_and_admins() -> None:
    maker, stranger = _key("k-maker"), _key("k-other")
    assert sees_submission(Access("key"), maker, _sub("k-maker")) is True
    assert sees_submission(Access("key"), stranger, _sub("k-maker")) is False
    assert sees_submission(Access("participant"), stranger, _sub("k-maker")) is False
    assert sees_submission(Access("owner"), stranger, _sub("k-maker")) is True
    assert sees_submission(Access("admin"), stranger, _sub(None)) is True
    assert sees_submission(Access("anonymous"), None, _sub(None)) is False  # an anonymous submission: no maker
    assert sees_submission(Access("anonymous"), None, _sub("k-maker")) is False


def test_the_public_board_holds_live_public_submissions() -> None:
    assert on_public_board(_sub("k")) is True
    assert on_public_board(_sub("k", withdrawn=True)) is False
    assert on_public_board(_sub("k", public=False)) is False
    assert on_public_board(_sub("k", withdrawn=True, public=False)) is False
