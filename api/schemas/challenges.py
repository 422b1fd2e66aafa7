"""A benchmark's owners, participants, audit log and phases over HTTP."""

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, Field, StringConstraints, field_validator

from api.schemas.benchmarks import LeaderboardRow
from api.schemas.paging import Page
from service.types import StrictModel

KeyId = Annotated[str, StringConstraints(min_length=1, max_length=36)]
Label = Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f\x7f]+$")]
"""A name shown on the leaderboards: 1-100 characters, no control characters."""


class OwnerIn(StrictModel):
    key_id: KeyId = Field(
        description="The id of the key to make a co-owner (its holder reads it at /v1/api-keys/self)."
    )


class OwnerOut(BaseModel):
    key_id: str
    name: str
    creator: bool = Field(description="The key that created the benchmark (it cannot be removed).")
    added_by: str | None
    added_at: str | None


class OwnerList(BaseModel):
    items: list[OwnerOut]


class ParticipantIn(StrictModel):
    display_name: Label = Field(description="How the participant's submissions are shown (unless it has a team).")
    team: Label | None = Field(default=None, description="Shown in place of the display name when given.")


class ParticipantOut(BaseModel):
    id: str
    benchmark_id: str
    display_name: str
    team: str | None
    key_id: str
    created_at: str
    revoked_at: str | None


class ParticipantCreated(ParticipantOut):
    key: str = Field(
        description="The participant's API key (scope submissions:write, bound to this benchmark). It is shown only "
        "in this response; pass it to the participant now."
    )


class ParticipantList(Page[ParticipantOut]):
    pass


class AuditEntryOut(BaseModel):
    seq: int
    action: str = Field(description="What was done (docs/challenges.md lists the actions).")
    actor_key_id: str | None = Field(description="The key that did it.")
    subject: str | None = Field(description="The submission, key, participant or answer-key version acted on.")
    details: dict[str, Any]
    at: str


class AuditLog(Page[AuditEntryOut]):
    pass


Split = Literal["public", "private"]
Time = Annotated[AwareDatetime, Field(strict=False)]
"""An RFC 3339 time with an offset (text in JSON)."""
Limit = Annotated[int, Field(ge=1, le=1_000_000)]
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
LATEST = datetime(2999, 12, 31, tzinfo=UTC)


def _bounded(value: datetime | None) -> datetime | None:
    """A phase time with an offset, between the years 2000 and 2999, as UTC."""
    if value is None:
        return None
    if not EARLIEST <= value <= LATEST:
        raise ValueError("a time between 2000-01-01 and 2999-12-31")
    return value.astimezone(UTC)


class PhaseIn(StrictModel):
    """A new phase of a benchmark."""

    name: Label = Field(description="How the phase is shown (1-100 characters, no control characters).")
    starts_at: Time = Field(description="When submissions start going to this phase (with an offset).")
    ends_at: Time = Field(description="When the phase ends and its board freezes; after starts_at.")
    splits: list[Split] = Field(
        default=["public"], min_length=1, max_length=2, description="The splits the phase's board scores and shows."
    )
    max_submissions_per_day: Limit | None = Field(
        default=None,
        description="Per participant (per team when it has one) and UTC day while the phase is open; replaces the "
        "benchmark's max_submissions_per_day then. Null: the benchmark's quota applies.",
    )
    max_submissions_total: Limit | None = Field(
        default=None, description="Per participant (per team when it has one) over the phase; null: no limit."
    )
    leaderboard_visibility: Literal["public", "hidden_until_end"] = Field(
        default="public",
        description="hidden_until_end: only the owners and admins see the phase's board before its end.",
    )
    late_submissions: Literal["refuse", "accept"] = Field(
        default="refuse",
        description="After the end, until the next phase: refuse (409) or accept, stored late and never ranked.",
    )

    _times = field_validator("starts_at", "ends_at")(_bounded)


class PhasePatch(StrictModel):
    """The settings of a phase to change (the others stay). ``starts_at`` and ``splits`` only before it starts."""

    name: Label | None = None
    starts_at: Time | None = None
    ends_at: Time | None = None
    splits: list[Split] | None = Field(default=None, min_length=1, max_length=2)
    max_submissions_per_day: Limit | None = None
    max_submissions_total: Limit | None = None
    leaderboard_visibility: Literal["public", "hidden_until_end"] | None = None
    late_submissions: Literal["refuse", "accept"] | None = None

    _times = field_validator("starts_at", "ends_at")(_bounded)


NULLABLE = frozenset({"max_submissions_per_day", "max_submissions_total"})
"""The settings a PATCH may set to null (no phase limit)."""


class PhaseOut(BaseModel):
    id: str
    benchmark_id: str
    name: str
    starts_at: str
    ends_at: str
    splits: list[str]
    max_submissions_per_day: int | None
    max_submissions_total: int | None
    leaderboard_visibility: str
    late_submissions: str
    status: Literal["upcoming", "open", "ended"] = Field(description="At the time of the read.")
    frozen_at: str | None = Field(description="When the phase's board was frozen (null before its end).")
    created_at: str


class PhaseList(BaseModel):
    items: list[PhaseOut]


class PhaseLeaderboard(Page[LeaderboardRow]):
    benchmark_id: str
    phase_id: str
    split: str
    metric: str
    higher_is_better: bool
    rank_by: str
    answer_key_version: int = Field(description="The benchmark's answer-key version of the board (at the freeze).")
    frozen_at: str | None = Field(description="Null while the phase is open (a live board); else when it froze.")
