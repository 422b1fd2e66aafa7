"""Glue between the use cases and the pure scorers: item validation, canonical answer keys, scoring per split."""

import hashlib
import json
import operator
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from db.repositories.submissions import SplitItems
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


@cache
def _items_adapter(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def dump_items(model: type[BaseModel], items: list[Any]) -> str:
    """Validated ``model`` items as compact JSON text (the fields ``model_dump(mode="json")`` gives)."""
    return _items_adapter(model).dump_json(items).decode()


def validate_items(model: type[BaseModel], items: Sequence[Any], loc: tuple[str | int, ...]) -> list[Any]:
    """Validate raw item dicts against a scorer's item model (one validator per model, built once); 422 names
    ``loc + (index, field)``."""
    try:
        return _items_adapter(model).validate_python(list(items))
    except ValidationError as exc:
        errors = [{"loc": ["body", *loc, *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()[:50]]
        raise InvalidFields("items failed validation", errors) from exc


def check_unique(items: Sequence[Any], loc: tuple[str | int, ...]) -> None:
    if len({i.item_id for i in items}) == len(items):
        return
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


def _item_values(spec: ScorerSpec, raw: dict[str, Any], ids: list[str]) -> dict[str, np.ndarray]:
    """Every metric's per-item values aligned to ``ids`` (the split's key items in item_id order; NaN: no value):
    ``item_metrics`` (None = no value for that item) and, unless listed there, the primary metric's
    ``item_scores``."""
    listed = raw.get("item_scores", [])
    got = [str(d["item_id"]) for d in listed]
    per_metric: dict[str, Any] = dict(raw.get("item_metrics") or {})
    per_metric.setdefault(spec.primary_metric, [d["value"] for d in listed])
    where = None
    if got != ids:
        position = {item: n for n, item in enumerate(ids)}
        if not all(item in position for item in got):
            raise RuntimeError(f"scorer {spec.name} returned item values for items not in the answer key")
        where = np.array([position[item] for item in got], dtype=np.intp)
    out: dict[str, np.ndarray] = {}
    for metric, values in per_metric.items():
        if metric not in spec.metrics or len(values) != len(got):
            raise RuntimeError(f"scorer {spec.name} returned malformed item values for {metric!r}")
        present = None
        if not isinstance(values, np.ndarray):
            values = list(values)
            if None in values:
                present = np.array([v is not None for v in values], dtype=bool)
                values = [np.nan if v is None else v for v in values]
        arr = np.asarray(values, dtype=np.float64)
        if not np.isfinite(arr if present is None else arr[present]).all():
            raise Degenerate(f"a per-item {metric} value is not finite", ("item_metrics", metric))
        if not arr.size or (present is not None and not present.any()):
            continue
        if where is None:
            out[metric] = arr
        else:
            aligned = np.full(len(ids), np.nan)
            aligned[where] = arr
            out[metric] = aligned
    return out


def _score(
    spec: ScorerSpec, key: list[Any], preds: list[Any], params: Any
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    raw = spec.score(key, preds, params)
    summary = {k: v for k, v in raw.items() if k not in ("item_scores", "item_metrics")}
    try:
        outcome = ScoreOutcome.model_validate(json.loads(dumps(summary)))
    except ValidationError as exc:
        raise Degenerate("the scorer produced a non-finite or malformed score") from exc
    return outcome.model_dump(mode="json"), _item_values(spec, raw, [k.item_id for k in key])


_ITEM_ID = operator.attrgetter("item_id")


def by_item_id(items: Sequence[Any]) -> list[Any]:
    """Items in item_id order: scores (float sums, bootstrap draws) then depend on content, not on order."""
    return sorted(items, key=_ITEM_ID)


def score_all(spec: ScorerSpec, key: list[Any], preds: list[Any], params: Any) -> dict[str, Any]:
    """Stateless scoring of every item together (``POST /v1/scorers/{name}/score``), in item_id order like the
    stored answer keys, so both paths give identical numbers for the same content."""
    return _score(spec, by_item_id(key), by_item_id(preds), params)[0]


def score_by_split(
    spec: ScorerSpec, key: list[Any], preds: list[Any], params: Any
) -> tuple[dict[str, dict[str, Any]], list[SplitItems]]:
    """Score public and private items separately; returns ({split: outcome}, the per-item values of each split
    aligned to its key items in item_id order).

    A prediction for an item that is not in the key is a 422 naming it; missing items score 0 (coverage).
    """
    split_of = {k.item_id: k.split for k in key}
    pred_splits = [split_of.get(p.item_id) for p in preds]
    if None in pred_splits:
        i = pred_splits.index(None)
        raise InvalidInput(f"unknown item_id {preds[i].item_id!r}", ("predictions", "items", i, "item_id"))
    check_unique(preds, ("predictions", "items"))
    outcomes: dict[str, dict[str, Any]] = {}
    items: list[SplitItems] = []
    for split in SPLITS:
        key_s = by_item_id(k for k in key if k.split == split)
        if not key_s:
            continue
        preds_s = by_item_id(p for p, s in zip(preds, pred_splits, strict=True) if s == split)
        try:
            outcomes[split], values = _score(spec, key_s, preds_s, params)
        except (InvalidInput, Degenerate) as exc:
            raise _located(exc, split, (key, key_s), (preds, preds_s)) from exc
        items.append(SplitItems(split, [k.item_id for k in key_s], values))
    return outcomes, items


PRIVATE_KEY_ITEM = "this private answer-key item cannot be scored; the benchmark's owner must correct it"
"""The message of a private answer-key item the scorer refuses while scoring a submission: the scorer's own message
could quote the item's answer side."""


def _located(
    exc: InvalidInput | Degenerate, split: str, key: tuple[list[Any], list[Any]], preds: tuple[list[Any], list[Any]]
) -> InvalidInput | Degenerate:
    """``exc`` of one split's scoring (``key`` and ``preds``: every item and the split's items in item_id order)
    with its item index moved from the split's list to the submitted predictions or the stored answer key; a
    private answer-key item's problem gets ``PRIVATE_KEY_ITEM`` as its message."""
    loc = list(exc.loc)
    if len(loc) < 3 or loc[0] not in ("predictions", "answer_key") or loc[1] != "items" or type(loc[2]) is not int:
        return exc
    every, subset = preds if loc[0] == "predictions" else key
    if not 0 <= loc[2] < len(subset):
        return exc
    item_id = subset[loc[2]].item_id
    loc[2] = next(i for i, item in enumerate(every) if item.item_id == item_id)
    private_key = loc[0] == "answer_key" and split == "private"
    return type(exc)(PRIVATE_KEY_ITEM if private_key else exc.msg, loc)


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
