"""A cheap structural pre-check of a JSON body against a params model's size bounds, run before validation so that
a large body that would be rejected costs a vectorised scan instead of a full parse.

From the model's JSON Schema, ``level_bounds`` computes how many values a valid body can hold at each nesting
depth (array ``maxItems`` times the bound below, object properties summed; unbounded where the schema sets no
limit). ``check`` counts, chunk by chunk with numpy, the containers opened and the commas at each depth of the body
(strings blanked first), which bounds from below the values at each depth; a count above the schema's bound is a
422 before the body is parsed, and nesting deeper than the JSON parser accepts is the parser's own 400.
"""

import math
import re
from functools import cache
from typing import Any

import numpy as np

from service.types import StrictModel
from usecases.errors import InvalidFields, invalid

MAX_DEPTH = 201
"""Nesting the JSON parser accepts (pydantic-core's recursion limit); deeper bodies are undecodable."""
MIN_CHECKED_BYTES = 64 * 1024
"""Smaller bodies are validated directly: rejecting them costs little, and the validator's messages are finer."""
_CHUNK = 1 << 20
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_KIND = np.zeros(256, np.int8)
_KIND[[ord("["), ord("{")]] = 1
_KIND[[ord("]"), ord("}")]] = -1
_KIND[ord(",")] = 2
_ALL_INF = (math.inf,) * MAX_DEPTH
_UNBOUNDED = (1.0, *_ALL_INF)


def _add(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, ...]:
    n = max(len(a), len(b))
    return tuple((a[i] if i < len(a) else 0.0) + (b[i] if i < len(b) else 0.0) for i in range(n))


def _max(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, ...]:
    n = max(len(a), len(b))
    return tuple(max(a[i] if i < len(a) else 0.0, b[i] if i < len(b) else 0.0) for i in range(n))


def _levels(schema: dict[str, Any], defs: dict[str, Any], seen: frozenset[str]) -> tuple[float, ...]:
    """Most values at each relative depth (index 0: the value itself) of any instance of ``schema``."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in seen or name not in defs:
            return _UNBOUNDED
        return _levels(defs[name], defs, seen | {name})
    alternatives = [*schema.get("anyOf", ()), *schema.get("oneOf", ()), *schema.get("allOf", ())]
    if alternatives:
        out: tuple[float, ...] = (1.0,)
        for alt in alternatives:
            out = _max(out, _levels(alt, defs, seen))
        return out
    kind = schema.get("type")
    if isinstance(kind, list) or (kind is None and "enum" not in schema and "const" not in schema):
        return _UNBOUNDED
    if kind == "array":
        size = float(schema.get("maxItems", math.inf))
        items: tuple[float, ...] = (0.0,)
        for child in (*schema.get("prefixItems", ()), schema.get("items", {})):
            items = _max(items, _levels(child, defs, seen))
        return (1.0, *(size * c if c else 0.0 for c in items))
    if kind == "object":
        below: tuple[float, ...] = ()
        for child in schema.get("properties", {}).values():
            below = _add(below, _levels(child, defs, seen))
        if schema.get("additionalProperties", True) is not False:
            below = _ALL_INF
        return (1.0, *below)
    return (1.0,)


@cache
def level_bounds(model: type[StrictModel]) -> tuple[float, ...]:
    """``level_bounds(model)[d]``: the most values a valid params body holds at depth ``d + 1`` (the root is 1)."""
    schema = model.model_json_schema()
    return _levels(schema, schema.get("$defs", {}), frozenset())[: MAX_DEPTH + 1]


def _counts(body: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """Per depth: containers opened, commas directly inside; None when the brackets do not balance."""
    text = np.frombuffer(_STRING.sub(b"0", body), np.uint8)
    opens = np.zeros(MAX_DEPTH + 2, np.int64)
    commas = np.zeros(MAX_DEPTH + 2, np.int64)
    depth = 0
    for start in range(0, text.size, _CHUNK):
        kinds = _KIND[text[start : start + _CHUNK]]
        marks = kinds[kinds != 0]
        step = np.where(marks == 2, 0, marks).astype(np.int32)
        levels = depth + np.cumsum(step, dtype=np.int32)
        if levels.size == 0:
            continue
        if levels.min() < 0:
            return None
        top = int(levels.max())
        if top > MAX_DEPTH:
            raise InvalidFields(
                "The body is not valid JSON.",
                [{"loc": ["body"], "msg": f"nesting deeper than {MAX_DEPTH}", "type": "json_invalid"}],
                malformed=True,
            )
        opens += np.bincount(levels[step == 1], minlength=MAX_DEPTH + 2)
        commas += np.bincount(levels[step == 0], minlength=MAX_DEPTH + 2)
        depth = int(levels[-1])
    return (opens, commas) if depth == 0 else None


def check(model: type[StrictModel], body: bytes, loc: tuple[str, ...] = ("body",)) -> None:
    """Raise ``InvalidFields`` (422) when ``body`` holds more values at some depth than any valid ``model`` params
    can; bodies under ``MIN_CHECKED_BYTES`` and unbalanced ones are left to the validator."""
    if len(body) < MIN_CHECKED_BYTES:
        return
    counted = _counts(body)
    if counted is None:
        return
    opens, commas = counted
    bounds = level_bounds(model)
    for depth in range(2, MAX_DEPTH + 1):
        values = max(int(opens[depth]), int(commas[depth - 1]))
        bound = bounds[depth - 1] if depth - 1 < len(bounds) else 0.0
        if values > bound:
            raise invalid(
                f"the body holds at least {values} values at nesting depth {depth}; "
                f"valid params hold at most {bound:.0f} there",
                loc,
                "too_many_values",
            )
