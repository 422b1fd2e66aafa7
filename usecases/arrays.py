"""Uploaded arrays: storing a checked npy upload (content-addressed) and replacing ``{"array": ...}`` references
in params by read-only arrays after a vectorised check of the field's ``ArrayConstraints``. The params that form
the cache key keep the reference."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

import numpy as np
from pydantic import BaseModel

from db.engine import Engines
from db.repositories import arrays as repo
from db.repositories.arrays import ArrayMeta
from service.errors import InvalidInput
from service.types import ArrayConstraints, ArrayRef, StrictModel
from usecases.api_keys import Principal
from usecases.errors import NotFound

if TYPE_CHECKING:
    from usecases.services import Services


def store_array(
    services: Services,
    sha256: str,
    dtype: np.dtype,
    shape: tuple[int, ...],
    data: bytes | bytearray,
    owner: Principal | None,
) -> ArrayMeta:
    """Store an upload whose header and size were checked (deduplicated by content) and return its metadata."""
    with services.engines.write.begin() as conn:
        repo.insert_if_absent(
            conn,
            sha256=sha256,
            dtype=dtype.str,
            shape=list(shape),
            data=data,
            api_key_id=owner.key_id if owner else None,
            now=datetime.now(UTC),
        )
        meta = repo.meta(conn, sha256)
    assert meta is not None
    return meta


def array_meta(services: Services, array_id: str) -> ArrayMeta:
    with services.engines.read.connect() as conn:
        meta = repo.meta(conn, array_id.removeprefix("sha256:"))
    if meta is None:
        raise NotFound(f"no array {array_id!r}")
    return meta


def _constraints(metadata: list[Any], annotation: Any) -> ArrayConstraints | None:
    """The field's ``ArrayConstraints``: in its metadata, or inside its annotation (``array_param(...) | None``)."""
    found = next((m for m in metadata if isinstance(m, ArrayConstraints)), None)
    if found is not None:
        return found
    if get_origin(annotation) is Annotated:
        found = _constraints(list(annotation.__metadata__), None)
    for arg in get_args(annotation):
        found = found or _constraints([], arg)
    return found


def _check(arr: np.ndarray, rules: ArrayConstraints, loc: tuple[str | int, ...]) -> np.ndarray:
    """Vectorised checks of a referenced array against the field's rules; returns a read-only converted array."""
    top = rules.max_ndim or rules.ndim
    if not rules.ndim <= arr.ndim <= top:
        dims = f"{rules.ndim}" if top == rules.ndim else f"{rules.ndim}- to {top}"
        raise InvalidInput(f"expected a {dims}-dimensional array, got shape {list(arr.shape)}", loc=loc)
    if arr.size < rules.min_size:
        raise InvalidInput(f"the array needs at least {rules.min_size} elements", loc=loc)
    kind = arr.dtype.kind
    if rules.kind == "bool":
        if kind != "b":
            raise InvalidInput(f"expected a boolean array, got dtype {arr.dtype.str}", loc=loc)
        out = arr
    elif rules.kind == "int":
        if kind not in "iu":
            raise InvalidInput(f"expected an integer array, got dtype {arr.dtype.str}", loc=loc)
        out = arr.astype(np.int64, copy=False)
    else:
        if kind not in "fiu":
            raise InvalidInput(f"expected a numeric array, got dtype {arr.dtype.str}", loc=loc)
        out = arr.astype(np.float64, copy=False)
        if out.size and not np.isfinite(out).all():
            raise InvalidInput("the array holds NaN or infinite values", loc=loc)
    if out.size and rules.ge is not None and out.min() < rules.ge:
        raise InvalidInput(f"array elements must be ≥ {rules.ge:g}", loc=loc)
    if out.size and rules.le is not None and out.max() > rules.le:
        raise InvalidInput(f"array elements must be ≤ {rules.le:g}", loc=loc)
    out.flags.writeable = False
    return out


def load_array(engines: Engines, ref: ArrayRef, loc: tuple[str | int, ...]) -> np.ndarray:
    sha = ref.array.removeprefix("sha256:")
    with engines.read.connect() as conn:
        stored = repo.load(conn, sha)
    if stored is None:
        raise InvalidInput(f"no uploaded array {ref.array!r}; upload it with POST /v1/arrays", loc=loc)
    dtype, shape, data = stored
    return np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape)


def _resolve_value(engines: Engines, value: Any, rules: ArrayConstraints, loc: tuple[str | int, ...]) -> Any:
    """``value`` with references resolved: itself, inside a nested model, or in dict values and list items
    (lists are walked only when they hold references, models or dicts, never numeric JSON arrays)."""
    if isinstance(value, ArrayRef):
        return _check(load_array(engines, value, loc), rules, loc)
    if isinstance(value, StrictModel):
        return resolve(engines, value, loc)
    if isinstance(value, dict):
        out = {key: _resolve_value(engines, item, rules, (*loc, key)) for key, item in value.items()}
        return value if all(out[key] is value[key] for key in value) else out
    if isinstance(value, list) and value and isinstance(value[0], ArrayRef | StrictModel | dict):
        items = [_resolve_value(engines, item, rules, (*loc, i)) for i, item in enumerate(value)]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def resolve(engines: Engines, params: StrictModel, loc: tuple[str | int, ...] = ()) -> StrictModel:
    """``params`` with every ``ArrayRef`` replaced by its checked array, wherever it stands: a field, a nested
    model, a dict value or a list item."""
    updates: dict[str, Any] = {}
    for name, field in type(params).model_fields.items():
        value = getattr(params, name)
        if not isinstance(value, ArrayRef | StrictModel | dict | list):
            continue
        rules = _constraints(field.metadata, field.annotation) or ArrayConstraints("float")
        resolved = _resolve_value(engines, value, rules, (*loc, name))
        if resolved is not value:
            updates[name] = resolved
    return params.model_copy(update=updates) if updates else params


def _annotation_holds_refs(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation is ArrayRef or may_hold_refs(annotation)
    return any(_annotation_holds_refs(arg) for arg in get_args(annotation))


@cache
def may_hold_refs(model: type[StrictModel]) -> bool:
    """Whether an instance of ``model`` can hold an ``ArrayRef`` anywhere (answers once per model)."""
    return any(_annotation_holds_refs(field.annotation) for field in model.model_fields.values())


def resolve_items(engines: Engines, items: Sequence[StrictModel], loc: tuple[str | int, ...]) -> list[Any]:
    """Scorer items with their ``ArrayRef`` values resolved and checked (``loc + (index, field, ...)`` in errors);
    the items themselves when their model holds no references."""
    if not items or not may_hold_refs(type(items[0])):
        return list(items)
    return [resolve(engines, item, (*loc, i)) for i, item in enumerate(items)]
