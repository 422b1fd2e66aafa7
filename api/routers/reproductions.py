"""Per-paper reproduction reports: list, one paper with its history, run a check (admin, as a job), a report's plot."""

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from api.auth import KeyHolder
from api.deps import ClientAddress, ServicesDep
from api.problems import responses
from api.routers.jobs import JobOut, job_response
from api.routers.plots import IMAGE_RESPONSES, chosen_format
from usecases import figures, reproductions
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, NotFound, Unauthorized
from usecases.reproductions import ReportRow


class ReportOut(BaseModel):
    id: str
    paper: str
    verdict: Literal["reproduced", "not_reproduced", "not_reproducible"]
    claim: str
    reason: str
    figures: dict[str, Any] = Field(description="The figures the check measured.")
    run_ids: list[str] = Field(description="The estimator runs the check used (GET /v1/runs/{id}).")
    plot_url: str | None = Field(description="The report's figure, when the check draws one.")
    code_version: str
    duration_ms: float
    job_id: str | None
    created_at: str


class PaperOut(BaseModel):
    paper: str = Field(description="Short slug of the paper.")
    title: str
    claim: str = Field(description="The claim the small-scale check tests, in one sentence.")
    status: Literal["pending", "ready", "not_reproducible"] = Field(
        description="pending: its estimator or scorer is not built yet; not_reproducible: the claim rests on data "
        "this service cannot have (see reason); ready: POST runs the check."
    )
    reason: str | None = Field(description="Why the claim cannot be reproduced here (not_reproducible only).")
    latest: ReportOut | None


class PaperDetail(PaperOut):
    reports: list[ReportOut] = Field(description="Reports, newest first (at most 20).")


class PaperList(BaseModel):
    items: list[PaperOut]


def report_json(row: ReportRow, has_plot: bool) -> dict[str, Any]:
    return {
        "id": row.id,
        "paper": row.paper,
        "verdict": row.verdict,
        "claim": row.claim,
        "reason": row.reason,
        "figures": json.loads(row.figures),
        "run_ids": json.loads(row.run_ids),
        "plot_url": f"/v1/reproductions/{row.paper}/reports/{row.id}/plot" if has_plot else None,
        "code_version": row.code_version,
        "duration_ms": row.duration_ms,
        "job_id": row.job_id,
        "created_at": utc_iso(row.created_at),
    }


def paper_json(view: reproductions.PaperView, *, history: bool) -> dict[str, Any]:
    entry = view.entry
    has_plot = entry.plot is not None
    reports = [report_json(r, has_plot and r.verdict != "not_reproducible") for r in view.reports]
    out: dict[str, Any] = {
        "paper": entry.paper,
        "title": entry.title,
        "claim": entry.claim,
        "status": view.status,
        "reason": entry.unavailable or None,
        "latest": reports[0] if reports else None,
    }
    if history:
        out["reports"] = reports
    return out


router = APIRouter(prefix="/v1/reproductions", tags=["reproductions"])


@router.get("", response_model=PaperList, responses=responses(Unauthorized, 500))
def list_papers(services: ServicesDep) -> JSONResponse:
    """Every paper served here, with its claim, status and latest report."""
    return JSONResponse({"items": [paper_json(v, history=False) for v in reproductions.list_papers(services)]})


@router.get("/{paper}", response_model=PaperDetail, responses=responses(Unauthorized, NotFound, 500))
def get_paper(paper: str, services: ServicesDep) -> JSONResponse:
    """One paper with its report history."""
    return JSONResponse(paper_json(reproductions.paper(services, paper), history=True))


@router.post(
    "/{paper}",
    status_code=202,
    response_model=JobOut,
    responses=responses(Unauthorized, Forbidden, NotFound, Conflict, 500),
)
def run_check(paper: str, services: ServicesDep, principal: KeyHolder, client: ClientAddress) -> JSONResponse:
    """Run the paper's small-scale check as a job (admin); the job stores a report. 409 while it is pending."""
    return job_response(reproductions.request_run(services, principal, paper, client), 202)


@router.get(
    "/{paper}/reports/{report_id}/plot",
    response_class=Response,
    responses={**IMAGE_RESPONSES, **responses(Unauthorized, NotFound, 422, 500)},
)
def report_plot(
    paper: str,
    report_id: str,
    services: ServicesDep,
    format: Literal["svg", "png"] | None = None,
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    """The figure of a report, drawn from the runs it used."""
    fmt = chosen_format(format, accept)
    return Response(figures.report_plot(services, paper, report_id, fmt), media_type=figures.MEDIA_TYPES[fmt])
