"""Glue between the use cases and the pure scorers: item validation, canonical answer keys, scoring per split."""

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from service.errors import Degenerate, InvalidInput
from service.registry import ScorerSpec
from usecases.errors import InvalidFields, invalid

SPLITS = ("public", "private")


class MetricValue(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False, extra="forbid")

    value: float
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None


class ScoreOutcome(BaseModel):
    """What a scorer returns for one set of items: metric values, breakdown, coverage, reconstructed fields."""

    model_config = ConfigDict(allow_inf_nan=False, extra="ignore")

    scores: dict[str, MetricValue]
    breakdown: dict[str, Any]
    coverage: float
    reconstructed: list[str]


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def dumps(value: Any) -> str:
    """Compact, sorted, finite JSON (a non-finite number is a ``Degenerate`` result)."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False, default=_json_default)
    except ValueError as exc:
        raise Degenerate("the score is not finite for these items") from exc


def validate_items(model: type[BaseModel], items: Sequence[Any], loc: tuple[str | int, ...]) -> list[Any]:
    """Validate raw item dicts against a scorer's item model; 422 names ``loc + (index, field)``."""
    try:
        return TypeAdapter(list[model]).validate_python(list(items))  # type: ignore[valid-type]
    except ValidationError as exc:
        errors = [{"loc": ["body", *loc, *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()[:50]]
        raise InvalidFields("items failed validation", errors) from exc


def check_unique(items: Sequence[Any], loc: tuple[str | int, ...]) -> None:
    seen: set[str] = set()
    for i, item in enumerate(items):
        if item.item_id in seen:
            raise InvalidInput(f"duplicate item_id {item.item_id!r}", (*loc, i, "item_id"))
        seen.add(item.item_id)


def canonical_key(items: Sequence[BaseModel]) -> tuple[str, str]:
    """(canonical JSON of the answer key sorted by item_id, its SHA-256): equal content gives equal versions."""
    dumped = sorted((i.model_dump(mode="json") for i in items), key=lambda d: d["item_id"])
    text = json.dumps(dumped, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return text, hashlib.sha256(text.encode()).hexdigest()


ItemRow = tuple[str, str, float]
"""(item_id, metric, value) of one per-item score."""


def _item_rows(spec: ScorerSpec, raw: dict[str, Any]) -> list[ItemRow]:
    """Every metric's per-item values: ``item_metrics`` (None = no value for that item) and, unless listed
    there, the primary metric's ``item_scores``."""
    listed = raw.get("item_scores", [])
    ids = [str(d["item_id"]) for d in listed]
    per_metric: dict[str, list[float | None]] = dict(raw.get("item_metrics") or {})
    per_metric.setdefault(spec.primary_metric, [d["value"] for d in listed])
    rows: list[ItemRow] = []
    for metric, values in per_metric.items():
        if metric not in spec.metrics or len(values) != len(ids):
            raise RuntimeError(f"scorer {spec.name} returned malformed item values for {metric!r}")
        present = [(i, float(v)) for i, v in zip(ids, values, strict=True) if v is not None]
        if not all(math.isfinite(v) for _, v in present):
            raise Degenerate(f"a per-item {metric} value is not finite", ("item_metrics", metric))
        rows.extend((i, metric, v) for i, v in present)
    return rows


def _score(spec: ScorerSpec, key: list[Any], preds: list[Any], params: Any) -> tuple[dict[str, Any], list[ItemRow]]:
    raw = spec.score(key, preds, params)
    summary = {k: v for k, v in raw.items() if k not in ("item_scores", "item_metrics")}
    try:
        outcome = ScoreOutcome.model_validate(json.loads(dumps(summary)))
    except ValidationError as exc:
        raise Degenerate("the scorer produced a non-finite or malformed score") from exc
    return outcome.model_dump(mode="json"), _item_rows(spec, raw)


def by_item_id(items: Sequence[Any]) -> list[Any]:
    """Items in item_id order: scores (float sums, bootstrap draws) then depend on content, not on order."""
    return sorted(items, key=lambda i: i.item_id)


def score_all(spec: ScorerSpec, key: list[Any], preds: list[Any], params: Any) -> dict[str, Any]:
    """Stateless scoring of every item together (``POST /v1/scorers/{name}/score``), in item_id order like the
    stored answer keys, so both paths give identical numbers for the same content."""
    return _score(spec, by_item_id(key), by_item_id(preds), params)[0]


def score_by_split(
    spec: ScorerSpec, key: list[Any], preds: list[Any], params: Any
) -> tuple[dict[str, dict[str, Any]], list[tuple[str, str, str, float]]]:
    """Score public and private items separately; returns ({split: outcome}, [(split, item_id, metric, value)]).

    A prediction for an item that is not in the key is a 422 naming it; missing items score 0 (coverage).
    """
    split_of = {k.item_id: k.split for k in key}
    for i, p in enumerate(preds):
        if p.item_id not in split_of:
            raise InvalidInput(f"unknown item_id {p.item_id!r}", ("predictions", "items", i, "item_id"))
    check_unique(preds, ("predictions", "items"))
    outcomes: dict[str, dict[str, Any]] = {}
    rows: list[tuple[str, str, str, float]] = []
    for split in SPLITS:
        key_s = by_item_id(k for k in key if k.split == split)
        if not key_s:
            continue
        preds_s = by_item_id(p for p in preds if split_of[p.item_id] == split)
        outcomes[split], items = _score(spec, key_s, preds_s, params)
        rows.extend((split, item_id, metric, value) for item_id, metric, value in items)
    return outcomes, rows


def item_metric(spec: ScorerSpec, metric: str | None) -> str:
    """The metric whose per-item values are asked for (default the primary); one without them is a 422."""
    chosen = metric or spec.primary_metric
    if chosen not in spec.paired_tests:
        raise invalid(
            f"metric {chosen!r} has no per-item values in scorer {spec.name}",
            ("query", "metric"),
            "enum",
            f"one of {sorted(spec.paired_tests)}",
        )
    return chosen
