"""Strict base models and shared type aliases for every estimator and scorer."""

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

MAX_JSON_ARRAY = 100_000
"""A JSON array parameter holds at most this many elements."""


def _integral(value: Any) -> Any:
    """``4032.0`` as ``4032``: a number with a zero fractional part is an integer, as in JSON Schema."""
    if type(value) is float and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value


def _integral_items(value: Any) -> Any:
    """``_integral`` over a list of integers, one pass over the types when it holds no float."""
    if type(value) is list and float in map(type, value):
        return [_integral(v) for v in value]
    return value


_INTEGRAL = (_integral, _integral_items)


def _accept_integral(schema: Any) -> Any:
    """The core schema with every integer schema (and list of integers) preceded by ``_integral``."""
    if isinstance(schema, list):
        return [_accept_integral(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("type") == "function-before" and schema.get("function", {}).get("function") in _INTEGRAL:
        return schema
    if schema.get("type") == "list" and schema.get("items_schema", {}).get("type") == "int":
        return core_schema.no_info_before_validator_function(_integral_items, schema)
    walked = {k: _accept_integral(v) for k, v in schema.items()}
    if walked.get("type") == "int":
        return core_schema.no_info_before_validator_function(_integral, walked)
    return walked


class StrictModel(BaseModel):
    """Input model: unknown fields rejected, no coercion (``"1.5"`` or ``false`` is not a float), finite floats.
    An integer field accepts an integral number such as ``4032.0`` (JSON Schema's ``integer``), nothing else."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=False)

    # Not routed through mutmut's trampoline (it runs while the class is built, before the trampoline exists).
    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler
    ) -> CoreSchema:  # pragma: no mutate block
        return _accept_integral(handler(source))


class ResultModel(BaseModel):
    """Output model: finite floats only, so a NaN result can never be serialised as ``null`` silently."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


FiniteFloat = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Probability = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0, le=1)]
Seed = Annotated[
    int,
    Field(strict=True, ge=0, le=2**63 - 1, description="Seed of the np.random.Generator (default 0)."),
]


ARRAY_REF_PATTERN = r"^sha256:[0-9a-f]{64}$"


class ArrayRef(StrictModel):
    """``{"array": "sha256:<hex>"}``: an array uploaded with ``POST /v1/arrays``.

    The API replaces it with the numpy array before calling the estimator (and its cost function); the
    canonical params, hence the cache key, keep the reference.
    """

    array: str = Field(pattern=ARRAY_REF_PATTERN, description="Id returned by POST /v1/arrays: sha256:<64 hex>.")


@dataclass(frozen=True)
class ArrayConstraints:
    """Rules the API checks, vectorised, on a referenced array: dtype kind, ndim, element bounds, minimum size."""

    kind: Literal["float", "int", "bool"]
    ndim: int = 1
    ge: float | None = None
    le: float | None = None
    min_size: int = 1
    max_ndim: int | None = None
    """When set, arrays of ``ndim`` to ``max_ndim`` dimensions are accepted (e.g. 2-D or 3-D masks)."""


def array_param(
    item: Any,
    kind: Literal["float", "int", "bool"],
    *,
    ndim: int = 1,
    ge: float | None = None,
    le: float | None = None,
    min_length: int = 1,
    max_length: int = MAX_JSON_ARRAY,
) -> Any:
    """Type of an array-valued parameter: a JSON list of ``item`` (a row type when ``ndim=2``) or an ``ArrayRef``.

    ``ge``/``le`` repeat the element bounds of ``item`` for referenced arrays. Functions receive a list or, for a
    reference, an ``np.ndarray``: read the field with ``np.asarray``.
    """
    listed = Annotated[list[item], Field(min_length=min_length, max_length=max_length)]
    return Annotated[listed | ArrayRef, ArrayConstraints(kind, ndim, ge, le, min_length)]
