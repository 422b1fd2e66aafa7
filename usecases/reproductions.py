"""Reproduction reports: run a paper's check as a job (its estimator calls go through the run store) and keep
what it found; list every paper with its status and latest verdict."""

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
from service.registry import ESTIMATORS, SCORERS, Progress, no_progress
from service.reproductions import Outcome, Reproduction, catalog, get, status_of
from usecases import runs
from usecases.api_keys import Principal, require
from usecases.errors import Conflict, NotFound
from usecases.runs import CacheKey
from usecases.version import CODE_VERSION

if TYPE_CHECKING:
    from usecases.services import Services

HISTORY = 20
"""Reports listed per paper (newest first)."""


@dataclass(frozen=True)
class PaperView:
    """A paper's entry with its status, and its reports (newest first; only the latest in listings)."""

    entry: Reproduction
    status: str
    reports: list[ReportRow]


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
    return [PaperView(e, status_of(e, registered), [latest[e.paper]] if e.paper in latest else []) for e in catalog()]


def paper(services: Services, slug: str) -> PaperView:
    """One paper with its report history."""
    entry = _entry(slug)
    with services.engines.read.connect() as conn:
        reports = repo.history(conn, slug, HISTORY)
    return PaperView(entry, status_of(entry, _registered()), reports)


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


def _run_step(services: Services, name: str, params: dict[str, Any]) -> tuple[str, dict]:
    """One estimator call of a check through the run store: (run id, result). The runs are public like the report
    that lists them, so they are stored without a key (a run made with a key is visible only to it and admins)."""
    spec = ESTIMATORS[name]
    model = spec.params_model.model_validate(params)
    params_json = runs.canonical_params(model)
    key: CacheKey = ("estimator", spec.name, spec.version, runs.sha256_hex(params_json))
    row, _ = runs.stored_or_computed(services.engines, key, params_json, lambda: spec.fn(model, no_progress), None)
    return row.id, json.loads(row.result)


def run_check(services: Services, slug: str, job_id: str | None, progress: Progress) -> str:
    """Run the check of ``slug`` now and store its report; returns the report id."""
    entry = _entry(slug)
    start = time.perf_counter()
    run_ids: list[str] = []
    if entry.unavailable:
        outcome = Outcome("not_reproducible", {}, entry.unavailable)
    else:
        assert entry.judge is not None
        results = []
        for i, step in enumerate(entry.steps):
            progress(i / max(len(entry.steps), 1), f"running {step.name}")
            run_id, result = _run_step(services, step.name, dict(step.params))
            run_ids.append(run_id)
            results.append(result)
        outcome = entry.judge(results)
    progress(1.0, outcome.verdict)
    row = ReportRow(
        seq=0,
        id=str(uuid.uuid4()),
        paper=slug,
        verdict=outcome.verdict,
        claim=entry.claim,
        reason=outcome.reason,
        figures=json.dumps(dict(outcome.figures), sort_keys=True, allow_nan=False),
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


def report_figure(services: Services, entry: Reproduction, row: ReportRow) -> Any:
    """The report's plot, drawn from the stored runs it used (the judge's own figures for run-less checks)."""
    if entry.plot is None:
        raise NotFound(f"the {entry.paper} check has no plot")
    results = []
    with services.engines.read.connect() as conn:
        for run_id in json.loads(row.run_ids):
            stored = runs_repo.get(conn, run_id)
            if stored is None:
                raise NotFound(f"run {run_id} of this report is gone")
            results.append(json.loads(stored.result))
    outcome = Outcome(row.verdict, json.loads(row.figures), row.reason)  # type: ignore[arg-type]
    return entry.plot(results, outcome)
