"""A cheap structural pre-check of a JSON body against a params model's size bounds, run before validation so that
a large body that would be rejected costs a vectorised scan instead of a full parse.

From the model's JSON Schema, ``level_bounds`` computes how many values a valid body can hold at each nesting
depth (array ``maxItems`` times the bound below, object properties summed; unbounded where the schema sets no
limit). ``check`` counts, chunk by chunk with numpy, the containers opened and the commas at each depth of the body
(bytes inside strings masked out first, in one vectorised pass), which bounds from below the values at each depth;
a count above the schema's bound is a 422 before the body is parsed, and nesting deeper than the JSON parser
accepts is the parser's own 400.
"""

import json
import math
import threading
from functools import cache
from typing import Any

import numpy as np

from service.types import StrictModel
from usecases.errors import InvalidFields, invalid

MAX_DEPTH = 201
"""Nesting the JSON parser accepts (pydantic-core's recursion limit); deeper bodies are undecodable."""
LARGE_BODIES = threading.Lock()
"""One large body (``MIN_CHECKED_BYTES`` or more) is scanned, pre-checked or parsed at a time per process: the work
holds the interpreter for much of its time, so many at once starve the event loop, and memory grows with each."""
MIN_CHECKED_BYTES = 64 * 1024
"""Smaller bodies are validated directly: rejecting them costs little, and the validator's messages are finer."""
_CHUNK = 1 << 20
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
    text = np.frombuffer(body, np.uint8)
    quotes = quote_positions(text)
    if quotes.size % 2:
        return None  # a string never closed: left to the parser
    kind = _KIND[text]
    kind[~outside_strings(text, quotes)] = 0
    opens = np.zeros(MAX_DEPTH + 2, np.int64)
    commas = np.zeros(MAX_DEPTH + 2, np.int64)
    depth = 0
    for start in range(0, text.size, _CHUNK):
        kinds = kind[start : start + _CHUNK]
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


def balanced(body: bytes) -> bool:
    """Whether the brackets of a JSON body balance (outside strings); nesting deeper than the parser accepts is
    ``InvalidFields`` (400), as the parser would answer."""
    return _counts(body) is not None


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


def quote_positions(text: np.ndarray) -> np.ndarray:
    """Positions of the unescaped double quotes of a JSON text (those after an even run of backslashes): string
    starts and ends alternate."""
    quotes = np.flatnonzero(text == ord('"'))
    slashes = np.flatnonzero(text == ord("\\"))
    if quotes.size == 0 or slashes.size == 0:
        return quotes
    run_starts = slashes[np.r_[True, np.diff(slashes) != 1]]
    last = np.searchsorted(slashes, quotes, side="left") - 1
    after_slash = (last >= 0) & (slashes[np.maximum(last, 0)] == quotes - 1)
    start = run_starts[np.searchsorted(run_starts, quotes, side="right") - 1]
    run = np.where(after_slash, quotes - start, 0)
    return quotes[run % 2 == 0]


def outside_strings(text: np.ndarray, quotes: np.ndarray) -> np.ndarray:
    """True for the bytes of a JSON text that are not inside a string (the quotes themselves count as inside)."""
    toggles = np.zeros(text.size, np.uint8)
    toggles[quotes] = 1
    return ~(np.bitwise_xor.accumulate(toggles) | toggles).astype(bool)


MAX_MEMBERS = 16
"""``members`` splits objects of at most this many members (a request envelope has a handful)."""


def members(body: bytes) -> dict[str, bytes] | None:
    """The members of a JSON object body as {key: value bytes}, split without parsing (one vectorised pass: the
    commas and colons outside strings at the top level); None when the body is not one object of at most
    ``MAX_MEMBERS`` members (the caller then validates it whole, or refuses it)."""
    start = len(body) - len(body.lstrip())
    end = len(body.rstrip())
    if end - start < 2 or body[start : start + 1] != b"{" or body[end - 1 : end] != b"}":
        return None
    text = np.frombuffer(body, np.uint8)[start:end]
    quotes = quote_positions(text)
    plain = outside_strings(text, quotes)
    step = _KIND[text]
    step[(step == 2) | ~plain] = 0
    depth = np.cumsum(step, dtype=np.int32)
    del step
    top = plain & (depth == 1)
    colons = np.flatnonzero(top & (text == ord(":")))
    commas = np.flatnonzero(top & (text == ord(",")))
    balanced = depth[-1] == 0
    del plain, depth, top
    if colons.size == 0:
        return {} if not body[start + 1 : end - 1].strip() else None
    if colons.size > MAX_MEMBERS or not balanced or commas.size != colons.size - 1:
        return None
    ends = [*commas.tolist(), text.size - 1]
    starts = [0, *commas.tolist()]
    out: dict[str, bytes] = {}
    for first, colon, last in zip(starts, colons.tolist(), ends, strict=True):
        try:
            key = json.loads(body[start + first + 1 : start + colon])
        except ValueError:
            return None
        if not isinstance(key, str) or key in out:
            return None
        out[key] = body[start + colon + 1 : start + last]
    return out
