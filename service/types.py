"""Strict base models and shared type aliases for every estimator and scorer (ARCHITECTURE §5)."""

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

MAX_JSON_ARRAY = 100_000
"""ARCHITECTURE §3: a JSON array parameter holds at most this many elements."""


class StrictModel(BaseModel):
    """Input model: unknown fields rejected, no coercion (``"1.5"`` or ``false`` is not a float), finite floats."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=False)


class ResultModel(BaseModel):
    """Output model: finite floats only, so a NaN result can never be serialised as ``null`` silently."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


FiniteFloat = Annotated[float, Field(strict=True, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]
Probability = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0, le=1)]
Seed = Annotated[
    int,
    Field(strict=True, ge=0, le=2**63 - 1, description="Seed of the np.random.Generator (default 0)."),
]

Json = dict[str, Any]
