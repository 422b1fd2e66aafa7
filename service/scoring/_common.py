"""Shared pieces of the benchmark scorers: item bases, id matching, result assembly."""

import math
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter
from typing import Annotated, Any, Literal, overload

import numpy as np
from pydantic import AfterValidator, Field

from service.errors import Degenerate, InvalidInput
from service.stats import MAX_WORK, check_budget, factorize
from service.types import Seed, StrictModel

ItemId = Annotated[
    str, Field(min_length=1, max_length=128, description="Item identifier, unique within the answer key.")
]
Label = Annotated[str, Field(min_length=1, max_length=64)]
Letter = Annotated[
    str,
    Field(
        pattern=r"^\s*[A-Z]\s*$",
        max_length=16,
        description="An option letter A-Z (case-sensitive); surrounding whitespace is stripped.",
    ),
    AfterValidator(str.strip),
]
Text = Annotated[str, Field(max_length=8000)]


class KeyItemBase(StrictModel):
    """Fields every answer-key item has."""

    item_id: ItemId
    split: Literal["public", "private"] = Field(
        "public", description="Leaderboard split of the item: 'public' (default) or 'private'."
    )


class PredItemBase(StrictModel):
    """Fields every prediction item has."""

    item_id: ItemId = Field(description="Identifier of the answer-key item this prediction answers.")


class BootstrapParams(StrictModel):
    """Seeded percentile-bootstrap settings shared by scorers with graded per-item scores."""

    seed: Seed = 0
    n_resamples: int = Field(
        1000,
        ge=0,
        le=10_000,
        description="Bootstrap resamples B for graded-metric CIs (default 1000; 0 disables those CIs). "
        "B·n must not exceed 5e7.",
    )
    confidence: float = Field(
        0.95, gt=0.5, lt=1.0, description="Two-sided confidence level of every interval (default 0.95)."
    )


def check_bootstrap(params: BootstrapParams, n: int) -> None:
    """Enforce the bootstrap budget ``B ≤ 10⁴``, ``B·n ≤ 5·10⁷`` as InvalidInput on params.n_resamples."""
    check_budget(params.n_resamples, n, ("params", "n_resamples"))


KEY = ("answer_key", "items")
"""``loc`` of the answer key's items (a split as a whole in ``ScorerSpec.check_key``)."""


def check_key_size(n: int, max_items: int) -> None:
    """A split of more than ``max_items`` answer-key items, which ``score`` refuses, as a check of the key."""
    if n > max_items:
        raise InvalidInput(f"{n} items exceed the limit of {max_items}", KEY)


def check_key_budget(n_resamples: int, n: int, unit: str = "items") -> None:
    """The bootstrap budget ``B·n ≤ 5·10⁷`` that ``score`` enforces (:func:`check_bootstrap`) as a check of a split
    of ``n`` items (or videos) under the benchmark's fixed ``n_resamples`` B: at most ``5·10⁷ / B`` a split."""
    if n_resamples * n > MAX_WORK:
        raise InvalidInput(
            f"{n} {unit} exceed the bootstrap budget of n_resamples={n_resamples}: at most "
            f"{MAX_WORK // n_resamples} {unit} a split (n_resamples·n ≤ {MAX_WORK:.0e})",
            KEY,
        )


def match_items(key_ids: Sequence[str], pred_ids: Sequence[str]) -> np.ndarray:
    """Index of the key item each prediction answers; duplicates or unknown ids raise InvalidInput.

    Predictions listed in answer-key order (the common case) skip building the id → position table.
    """
    if not key_ids:
        raise InvalidInput("the answer key has no items", ("answer_key", "items"))
    if len(pred_ids) == len(key_ids) and pred_ids == key_ids and len(set(key_ids)) == len(key_ids):
        return np.arange(len(key_ids))
    position = dict(zip(key_ids, range(len(key_ids)), strict=True))
    if len(position) < len(key_ids):
        seen: set[str] = set()
        for i, item_id in enumerate(key_ids):
            if item_id in seen:
                raise InvalidInput(f"duplicate item_id {item_id!r}", ("answer_key", "items", i, "item_id"))
            seen.add(item_id)
    index = np.fromiter(map(position.get, pred_ids, repeat(-1)), dtype=np.int64, count=len(pred_ids))
    unknown = np.flatnonzero(index < 0)
    if unknown.size:
        j = int(unknown[0])
        raise InvalidInput(
            f"unknown item_id {pred_ids[j]!r} (not in the answer key)", ("predictions", "items", j, "item_id")
        )
    if index.size > 1:
        order = np.argsort(index, kind="stable")
        dup = np.flatnonzero(index[order][1:] == index[order][:-1])
        if dup.size:
            j = int(order[dup + 1].min())
            raise InvalidInput(f"duplicate item_id {pred_ids[j]!r}", ("predictions", "items", j, "item_id"))
    return index


class ItemColumns(Sequence[Any]):
    """Validated items of one model held as one list per field (every field of every item, in the model's field
    order): what a scorer reads with ``column`` and ``int_column`` costs no object per item. Indexing or iterating
    builds the model instances (``model_construct``: the values are already validated)."""

    __slots__ = ("columns", "model")

    def __init__(self, model: type[StrictModel], columns: dict[str, list[Any]]) -> None:
        self.model = model
        self.columns = columns

    def __len__(self) -> int:
        return len(next(iter(self.columns.values())))

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> "ItemColumns": ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return ItemColumns(self.model, {name: values[index] for name, values in self.columns.items()})
        return self.model.model_construct(**{name: values[index] for name, values in self.columns.items()})

    def __iter__(self) -> Iterator[Any]:
        construct = self.model.model_construct
        names = list(self.columns)
        for row in zip(*self.columns.values(), strict=True):
            yield construct(**dict(zip(names, row, strict=True)))

    def take(self, index: Sequence[int]) -> "ItemColumns":
        """The items at positions ``index``, in that order."""
        return ItemColumns(
            self.model, {name: list(map(values.__getitem__, index)) for name, values in self.columns.items()}
        )


def column(items: Sequence[Any], name: str) -> list[Any]:
    """The attribute ``name`` of every item, in one C-level pass (a copy of the column of ``ItemColumns``)."""
    if isinstance(items, ItemColumns):
        return list(items.columns[name])
    return list(map(attrgetter(name), items))


def int_column(items: Sequence[Any], name: str) -> np.ndarray:
    """Integer attribute ``name`` of every item as an int64 array."""
    if isinstance(items, ItemColumns):
        return np.array(items.columns[name], dtype=np.int64)
    return np.fromiter(map(attrgetter(name), items), dtype=np.int64, count=len(items))


def finite(x: float, what: str) -> float:
    """``float(x)``, or Degenerate when it is not finite (results never carry NaN/inf)."""
    value = float(x)
    if not math.isfinite(value):
        raise Degenerate(f"{what} is not finite", (what,))
    return value


def metric(value: float, ci_low: float | None = None, ci_high: float | None = None, n: int | None = None) -> dict:
    """One ``scores`` entry ``{"value", "ci_low", "ci_high", "n"}``."""
    return {
        "value": finite(value, "value"),
        "ci_low": None if ci_low is None else finite(ci_low, "ci_low"),
        "ci_high": None if ci_high is None else finite(ci_high, "ci_high"),
        "n": None if n is None else int(n),
    }


@dataclass(frozen=True)
class ItemValues:
    """``item_scores`` as ``result`` gives them inside ``item_values_as_arrays``: the item ids, in key order, and
    their float64 values."""

    ids: list[Any]
    values: np.ndarray


_AS_ARRAYS: ContextVar[bool] = ContextVar("item_values_as_arrays", default=False)


@contextmanager
def item_values_as_arrays() -> Iterator[None]:
    """Within: ``result`` gives ``item_scores`` as ``ItemValues`` rather than one dict per item (for the platform,
    which stores the values as arrays)."""
    token = _AS_ARRAYS.set(True)
    try:
        yield
    finally:
        _AS_ARRAYS.reset(token)


def result(
    scores: dict[str, dict],
    breakdown: dict[str, Any],
    coverage: float,
    reconstructed: list[str],
    item_ids: Sequence[str],
    item_values: np.ndarray,
) -> dict[str, Any]:
    """Assemble the scorer output; ``item_scores`` (stripped by the platform layer) follows key order:
    ``[{"item_id", "value"}, ...]``, or ``ItemValues`` inside ``item_values_as_arrays``."""
    values = np.array(item_values, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise Degenerate("a per-item score is not finite", ("item_scores",))
    if _AS_ARRAYS.get():
        if values.shape != (len(item_ids),):
            raise ValueError(f"{values.size} item values for {len(item_ids)} items")
        item_scores: Any = ItemValues(list(item_ids), values)
    else:
        item_scores = [{"item_id": i, "value": v} for i, v in zip(item_ids, values.tolist(), strict=True)]
    return {
        "scores": scores,
        "breakdown": breakdown,
        "coverage": finite(coverage, "coverage"),
        "reconstructed": reconstructed,
        "item_scores": item_scores,
    }


def group_means(
    labels: Sequence[Hashable | None], values: np.ndarray, scale: float = 1.0
) -> dict[str, dict[str, float | int]]:
    """``{label: {"n", "score"}}`` of ``scale · mean(values)`` per label; ``None`` labels are skipped."""
    codes, names = factorize(labels)
    n = np.bincount(codes, minlength=len(names))
    sums = np.bincount(codes, weights=values, minlength=len(names))
    return {
        str(name): {"n": int(n[i]), "score": float(scale * sums[i] / n[i])}
        for i, name in enumerate(names)
        if name is not None
    }


def multi_group_means(
    labels: Sequence[Sequence[str]], values: np.ndarray, scale: float = 1.0
) -> dict[str, dict[str, float | int]]:
    """Like :func:`group_means` for multi-valued labels: an item counts once under each of its labels."""
    flat = [label for labs in labels for label in labs]
    rep = np.repeat(values, [len(labs) for labs in labels])
    return group_means(flat, rep, scale) if flat else {}
