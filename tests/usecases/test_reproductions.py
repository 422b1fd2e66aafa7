"""Reproduction reports (usecases/reproductions.py) called directly: a check's runs go through the run store
without a key and its progress is scaled step by step, the stored report holds the figures and the claims with the
findings applied (run ids, plot URL), a paper's claims are its latest report's or else its committed ledger, the
history is newest first and capped, and a check is queued only by an admin for a paper that is not pending. A
check with steps on the test estimator stands in for a paper's (``get`` replaced for one slug). Written for the
mutation run of ``usecases.reproductions``."""

import json
import os
import time
import types
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from db.repositories import reproductions as repo
from db.repositories import runs as runs_repo
from db.repositories.reproductions import ReportRow
from service.reproductions import Outcome, Reproduction, Step, catalog, status_of
from service.reproductions.claims import Finding, badge, committed
from tests.factories import admin, principal
from usecases import reproductions
from usecases.errors import Conflict, Forbidden, NotFound, Unauthorized
from usecases.services import Services
from usecases.settings import Settings
from usecases.version import CODE_VERSION

SLUG = "cminhash"
"""The paper whose entry is replaced (its committed ledger stays): claims ``minner-variance-matches`` (headline,
consistent) and ``circulant-other-estimators`` (not headline)."""


@pytest.fixture
def queued(settings: Settings, test_estimator: str) -> Iterator[Services]:
    s = Services(settings.model_copy(update={"queue": "memory"}))
    yield s
    s.dispose()


def fake_entry(
    judged: list[Any], plot: Any = None, requires: tuple[str, ...] = ("test.slow_sum",), judge: bool = True
) -> Reproduction:
    def judge_fn(results: Sequence[Mapping[str, Any]]) -> Outcome:
        judged.append(list(results))
        total = sum(r["total"] for r in results)
        measured = {"total": total, "spread": float("nan")}  # a NaN is stored as null (valid JSON)
        found = Finding("contradicted", "paper_text", {"total": 1}, measured, 0.1, "a sum by hand")
        return Outcome({"total": total}, f"the totals sum to {total:g}", {"minner-variance-matches": found})

    steps = (
        Step("test.slow_sum", {"values": [1.0, 2.0], "steps": 2, "tag": 11}),
        Step("test.slow_sum", {"values": [4.0], "tag": 12}),
    )
    return Reproduction(
        paper=SLUG,
        title="t",
        claim="the claim",
        requires=requires,
        build_steps=lambda: steps,
        judge=judge_fn if judge else None,
        plot=plot,
    )


@pytest.fixture
def replaced(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``get(SLUG)`` answers ``state["entry"]`` (set by the test); other slugs the catalog's."""
    state: dict[str, Any] = {}
    real = reproductions.get
    monkeypatch.setattr(reproductions, "get", lambda slug: state["entry"] if slug == SLUG else real(slug))
    return state


def stored_report(services: Services, paper: str, stored: Any, created_at: datetime, **fields: Any) -> ReportRow:
    values: dict[str, Any] = {
        "seq": 0, "id": f"r-{created_at.timestamp():.0f}-{paper}", "paper": paper, "verdict": "consistent",
        "claim": "c", "reason": "why", "figures": json.dumps(stored), "run_ids": "[]", "code_version": "0.0",
        "duration_ms": 1.0, "job_id": None, "created_at": created_at,
    } | fields  # fmt: skip
    row = ReportRow(**values)
    with services.engines.write.begin() as conn:
        repo.insert(conn, row)
        back = repo.get(conn, row.id)
    assert back is not None and back.seq > 0
    return back


# --- running a check ------------------------------------------------------------------------------------------


def test_a_check_runs_its_steps_without_a_key_and_stores_the_judged_report(
    queued: Services, replaced: dict[str, Any]
) -> None:
    judged: list[Any] = []
    replaced["entry"] = fake_entry(judged, plot=lambda results, outcome: None)
    calls: list[tuple[float, str]] = []
    before = datetime.now(UTC)
    report_id = reproductions.run_check(queued, SLUG, "job-1", lambda f, m="": calls.append((f, m)))
    with queued.engines.read.connect() as conn:
        row = repo.get(conn, report_id)
        assert row is not None
        run_ids = json.loads(row.run_ids)
        runs = [runs_repo.get(conn, i) for i in run_ids]
    assert len(run_ids) == 2 and all(r is not None and r.api_key_id is None for r in runs)
    assert [json.loads(r.result) for r in runs if r] == [
        {"total": 3.0, "n": 2, "steps": 2}, {"total": 4.0, "n": 1, "steps": 1}
    ]  # fmt: skip
    assert judged == [[{"total": 3.0, "n": 2, "steps": 2}, {"total": 4.0, "n": 1, "steps": 1}]]
    assert calls == [
        (0.0, "running test.slow_sum"), (0.25, "step 1 of 2"), (0.5, "step 2 of 2"),
        (0.5, "running test.slow_sum"), (1.0, "step 1 of 1"), (1.0, "contradicted"),
    ]  # fmt: skip
    plot_url = f"/v1/reproductions/{SLUG}/reports/{report_id}/plot"
    stored = json.loads(row.figures)
    assert stored["figures"] == {"total": 7.0}
    claims = {c["id"]: c for c in stored["claims"]}
    changed = claims["minner-variance-matches"]
    assert (changed["status"], changed["expected"], changed["measured"]) == (
        "contradicted",
        {"total": 1},
        {"total": 7.0, "spread": None},
    )
    assert changed["evidence"] == {"run_ids": run_ids, "plot_url": plot_url, "computation": "a sum by hand"}
    kept = committed(SLUG).claims[1]
    assert claims["circulant-other-estimators"] == kept.model_dump(mode="json")
    assert (row.paper, row.verdict, row.claim, row.reason) == (SLUG, "contradicted", "the claim", "the totals sum to 7")
    assert (row.code_version, row.job_id, row.seq > 0) == (CODE_VERSION, "job-1", True)
    assert (
        before - timedelta(seconds=1) <= row.created_at.replace(tzinfo=UTC) <= datetime.now(UTC) + timedelta(seconds=1)
    )
    assert 0 < row.duration_ms < 60_000 and str(uuid.UUID(report_id)) == report_id
    assert list(json.loads(row.figures)) == ["claims", "figures"]  # stored with sorted keys


def test_a_check_without_a_plot_links_none(queued: Services, replaced: dict[str, Any]) -> None:
    replaced["entry"] = fake_entry([])
    report_id = reproductions.run_check(queued, SLUG, None, lambda f, m="": None)
    _, row = reproductions.report(queued, SLUG, report_id)
    claims = {c["id"]: c for c in json.loads(row.figures)["claims"]}
    assert claims["minner-variance-matches"]["evidence"]["plot_url"] is None and row.job_id is None


def test_an_unavailable_paper_stores_its_reason_and_the_committed_claims(services: Services) -> None:
    calls: list[tuple[float, str]] = []
    entry = reproductions.get("stakebench")
    assert entry is not None and entry.unavailable and entry.plot is None
    report_id = reproductions.run_check(services, "stakebench", "j", lambda f, m="": calls.append((f, m)))
    _, row = reproductions.report(services, "stakebench", report_id)
    ledger = committed("stakebench")
    assert json.loads(row.figures) == {"figures": {}, "claims": [c.model_dump(mode="json") for c in ledger.claims]}
    assert (row.run_ids, row.reason, row.verdict) == ("[]", entry.unavailable, badge(ledger.claims))
    assert calls == [(1.0, badge(ledger.claims))]


def test_a_run_less_check_with_a_plot_stores_its_plot_url(services: Services) -> None:
    report_id = reproductions.run_check(services, "vimu", None, lambda f, m="": None)
    _, row = reproductions.report(services, "vimu", report_id)
    claims = json.loads(row.figures)["claims"]
    urls = {c["evidence"]["plot_url"] for c in claims if c["evidence"]["plot_url"] is not None}
    assert urls == {f"/v1/reproductions/vimu/reports/{report_id}/plot"}


def test_the_job_kind_runs_the_named_check_with_its_job_id(services: Services) -> None:
    class Job:
        name, id = "stakebench", "the-job"

    reproductions.run_reproduction_job(services, Job(), lambda f, m="": None)  # type: ignore[arg-type]
    (latest,) = reproductions.paper(services, "stakebench").reports
    assert latest.job_id == "the-job" and latest.paper == "stakebench"


def test_a_step_reports_progress_within_its_share() -> None:
    calls: list[tuple[float, str]] = []
    scaled = reproductions._step_progress(lambda f, m="": calls.append((f, m)), 2, 4)
    scaled(0.5, "half")
    scaled(1.0)
    assert calls == [(0.625, "half"), (0.75, "")]


# --- queueing a check -----------------------------------------------------------------------------------------


def test_only_an_admin_queues_a_check_and_its_job_names_the_paper(queued: Services) -> None:
    with pytest.raises(Unauthorized):
        reproductions.request_run(queued, None, SLUG, None)
    with pytest.raises(Forbidden):
        reproductions.request_run(queued, principal(queued, "estimators:run"), SLUG, None)
    boss = admin(queued)
    job = reproductions.request_run(queued, boss, SLUG, "cli/1")
    assert (job.kind, job.name, job.version, job.params) == ("reproduction", SLUG, CODE_VERSION, "{}")
    assert (job.api_key_id, job.client, job.run_id) == (boss.key_id, "cli/1", None)
    with pytest.raises(NotFound):
        reproductions.request_run(queued, boss, "no-such-paper", None)


def test_a_pending_paper_is_not_queued(queued: Services, replaced: dict[str, Any]) -> None:
    boss = admin(queued)
    replaced["entry"] = fake_entry([], requires=("zz.second", "test.slow_sum", "aa.first"))
    with pytest.raises(Conflict, match=r"^cminhash is pending: aa\.first, zz\.second not built yet$"):
        reproductions.request_run(queued, boss, SLUG, None)
    replaced["entry"] = fake_entry([], judge=False)
    with pytest.raises(Conflict, match=r"^cminhash is pending: its check is not written yet$"):
        reproductions.request_run(queued, boss, SLUG, None)
    replaced["entry"] = fake_entry([])
    assert reproductions.request_run(queued, boss, SLUG, None).name == SLUG


# --- reading reports and ledgers ------------------------------------------------------------------------------

T0 = datetime(2026, 3, 1, 23, 30, tzinfo=UTC)


def new_format(status: str, figures: dict[str, Any] | None = None) -> dict[str, Any]:
    claims = [c.model_dump(mode="json") for c in committed(SLUG).claims]
    claims[0]["status"] = status
    claims[0]["needs"] = "a data set" if status.startswith("needs") else ""
    return {"figures": figures or {"f": 1}, "claims": claims}


def test_a_papers_claims_are_its_latest_reports_or_else_its_committed_ledger(services: Services) -> None:
    views = reproductions.list_papers(services)
    assert [v.entry.paper for v in views] == [e.paper for e in catalog()]
    registered = reproductions._registered()
    assert [v.status for v in views] == [status_of(e, registered) for e in catalog()]
    assert all(v.reports == [] and v.ledger == committed(v.entry.paper) for v in views)
    assert [v.badge for v in views] == [badge(committed(e.paper).claims) for e in catalog()]
    stored_report(services, SLUG, new_format("contradicted"), T0, code_version="9.9")
    newest = stored_report(services, SLUG, new_format("needs_data"), T0 + timedelta(hours=1), code_version="9.10")
    view = {v.entry.paper: v for v in reproductions.list_papers(services)}[SLUG]
    assert view.reports == [newest]
    assert view.ledger.code_version == "9.10" and view.ledger.date == "2026-03-02" and view.ledger.paper == SLUG
    assert [c.status for c in view.ledger.claims] == ["needs_data", "implementation_verified"]
    assert view.badge == "needs_data"
    old = stored_report(services, "vimu", {"f": 2}, T0)  # stored before the ledger: figures only
    vimu = {v.entry.paper: v for v in reproductions.list_papers(services)}["vimu"]
    assert vimu.reports == [old] and vimu.ledger == committed("vimu")


def test_a_papers_history_is_newest_first_and_capped(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [stored_report(services, SLUG, new_format("consistent"), T0 + timedelta(minutes=i)) for i in range(3)]
    stored_report(services, "vimu", {"f": 1}, T0 + timedelta(minutes=9))
    view = reproductions.paper(services, SLUG)
    assert view.reports == rows[::-1] and view.status == "ready" and view.entry.paper == SLUG
    monkeypatch.setattr(reproductions, "HISTORY", 2)
    assert reproductions.paper(services, SLUG).reports == rows[:0:-1]
    with pytest.raises(NotFound):
        reproductions.paper(services, "no-such-paper")


def test_a_report_is_found_only_under_its_own_paper(services: Services) -> None:
    row = stored_report(services, SLUG, new_format("consistent"), T0)
    entry, found = reproductions.report(services, SLUG, row.id)
    assert entry.paper == SLUG and found == row
    for slug, report_id in ((SLUG, "nope"), ("vimu", row.id), ("no-such-paper", row.id)):
        with pytest.raises(NotFound):
            reproductions.report(services, slug, report_id)


def test_stored_parts_read_both_formats_and_the_badge_follows() -> None:
    fmt = new_format("needs_models", {"x": [1, 2]})
    row = ReportRow(0, "r", SLUG, "v", "c", "why", json.dumps(fmt), "[]", "1", 1.0, None, T0)
    figures, claims = reproductions.stored_parts(row)
    assert figures == {"x": [1, 2]} and claims is not None
    assert [c.model_dump(mode="json") for c in claims] == fmt["claims"]
    assert reproductions.report_badge(row) == "needs_models"
    for old in ({"x": 1}, {"figures": {"x": 1}}, {"figures": {}, "claims": [], "more": 1}):
        legacy = ReportRow(0, "r", SLUG, "v", "c", "why", json.dumps(old), "[]", "1", 1.0, None, T0)
        assert reproductions.stored_parts(legacy) == (old, None)
        assert reproductions.report_badge(legacy) == "not_checked"
    assert reproductions.ledger_of(reproductions.get(SLUG), None) == committed(SLUG)  # type: ignore[arg-type]


def test_a_reports_date_is_its_utc_date() -> None:
    late = datetime(2026, 3, 1, 21, 0, tzinfo=timezone(timedelta(hours=-5)))  # 02:00 UTC the next day
    row = ReportRow(0, "r", SLUG, "v", "c", "why", "{}", "[]", "1", 1.0, None, late)
    assert reproductions.utc_date(row) == "2026-03-02"


# --- plot inputs ----------------------------------------------------------------------------------------------


def test_a_reports_plot_is_drawn_from_its_runs_and_outcome(queued: Services, replaced: dict[str, Any]) -> None:
    drawn: list[tuple[list[Any], Outcome]] = []
    replaced["entry"] = fake_entry([], plot=lambda results, outcome: drawn.append((results, outcome)) or "fig")
    report_id = reproductions.run_check(queued, SLUG, None, lambda f, m="": None)
    entry, row = reproductions.report(queued, SLUG, report_id)
    results, fields = reproductions.report_plot_inputs(queued, entry, row)
    assert results == [{"total": 3.0, "n": 2, "steps": 2}, {"total": 4.0, "n": 1, "steps": 1}]
    assert fields == {"figures": {"total": 7.0}, "reason": "the totals sum to 7"}
    assert reproductions.draw_report(SLUG, results, fields) == "fig"
    assert drawn == [(results, Outcome({"total": 7.0}, "the totals sum to 7"))]
    no_plot = fake_entry([])
    with pytest.raises(NotFound):
        reproductions.report_plot_inputs(queued, no_plot, row)
    gone = ReportRow(**{**row.__dict__, "run_ids": json.dumps([*json.loads(row.run_ids), "no-such-run"])})
    with pytest.raises(NotFound, match="no-such-run"):
        reproductions.report_plot_inputs(queued, entry, gone)


def test_a_run_less_reports_plot_is_drawn_from_its_own_figures(services: Services) -> None:
    report_id = reproductions.run_check(services, "vimu", None, lambda f, m="": None)
    entry, row = reproductions.report(services, "vimu", report_id)
    results, fields = reproductions.report_plot_inputs(services, entry, row)
    assert results == [] and fields == {"figures": reproductions.stored_parts(row)[0], "reason": row.reason}
    assert fields["figures"] and fields["reason"]


def test_a_reports_duration_is_in_milliseconds_to_the_microsecond(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = iter([100.0, 100.0123456789])
    monkeypatch.setattr(reproductions, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    report_id = reproductions.run_check(services, "stakebench", None, lambda f, m="": None)
    assert reproductions.report(services, "stakebench", report_id)[1].duration_ms == 12.346


def test_each_check_stores_a_new_report(services: Services) -> None:
    ids = {reproductions.run_check(services, "stakebench", None, lambda f, m="": None) for _ in range(2)}
    assert len(ids) == 2 and len(reproductions.paper(services, "stakebench").reports) == 2


def test_a_check_whose_figures_are_not_json_stores_nothing(queued: Services, replaced: dict[str, Any]) -> None:
    entry = fake_entry([])
    assert entry.judge is not None
    judge = entry.judge
    replaced["entry"] = Reproduction(
        paper=SLUG, title="t", claim="c", requires=entry.requires, build_steps=lambda: entry.steps,
        judge=lambda results: Outcome({"x": float("inf")}, "r", judge(results).findings),
    )  # fmt: skip
    with pytest.raises(ValueError, match="not JSON compliant"):
        reproductions.run_check(queued, SLUG, None, lambda f, m="": None)
    assert reproductions.paper(queued, SLUG).reports == []


def test_a_step_over_the_synchronous_budget_runs_inside_the_check_not_as_a_job(
    queued: Services, replaced: dict[str, Any]
) -> None:
    slow = Step("test.slow_sum", {"values": [1.0], "steps": 2, "step_s": 0.26, "tag": 13})  # cost 0.52 s > 0.5 s
    entry = fake_entry([])
    replaced["entry"] = Reproduction(
        paper=SLUG, title="t", claim="c", requires=entry.requires, build_steps=lambda: (slow,), judge=entry.judge
    )
    report_id = reproductions.run_check(queued, SLUG, None, lambda f, m="": None)
    assert json.loads(reproductions.report(queued, SLUG, report_id)[1].figures)["figures"] == {"total": 1.0}


def test_a_reports_date_is_the_utc_date_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        row = ReportRow(
            0, "r", SLUG, "v", "c", "why", "{}", "[]", "1", 1.0, None, datetime(2026, 3, 1, 20, 0, tzinfo=UTC)
        )
        assert reproductions.utc_date(row) == "2026-03-01"  # 01:30 on March 2 in Kolkata
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert "TZ" not in os.environ
