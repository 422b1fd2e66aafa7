"""A benchmark's participants (``participant``): display name, optional team and the key bound to the benchmark."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, func, select, update

from db.models import ApiKey, Participant


@dataclass(frozen=True)
class ParticipantRow:
    seq: int
    id: str
    benchmark_id: str
    api_key_id: str
    display_name: str
    team: str | None
    created_at: datetime
    created_by: str | None
    revoked_at: datetime | None

    @property
    def shown_as(self) -> str:
        """How the participant's submissions are labelled: its team, else its display name."""
        return self.team or self.display_name


_COLUMNS = [
    func.coalesce(Participant.revoked_at, ApiKey.revoked_at) if f == "revoked_at" else getattr(Participant, f)
    for f in ParticipantRow.__dataclass_fields__
]
"""A participant is revoked when its key is, by either route (``DELETE .../participants/{id}`` or an admin's
``DELETE /v1/api-keys/{id}``)."""


def _select() -> Select[Any]:
    return select(*_COLUMNS).join(ApiKey, ApiKey.id == Participant.api_key_id)


def insert(conn: Connection, row: ParticipantRow) -> None:
    values = {k: v for k, v in row.__dict__.items() if k != "seq"}
    conn.execute(Participant.__table__.insert().values(**values))


def get(conn: Connection, participant_id: str) -> ParticipantRow | None:
    r = conn.execute(_select().where(Participant.id == participant_id)).first()
    return ParticipantRow(*r) if r else None


def list_for(conn: Connection, benchmark_id: str, limit: int, after_seq: int | None) -> list[ParticipantRow]:
    """A benchmark's participants, oldest first, after ``after_seq``."""
    stmt = _select().where(Participant.benchmark_id == benchmark_id).order_by(Participant.seq).limit(limit)
    if after_seq is not None:
        stmt = stmt.where(Participant.seq > after_seq)
    return [ParticipantRow(*r) for r in conn.execute(stmt)]


def revoke(conn: Connection, participant_id: str, when: datetime) -> None:
    conn.execute(
        update(Participant)
        .where(Participant.id == participant_id, Participant.revoked_at.is_(None))
        .values(revoked_at=when)
    )


def shown_as(conn: Connection, api_key_ids: Sequence[str | None]) -> dict[str, str]:
    """Key id -> the label of its participant (team, else display name), for the keys that are participants'."""
    ids = sorted({k for k in api_key_ids if k is not None})
    if not ids:
        return {}
    stmt = select(Participant.api_key_id, Participant.team, Participant.display_name).where(
        Participant.api_key_id.in_(ids)
    )
    return {key_id: team or name for key_id, team, name in conn.execute(stmt)}
