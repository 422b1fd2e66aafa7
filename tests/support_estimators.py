"""A test-only estimator with controllable duration, progress and array input (jobs, arrays, reliability tests).

Tests take it with the ``test_estimator`` fixture (tests/conftest.py: registered for that test only, so it never
leaks into the committed OpenAPI document); the server and worker processes of tests/reliability/ call
``register()`` (tests/reliability/procs.py).
"""

import time
from typing import Annotated

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.registry import ESTIMATORS, EstimatorSpec, Progress
from service.types import FiniteFloat, ResultModel, StrictModel, array_param

NAME = "test.slow_sum"


Row = Annotated[list[Annotated[int, Field(strict=True, ge=0, le=100)]], Field(min_length=1, max_length=100)]


class SlowSumParams(StrictModel):
    values: array_param(FiniteFloat, "float", ge=-1e12, le=1e12) = Field(  # type: ignore[valid-type]
        description="Numbers to add (a JSON list or an uploaded array)."
    )
    steps: Annotated[int, Field(strict=True, ge=1, le=10_000)] = Field(default=1, description="Progress steps.")
    step_s: Annotated[float, Field(strict=True, ge=0, le=5)] = Field(default=0.0, description="Sleep per step (s).")
    tag: Annotated[int, Field(strict=True, ge=0, le=10**9)] = Field(default=0, description="Distinguishes runs.")
    matrix: array_param(Row, "int", ndim=2, ge=0, le=100) | None = Field(  # type: ignore[valid-type]
        default=None, description="Optional 2-D integer matrix; its sum is added to the total."
    )


class SlowSumResult(ResultModel):
    total: float = Field(description="Sum of values.")
    n: int = Field(description="Number of values.")
    steps: int = Field(description="Steps done.")


def slow_sum(params: SlowSumParams, progress: Progress) -> SlowSumResult:
    values = np.asarray(params.values, dtype=np.float64)
    if values.size and values[0] == -13:
        raise InvalidInput("-13 is unlucky", loc=("values", 0))
    for i in range(params.steps):
        time.sleep(params.step_s)
        progress((i + 1) / params.steps, f"step {i + 1} of {params.steps}")
    extra = float(np.asarray(params.matrix).sum()) if params.matrix is not None else 0.0
    return SlowSumResult(total=float(values.sum()) + extra, n=int(values.size), steps=params.steps)


SPEC = EstimatorSpec(
    name=NAME,
    version="1",
    family="test",
    summary="Test estimator: sum of values after steps × step_s seconds of reported progress.",
    paper="(test)",
    citation="(test)",
    params_model=SlowSumParams,
    result_model=SlowSumResult,
    fn=slow_sum,
    cost=lambda p: p.steps * p.step_s + np.asarray(p.values).size * 1e-9,
    cost_unit="seconds",
    sync_budget=0.5,
    hard_cap=600.0,
)


def register() -> None:
    """Add the estimator to this process's registry (a server or worker process started by a test)."""
    ESTIMATORS[NAME] = SPEC
