"""usecases/challenges.py called directly: owners (the creator listed first, co-owners added and removed by the
creator or an admin only, with the refusals naming the field), participants (a key bound to the benchmark, shown
once; paging; revocation kept at its first time) and the audit log (newest first, paged). Refused calls leave the
stored rows and the audit log as they were."""

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text

from db.repositories import api_keys as keys_repo
from db.repositories import owners as owners_repo
from db.repositories import participants as part_repo
from tests.factories import admin, principal, stored_benchmark
from usecases import challenges, cursors
from usecases.api_keys import Principal, authenticate, revoke_key
from usecases.challenges import (
    Owner,
    add_owner,
    audit_log,
    invite,
    list_owners,
    list_participants,
    remove_owner,
    revoke,
)
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, InvalidFields, NotFound, Unauthorized
from usecases.services import Services


def _log(services: Services, bench_id: str) -> list[tuple[str, str | None, str | None, dict[str, Any]]]:
    """The whole audit log, newest first: (action, actor, subject, details)."""
    page = audit_log(services, admin(services), bench_id, 100, None)
    return [(e.action, e.actor_key_id, e.subject, e.details) for e in page.items]


def _co_owners(services: Services, bench_id: str) -> list[tuple[str, str | None]]:
    with services.engines.read.connect() as conn:
        return [(r.api_key_id, r.added_by) for r, _ in owners_repo.list_for(conn, bench_id)]


def _setup(services: Services) -> tuple[Principal, str]:
    creator = principal(services, "benchmarks:write", name="creator")
    return creator, stored_benchmark(services, creator).row.id


def _between(before: datetime, iso: str, after: datetime) -> bool:
    return utc_iso(before) <= iso <= utc_iso(after)


def test_owners_are_listed_creator_first_then_co_owners_in_the_order_added(services: Services) -> None:
    creator = principal(services, "benchmarks:write", name="creator")
    view = stored_benchmark(services, creator)
    bench_id = view.row.id
    bob = principal(services, "benchmarks:write", name="bob")
    carol = principal(services, "submissions:write", name="carol")
    boss = admin(services)
    before = datetime.now(UTC)
    added = add_owner(services, creator, bench_id, bob.key_id)
    after = datetime.now(UTC)
    assert (added.key_id, added.name, added.creator, added.added_by) == (bob.key_id, "bob", False, creator.key_id)
    assert _between(before, added.added_at, after)
    by_admin = add_owner(services, boss, bench_id, carol.key_id)
    assert (by_admin.key_id, by_admin.name, by_admin.added_by) == (carol.key_id, "carol", boss.key_id)
    expected = [
        Owner(creator.key_id, "creator", True, None, utc_iso(view.row.created_at)),
        added,
        by_admin,
    ]
    for who in (creator, bob, boss):  # the creator, a co-owner and an admin all read it
        assert list_owners(services, who, bench_id) == expected
    assert _log(services, bench_id)[:2] == [
        ("owner.added", boss.key_id, carol.key_id, {"name": "carol"}),
        ("owner.added", creator.key_id, bob.key_id, {"name": "bob"}),
    ]
    with pytest.raises(Unauthorized):
        list_owners(services, None, bench_id)
    with pytest.raises(Forbidden):
        list_owners(services, principal(services, "benchmarks:write", name="dave"), bench_id)
    with pytest.raises(NotFound):
        list_owners(services, creator, "no-such-benchmark")


def test_a_benchmark_without_its_creators_key_lists_its_co_owners_only(services: Services) -> None:
    creator, bench_id = _setup(services)
    bob = principal(services, "benchmarks:write", name="bob")
    added = add_owner(services, creator, bench_id, bob.key_id)
    with services.engines.write.begin() as conn:  # as for benchmarks older than ownership
        conn.execute(text("UPDATE benchmark SET owner_key_id = NULL WHERE id = :id"), {"id": bench_id})
    assert list_owners(services, admin(services), bench_id) == [added]
    assert list_owners(services, bob, bench_id) == [added]


def test_only_the_creator_or_an_admin_changes_owners_and_refusals_change_nothing(services: Services) -> None:
    creator, bench_id = _setup(services)
    bob = principal(services, "benchmarks:write", name="bob")
    carol = principal(services, "benchmarks:write", name="carol")
    add_owner(services, creator, bench_id, bob.key_id)
    log = _log(services, bench_id)
    with pytest.raises(Forbidden, match="created the benchmark"):  # a co-owner is an owner, not the creator
        add_owner(services, bob, bench_id, carol.key_id)
    with pytest.raises(Forbidden, match="created the benchmark"):
        remove_owner(services, bob, bench_id, bob.key_id)
    with pytest.raises(Forbidden, match="owners or an admin"):
        add_owner(services, carol, bench_id, carol.key_id)
    with pytest.raises(Unauthorized):
        add_owner(services, None, bench_id, carol.key_id)
    with pytest.raises(Unauthorized):
        remove_owner(services, None, bench_id, bob.key_id)
    with pytest.raises(NotFound):
        add_owner(services, creator, "no-such-benchmark", carol.key_id)
    assert _co_owners(services, bench_id) == [(bob.key_id, creator.key_id)]
    assert _log(services, bench_id) == log
    remove_owner(services, admin(services), bench_id, bob.key_id)  # an admin manages owners too
    assert _co_owners(services, bench_id) == []


def _refusal(exc: InvalidFields) -> tuple[list, str, str]:
    (error,) = exc.errors
    return error["loc"], error["type"], error["msg"]


def test_a_key_that_cannot_be_an_owner_is_refused_naming_the_key_id(services: Services) -> None:
    creator, bench_id = _setup(services)
    boss = admin(services)
    gone = principal(services, "benchmarks:write", name="gone")
    revoke_key(services, boss, gone.key_id)
    _, token = invite(services, creator, bench_id, "pat", None)
    bound = authenticate(services, token)
    assert bound is not None
    log = _log(services, bench_id)
    for key_id in ("no-such-key", gone.key_id):
        with pytest.raises(InvalidFields) as refused:
            add_owner(services, creator, bench_id, key_id)
        assert _refusal(refused.value) == (["body", "key_id"], "value_error", "an unrevoked key's id")
    with pytest.raises(InvalidFields) as refused:
        add_owner(services, creator, bench_id, bound.key_id)
    assert _refusal(refused.value) == (["body", "key_id"], "value_error", "not a participant's key")
    assert _co_owners(services, bench_id) == [] and _log(services, bench_id) == log


def test_adding_an_owner_twice_or_the_creator_is_a_conflict(services: Services) -> None:
    creator, bench_id = _setup(services)
    bob = principal(services, "benchmarks:write", name="bob")
    add_owner(services, creator, bench_id, bob.key_id)
    log = _log(services, bench_id)
    for key_id in (bob.key_id, creator.key_id):
        with pytest.raises(Conflict):
            add_owner(services, admin(services), bench_id, key_id)
    assert _co_owners(services, bench_id) == [(bob.key_id, creator.key_id)] and _log(services, bench_id) == log


def test_removing_a_co_owner_and_the_refusals(services: Services) -> None:
    creator, bench_id = _setup(services)
    bob = principal(services, "benchmarks:write", name="bob")
    carol = principal(services, "benchmarks:write", name="carol")
    add_owner(services, creator, bench_id, bob.key_id)
    add_owner(services, creator, bench_id, carol.key_id)
    log = _log(services, bench_id)
    with pytest.raises(Conflict):
        remove_owner(services, creator, bench_id, creator.key_id)
    with pytest.raises(NotFound):
        remove_owner(services, creator, bench_id, "no-such-key")
    assert _log(services, bench_id) == log
    assert remove_owner(services, creator, bench_id, bob.key_id) is None
    assert _co_owners(services, bench_id) == [(carol.key_id, creator.key_id)]
    assert _log(services, bench_id) == [("owner.removed", creator.key_id, bob.key_id, {}), *log]
    with pytest.raises(NotFound):  # once removed, it is no co-owner
        remove_owner(services, creator, bench_id, bob.key_id)
    with pytest.raises(Forbidden):  # and no longer an owner
        list_owners(services, bob, bench_id)


def test_an_invited_participant_gets_a_key_bound_to_the_benchmark(services: Services) -> None:
    creator, bench_id = _setup(services)
    before = datetime.now(UTC)
    view, token = invite(services, creator, bench_id, "Pat", "team-x")
    after = datetime.now(UTC)
    who = authenticate(services, token)
    assert who == Principal(view.key_id, "participant Pat", frozenset({"submissions:write"}), bench_id)
    assert (view.benchmark_id, view.display_name, view.team, view.revoked_at) == (bench_id, "Pat", "team-x", None)
    assert _between(before, view.created_at, after)
    with services.engines.read.connect() as conn:
        key = keys_repo.get(conn, view.key_id)
        row = part_repo.get(conn, view.id)
    assert key is not None and row is not None
    assert (key.scopes, key.created_by, key.benchmark_id, key.revoked_at) == (
        ["submissions:write"],
        creator.key_id,
        bench_id,
        None,
    )
    assert token.startswith(f"ek_{key.prefix}_")
    assert (row.api_key_id, row.display_name, row.team, row.created_by, row.revoked_at) == (
        view.key_id,
        "Pat",
        "team-x",
        creator.key_id,
        None,
    )
    assert utc_iso(row.created_at) == view.created_at
    assert _log(services, bench_id)[0] == (
        "participant.invited",
        creator.key_id,
        view.id,
        {"display_name": "Pat", "team": "team-x"},
    )
    long = "n" * 130
    second, token2 = invite(services, admin(services), bench_id, long, None)
    got = authenticate(services, token2)
    assert got is not None and got.name == ("participant " + long)[:128] and len(got.name) == 128
    assert second.team is None and second.display_name == long


def test_only_owners_invite_and_a_key_collision_stores_nothing(services: Services, monkeypatch: Any) -> None:
    creator, bench_id = _setup(services)
    bob = principal(services, "benchmarks:write", name="bob")
    add_owner(services, creator, bench_id, bob.key_id)
    invite(services, bob, bench_id, "by-co-owner", None)  # a co-owner invites
    for who, error in ((None, Unauthorized), (principal(services, "submissions:write", name="x"), Forbidden)):
        with pytest.raises(error):
            invite(services, who, bench_id, "nobody", None)
    fixed = ("ek_00000000_fixedtokenfixedtokenfixedtokenfixedto", "00000000")
    monkeypatch.setattr(challenges, "new_token", lambda: fixed)
    invite(services, creator, bench_id, "first", None)
    log = _log(services, bench_id)
    with pytest.raises(Conflict):
        invite(services, creator, bench_id, "second", None)
    page = list_participants(services, creator, bench_id, 10, None)
    assert [p.display_name for p in page.items] == ["by-co-owner", "first"]
    assert _log(services, bench_id) == log


def test_participants_are_paged_oldest_first_with_the_revoked_ones(services: Services) -> None:
    creator, bench_id = _setup(services)
    made = [invite(services, creator, bench_id, f"p{i}", None)[0] for i in range(5)]
    revoked = revoke(services, creator, bench_id, made[1].id)
    seen, cursor, pages = [], None, 0
    while True:
        page = list_participants(services, creator, bench_id, 2, cursor)
        seen += page.items
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert pages == 3 and [p.id for p in seen] == [p.id for p in made]
    assert seen[1] == revoked and seen[0] == made[0]
    assert list_participants(services, creator, bench_id, 5, None).next_cursor is None
    with pytest.raises(Unauthorized):
        list_participants(services, None, bench_id, 5, None)
    with pytest.raises(Forbidden):
        list_participants(services, principal(services, "submissions:write", name="x"), bench_id, 5, None)
    with pytest.raises(InvalidFields):
        list_participants(services, creator, bench_id, 5, cursors.encode(-1))


def test_revoking_a_participant_keeps_the_first_time_and_one_audit_entry(services: Services) -> None:
    creator, bench_id = _setup(services)
    view, token = invite(services, creator, bench_id, "Pat", None)
    other, _ = invite(services, creator, bench_id, "Kim", None)
    log = _log(services, bench_id)
    before = datetime.now(UTC)
    first = revoke(services, creator, bench_id, view.id)
    after = datetime.now(UTC)
    assert first.revoked_at is not None and _between(before, first.revoked_at, after)
    assert (first.id, first.display_name, first.created_at) == (view.id, "Pat", view.created_at)
    with pytest.raises(Unauthorized):
        authenticate(services, token)
    with services.engines.read.connect() as conn:
        key = keys_repo.get(conn, view.key_id)
    assert key is not None and key.revoked_at is not None and utc_iso(key.revoked_at) == first.revoked_at
    with services.engines.read.connect() as conn:  # the participant's own row records it too
        own = conn.execute(text("SELECT revoked_at FROM participant WHERE id = :id"), {"id": view.id}).scalar_one()
    assert (
        own is not None
        and utc_iso(own if isinstance(own, datetime) else datetime.fromisoformat(own)) == first.revoked_at
    )
    again = revoke(services, admin(services), bench_id, view.id)
    assert again == first
    entry = ("participant.revoked", creator.key_id, view.id, {"key_id": view.key_id})
    assert _log(services, bench_id) == [entry, *log]
    assert list_participants(services, creator, bench_id, 5, None).items[1].revoked_at is None  # Kim's is live
    assert other.revoked_at is None


def test_revoking_an_unknown_or_another_benchmarks_participant_is_not_found(services: Services) -> None:
    creator, bench_id = _setup(services)
    other_id = stored_benchmark(services, creator, name="other").row.id
    elsewhere, token = invite(services, creator, other_id, "Pat", None)
    for participant_id in ("no-such-participant", elsewhere.id):
        with pytest.raises(NotFound):
            revoke(services, creator, bench_id, participant_id)
    assert authenticate(services, token) is not None  # untouched
    with pytest.raises(Forbidden):
        revoke(services, principal(services, "benchmarks:write", name="x"), other_id, elsewhere.id)
    with pytest.raises(Unauthorized):
        revoke(services, None, other_id, elsewhere.id)
    assert list_participants(services, creator, other_id, 5, None).items == [elsewhere]


def test_the_audit_log_is_paged_newest_first(services: Services) -> None:
    creator, bench_id = _setup(services)
    before = datetime.now(UTC)
    names = [f"p{i}" for i in range(4)]
    for name in names:
        invite(services, creator, bench_id, name, None)
    after = datetime.now(UTC)
    entries, cursor = [], None
    while True:
        page = audit_log(services, creator, bench_id, 2, cursor)
        entries += page.items
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert [e.action for e in entries] == ["participant.invited"] * 4 + ["benchmark.created"]
    assert [e.details.get("display_name") for e in entries[:4]] == names[::-1]
    assert [e.seq for e in entries] == sorted((e.seq for e in entries), reverse=True)
    assert all(_between(before, e.at, after) for e in entries[:4])
    assert entries[4].subject == "1" and entries[4].actor_key_id == creator.key_id
    assert len(audit_log(services, creator, bench_id, 5, None).items) == 5
    assert audit_log(services, creator, bench_id, 5, None).next_cursor is None
    with pytest.raises(Unauthorized):
        audit_log(services, None, bench_id, 5, None)
    with pytest.raises(Forbidden):
        audit_log(services, principal(services, "submissions:write", name="x"), bench_id, 5, None)
    with pytest.raises(InvalidFields):
        audit_log(services, creator, bench_id, 5, cursors.encode("x"))
