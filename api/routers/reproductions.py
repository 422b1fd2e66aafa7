"""Per-paper reproduction reports: list, one paper with its history, run a check (admin, as a job), a report's plot."""

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Response
from fastapi.responses import JSONResponse

from api.auth import Admin
from api.deps import ClientAddress, ServicesDep
from api.problems import responses
from api.schemas.jobs import JobOut, job_response
from api.schemas.plots import IMAGE_RESPONSES, chosen_format, plot_response
from api.schemas.reproductions import PaperDetail, PaperList, paper_json
from usecases import figures, reproductions
from usecases.errors import Conflict, Forbidden, NotFound, Unauthorized

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
def run_check(paper: str, services: ServicesDep, principal: Admin, client: ClientAddress) -> JSONResponse:
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
    return plot_response(figures.report_plot(services, paper, report_id, chosen_format(format, accept)))
