"""The estimator catalog's bodies (the run envelope of each estimator is generated in ``api.envelope``)."""

from typing import Any

from pydantic import BaseModel, Field


class EstimatorSummary(BaseModel):
    name: str
    version: str
    family: str
    summary: str
    paper: str = Field(description="The paper's short title.")
    citation: str


class EstimatorList(BaseModel):
    items: list[EstimatorSummary]


class EstimatorDetail(EstimatorSummary):
    params_schema: dict[str, Any]
    result_schema: dict[str, Any]
    cost_unit: str
    sync_budget: float
    hard_cap: float = Field(description="Requests whose cost exceeds this are refused (422).")
