"""Running a benchmark as a challenge: its owners (the creator and the co-owners it adds), its participants (each
with a key bound to the benchmark, shown once) and the audit log (docs/challenges.md)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from db.repositories import api_keys as keys_repo
from db.repositories import audit as audit_repo
from db.repositories import owners as owners_repo
from db.repositories import participants as part_repo
from db.repositories.api_keys import ApiKeyRow
from db.repositories.benchmarks import BenchmarkRow
from db.repositories.owners import OwnerRow
from db.repositories.participants import ParticipantRow
from usecases import audit, cursors
from usecases.access import access, require_owner
from usecases.api_keys import Principal, hash_key, new_token
from usecases.benchmarks import load
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, NotFound, invalid

if TYPE_CHECKING:
    from usecases.services import Services

PARTICIPANT_SCOPES = ["submissions:write"]


@dataclass(frozen=True)
class Owner:
    """An owner as listed: its key's id and name, whether it created the benchmark, who added it and when."""

    key_id: str
    name: str
    creator: bool
    added_by: str | None
    added_at: str | None


def _manager(services: Services, principal: Principal | None, benchmark_id: str) -> BenchmarkRow:
    """The benchmark, if the caller is its creator or an admin (who manage its owners)."""
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        found = access(conn, loaded.benchmark, principal)
    require_owner(found, "owner changes")
    if not found.creator:
        raise Forbidden("only the key that created the benchmark, or an admin, adds or removes owners")
    return loaded.benchmark


def list_owners(services: Services, principal: Principal | None, benchmark_id: str) -> list[Owner]:
    """The creator (when its key exists; none for benchmarks older than ownership: admins only), then the
    co-owners in the order they were added (owners and admins)."""
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        require_owner(access(conn, loaded.benchmark, principal), "the owners list")
        creator_id = loaded.benchmark.owner_key_id
        creator = keys_repo.get(conn, creator_id) if creator_id else None
        co = owners_repo.list_for(conn, benchmark_id)
    out = [Owner(creator.id, creator.name, True, None, utc_iso(loaded.benchmark.created_at))] if creator else []
    return out + [Owner(r.api_key_id, name, False, r.added_by, utc_iso(r.added_at)) for r, name in co]


def _addable_key(row: ApiKeyRow | None, key_id: str) -> ApiKeyRow:
    loc = ("body", "key_id")
    if row is None or row.revoked_at is not None:
        raise invalid(f"no usable API key {key_id!r}", loc, "value_error", "an unrevoked key's id")
    if row.benchmark_id is not None:
        raise invalid("a participant's key cannot be an owner", loc, "value_error", "not a participant's key")
    return row


def add_owner(services: Services, principal: Principal | None, benchmark_id: str, key_id: str) -> Owner:
    """Make ``key_id`` a co-owner (the creator or an admin); a key that already owns it is a ``Conflict``."""
    bench = _manager(services, principal, benchmark_id)
    now = datetime.now(UTC)
    with services.engines.write.begin() as conn:
        key = _addable_key(keys_repo.get(conn, key_id), key_id)
        if key.id == bench.owner_key_id or not owners_repo.add(
            conn, OwnerRow(benchmark_id, key.id, principal.key_id if principal else None, now)
        ):
            raise Conflict(f"key {key_id!r} already owns this benchmark")
        audit.record(conn, benchmark_id, "owner.added", principal, key.id, name=key.name)
    return Owner(key.id, key.name, False, principal.key_id if principal else None, utc_iso(now))


def remove_owner(services: Services, principal: Principal | None, benchmark_id: str, key_id: str) -> None:
    """Remove a co-owner (the creator or an admin); the creator cannot be removed (``Conflict``), an unknown
    co-owner is ``NotFound``."""
    bench = _manager(services, principal, benchmark_id)
    if key_id == bench.owner_key_id:
        raise Conflict("the key that created the benchmark stays its owner")
    with services.engines.write.begin() as conn:
        if not owners_repo.remove(conn, benchmark_id, key_id):
            raise NotFound(f"key {key_id!r} is not a co-owner of this benchmark")
        audit.record(conn, benchmark_id, "owner.removed", principal, key_id)


@dataclass(frozen=True)
class ParticipantView:
    """A participant as listed (never its key's secret)."""

    id: str
    benchmark_id: str
    display_name: str
    team: str | None
    key_id: str
    created_at: str
    revoked_at: str | None


def _participant(row: ParticipantRow) -> ParticipantView:
    return ParticipantView(
        row.id,
        row.benchmark_id,
        row.display_name,
        row.team,
        row.api_key_id,
        utc_iso(row.created_at),
        utc_iso(row.revoked_at) if row.revoked_at else None,
    )


def _require_owner_of(services: Services, principal: Principal | None, benchmark_id: str, what: str) -> None:
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        require_owner(access(conn, loaded.benchmark, principal), what)


def invite(
    services: Services, principal: Principal | None, benchmark_id: str, display_name: str, team: str | None
) -> tuple[ParticipantView, str]:
    """A new participant with a key of scope ``submissions:write`` bound to this benchmark (owners and admins);
    returns it with the key's token, shown once and never stored. The key, the participant and the audit entry are
    written in one transaction."""
    _require_owner_of(services, principal, benchmark_id, "inviting participants")
    assert principal is not None
    token, prefix = new_token()
    now = datetime.now(UTC)
    key = ApiKeyRow(
        str(uuid.uuid4()),
        prefix,
        f"participant {display_name}"[:128],
        PARTICIPANT_SCOPES,
        now,
        None,
        principal.key_id,
        benchmark_id,
    )
    row = ParticipantRow(0, str(uuid.uuid4()), benchmark_id, key.id, display_name, team, now, principal.key_id, None)
    with services.engines.write.begin() as conn:
        if not keys_repo.insert(conn, key, hash_key(services.secret_key, token)):
            raise Conflict("key collision; retry")
        part_repo.insert(conn, row)
        audit.record(conn, benchmark_id, "participant.invited", principal, row.id, display_name=display_name, team=team)
    return _participant(row), token


def list_participants(
    services: Services, principal: Principal | None, benchmark_id: str, limit: int, cursor: str | None
) -> cursors.Page[ParticipantView]:
    """A page of the benchmark's participants, oldest first, revoked ones included (owners and admins)."""
    after = cursors.decode_seq(cursor)
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        require_owner(access(conn, loaded.benchmark, principal), "the participants list")
        page = cursors.keyset_page(
            lambda n: part_repo.list_for(conn, benchmark_id, n, after), limit, key=lambda r: r.seq
        )
    return cursors.Page([_participant(r) for r in page.items], page.next_cursor)


def revoke(services: Services, principal: Principal | None, benchmark_id: str, participant_id: str) -> ParticipantView:
    """Revoke a participant's key (owners and admins): it answers 401 from now on; its submissions stay. Revoking
    twice keeps the first time and writes one audit entry."""
    _require_owner_of(services, principal, benchmark_id, "revoking participants")
    now = datetime.now(UTC)
    with services.engines.write.begin() as conn:
        row = part_repo.get(conn, participant_id)
        if row is None or row.benchmark_id != benchmark_id:
            raise NotFound(f"no participant {participant_id!r} in this benchmark")
        if row.revoked_at is None:
            part_repo.revoke(conn, row.id, now)
            keys_repo.revoke(conn, row.api_key_id, now)
            audit.record(conn, benchmark_id, "participant.revoked", principal, row.id, key_id=row.api_key_id)
        revoked = part_repo.get(conn, participant_id)
    assert revoked is not None
    return _participant(revoked)


@dataclass(frozen=True)
class AuditEntryView:
    seq: int
    action: str
    actor_key_id: str | None
    subject: str | None
    details: dict[str, Any]
    at: str


def audit_log(
    services: Services, principal: Principal | None, benchmark_id: str, limit: int, cursor: str | None
) -> cursors.Page[AuditEntryView]:
    """A page of the benchmark's audit log, newest first (owners and admins)."""
    before = cursors.decode_seq(cursor)
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        require_owner(access(conn, loaded.benchmark, principal), "the audit log")
        page = cursors.keyset_page(lambda n: audit_repo.page(conn, benchmark_id, n, before), limit, key=lambda r: r.seq)
    items = [
        AuditEntryView(r.seq, r.action, r.actor_key_id, r.subject, json.loads(r.details), utc_iso(r.created_at))
        for r in page.items
    ]
    return cursors.Page(items, page.next_cursor)
