"""Submissions: scoring on arrival by split, ``Idempotency-Key`` replay, daily quotas, the maker's listing,
withdrawal, the ``public`` and ``baseline`` flags and per-item scores. A submission is seen by its maker and by the
benchmark's owners and admins (``usecases.access``); anyone else gets 404. Private-split scores, breakdowns and
per-item results are shown to the owners and admins only."""

from __future__ import annotations

import hashlib
import json
import uuid
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import pydantic_core
from pydantic import Field, StringConstraints, TypeAdapter, ValidationError, create_model
from sqlalchemy import Connection

from db import locks
from db.repositories import idempotency as idem_repo
from db.repositories import participants as part_repo
from db.repositories import submissions as sub_repo
from db.repositories.submissions import SubmissionRow
from service.errors import DomainError
from service.registry import ScorerSpec
from service.scoring._common import ItemColumns
from service.types import MAX_JSON_ARRAY, StrictModel
from usecases import arrays, audit, cursors, json_bounds, phases, rankings
from usecases.access import Access, access, check_bound, sees_submission
from usecases.api_keys import Principal, require, require_key
from usecases.benchmarks import Loaded, key_items, load, score_submission, store_scoring
from usecases.budgets import sync_slot
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, InvalidFields, NotFound, QuotaExceeded, invalid
from usecases.scoring import dump_columns, dump_items, dumps, item_columns, item_metric, validate_columns

if TYPE_CHECKING:
    from usecases.services import Services

IDEMPOTENCY_STALE = timedelta(seconds=120)
MAX_METADATA_BYTES = 16 * 1024
SCOPE = "submissions:write"


@dataclass(frozen=True)
class SubmissionView:
    """A submission as a caller may see it: its latest scoring against the current answer-key version (public
    split; the private one, ``private``, for the benchmark's owners and admins only), or no scores before its first
    scoring; its flags, and the team or display name of the participant who made it. Times are ISO-8601 UTC text
    (``utc_iso``), as the stored answer of an idempotent retry has them."""

    id: str
    benchmark_id: str
    model: str
    metadata: dict[str, Any]
    submitted_at: str
    withdrawn_at: str | None
    public: bool = True
    baseline: bool = False
    participant: str | None = None
    phase_id: str | None = None
    late: bool = False
    answer_key_version: int | None = None
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    breakdown: dict[str, Any] = field(default_factory=dict)
    coverage: float | None = None
    reconstructed: list[str] = field(default_factory=list)
    private: dict[str, Any] | None = None


def _view(conn: Connection, sub: SubmissionRow, version: int, found: Access) -> SubmissionView:
    """The submission as a caller with ``found`` access may see it (private split only for owners and admins)."""
    unscored = SubmissionView(
        id=sub.id,
        benchmark_id=sub.benchmark_id,
        model=sub.model,
        metadata=json.loads(sub.meta),
        submitted_at=utc_iso(sub.created_at),
        withdrawn_at=utc_iso(sub.withdrawn_at) if sub.withdrawn_at else None,
        public=sub.public,
        baseline=sub.baseline,
        participant=part_repo.shown_as(conn, [sub.api_key_id]).get(sub.api_key_id or ""),
        phase_id=sub.phase_id,
        late=sub.late,
    )
    scoring = sub_repo.latest_scoring(conn, sub.id, version)
    if scoring is None:
        return unscored
    private = found.sees_everything
    splits = ["public", "private"] if private else ["public"]
    details = json.loads(scoring.details)
    scores: dict[str, dict[str, Any]] = {s: {} for s in splits}
    for s in sub_repo.scores(conn, scoring.id, splits):
        scores[s.split][s.metric] = {"value": s.value, "ci_low": s.ci_low, "ci_high": s.ci_high, "n": s.n}
    public = details.get("public", {})
    return replace(
        unscored,
        answer_key_version=scoring.answer_key_version,
        scores=scores["public"],
        breakdown=public.get("breakdown", {}),
        coverage=public.get("coverage"),
        reconstructed=public.get("reconstructed", []),
        private={"scores": scores["private"], **details["private"]} if private and "private" in details else None,
    )


def _next_utc_midnight(now: datetime) -> datetime:
    return (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)


class PredictionsIn(StrictModel):
    items: list[dict[str, Any]] = Field(
        max_length=MAX_JSON_ARRAY, description="Items of the scorer's prediction_item_schema, each with item_id."
    )


MAX_MODEL_CHARS = 128


class SubmissionIn(StrictModel):
    """The body of ``POST /v1/benchmarks/{id}/submissions``."""

    model: Annotated[str, StringConstraints(min_length=1, max_length=MAX_MODEL_CHARS)] = Field(
        description="Model name."
    )
    predictions: PredictionsIn
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form JSON (at most 16 KiB).")


MAX_RAW_METADATA_BYTES = 1024 * 1024
"""Metadata sent with more bytes than this is refused before it is parsed (its compact JSON may hold 16 KiB)."""


@cache
def _typed_predictions(name: str, item_model: type[StrictModel]) -> type[StrictModel]:
    """``{"items": [...]}`` typed for scorer ``name``'s prediction items: the structural pre-check's bounds (one
    model per scorer, so ``json_bounds.level_bounds`` computes its bounds once)."""
    return create_model(
        f"{name.replace('.', '_')}_submission_predictions",
        __base__=StrictModel,
        items=(list[item_model], Field(max_length=MAX_JSON_ARRAY)),
    )


def parse_new(services: Services, benchmark_id: str, body: bytes) -> NewSubmission:
    """The submission a raw JSON body asks for. A large body is split into its members without parsing
    (``json_bounds.members``): ``predictions`` passes the structural pre-check against the benchmark's prediction
    item model (far more values than any valid body holds: 422 before parsing) and metadata over
    ``MAX_RAW_METADATA_BYTES`` is refused unparsed; the body is then parsed holding the process's one permit for
    large bodies. Errors are located under ``body`` as a typed route's are."""
    with services.engines.read.connect() as conn:
        spec = load(conn, benchmark_id).spec
    large = len(body) >= json_bounds.MIN_CHECKED_BYTES
    with json_bounds.LARGE_BODIES if large else nullcontext():
        if large:
            parts = json_bounds.members(body)
            if parts is None:
                if not json_bounds.balanced(body):
                    error = {"loc": ["body"], "msg": "unbalanced brackets", "type": "json_invalid"}
                    raise InvalidFields("The body is not valid JSON.", [error], malformed=True)
                raise invalid("a submission is an object {model, predictions, metadata}", ("body",), "model_type")
            typed = _typed_predictions(spec.name, spec.prediction_item_model)
            json_bounds.check(typed, parts.get("predictions", b"{}"), ("body", "predictions"))
            if len(parts.get("metadata", b"")) > MAX_RAW_METADATA_BYTES:
                raise invalid("metadata too large", ("body", "metadata"), "too_long", "at most 16 KiB of JSON")
            del parts  # copies of the body's values: not kept while the body is parsed
        try:
            plain = _plain_submission(pydantic_core.from_json(body, allow_inf_nan=False), spec.prediction_item_model)
        except ValueError:
            plain = None
        if plain is not None:
            return plain
        try:
            parsed = SubmissionIn.model_validate_json(body)
        except ValidationError as exc:
            errors = [
                {"loc": ["body", *e["loc"]], "msg": e["msg"], "type": e["type"]}
                for e in exc.errors(include_url=False, include_context=False, include_input=False)
            ]
            if any(e["type"] == "json_invalid" for e in errors):
                raise InvalidFields("The body is not valid JSON.", errors, malformed=True) from exc
            raise InvalidFields("The request failed validation.", errors) from exc
    return NewSubmission(parsed.model, parsed.predictions.items, parsed.metadata)


def _plain_submission(data: Any, item_model: type[StrictModel]) -> NewSubmission | None:
    """The submission a parsed JSON body asks for when ``SubmissionIn`` would take it as it is (checked without
    copying an item), its items as ``ItemColumns`` when ``item_columns`` can tell they are valid (the parsed items
    are then dropped at once); None otherwise, and then the model validates the body and gives the errors. The
    parser is stricter than the model's (no NaN or Infinity), so what it refuses is left to the model too."""
    if type(data) is not dict or not {"model", "predictions"} <= data.keys() <= {"model", "predictions", "metadata"}:
        return None
    model, predictions, metadata = data["model"], data["predictions"], data.get("metadata", {})
    if type(model) is not str or not 1 <= len(model) <= MAX_MODEL_CHARS or type(metadata) is not dict:
        return None
    if type(predictions) is not dict or predictions.keys() != {"items"}:
        return None
    items = predictions["items"]
    if type(items) is not list or len(items) > MAX_JSON_ARRAY or (items and set(map(type, items)) != {dict}):
        return None
    columns = item_columns(item_model, items)
    return NewSubmission(model, items if columns is None else columns, metadata)


JSONL_MEDIA_TYPE = "application/x-ndjson"
"""The media type of a JSON Lines submission: one prediction item per line, ``model`` and ``metadata`` in the
query."""
_ITEM = TypeAdapter(dict[str, Any])


def _lines(body: bytes) -> list[bytes]:
    """The lines of a JSON Lines body (``\\n`` or ``\\r\\n``), empty lines at its end dropped; more lines than a
    predictions list may hold (counted before anything is parsed) or an empty line before the last item is a 422
    naming it."""
    text = body.rstrip()
    if not text:
        return []
    if text.count(b"\n") >= MAX_JSON_ARRAY:
        raise invalid(f"more than {MAX_JSON_ARRAY} lines", ("body",), "too_long", f"at most {MAX_JSON_ARRAY} items")
    lines = text.split(b"\n")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            raise invalid(f"line {n} is empty", ("body", n), "missing", "an empty line before the last item")
    return lines


def _parse_line(line: bytes, n: int) -> dict[str, Any]:
    """One line as a prediction item (a JSON object), or a 422 located at ``("body", n, ...)``."""
    try:
        return _ITEM.validate_json(line)
    except ValidationError as exc:
        errors = [
            {"loc": ["body", n, *e["loc"]], "msg": e["msg"], "type": e["type"]}
            for e in exc.errors(include_url=False, include_context=False, include_input=False)
        ]
        raise InvalidFields(f"line {n} is not a JSON object", errors) from exc


def parse_lines(services: Services, benchmark_id: str, body: bytes, model: str, metadata: str | None) -> NewSubmission:
    """The submission a JSON Lines body asks for: each line one prediction item, as the JSON body's
    ``predictions.items`` holds them; ``metadata`` the query's JSON object text (the JSON body's bounds). The line
    count is bounded before parsing, a large line passes the structural pre-check against the benchmark's
    prediction item model, and a large body is parsed holding the process's one permit for large bodies. A bad
    line is a 422 at ``("body", line)`` (1-based) and the field inside it."""
    meta: dict[str, Any] = {}
    if metadata is not None:
        if len(metadata) > MAX_METADATA_BYTES:
            raise invalid("metadata too large", ("query", "metadata"), "too_long", "at most 16 KiB of JSON")
        try:
            meta = _ITEM.validate_json(metadata)
        except ValidationError as exc:
            errors = [
                {"loc": ["query", "metadata", *e["loc"]], "msg": e["msg"], "type": e["type"]}
                for e in exc.errors(include_url=False, include_context=False, include_input=False)
            ]
            raise InvalidFields("metadata is not a JSON object", errors) from exc
    lines = _lines(body)
    with services.engines.read.connect() as conn:
        spec = load(conn, benchmark_id).spec
    large = len(body) >= json_bounds.MIN_CHECKED_BYTES
    with json_bounds.LARGE_BODIES if large else nullcontext():
        for n, line in enumerate(lines, 1):
            json_bounds.check(spec.prediction_item_model, line, ("body", n))
        items = [_parse_line(line, n) for n, line in enumerate(lines, 1)]
    return NewSubmission(model, items, meta)


_ITEMS_LOC = ("body", "predictions", "items")


def _by_line(loc: list[Any]) -> list[Any]:
    """A JSON body's location of a prediction item (``body.predictions.items.<i>...``) as its line's
    (``body.<i + 1>...``); the predictions list as a whole is the body."""
    if tuple(loc[:3]) != _ITEMS_LOC:
        return loc
    rest = loc[3:]
    return ["body", rest[0] + 1, *rest[1:]] if rest and isinstance(rest[0], int) else ["body", *rest]


def submit_lines(
    services: Services, principal: Principal, benchmark_id: str, new: NewSubmission, idempotency_key: str | None
) -> Submitted:
    """``submit`` for a JSON Lines body: errors about an item name its line (``("body", line, field)``)."""
    try:
        return submit(services, principal, benchmark_id, new, idempotency_key)
    except InvalidFields as exc:
        errors = [{**e, "loc": _by_line(list(e["loc"]))} for e in exc.errors]
        raise InvalidFields(exc.detail, errors) from exc
    except DomainError as exc:
        loc = _by_line(["body", *exc.loc])
        raise InvalidFields(exc.msg, [{"loc": loc, "msg": exc.msg, "type": exc.type}]) from exc


@dataclass(frozen=True)
class NewSubmission:
    """What a submission asks: the model name, raw prediction items (or the same items already checked, as
    ``ItemColumns``) and free-form metadata."""

    model: str
    predictions: list[dict[str, Any]] | ItemColumns
    metadata: dict[str, Any]

    def fingerprint(self) -> str:
        """SHA-256 of the canonical request (``dumps`` of the body), to tell an idempotent retry from a different
        body; items held as ``ItemColumns`` give the text their dicts would."""
        if not isinstance(self.predictions, ItemColumns):
            body = {"model": self.model, "predictions": {"items": self.predictions}, "metadata": self.metadata}
            return hashlib.sha256(dumps(body).encode()).hexdigest()
        items = dump_columns(self.predictions, sort_keys=True, ensure_ascii=True)
        text = f'{{"metadata":{dumps(self.metadata)},"model":{dumps(self.model)},"predictions":{{"items":{items}}}}}'
        return hashlib.sha256(text.encode()).hexdigest()


_PREDS = ("predictions", "items")


def _create(
    services: Services,
    principal: Principal,
    benchmark_id: str,
    new: NewSubmission,
    idempotency: tuple[str, str] | None = None,
) -> str:
    """Validate, cost from the uploaded arrays' stored shapes against the scorer's hard cap (a submission over the
    synchronous budget still runs inline), score in memory under one of the process's concurrency slots, then in
    one short write transaction check the quota, store the submission with its scoring and complete the
    ``idempotency`` record (scope, key) with the answer, so a committed submission always has its record; returns
    the view as JSON text. The stored predictions keep their array references. A participant's key submits to its
    own benchmark only (``Forbidden`` elsewhere)."""
    check_bound(principal, benchmark_id)
    meta = dumps(new.metadata)
    if len(meta) > MAX_METADATA_BYTES:
        raise invalid("metadata too large", ("body", "metadata"), "too_long", "at most 16 KiB of JSON")
    now = services.clock()
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        version = loaded.benchmark.current_version
        key = key_items(conn, loaded, version)
        used = sub_repo.count_since(conn, benchmark_id, principal.key_id, day)
        placed = phases.place(conn, benchmark_id, now)
        phases.check_limits(conn, placed, benchmark_id, principal.key_id, now, lock=False)
    quota = placed.daily_quota(loaded.benchmark)
    if quota is not None and used >= quota:
        raise _quota_exceeded(quota, now)
    preds = validate_columns(loaded.spec.prediction_item_model, new.predictions, _PREDS)
    predictions_json = dump_items(loaded.spec.prediction_item_model, preds)
    engines = services.engines
    plain = isinstance(preds, ItemColumns)  # plain strings and integers: no array references to resolve
    shaped_key = arrays.resolve_items(engines, key, arrays.STORED, ("answer_key", "items"), shapes_only=True)
    shaped = preds if plain else arrays.resolve_items(engines, preds, principal.key_id, _PREDS, shapes_only=True)
    cost = float(loaded.spec.cost(shaped_key, shaped, loaded.params))
    _check_cost(loaded.spec, cost)
    with sync_slot(services, large=cost >= 0.1 * loaded.spec.sync_budget):
        key = arrays.resolve_items(engines, key, arrays.STORED, ("answer_key", "items"))
        resolved = preds if plain else arrays.resolve_items(engines, preds, principal.key_id, _PREDS)
        scored = score_submission(loaded, new.metadata, key, resolved)
    sub = SubmissionRow(
        0, str(uuid.uuid4()), benchmark_id, new.model, meta, principal.key_id, now, None, **placed.flags()
    )
    with engines.write.begin() as conn:
        locks.serialize_on(conn, f"quota:{benchmark_id}:{principal.key_id}")
        if quota is not None and sub_repo.count_since(conn, benchmark_id, principal.key_id, day) >= quota:
            raise _quota_exceeded(quota, now)
        phases.check_limits(conn, placed, benchmark_id, principal.key_id, now, lock=True)
        sub_repo.insert_submission(conn, sub, predictions_json)
        store_scoring(conn, loaded, sub.id, version, scored)
        text = dumps(asdict(_view(conn, sub, version, access(conn, loaded.benchmark, principal))))
        if idempotency is not None:
            idem_repo.complete(conn, *idempotency, 201, text)
        return text


def _check_cost(spec: ScorerSpec, cost: float) -> None:
    """Refuse a submission whose scoring would cost more than the scorer's hard cap (a submission over the
    synchronous budget still runs inline). The refusal names the cap but not the cost, which counts the answer
    key (its private items included) and would measure it."""
    if cost > spec.hard_cap:
        raise invalid(
            f"scoring these predictions against this benchmark's answer key would exceed the hard cap "
            f"{spec.hard_cap:.4g} {spec.cost_unit} of {spec.name}",
            ("body", "predictions", "items"),
            "cost_cap",
            f"over hard_cap {spec.hard_cap:.4g} {spec.cost_unit}",
        )


def _quota_exceeded(quota: int, now: datetime) -> QuotaExceeded:
    retry = int((_next_utc_midnight(now) - now).total_seconds()) + 1
    return QuotaExceeded(f"daily quota of {quota} submissions to this benchmark is used", retry)


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
        text = _create(services, principal, benchmark_id, new, (scope, idempotency_key))
    except BaseException:
        with engines.write.begin() as conn:  # a completed record (the submission committed) is kept
            idem_repo.release(conn, scope, idempotency_key)
        raise
    return Submitted(text, False)


def list_own(
    services: Services, principal: Principal, benchmark_id: str, limit: int, cursor: str | None
) -> cursors.Page[SubmissionView]:
    """The caller's own submissions to this benchmark, newest first (every submission, withdrawn and non-public
    ones included, for the benchmark's owners and admins)."""
    require_key(principal)
    before = cursors.decode_seq(cursor)
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        found = access(conn, loaded.benchmark, principal)
        page = cursors.keyset_page(
            lambda n: sub_repo.list_for_benchmark(
                conn,
                benchmark_id,
                api_key_id=principal.key_id,
                all_keys=found.sees_everything,
                limit=n,
                before_seq=before,
            ),
            limit,
            key=lambda s: s.seq,
        )
        items = [_view(conn, s, loaded.benchmark.current_version, found) for s in page.items]
    return cursors.Page(items, page.next_cursor)


@dataclass(frozen=True)
class Visible:
    """A submission the caller may see, its benchmark and the caller's access to it."""

    sub: SubmissionRow
    loaded: Loaded
    found: Access

    @property
    def version(self) -> int:
        return self.loaded.benchmark.current_version

    def made_by(self, principal: Principal) -> bool:
        return self.sub.api_key_id == principal.key_id


def _load_visible(conn: Connection, submission_id: str, principal: Principal) -> Visible:
    """The submission if the caller made it or owns its benchmark (or is an admin); else ``NotFound``, the same
    answer as for an unknown id, so a submission's existence is not told to other keys."""
    sub = sub_repo.get(conn, submission_id)
    if sub is not None:
        loaded = load(conn, sub.benchmark_id)
        found = access(conn, loaded.benchmark, principal)
        if sees_submission(found, principal, sub):
            return Visible(sub, loaded, found)
    raise NotFound(f"no submission {submission_id!r}")


def get(services: Services, principal: Principal, submission_id: str) -> SubmissionView:
    """One submission with its scores against the current answer-key version (its maker, the benchmark's owners or
    an admin)."""
    require_key(principal)
    with services.engines.read.connect() as conn:
        seen = _load_visible(conn, submission_id, principal)
        return _view(conn, seen.sub, seen.version, seen.found)


@dataclass(frozen=True)
class ItemScore:
    split: str
    item_id: str
    value: float


@dataclass(frozen=True)
class SubmissionItemScores:
    """Per-item values of one metric in a submission's latest scoring against ``answer_key_version``."""

    submission_id: str
    answer_key_version: int
    metric: str
    items: list[ItemScore]


def item_scores(
    services: Services, principal: Principal, submission_id: str, metric: str | None
) -> SubmissionItemScores:
    """Per-item values of ``metric`` (default the primary) in the latest scoring (public items for its maker; every
    item for the benchmark's owners and admins); a metric without per-item values is a 422 naming ``metric``."""
    require_key(principal)
    with services.engines.read.connect() as conn:
        seen = _load_visible(conn, submission_id, principal)
        chosen = item_metric(seen.loaded.spec, metric)
        scoring = sub_repo.latest_scoring(conn, seen.sub.id, seen.version)
        if scoring is None:
            raise NotFound("this submission has no scoring against the current answer key")
        splits = ["public", "private"] if seen.found.sees_everything else ["public"]
        parts = sub_repo.item_values(conn, scoring.id, splits, chosen)
    items = [
        ItemScore(part.split, part.item_ids[k], v)
        for part in parts
        for k, v in zip(*_present(part.values[chosen]), strict=True)
    ]
    return SubmissionItemScores(seen.sub.id, seen.version, chosen, items)


def _present(values: np.ndarray) -> tuple[list[int], list[float]]:
    """The positions of the items with a value (not NaN) and their values."""
    where = np.flatnonzero(~np.isnan(values))
    return where.tolist(), values[where].tolist()


def withdraw(services: Services, principal: Principal, submission_id: str) -> SubmissionView:
    """Withdraw: hidden from leaderboards from now on (its model's rows are chosen again in the same transaction,
    with the audit entry); the rows are kept. Its maker (with ``submissions:write``), the benchmark's owners or an
    admin; withdrawing twice changes nothing."""
    require_key(principal)
    with services.engines.write.begin() as conn:
        seen = _load_visible(conn, submission_id, principal)
        if not seen.found.sees_everything:
            require(principal, SCOPE)
        sub = seen.sub
        if sub.withdrawn_at is None:
            sub_repo.withdraw(conn, sub.id, services.clock())
            rankings.refresh(conn, sub.benchmark_id, sub.id, seen.loaded.spec.metrics)
            audit.record(conn, sub.benchmark_id, "submission.withdrawn", principal, sub.id, model=sub.model)
        withdrawn = sub_repo.get(conn, sub.id)
        assert withdrawn is not None
        return _view(conn, withdrawn, seen.version, seen.found)


def patch(
    services: Services, principal: Principal, submission_id: str, *, baseline: bool | None, public: bool | None
) -> SubmissionView:
    """Set a submission's flags, each change with its audit entry and the model's leaderboard rows brought up to
    date in one transaction. ``baseline`` (owners and admins): listed on the boards with no rank, taking none from
    the others. ``public`` (its maker only): ``false`` takes it off the leaderboards (it still counts against the
    daily quota, and its maker and the owners still see it). A flag already so changes nothing."""
    require_key(principal)
    if baseline is None and public is None:
        raise invalid("give baseline and/or public", ("body",), "missing", "at least one of baseline, public")
    with services.engines.write.begin() as conn:
        seen = _load_visible(conn, submission_id, principal)
        if baseline is not None and not seen.found.sees_everything:
            raise Forbidden("only the benchmark's owners or an admin may mark a baseline")
        if public is not None and not seen.made_by(principal):
            raise Forbidden("only the submission's maker may change public")
        sub = seen.sub
        changes = {
            name: value
            for name, value in (("baseline", baseline), ("public", public))
            if value is not None and value != getattr(sub, name)
        }
        if changes:
            sub_repo.set_flags(conn, sub.id, **changes)
            rankings.refresh(conn, sub.benchmark_id, sub.id, seen.loaded.spec.metrics)
            for name, value in changes.items():
                audit.record(conn, sub.benchmark_id, f"submission.{name}", principal, sub.id, **{name: value})
        changed = sub_repo.get(conn, sub.id)
        assert changed is not None
        return _view(conn, changed, seen.version, seen.found)
