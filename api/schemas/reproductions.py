"""Reproduction reports over HTTP: a paper, its claim ledger, its reports and their JSON form (shared by the API and
the web page)."""

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from service.reproductions.claims import STATUS_DEFINITIONS, Claim, ClaimStatus
from usecases import reproductions
from usecases.clock import utc_iso
from usecases.reproductions import ReportRow

BADGE_DOC = (
    "The lowest status of the paper's headline claims, in the order "
    + " < ".join(
        (
            "contradicted",
            "not_checked",
            "needs_data = needs_models",
            "implementation_verified",
            "consistent",
            "reproduced",
        )
    )
    + ". "
    + "; ".join(f"{k}: {v}" for k, v in STATUS_DEFINITIONS.items())
    + "."
)


class ReportOut(BaseModel):
    id: str
    paper: str
    badge: ClaimStatus = Field(description="The report's badge: the lowest status of its headline claims.")
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
    badge: ClaimStatus = Field(description=BADGE_DOC)
    claims: list[Claim] = Field(
        description="One row per result sentence of the paper's abstract (its words copied), from the latest report, "
        "or else from the committed ledger of the last `make reproduce`."
    )
    ledger_code_version: str = Field(description="Code version of the run that produced the claims.")
    ledger_date: str = Field(description="Date (UTC, YYYY-MM-DD) of the run that produced the claims.")
    latest: ReportOut | None


class PaperDetail(PaperOut):
    reports: list[ReportOut] = Field(description="Reports, newest first (at most 20).")


class PaperList(BaseModel):
    items: list[PaperOut]


def report_json(row: ReportRow, has_plot: bool) -> dict[str, Any]:
    return {
        "id": row.id,
        "paper": row.paper,
        "badge": reproductions.report_badge(row),
        "claim": row.claim,
        "reason": row.reason,
        "figures": reproductions.stored_parts(row)[0],
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
    reports = [report_json(r, has_plot and not entry.unavailable) for r in view.reports]
    out: dict[str, Any] = {
        "paper": entry.paper,
        "title": entry.title,
        "claim": entry.claim,
        "status": view.status,
        "reason": entry.unavailable or None,
        "badge": view.badge,
        "claims": [c.model_dump(mode="json") for c in view.ledger.claims],
        "ledger_code_version": view.ledger.code_version,
        "ledger_date": view.ledger.date,
        "latest": reports[0] if reports else None,
    }
    if history:
        out["reports"] = reports
    return out
