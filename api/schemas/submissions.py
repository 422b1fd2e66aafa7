"""Submissions over HTTP: the submission as its maker (or the benchmark's owners, or an admin) sees it, the flags a
PATCH sets, per-item scores."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from api.schemas.paging import Page
from service.types import StrictModel


class SubmissionOut(BaseModel):
    id: str
    benchmark_id: str
    model: str
    metadata: dict[str, Any]
    answer_key_version: int | None
    submitted_at: datetime
    withdrawn_at: datetime | None
    public: bool = Field(description="False: taken off the leaderboards by its maker (still counted in the quota).")
    baseline: bool = Field(description="Marked a baseline by the benchmark's owners: listed without a rank.")
    participant: str | None = Field(description="The team, else the display name, of the participant who made it.")
    phase_id: str | None = Field(
        default=None, description="The challenge phase open when it was made (or, when late, the one it came after)."
    )
    late: bool = Field(
        default=False, description="Made after its phase ended, in a phase accepting late ones: never ranked."
    )
    scores: dict[str, dict[str, Any]] = Field(description="Public-split scores: {metric: {value, ci_low, ci_high, n}}.")
    breakdown: dict[str, Any]
    coverage: float | None
    reconstructed: list[str]
    private: dict[str, Any] | None = Field(
        default=None,
        description="Private-split scores, breakdown and coverage (the benchmark's owners and admins only).",
    )


class SubmissionPatch(StrictModel):
    """The flags to set (at least one)."""

    baseline: bool | None = Field(
        default=None, description="The benchmark's owners and admins: list it as a baseline (no rank)."
    )
    public: bool | None = Field(
        default=None, description="Its maker only: false takes it off the leaderboards, true puts it back."
    )


class SubmissionList(Page[SubmissionOut]):
    pass


class ItemScoreOut(BaseModel):
    split: str
    item_id: str
    value: float


class ItemScores(BaseModel):
    submission_id: str
    answer_key_version: int
    metric: str
    items: list[ItemScoreOut]
