"""Benchmarks over HTTP: registration and answer-key bodies, the benchmark, its versions, leaderboards, the paired
comparison and RAVEN-Bench's cross-modal gain."""

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from api.schemas.paging import Page
from service.types import MAX_JSON_ARRAY, StrictModel

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]


class AnswerKeyIn(StrictModel):
    items: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_JSON_ARRAY,
        description="Items of the scorer's answer_key_item_schema; each has a unique item_id and a split "
        "(public by default, or private).",
    )


class BenchmarkIn(StrictModel):
    name: Name = Field(description="Unique name (letters, digits, . _ -).")
    scorer: str = Field(max_length=64, description="A registered scorer (GET /v1/scorers).")
    description: str = Field(default="", max_length=4000)
    scorer_params: dict[str, Any] = Field(default_factory=dict, description="The scorer's params, fixed for good.")
    max_submissions_per_day: int = Field(
        default=0, ge=0, le=100_000, description="Successful submissions per key per UTC day; 0 = the server default."
    )
    answer_key: AnswerKeyIn


class VersionOut(BaseModel):
    version: int
    sha256: str
    n_public: int
    n_private: int
    created_at: datetime


class BenchmarkOut(BaseModel):
    id: str
    name: str
    scorer: str
    description: str
    scorer_params: dict[str, Any]
    max_submissions_per_day: int
    answer_key_version: int
    answer_key_sha256: str
    primary_metric: str
    created_at: datetime


class BenchmarkDetail(BenchmarkOut):
    versions: list[VersionOut]


class BenchmarkList(Page[BenchmarkOut]):
    pass


class AnswerKeyVersionOut(BaseModel):
    benchmark_id: str
    answer_key_version: int = Field(description="The current version after the call.")
    answer_key_sha256: str
    created: bool = Field(
        description="False when the content is the current version's (nothing changed); an earlier version's "
        "content becomes a new current version."
    )
    rescored: int | None = Field(description="Submissions re-scored inline (null when a job does it).")
    rescore_job_id: str | None = Field(description="The job re-scoring the stored submissions (GET /v1/jobs/{id}).")


class AnswerKeyVersionRow(VersionOut):
    current: bool = Field(description="Whether this is the benchmark's current version.")


class AnswerKeyVersionList(Page[AnswerKeyVersionRow]):
    pass


class AnswerKeyVersionItems(AnswerKeyVersionRow):
    benchmark_id: str
    items: list[dict[str, Any]] = Field(
        description="The version's items, both splits', sorted by item_id: what PUT .../answer-key takes as items."
    )


class RescoreOut(BaseModel):
    benchmark_id: str
    answer_key_version: int
    rescored: int


class LeaderboardRow(BaseModel):
    rank: int | None = Field(description="1 for the best; null for a baseline, which takes no rank from the others.")
    baseline: bool = Field(description="A reference result the benchmark's owners marked (PATCH /v1/submissions/{id}).")
    participant: str | None = Field(
        description="The team, else the display name, of the participant whose key made the submission; null for "
        "other keys."
    )
    model: str
    submission_id: str
    submitted_at: datetime
    answer_key_version: int = Field(description="The answer-key version these scores are against.")
    pending: bool = Field(
        description="True while the re-scoring after a new answer-key version has not reached this submission: "
        "the scores are its previous version's."
    )
    scores: dict[str, dict[str, Any]]


class Leaderboard(Page[LeaderboardRow]):
    benchmark_id: str
    split: str
    metric: str
    higher_is_better: bool
    rank_by: str
    answer_key_version: int


class CompareOut(BaseModel):
    a: str
    b: str
    split: str
    metric: str = Field(description="The metric whose per-item values were compared.")
    n_common: int
    test: Literal["mcnemar_exact", "wilcoxon_signed_rank", "paired_bootstrap"]
    mean_a: float
    mean_b: float
    result: dict[str, Any]


class CrossModalOut(BaseModel):
    """RAVEN-Bench's cross-modal gain of one model's submissions, one per input setting."""

    benchmark_id: str
    split: str
    answer_key_version: int
    submissions: dict[str, str] = Field(description="Setting (eo_only, ir_only, eo_ir) → submission id.")
    s_main: dict[str, float] = Field(description="S_main of each given setting.")
    g_cm: float | None = Field(
        description="S_main(eo_ir) − max(S_main(eo_only), S_main(ir_only)); null unless all three settings are given."
    )
    reliance_eo: float | None = Field(description="S_main(eo_only)/S_main(eo_ir) [R].")
    reliance_ir: float | None = Field(description="S_main(ir_only)/S_main(eo_ir) [R].")
    modality_matrix: dict[str, dict[str, float | None]] = Field(
        description="Setting → accuracy per modality requirement (EO, IR, EO+IR) [R]."
    )
    without_required_modality: dict[str, float | None] = Field(
        description="Accuracy on IR questions in eo_only and on EO questions in ir_only [R]."
    )
    missing_settings: list[str]
    reconstructed: list[str]
