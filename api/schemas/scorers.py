"""The scorer catalog's bodies: a scorer, its metrics and the conventions where upstream scorers disagree (each
scorer's score request and run envelope are generated from the registry)."""

from typing import Any, Literal

from pydantic import BaseModel, Field


class MetricOut(BaseModel):
    higher_is_better: bool
    range: list[float]
    description: str


class ScorerSummary(BaseModel):
    name: str
    version: str
    summary: str
    paper: str = Field(description="The paper's short title.")
    citation: str
    primary_metric: str


class ScorerList(BaseModel):
    items: list[ScorerSummary]


class UpstreamOut(BaseModel):
    name: str = Field(description="The reference implementation.")
    version: str = Field(description="Its version, or the commit followed.")


class ConventionOptionOut(BaseModel):
    value: str
    upstreams: list[UpstreamOut] = Field(description="Reference code behaving this way (empty: none).")


class ConventionOut(BaseModel):
    param: str = Field(description="The params field choosing between reference implementations.")
    default: str = Field(description="Its default: the benchmark's own reference code.")
    options: list[ConventionOptionOut]


class ScorerDetail(ScorerSummary):
    answer_key_item_schema: dict[str, Any]
    prediction_item_schema: dict[str, Any]
    params_schema: dict[str, Any]
    metrics: dict[str, MetricOut]
    paired_tests: dict[str, Literal["mcnemar", "wilcoxon", "bootstrap"]] = Field(
        description="Metrics with per-item values and the paired test comparing two submissions on graded values "
        "(0/1 values always get exact McNemar)."
    )
    cost_unit: str
    sync_budget: float = Field(description="Stateless calls costing more run as a job (202).")
    hard_cap: float = Field(description="Calls and submissions costing more are refused (422).")
    conventions: list[ConventionOut] = Field(
        description="Params where reference implementations disagree, with the upstream code each option follows."
    )
