"""Glue between the use cases and the pure scorers: item validation, canonical answer keys, scoring per split."""

import hashlib
import json
import operator
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from itertools import repeat
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from db.repositories.submissions import SplitItems
from service.errors import Degenerate, InvalidInput
from service.registry import ScorerSpec
from service.scoring._common import ItemColumns, ItemValues, column, item_values_as_arrays
from service.types import StrictModel, _integral
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


def dump_items(model: type[BaseModel], items: Sequence[Any]) -> str:
    """Validated ``model`` items (a list, or ``ItemColumns``) as compact JSON text (the fields
    ``model_dump(mode="json")`` gives)."""
    if isinstance(items, ItemColumns) and _column_fields(items.model) is not None:
        return dump_columns(items)
    return _items_adapter(model).dump_json(items).decode()


def dump_columns(items: ItemColumns, *, sort_keys: bool = False, ensure_ascii: bool = False) -> str:
    """Items of plain strings and integers (``_column_fields``) as compact JSON text, put together a field at a
    time with no object per item: each string as ``json`` writes it, each integer in decimal; the fields in the
    model's order, the text ``dump_items`` gives (pydantic's serialiser writes every string the model accepts as
    ``json.encoder.encode_basestring`` does), or with ``sort_keys`` and ``ensure_ascii`` what ``json.dumps`` of
    the items as dicts gives with those options."""
    kinds = _column_fields(items.model) or {}
    encode = encode_basestring_ascii if ensure_ascii else encode_basestring
    names = sorted(items.columns) if sort_keys else list(items.columns)
    n, width = len(items), 2 * len(names)
    if not n:
        return "[]"
    pieces: list[str] = [""] * (width * n)  # per item: for each field, its key (after "},{" or ",") then its value
    for j, name in enumerate(names):
        pieces[2 * j :: width] = [("},{" if j == 0 else ",") + encode(name) + ":"] * n
        values = items.columns[name]
        pieces[2 * j + 1 :: width] = list(map(encode if kinds[name][0] == "str" else int.__repr__, values))
    pieces[0] = "[{" + pieces[0][3:]
    return "".join(pieces) + "}]"


def validate_items(model: type[BaseModel], items: Sequence[Any], loc: tuple[str | int, ...]) -> list[Any]:
    """Validate raw item dicts against a scorer's item model (one validator per model, built once); 422 names
    ``loc + (index, field)``."""
    try:
        return _items_adapter(model).validate_python(list(items))
    except ValidationError as exc:
        errors = [{"loc": ["body", *loc, *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()[:50]]
        raise InvalidFields("items failed validation", errors) from exc


_MODEL_KEYS = {"type", "cls", "config", "custom_init", "metadata", "ref", "root_model", "schema"}
_CONFIG_KEYS = {"title", "extra_fields_behavior", "strict", "allow_inf_nan"}


@cache
def _column_fields(model: type[BaseModel]) -> dict[str, tuple[str, int | None, int | None]] | None:
    """``{field: (kind, low, high)}`` when every field of ``model`` is a plain string (``kind`` "str", length
    bounds) or a ``StrictModel`` integer (``kind`` "int", value bounds) and the model does nothing else to its
    items (core schema read; no aliases, validators, string transforms or computed fields); None otherwise."""
    schema = model.__pydantic_core_schema__
    config = schema.get("config", {})
    fields = schema.get("schema", {})
    if (
        schema.get("type") != "model"
        or set(schema) - _MODEL_KEYS
        or schema.get("custom_init")
        or schema.get("root_model")
        or set(config) - _CONFIG_KEYS
        or config.get("extra_fields_behavior") != "forbid"
        or config.get("strict") is not True
        or fields.get("type") != "model-fields"
        or set(fields) - {"type", "fields", "model_name", "computed_fields"}
        or fields.get("computed_fields")
    ):
        return None
    out: dict[str, tuple[str, int | None, int | None]] = {}
    for name, field in fields["fields"].items():
        inner = field.get("schema", {})
        if field.get("type") != "model-field" or set(field) - {"type", "schema", "metadata"}:
            return None
        if inner.get("type") == "str" and set(inner) <= {"type", "min_length", "max_length", "metadata"}:
            out[name] = ("str", inner.get("min_length"), inner.get("max_length"))
            continue
        number = inner.get("schema", {})
        if (
            inner.get("type") == "function-before"
            and inner.get("function") == {"type": "no-info", "function": _integral}
            and set(inner) <= {"type", "function", "schema", "metadata"}
            and number.get("type") == "int"
            and set(number) <= {"type", "ge", "le", "metadata"}
        ):
            out[name] = ("int", number.get("ge"), number.get("le"))
            continue
        return None
    return out


def _within(values: np.ndarray, low: int | None, high: int | None) -> bool:
    return (low is None or int(values.min()) >= low) and (high is None or int(values.max()) <= high)


def _column(values: list[Any], kind: str, low: int | None, high: int | None) -> bool:
    """Whether every value of one field passes the model as it is: an exact ``str`` (encodable, its length within
    bounds) or an exact ``int`` (not bool, not an integral float, which the model converts) within bounds."""
    if kind == "str":
        if set(map(type, values)) != {str}:
            return False
        joined = "".join(values)
        if not joined.isascii():
            try:
                joined.encode()
            except UnicodeEncodeError:  # a lone surrogate, which the model refuses
                return False
        if low is None and high is None:
            return True
        return _within(np.fromiter(map(len, values), np.int64, len(values)), low, high)
    if set(map(type, values)) != {int}:
        return False
    try:
        return _within(np.array(values, dtype=np.int64), low, high)
    except OverflowError:
        return False


def item_columns(model: type[StrictModel], items: Sequence[Any]) -> ItemColumns | None:
    """``items`` as ``ItemColumns`` of ``model`` when a vectorised check shows that the model accepts every one
    unchanged: ``model`` is one of plain strings and integers (``_column_fields``), every item a dict holding
    exactly its fields, every value of the exact type within bounds. None when it cannot tell (then the model's
    validator decides, and gives the errors)."""
    fields = _column_fields(model)
    if fields is None or not items or set(map(type, items)) != {dict} or set(map(len, items)) != {len(fields)}:
        return None
    columns = {}
    for name, (kind, low, high) in fields.items():
        try:  # with as many keys as fields, every field present means no other key
            values = list(map(operator.itemgetter(name), items))
        except KeyError:
            return None
        if not _column(values, kind, low, high):
            return None
        columns[name] = values
    return ItemColumns(model, columns)


def validate_columns(model: type[StrictModel], items: Sequence[Any], loc: tuple[str | int, ...]) -> Sequence[Any]:
    """``validate_items`` without an object per item where the vectorised check can tell (``item_columns``): the
    same items as ``ItemColumns`` (as they are when already checked against ``model``); otherwise the model's
    validator, with its errors."""
    if isinstance(items, ItemColumns) and items.model is model:
        return items
    columns = item_columns(model, items)
    return columns if columns is not None else validate_items(model, items, loc)


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
    per_metric: dict[str, Any] = dict(raw.get("item_metrics") or {})
    if isinstance(listed, ItemValues):
        got = list(map(str, listed.ids))
        per_metric.setdefault(spec.primary_metric, listed.values)
    else:
        got = list(map(str, map(operator.itemgetter("item_id"), listed)))
        per_metric.setdefault(spec.primary_metric, list(map(operator.itemgetter("value"), listed)))
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
    spec: ScorerSpec, key: Sequence[Any], preds: Sequence[Any], params: Any, ids: list[str] | None = None
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The scorer's summary (validated) and its per-item values aligned to ``ids`` (default: ``key``'s item ids),
    taken from the scorer as arrays where it assembles its output with ``result``."""
    with item_values_as_arrays():
        raw = spec.score(key, preds, params)
    summary = {k: v for k, v in raw.items() if k not in ("item_scores", "item_metrics")}
    try:
        outcome = ScoreOutcome.model_validate(json.loads(dumps(summary)))
    except ValidationError as exc:
        raise Degenerate("the scorer produced a non-finite or malformed score") from exc
    return outcome.model_dump(mode="json"), _item_values(spec, raw, column(key, "item_id") if ids is None else ids)


_ITEM_ID = operator.attrgetter("item_id")


def by_item_id(items: Sequence[Any]) -> list[Any]:
    """Items in item_id order: scores (float sums, bootstrap draws) then depend on content, not on order."""
    return sorted(items, key=_ITEM_ID)


def score_all(spec: ScorerSpec, key: list[Any], preds: list[Any], params: Any) -> dict[str, Any]:
    """Stateless scoring of every item together (``POST /v1/scorers/{name}/score``), in item_id order like the
    stored answer keys, so both paths give identical numbers for the same content."""
    return _score(spec, by_item_id(key), by_item_id(preds), params)[0]


def _answered(key_ids: list[str], pred_ids: list[str]) -> np.ndarray:
    """The key position of every prediction's item (the last key item with that id), checked: the first unknown
    item_id, then the first that repeats an earlier prediction's, is an ``InvalidInput`` naming it."""
    if pred_ids == key_ids and len(set(key_ids)) == len(key_ids):
        return np.arange(len(key_ids))
    position = dict(zip(key_ids, range(len(key_ids)), strict=True))
    where = np.fromiter(map(position.get, pred_ids, repeat(-1)), dtype=np.int64, count=len(pred_ids))
    unknown = np.flatnonzero(where < 0)
    if unknown.size:
        i = int(unknown[0])
        raise InvalidInput(f"unknown item_id {pred_ids[i]!r}", ("predictions", "items", i, "item_id"))
    order = np.argsort(where, kind="stable")
    repeats = order[1:][where[order][1:] == where[order][:-1]]
    if repeats.size:
        i = int(repeats.min())
        raise InvalidInput(f"duplicate item_id {pred_ids[i]!r}", ("predictions", "items", i, "item_id"))
    return where


def _subset(items: Sequence[Any], index: np.ndarray) -> Sequence[Any]:
    """The items at ``index`` as a new list, or ``ItemColumns`` (the same when that is all of them in order)."""
    if index.size == len(items) and (index.size == 0 or (index[0] == 0 and bool((np.diff(index) == 1).all()))):
        return items if isinstance(items, ItemColumns) else list(items)
    if isinstance(items, ItemColumns):
        return items.take(index.tolist())
    return list(map(items.__getitem__, index.tolist()))


_KEY_COLUMNS: OrderedDict[tuple[int, ...], tuple[list[Any], ItemColumns]] = OrderedDict()
_KEY_COLUMNS_SIZE = 4
_KEY_COLUMNS_LOCK = threading.Lock()


def key_columns(key: Sequence[Any]) -> ItemColumns:
    """Validated answer-key items (one model) as ``ItemColumns``. The columns of the last few keys are kept: the
    items of an answer-key version are the same objects on every submission (``usecases.benchmarks.key_items``
    keeps them), so each key is read once; an entry is used only for a list of the very same items."""
    if isinstance(key, ItemColumns):
        return key
    items = list(key)
    model = type(items[0])
    token = (id(model), len(items), id(items[0]), id(items[-1]))
    with _KEY_COLUMNS_LOCK:
        found = _KEY_COLUMNS.get(token)
        if found is not None and len(found[0]) == len(items) and all(map(operator.is_, found[0], items)):
            _KEY_COLUMNS.move_to_end(token)
            return found[1]
    columns = ItemColumns(model, {name: column(items, name) for name in model.model_fields})
    with _KEY_COLUMNS_LOCK:
        _KEY_COLUMNS[token] = (items, columns)  # the items are kept alive, so their ids are not reused
        if len(_KEY_COLUMNS) > _KEY_COLUMNS_SIZE:
            _KEY_COLUMNS.popitem(last=False)
    return columns


def _id_order(ids: list[str]) -> np.ndarray:
    """Positions of ``ids`` in a stable item_id sort (stored answer keys are already in item_id order)."""
    if ids == sorted(ids):
        return np.arange(len(ids))
    return np.array(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int64)


def score_by_split(
    spec: ScorerSpec, key: Sequence[Any], preds: Sequence[Any], params: Any
) -> tuple[dict[str, dict[str, Any]], list[SplitItems]]:
    """Score public and private items separately, each split's key and predictions in item_id order; returns
    ({split: outcome}, the per-item values of each split aligned to its key items in item_id order). The alignment
    is vectorised; predictions given as ``ItemColumns`` are scored with the key as ``ItemColumns`` too
    (``key_columns``), so no object per item is made.

    A prediction for an item that is not in the key, or a second one for an item, is a 422 naming it; missing
    items score 0 (coverage).
    """
    if isinstance(preds, ItemColumns) and key:
        key = key_columns(key)
    key_ids = column(key, "item_id")
    pred_ids = column(preds, "item_id")
    where = _answered(key_ids, pred_ids)
    order = _id_order(key_ids)
    rank = np.empty(len(key_ids), dtype=np.int64)
    rank[order] = np.arange(len(key_ids))
    splits = column(key, "split")
    outcomes: dict[str, dict[str, Any]] = {}
    items: list[SplitItems] = []
    single = splits[0] if len(set(splits)) == 1 else None  # commonly every item is public
    for split in SPLITS:
        if single is None:
            in_split = np.fromiter(map(split.__eq__, splits), dtype=bool, count=len(splits))
        else:
            in_split = np.full(len(splits), single == split)
        key_index = order[in_split[order]]
        if not key_index.size:
            continue
        pred_index = np.flatnonzero(in_split[where])
        pred_index = pred_index[np.argsort(rank[where[pred_index]], kind="stable")]
        key_s, preds_s = _subset(key, key_index), _subset(preds, pred_index)
        ids_s = column(key_s, "item_id")
        try:
            outcomes[split], values = _score(spec, key_s, preds_s, params, ids_s)
        except (InvalidInput, Degenerate) as exc:
            raise _located(exc, split, (key_ids, ids_s), (pred_ids, column(preds_s, "item_id"))) from exc
        items.append(SplitItems(split, ids_s, values))
    return outcomes, items


PRIVATE_KEY_ITEM = "this private answer-key item cannot be scored; the benchmark's owner must correct it"
"""The message of a private answer-key item the scorer refuses while scoring a submission: the scorer's own message
could quote the item's answer side."""


def _located(
    exc: InvalidInput | Degenerate,
    split: str,
    key: tuple[list[str], list[str]],
    preds: tuple[list[str], list[str]],
) -> InvalidInput | Degenerate:
    """``exc`` of one split's scoring (``key`` and ``preds``: the item ids of every item and of the split's items
    in item_id order) with its item index moved from the split's list to the submitted predictions or the stored
    answer key (the first item with that id); a private answer-key item's problem gets ``PRIVATE_KEY_ITEM`` as its
    message."""
    loc = list(exc.loc)
    if len(loc) < 3 or loc[0] not in ("predictions", "answer_key") or loc[1] != "items" or type(loc[2]) is not int:
        return exc
    every, subset = preds if loc[0] == "predictions" else key
    if not 0 <= loc[2] < len(subset):
        return exc
    loc[2] = every.index(subset[loc[2]])
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
