"""Reproduction reports: run a paper's check as a job (its estimator calls go through the run store) and keep
what it found, claim by claim; list every paper with its status, its claim ledger and badge.

A paper's claims are those of its latest stored report, or else its committed ledger (the statuses of the last
``make reproduce``), so a fresh install serves them before any check has run here."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from db.repositories import reproductions as repo
from db.repositories import runs as runs_repo
from db.repositories.jobs import JobRow
from db.repositories.reproductions import ReportRow
from service.registry import ESTIMATORS, SCORERS, Progress
from service.reproductions import Outcome, Reproduction, catalog, get, status_of
from service.reproductions.claims import Claim, Ledger, apply, badge, committed
from usecases import run_requests
from usecases.api_keys import Principal, require
from usecases.errors import Conflict, NotFound
from usecases.version import CODE_VERSION

if TYPE_CHECKING:
    from usecases.services import Services

HISTORY = 20
"""Reports listed per paper (newest first)."""


@dataclass(frozen=True)
class PaperView:
    """A paper's entry with its status, its reports (newest first; only the latest in listings) and its ledger."""

    entry: Reproduction
    status: str
    reports: list[ReportRow]
    ledger: Ledger

    @property
    def badge(self) -> str:
        return badge(self.ledger.claims)


def stored_parts(row: ReportRow) -> tuple[dict[str, Any], list[Claim] | None]:
    """A stored report's figures and claims (reports stored before the ledger hold figures only)."""
    stored = json.loads(row.figures)
    if set(stored) == {"figures", "claims"}:
        return stored["figures"], [Claim.model_validate(c) for c in stored["claims"]]
    return stored, None


def report_badge(row: ReportRow) -> str:
    """A report's badge (``not_checked`` for reports stored before the ledger, which judged no claim)."""
    claims = stored_parts(row)[1]
    return badge(claims) if claims is not None else "not_checked"


def ledger_of(entry: Reproduction, latest: ReportRow | None) -> Ledger:
    """The latest report's claims, or else the committed ledger."""
    claims = stored_parts(latest)[1] if latest is not None else None
    if claims is None:
        return committed(entry.paper)
    assert latest is not None
    return Ledger(paper=entry.paper, code_version=latest.code_version, date=utc_date(latest), claims=claims)


def utc_date(row: ReportRow) -> str:
    return row.created_at.astimezone(UTC).strftime("%Y-%m-%d")


def _view(entry: Reproduction, status: str, reports: list[ReportRow]) -> PaperView:
    return PaperView(entry, status, reports, ledger_of(entry, reports[0] if reports else None))


def _registered() -> set[str]:
    return set(ESTIMATORS) | set(SCORERS)


def _entry(paper: str) -> Reproduction:
    entry = get(paper)
    if entry is None:
        raise NotFound(f"no paper {paper!r}: GET /v1/reproductions lists them")
    return entry


def list_papers(services: Services) -> list[PaperView]:
    """Every paper, in the papers' order, with its latest report."""
    registered = _registered()
    with services.engines.read.connect() as conn:
        latest = repo.latest_per_paper(conn)
    return [_view(e, status_of(e, registered), [latest[e.paper]] if e.paper in latest else []) for e in catalog()]


def paper(services: Services, slug: str) -> PaperView:
    """One paper with its report history."""
    entry = _entry(slug)
    with services.engines.read.connect() as conn:
        reports = repo.history(conn, slug, HISTORY)
    return _view(entry, status_of(entry, _registered()), reports)


def report(services: Services, slug: str, report_id: str) -> tuple[Reproduction, ReportRow]:
    entry = _entry(slug)
    with services.engines.read.connect() as conn:
        row = repo.get(conn, report_id)
    if row is None or row.paper != slug:
        raise NotFound(f"no report {report_id!r} of {slug!r}")
    return entry, row


def request_run(services: Services, principal: Principal | None, slug: str, client: str | None) -> JobRow:
    """Queue the paper's check (admin scope); a paper whose estimator is not built yet is a ``Conflict``."""
    require(principal, "admin")
    entry = _entry(slug)
    if status_of(entry, _registered()) == "pending":
        missing = sorted(set(entry.requires) - _registered())
        why = f"{', '.join(missing)} not built yet" if missing else "its check is not written yet"
        raise Conflict(f"{slug} is pending: {why}")
    return services.jobs.submit(
        kind="reproduction",
        name=slug,
        version=CODE_VERSION,
        params_json="{}",
        api_key_id=principal.key_id if principal else None,
        client=client,
        existing_run_id=None,
    )


def _run_step(services: Services, name: str, params: dict[str, Any], progress: Progress) -> tuple[str, dict]:
    """One estimator call of a check, through the one run use case inside this job (caps and slot apply; over
    the synchronous budget it runs here, never as a nested job): (run id, result). The runs are public like the
    report that lists them, so they are made without a key (a run made with a key is visible only to it and
    admins)."""
    spec = run_requests.find_spec("estimator", name)
    request = run_requests.make_request(spec, spec.params_model.model_validate(params), None)
    outcome = run_requests.run(services, request, client=None, progress=progress, in_job=True)
    assert isinstance(outcome, run_requests.Answered)
    return outcome.run.id, json.loads(outcome.run.result)


def _step_progress(progress: Progress, step: int, steps: int) -> Progress:
    """The job's progress for one step of ``steps``: its fractions scaled into the step's share."""

    def scaled(fraction: float, message: str = "") -> None:
        progress((step + fraction) / steps, message)

    return scaled


def run_check(services: Services, slug: str, job_id: str | None, progress: Progress) -> str:
    """Run the check of ``slug`` now and store its report; returns the report id."""
    entry = _entry(slug)
    start = time.perf_counter()
    report_id = str(uuid.uuid4())
    run_ids: list[str] = []
    if entry.unavailable:
        outcome = Outcome({}, entry.unavailable)
    else:
        assert entry.judge is not None
        results = []
        steps = entry.steps
        for i, step in enumerate(steps):
            progress(i / max(len(steps), 1), f"running {step.name}")
            run_id, result = _run_step(services, step.name, dict(step.params), _step_progress(progress, i, len(steps)))
            run_ids.append(run_id)
            results.append(result)
        outcome = entry.judge(results)
    plot_url = f"/v1/reproductions/{slug}/reports/{report_id}/plot" if entry.plot and not entry.unavailable else None
    claims = apply(committed(slug).claims, outcome.findings, run_ids, plot_url)
    progress(1.0, badge(claims))
    stored = {"figures": dict(outcome.figures), "claims": [c.model_dump(mode="json") for c in claims]}
    row = ReportRow(
        seq=0,
        id=report_id,
        paper=slug,
        verdict=badge(claims),
        claim=entry.claim,
        reason=outcome.reason,
        figures=json.dumps(stored, sort_keys=True, allow_nan=False),
        run_ids=json.dumps(run_ids),
        code_version=CODE_VERSION,
        duration_ms=round((time.perf_counter() - start) * 1000.0, 3),
        job_id=job_id,
        created_at=datetime.now(UTC),
    )
    with services.engines.write.begin() as conn:
        repo.insert(conn, row)
    return row.id


def run_reproduction_job(services: Services, job: JobRow, progress: Progress) -> None:
    """The ``reproduction`` job kind: run the check named ``job.name`` and store its report."""
    run_check(services, job.name, job.id, progress)


def report_plot_inputs(services: Services, entry: Reproduction, row: ReportRow) -> tuple[list[Any], dict[str, Any]]:
    """What the report's plot is drawn from: the stored results of the runs it used, and its outcome's fields
    (the judge's own figures for run-less checks)."""
    if entry.plot is None:
        raise NotFound(f"the {entry.paper} check has no plot")
    results = []
    with services.engines.read.connect() as conn:
        for run_id in json.loads(row.run_ids):
            stored = runs_repo.get(conn, run_id)
            if stored is None:
                raise NotFound(f"run {run_id} of this report is gone")
            results.append(json.loads(stored.result))
    return results, {"figures": stored_parts(row)[0], "reason": row.reason}


def draw_report(paper: str, results: list[Any], fields: dict[str, Any]) -> Any:
    """The plot of paper ``paper``'s check, from ``report_plot_inputs``."""
    entry = get(paper)
    assert entry is not None and entry.plot is not None
    outcome = Outcome(fields["figures"], fields["reason"])
    return entry.plot(results, outcome)
