"""Figures: ``GET /v1/runs/{id}/plot`` and ``GET /v1/benchmarks/{id}/leaderboard/plot`` (SVG by default, PNG with
``?format=png`` or ``Accept: image/png``)."""

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Query, Response

from api.auth import OptionalCaller
from api.deps import ServicesDep
from api.problems import responses
from usecases import figures
from usecases.errors import Forbidden, NotFound, Unauthorized

IMAGE_RESPONSES = {
    200: {
        "description": "The figure.",
        "content": {
            "image/svg+xml": {"schema": {"type": "string"}},
            "image/png": {"schema": {"type": "string", "format": "binary"}},
        },
    }
}


def chosen_format(fmt: str | None, accept: str | None) -> figures.Format:
    """``format`` if given, else PNG when the Accept header prefers it, else SVG."""
    if fmt is not None:
        return "png" if fmt == "png" else "svg"
    if accept and "image/png" in accept and "image/svg+xml" not in accept:
        return "png"
    return "svg"


router = APIRouter(tags=["plots"])


@router.get(
    "/v1/runs/{run_id}/plot",
    response_class=Response,
    responses={**IMAGE_RESPONSES, **responses(Unauthorized, NotFound, 422, 500)},
)
def run_plot(
    run_id: str,
    services: ServicesDep,
    principal: OptionalCaller,
    format: Literal["svg", "png"] | None = None,
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    """The figure of an estimator run (404 naming the estimator when it declares no plot)."""
    fmt = chosen_format(format, accept)
    data = figures.run_plot(services, principal, run_id, fmt)
    return Response(data, media_type=figures.MEDIA_TYPES[fmt], headers={"Cache-Control": "public, max-age=86400"})


@router.get(
    "/v1/benchmarks/{benchmark_id}/leaderboard/plot",
    response_class=Response,
    responses={**IMAGE_RESPONSES, **responses(Unauthorized, Forbidden, NotFound, 422, 500)},
)
def leaderboard_plot(
    benchmark_id: str,
    services: ServicesDep,
    principal: OptionalCaller,
    split: Literal["public", "private"] = "public",
    metric: Annotated[str | None, Query(max_length=64)] = None,
    format: Literal["svg", "png"] | None = None,
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    """The leaderboard's metric with its confidence interval per submission (first 100 ranks)."""
    fmt = chosen_format(format, accept)
    data = figures.leaderboard_plot(services, principal, benchmark_id, split=split, metric=metric, fmt=fmt)
    return Response(data, media_type=figures.MEDIA_TYPES[fmt])
