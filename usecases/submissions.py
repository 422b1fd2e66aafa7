"""Submissions: scoring on arrival by split, ``Idempotency-Key`` replay, daily quotas, the owner's listing,
withdrawal and per-item scores. Private-split scores, breakdowns and per-item results are shown to admins only."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from db import locks
from db.repositories import idempotency as idem_repo
from db.repositories import submissions as sub_repo
from db.repositories.submissions import SubmissionRow
from usecases import arrays, cursors
from usecases.api_keys import Principal, require
from usecases.benchmarks import key_items, load, score_and_store
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, NotFound, QuotaExceeded, invalid
from usecases.estimator_runs import check_caps
from usecases.scoring import dumps, item_metric, validate_items

if TYPE_CHECKING:
    from usecases.services import Services

IDEMPOTENCY_STALE = timedelta(seconds=120)
MAX_METADATA_BYTES = 16 * 1024
SCOPE = "submissions:write"


def _view(conn: Connection, sub: SubmissionRow, version: int, principal: Principal) -> dict[str, Any]:
    """The submission as ``principal`` may see it (private split only for admins)."""
    out: dict[str, Any] = {
        "id": sub.id,
        "benchmark_id": sub.benchmark_id,
        "model": sub.model,
        "metadata": json.loads(sub.meta),
        "answer_key_version": None,
        "submitted_at": utc_iso(sub.created_at),
        "withdrawn_at": utc_iso(sub.withdrawn_at) if sub.withdrawn_at else None,
        "scores": {},
        "breakdown": {},
        "coverage": None,
        "reconstructed": [],
        "private": None,
    }
    scoring = sub_repo.latest_scoring(conn, sub.id, version)
    if scoring is None:
        return out
    splits = ["public", "private"] if principal.is_admin else ["public"]
    details = json.loads(scoring.details)
    scores: dict[str, dict[str, Any]] = {s: {} for s in splits}
    for s in sub_repo.scores(conn, scoring.id, splits):
        scores[s.split][s.metric] = {"value": s.value, "ci_low": s.ci_low, "ci_high": s.ci_high, "n": s.n}
    public = details.get("public", {})
    out.update(
        answer_key_version=scoring.answer_key_version,
        scores=scores["public"],
        breakdown=public.get("breakdown", {}),
        coverage=public.get("coverage"),
        reconstructed=public.get("reconstructed", []),
    )
    if principal.is_admin and "private" in details:
        out["private"] = {"scores": scores["private"], **details["private"]}
    return out


def _next_utc_midnight(now: datetime) -> datetime:
    return (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)


@dataclass(frozen=True)
class NewSubmission:
    """What a submission asks: the model name, raw prediction items and free-form metadata."""

    model: str
    predictions: list[dict[str, Any]]
    metadata: dict[str, Any]

    def fingerprint(self) -> str:
        """SHA-256 of the canonical request, to tell an idempotent retry from a different body."""
        body = {"model": self.model, "predictions": {"items": self.predictions}, "metadata": self.metadata}
        return hashlib.sha256(dumps(body).encode()).hexdigest()


def _create(services: Services, principal: Principal, benchmark_id: str, new: NewSubmission) -> str:
    """Validate, resolve uploaded arrays, check the cost against the scorer's hard cap (a submission over the
    synchronous budget still runs inline), then check the quota, store and score in one transaction; returns the
    view as JSON text. The stored predictions keep their array references."""
    meta = dumps(new.metadata)
    if len(meta) > MAX_METADATA_BYTES:
        raise invalid("metadata too large", ("body", "metadata"), "too_long", "at most 16 KiB of JSON")
    now = datetime.now(UTC)
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        version = loaded.benchmark.current_version
        key = key_items(conn, loaded, version)
    preds = validate_items(loaded.spec.prediction_item_model, new.predictions, ("predictions", "items"))
    predictions_json = dumps([p.model_dump(mode="json") for p in preds])
    key = arrays.resolve_items(services.engines, key, ("answer_key", "items"))
    resolved = arrays.resolve_items(services.engines, preds, ("predictions", "items"))
    cost = float(loaded.spec.cost(key, resolved, loaded.params))
    check_caps(loaded.spec, cost, queue_available=True, loc=("body", "predictions", "items"))
    sub = SubmissionRow(0, str(uuid.uuid4()), benchmark_id, new.model, meta, principal.key_id, now, None)
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    quota = loaded.benchmark.max_submissions_per_day
    with services.engines.write.begin() as conn:
        locks.serialize_on(conn, f"quota:{benchmark_id}:{principal.key_id}")
        if sub_repo.count_since(conn, benchmark_id, principal.key_id, day) >= quota:
            retry = int((_next_utc_midnight(now) - now).total_seconds()) + 1
            raise QuotaExceeded(f"daily quota of {quota} submissions to this benchmark is used", retry)
        sub_repo.insert_submission(conn, sub, predictions_json)
        score_and_store(conn, loaded, sub.id, version, key, resolved)
        return dumps(_view(conn, sub, version, principal))


@dataclass(frozen=True)
class Submitted:
    """The stored submission's view as JSON text, and whether it replays an earlier identical request."""

    json: str
    replayed: bool


def submit(
    services: Services, principal: Principal, benchmark_id: str, new: NewSubmission, idempotency_key: str | None
) -> Submitted:
    """Score the predictions against the current answer key and store them. With ``idempotency_key``, a retry
    with the same body replays the first answer; a different body is invalid; a retry while the first is still
    running is a ``Conflict``. Failed scorings do not count against the daily quota."""
    require(principal, SCOPE)
    if idempotency_key is None:
        return Submitted(_create(services, principal, benchmark_id, new), False)
    scope = f"{principal.key_id}:{benchmark_id}:submissions"
    digest = new.fingerprint()
    now = datetime.now(UTC)
    engines = services.engines
    with engines.write.begin() as conn:
        existing = idem_repo.claim(conn, scope, idempotency_key, digest, now)
        if existing is not None and existing.status_code is None:
            stale = existing.created_at < now - IDEMPOTENCY_STALE
            same = existing.request_sha256 == digest
            # the conditional take-over lets one retry of an abandoned request through; a concurrent one gets 409
            if (
                stale
                and same
                and idem_repo.take_over(conn, scope, idempotency_key, digest, now - IDEMPOTENCY_STALE, now)
            ):
                existing = None
    if existing is not None:
        if existing.request_sha256 != digest:
            raise invalid(
                "this Idempotency-Key was used with a different body",
                ("header", "Idempotency-Key"),
                "idempotency",
                "reused with a different body",
            )
        if existing.status_code is None:
            raise Conflict("a request with this Idempotency-Key is still in flight")
        return Submitted(existing.response or "", True)
    try:
        text = _create(services, principal, benchmark_id, new)
    except BaseException:
        with engines.write.begin() as conn:
            idem_repo.release(conn, scope, idempotency_key)
        raise
    with engines.write.begin() as conn:
        idem_repo.complete(conn, scope, idempotency_key, 201, text)
    return Submitted(text, False)


def list_own(
    services: Services, principal: Principal, benchmark_id: str, limit: int, cursor: str | None
) -> tuple[list[dict[str, Any]], str | None]:
    """The caller's own submissions to this benchmark, newest first (every submission for admins)."""
    require(principal, SCOPE)
    before = cursors.decode_seq(cursor)
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        rows = sub_repo.list_for_benchmark(
            conn,
            benchmark_id,
            api_key_id=principal.key_id,
            all_keys=principal.is_admin,
            limit=limit + 1,
            before_seq=before,
        )
        page = rows[:limit]
        items = [_view(conn, s, loaded.benchmark.current_version, principal) for s in page]
    return items, (cursors.encode(page[-1].seq) if len(rows) > limit else None)


def _load_visible(conn: Connection, submission_id: str, principal: Principal) -> tuple[SubmissionRow, int]:
    sub = sub_repo.get(conn, submission_id)
    if sub is None:
        raise NotFound(f"no submission {submission_id!r}")
    if not principal.is_admin and sub.api_key_id != principal.key_id:
        raise Forbidden("this submission belongs to another key")
    return sub, load(conn, sub.benchmark_id).benchmark.current_version


def get(services: Services, principal: Principal, submission_id: str) -> dict[str, Any]:
    """One submission with its scores against the current answer-key version (owner or admin)."""
    require(principal, SCOPE)
    with services.engines.read.connect() as conn:
        sub, version = _load_visible(conn, submission_id, principal)
        return _view(conn, sub, version, principal)


def item_scores(services: Services, principal: Principal, submission_id: str, metric: str | None) -> dict[str, Any]:
    """Per-item values of ``metric`` (default the primary) in the latest scoring (public items for the owner;
    every item for admins); a metric without per-item values is a 422 naming ``metric``."""
    require(principal, SCOPE)
    with services.engines.read.connect() as conn:
        sub, version = _load_visible(conn, submission_id, principal)
        chosen = item_metric(load(conn, sub.benchmark_id).spec, metric)
        scoring = sub_repo.latest_scoring(conn, sub.id, version)
        if scoring is None:
            raise NotFound("this submission has no scoring against the current answer key")
        splits = ["public", "private"] if principal.is_admin else ["public"]
        rows = sub_repo.item_scores(conn, scoring.id, splits, chosen)
    return {
        "submission_id": sub.id,
        "answer_key_version": version,
        "metric": chosen,
        "items": [{"split": s, "item_id": i, "value": v} for s, i, v in rows],
    }


def withdraw(services: Services, principal: Principal, submission_id: str) -> dict[str, Any]:
    """Withdraw: hidden from leaderboards from now on; the rows are kept (owner or admin)."""
    require(principal, SCOPE)
    with services.engines.write.begin() as conn:
        sub, version = _load_visible(conn, submission_id, principal)
        sub_repo.withdraw(conn, sub.id, datetime.now(UTC))
        withdrawn = sub_repo.get(conn, sub.id)
        assert withdrawn is not None
        return _view(conn, withdrawn, version, principal)
