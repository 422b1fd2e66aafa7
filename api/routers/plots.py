"""Figures: ``GET /v1/runs/{id}/plot`` and ``GET /v1/benchmarks/{id}/leaderboard/plot`` (SVG by default, PNG with
``?format=png`` or ``Accept: image/png``)."""

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Query, Response

from api.auth import OptionalCaller
from api.deps import ServicesDep
from api.problems import responses
from api.schemas.plots import IMAGE_RESPONSES, chosen_format, plot_response
from usecases import figures
from usecases.errors import Forbidden, NotFound, Unauthorized

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
    return plot_response(figures.run_plot(services, principal, run_id, chosen_format(format, accept)))


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
    top: Annotated[
        int, Query(ge=1, le=figures.LEADERBOARD_MAX_TOP, description="Ranks drawn from the top.")
    ] = figures.LEADERBOARD_TOP,
    format: Literal["svg", "png"] | None = None,
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    """The leaderboard's metric with its confidence interval per model (the first ``top`` ranks, 30 by default, at
    most 200) and, with a key, the caller's own best-ranked row wherever it ranks (marked "yours")."""
    fmt = chosen_format(format, accept)
    return plot_response(
        figures.leaderboard_plot(services, principal, benchmark_id, split=split, metric=metric, fmt=fmt, top=top)
    )
