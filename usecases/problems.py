"""The RFC 9457 problem body: one shape for every error the API answers and for the failure stored on a job."""

from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from pydantic import BaseModel, Field


class ErrorItem(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class Problem(BaseModel):
    """``application/problem+json`` body; 422s add ``errors``, 500s carry the request id as ``instance``."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None
    errors: list[ErrorItem] | None = Field(default=None, description="Per-field errors (422 only).")


def problem(
    status: int, detail: str | None, *, errors: Sequence[dict[str, Any]] | None = None, instance: str | None = None
) -> Problem:
    """The problem body of ``status``: its title is the status's reason phrase; ``errors`` as ``{loc, msg, type}``."""
    return Problem(
        title=HTTPStatus(status).phrase,
        status=status,
        detail=detail,
        instance=instance,
        errors=[ErrorItem(**e) for e in errors] if errors is not None else None,
    )


def problem_json(
    status: int, detail: str | None, errors: Sequence[dict[str, Any]] | None = None, *, instance: str | None = None
) -> str:
    """``problem(...)`` as JSON text, absent members left out."""
    return problem(status, detail, errors=errors, instance=instance).model_dump_json(exclude_none=True)
