"""The service's own web page (server-rendered, no build step, no asset from outside the machine): the estimator
catalog with a params form per estimator, benchmark leaderboards, job progress, the run pages (filled in by their
script from the API, with the key entered on the page), reproduction reports, and the Swagger UI / ReDoc pages
served with locally packaged assets."""

from pathlib import Path
from typing import Literal

import fastapi_offline
from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from api.deps import ServicesDep
from api.middleware import html_policy_allowing_inline_scripts
from api.schemas.reproductions import paper_json
from api.web.forms import form_fields
from service.registry import ESTIMATORS, SCORERS
from service.reproductions.claims import STATUS_DEFINITIONS, STATUS_ORDER, counts
from usecases import benchmarks, phases, reproductions, runs
from usecases.errors import Forbidden, NotFound
from usecases.run_requests import find_spec
from usecases.version import CODE_VERSION

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
DOCS_ASSETS = Path(fastapi_offline.__file__).resolve().parent / "static"


def mount_static(app: FastAPI) -> None:
    """Serve the page's stylesheet and script, and the Swagger UI / ReDoc bundles and favicon, from this machine."""
    app.mount("/static/web", StaticFiles(directory=WEB_DIR / "static"), name="web-static")
    app.mount("/static/docs", StaticFiles(directory=DOCS_ASSETS), name="docs-static")


def build_router() -> APIRouter:
    """The HTML routes (kept out of the OpenAPI document)."""
    templates = Jinja2Templates(directory=WEB_DIR / "templates")
    templates.env.globals["version"] = CODE_VERSION
    router = APIRouter(include_in_schema=False)

    def page(request: Request, name: str, status_code: int = 200, **context: object) -> HTMLResponse:
        return templates.TemplateResponse(request, name, context, status_code=status_code)

    @router.get("/", response_class=HTMLResponse)
    def index(request: Request, services: ServicesDep) -> HTMLResponse:
        views, _ = benchmarks.list_benchmarks(services, 100, None)
        papers = reproductions.list_papers(services)
        return page(
            request,
            "index.html",
            estimators=sorted(ESTIMATORS.values(), key=lambda s: s.name),
            scorers=sorted(SCORERS.values(), key=lambda s: s.name),
            benchmarks=[
                {
                    "id": v.row.id,
                    "name": v.row.name,
                    "scorer": v.row.scorer,
                    "description": v.row.description,
                    "answer_key_version": v.row.current_version,
                }
                for v in views
            ],
            reproductions=papers,
            claim_counts=counts(c for p in papers for c in p.ledger.claims),
        )

    @router.get("/estimators/{name}", response_class=HTMLResponse)
    def estimator_page(request: Request, name: str) -> HTMLResponse:
        spec = find_spec("estimator", name)
        return page(request, "estimator.html", spec=spec, fields=form_fields(spec.params_model.model_json_schema()))

    @router.get("/benchmarks/{benchmark_id}", response_class=HTMLResponse)
    def benchmark_page(
        request: Request,
        benchmark_id: str,
        services: ServicesDep,
        split: Literal["public", "private"] = "public",
        metric: str | None = None,
    ) -> HTMLResponse:
        view = benchmarks.get_benchmark(services, benchmark_id)
        spec = SCORERS[view.row.scorer]
        chosen = metric if metric in spec.metrics else view.primary_metric
        context = {
            "benchmark": {
                "id": view.row.id,
                "name": view.row.name,
                "scorer": view.row.scorer,
                "description": view.row.description,
                "answer_key_version": view.row.current_version,
                "answer_key_sha256": view.sha256,
            },
            "metric": chosen,
            "metrics": list(spec.metrics),
            "item_metrics": list(spec.paired_tests),
            "primary_metric": view.primary_metric,
            "split": split,
        }
        phases.freeze_ended(services, benchmark_id)
        try:
            board = benchmarks.leaderboard(
                services, None, benchmark_id, split=split, metric=chosen, rank_by="best", limit=100, cursor=None
            )
        except Forbidden:
            # the page has no key (it stays in the tab): it says how many rows the split holds and benchmark.js
            # reads them with the key entered on the page
            hidden = benchmarks.board_size(services, benchmark_id, split=split, metric=chosen, rank_by="best")
            return page(request, "benchmark.html", 403, rows=[], restricted=True, hidden_rows=hidden, **context)
        return page(request, "benchmark.html", rows=board.rows, restricted=False, hidden_rows=0, **context)

    @router.get("/jobs/{job_id}", response_class=HTMLResponse)
    def job_page(request: Request, job_id: str) -> HTMLResponse:
        return page(request, "job.html", job_id=job_id)

    @router.get("/runs", response_class=HTMLResponse)
    def runs_page(request: Request) -> HTMLResponse:
        return page(request, "runs.html", names=sorted([*ESTIMATORS, *SCORERS]))

    @router.get("/runs/compare", response_class=HTMLResponse)
    def runs_compare_page(request: Request, ids: str = "") -> HTMLResponse:
        return page(request, "runs_compare.html", ids=ids[: runs.MAX_COMPARED * 40])

    @router.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(request: Request, run_id: str, services: ServicesDep) -> HTMLResponse:
        try:
            found = runs.run_page(services, run_id[:64])
        except NotFound as exc:
            return page(request, "not_found.html", 404, detail=exc.detail)
        return page(request, "run.html", run_id=found.run_id, job_id=found.job_id)

    @router.get("/reproductions", response_class=HTMLResponse)
    def reproductions_page(request: Request, services: ServicesDep) -> HTMLResponse:
        entries = [
            {**paper_json(v, history=False), "counts": counts(v.ledger.claims)}
            for v in reproductions.list_papers(services)
        ]
        return page(
            request, "reproductions.html", entries=entries, statuses=STATUS_ORDER[::-1], definitions=STATUS_DEFINITIONS
        )

    @router.get("/reproductions/{paper}", response_class=HTMLResponse)
    def reproduction_page(request: Request, paper: str, services: ServicesDep) -> HTMLResponse:
        view = reproductions.paper(services, paper)
        return page(request, "reproduction.html", entry=paper_json(view, history=True), definitions=STATUS_DEFINITIONS)

    @router.get("/docs", response_class=HTMLResponse)
    def swagger_ui() -> HTMLResponse:
        page = get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="estibench API",
            swagger_js_url="/static/docs/swagger-ui-bundle.js",
            swagger_css_url="/static/docs/swagger-ui.css",
            swagger_favicon_url="/static/docs/favicon.png",
        )
        page.headers["Content-Security-Policy"] = html_policy_allowing_inline_scripts(page.body)
        return page

    @router.get("/redoc", response_class=HTMLResponse)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url="/openapi.json",
            title="estibench API",
            redoc_js_url="/static/docs/redoc.standalone.js",
            redoc_favicon_url="/static/docs/favicon.png",
            with_google_fonts=False,
        )

    return router
