"""Uploaded arrays: storing a checked npy upload (content-addressed) and replacing ``{"array": ...}`` references
in params by read-only arrays after a vectorised check of the field's ``ArrayConstraints``. The params that form
the cache key keep the reference."""

from __future__ import annotations

import math
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


STORED = "stored-content"
"""The ``api_key_id`` that resolves references in content already stored (answer keys, stored predictions), whose
access was checked when it was stored."""


def store_array(
    services: Services,
    sha256: str,
    dtype: np.dtype,
    shape: tuple[int, ...],
    data: bytes | bytearray,
    owner: Principal | None,
) -> ArrayMeta:
    """Store an upload whose header and size were checked (deduplicated by content) and return its metadata. A
    keyed upload is usable by the keys granted it: its uploader, and every key that uploads the same content (the
    id is derived from the content, so the second upload proves the same knowledge)."""
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
        if owner is not None:
            repo.grant(conn, sha256, owner.key_id)
        meta = repo.meta(conn, sha256)
    assert meta is not None
    return meta


def array_meta(services: Services, principal: Principal | None, array_id: str) -> ArrayMeta:
    """The metadata of an upload the caller may use (an anonymous upload, a keyed one granted to its key; admins
    any); any other id is ``NotFound`` like an unknown one."""
    sha = array_id.removeprefix("sha256:")
    with services.engines.read.connect() as conn:
        allowed = (principal is not None and principal.is_admin) or repo.may_use(
            conn, sha, principal.key_id if principal else None
        )
        meta = repo.meta(conn, sha) if allowed else None
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


def _check_shape(dtype: np.dtype, shape: tuple[int, ...], rules: ArrayConstraints, loc: tuple[str | int, ...]) -> None:
    """The checks that need only the stored dtype and shape: dimensions, size and element kind."""
    top = rules.max_ndim or rules.ndim
    if not rules.ndim <= len(shape) <= top:
        dims = f"{rules.ndim}" if top == rules.ndim else f"{rules.ndim}- to {top}"
        raise InvalidInput(f"expected a {dims}-dimensional array, got shape {list(shape)}", loc=loc)
    if math.prod(shape) < rules.min_size:
        raise InvalidInput(f"the array needs at least {rules.min_size} elements", loc=loc)
    kind = dtype.kind
    if rules.kind == "bool" and kind != "b":
        raise InvalidInput(f"expected a boolean array, got dtype {dtype.str}", loc=loc)
    if rules.kind == "int" and kind not in "iu":
        raise InvalidInput(f"expected an integer array, got dtype {dtype.str}", loc=loc)
    if rules.kind not in ("bool", "int") and kind not in "fiu":
        raise InvalidInput(f"expected a numeric array, got dtype {dtype.str}", loc=loc)


def _target(rules: ArrayConstraints) -> np.dtype | None:
    """The dtype a referenced array is converted to (None: kept as stored)."""
    return None if rules.kind == "bool" else np.dtype(np.int64 if rules.kind == "int" else np.float64)


def _check(arr: np.ndarray, rules: ArrayConstraints, loc: tuple[str | int, ...]) -> np.ndarray:
    """Vectorised checks of a referenced array against the field's rules; returns a read-only converted array."""
    _check_shape(arr.dtype, arr.shape, rules, loc)
    target = _target(rules)
    out = arr if target is None else arr.astype(target, copy=False)
    if rules.kind not in ("bool", "int") and out.size and not np.isfinite(out).all():
        raise InvalidInput("the array holds NaN or infinite values", loc=loc)
    if out.size and rules.ge is not None and out.min() < rules.ge:
        raise InvalidInput(f"array elements must be ≥ {rules.ge:g}", loc=loc)
    if out.size and rules.le is not None and out.max() > rules.le:
        raise InvalidInput(f"array elements must be ≤ {rules.le:g}", loc=loc)
    out.flags.writeable = False
    return out


def _missing(ref: ArrayRef, loc: tuple[str | int, ...]) -> InvalidInput:
    return InvalidInput(f"no uploaded array {ref.array!r}; upload it with POST /v1/arrays", loc=loc)


class _Loader:
    """Resolves the references of one request: each stored array is read once and converted once per target
    dtype, however often it is referenced; with ``shapes_only`` nothing is read but the arrays' metadata, and each
    reference becomes a zero-filled read-only stand-in of the stored shape (a broadcast view: no memory), enough
    for the cost models, which look at sizes."""

    def __init__(self, engines: Engines, shapes_only: bool, api_key_id: str | None) -> None:
        self.engines = engines
        self.shapes_only = shapes_only
        self.api_key_id = api_key_id
        self.raw: dict[str, np.ndarray] = {}
        self.converted: dict[tuple[str, ArrayConstraints], np.ndarray] = {}

    def __call__(self, ref: ArrayRef, rules: ArrayConstraints, loc: tuple[str | int, ...]) -> np.ndarray:
        sha = ref.array.removeprefix("sha256:")
        if self.shapes_only:
            with self.engines.read.connect() as conn:
                allowed = self.api_key_id == STORED or repo.may_use(conn, sha, self.api_key_id)
                meta = repo.meta(conn, sha) if allowed else None
            if meta is None:
                raise _missing(ref, loc)
            dtype, shape = np.dtype(meta.dtype), tuple(meta.shape)
            _check_shape(dtype, shape, rules, loc)
            stand_in = np.broadcast_to(np.zeros((), _target(rules) or dtype), shape)
            return stand_in
        if (sha, rules) not in self.converted:
            if sha not in self.raw:
                self.raw[sha] = load_array(self.engines, ref, self.api_key_id, loc)
            self.converted[(sha, rules)] = _check(self.raw[sha], rules, loc)
        return self.converted[(sha, rules)]


def load_array(engines: Engines, ref: ArrayRef, api_key_id: str | None, loc: tuple[str | int, ...]) -> np.ndarray:
    """The referenced upload as stored, if ``api_key_id`` may use it (else as if it did not exist)."""
    sha = ref.array.removeprefix("sha256:")
    with engines.read.connect() as conn:
        allowed = api_key_id == STORED or repo.may_use(conn, sha, api_key_id)
        stored = repo.load(conn, sha) if allowed else None
    if stored is None:
        raise _missing(ref, loc)
    dtype, shape, data = stored
    return np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape)


def _resolve_value(load: _Loader, value: Any, rules: ArrayConstraints, loc: tuple[str | int, ...]) -> Any:
    """``value`` with references resolved: itself, inside a nested model, or in dict values and list items
    (lists are walked only when they hold references, models or dicts, never numeric JSON arrays)."""
    if isinstance(value, ArrayRef):
        return load(value, rules, loc)
    if isinstance(value, StrictModel):
        return _resolve_model(load, value, loc)
    if isinstance(value, dict):
        out = {key: _resolve_value(load, item, rules, (*loc, key)) for key, item in value.items()}
        return value if all(out[key] is value[key] for key in value) else out
    if isinstance(value, list) and value and isinstance(value[0], ArrayRef | StrictModel | dict):
        items = [_resolve_value(load, item, rules, (*loc, i)) for i, item in enumerate(value)]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def _resolve_model(load: _Loader, params: StrictModel, loc: tuple[str | int, ...]) -> StrictModel:
    updates: dict[str, Any] = {}
    for name, field in type(params).model_fields.items():
        value = getattr(params, name)
        if not isinstance(value, ArrayRef | StrictModel | dict | list):
            continue
        rules = _constraints(field.metadata, field.annotation) or ArrayConstraints("float")
        resolved = _resolve_value(load, value, rules, (*loc, name))
        if resolved is not value:
            updates[name] = resolved
    return params.model_copy(update=updates) if updates else params


def resolve(
    engines: Engines,
    params: StrictModel,
    api_key_id: str | None,
    loc: tuple[str | int, ...] = (),
    *,
    shapes_only: bool = False,
) -> StrictModel:
    """``params`` with every ``ArrayRef`` replaced by its checked array (or, with ``shapes_only``, a stand-in of
    its stored shape), wherever it stands: a field, a nested model, a dict value or a list item. A reference to an
    upload ``api_key_id`` may not use reads as an unknown one."""
    return _resolve_model(_Loader(engines, shapes_only, api_key_id), params, loc)


def _annotation_holds_refs(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation is ArrayRef or may_hold_refs(annotation)
    return any(_annotation_holds_refs(arg) for arg in get_args(annotation))


@cache
def may_hold_refs(model: type[StrictModel]) -> bool:
    """Whether an instance of ``model`` can hold an ``ArrayRef`` anywhere (answers once per model)."""
    return any(_annotation_holds_refs(field.annotation) for field in model.model_fields.values())


def resolve_items(
    engines: Engines,
    items: Sequence[StrictModel],
    api_key_id: str | None,
    loc: tuple[str | int, ...],
    *,
    shapes_only: bool = False,
) -> list[Any]:
    """Scorer items with their ``ArrayRef`` values resolved and checked (``loc + (index, field, ...)`` in errors;
    each stored array read once); the items themselves when their model holds no references."""
    if not items or not may_hold_refs(type(items[0])):
        return list(items)
    load = _Loader(engines, shapes_only, api_key_id)
    return [_resolve_model(load, item, (*loc, i)) for i, item in enumerate(items)]
