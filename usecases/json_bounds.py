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
from collections.abc import Iterator
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
"""The scan's unit for depth checks: a chunk where the depth goes below 0 leaves the body to the parser before any
nesting that the same chunk takes beyond ``MAX_DEPTH`` is refused."""
_BLOCK = 1 << 18
"""Bytes scanned at once: the scan's temporaries are a few times this, whatever the body's size."""
_QUOTE, _SLASH, _COMMA, _COLON, _OPEN, _CLOSE = b'"\\,:{}'
_STEP = np.zeros(256, np.int8)
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1
_NOTHING = np.zeros(0, np.intp)
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


class _Scan:
    """The brackets, commas and colons outside strings of ``body[start:stop]``, found one block of at most
    ``_BLOCK`` bytes at a time (blocks never straddle a multiple of ``_CHUNK`` from ``start``), so that the scan's
    temporaries take a few bytes per block byte whatever the body's size. A quote opens or closes a string unless
    an odd run of backslashes precedes it; the parity of the quotes so far and of the backslashes ending a block
    carry over to the next. Iterating gives, per block, its offset from ``start`` and the bytes of its marks in
    order; ``inside`` tells whether the part scanned so far leaves a string open, and (when asked for) ``quotes``
    the offsets in ``body`` of the block's unescaped quotes."""

    def __init__(self, body: bytes, start: int = 0, stop: int | None = None, quotes: bool = False) -> None:
        self.body = body
        self.start = start
        self.stop = len(body) if stop is None else stop
        self.inside = False
        self.keep_quotes = quotes
        self.quotes = _NOTHING
        self._slash = False  # the part scanned so far ends with an odd run of backslashes
        self._at = start
        self._found = _NOTHING

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        size, block = self.stop - self.start, min(_BLOCK, _CHUNK)
        for window in range(0, size, _CHUNK):
            end = min(window + _CHUNK, size)
            for offset in range(window, end, block):
                yield offset, self._marks(self.start + offset, self.start + min(offset + block, end))

    def _marks(self, a: int, b: int) -> np.ndarray:
        part = np.frombuffer(self.body, np.uint8, b - a, a)
        folded = part | 32  # "[" and "]" as "{" and "}"; no other byte folds onto those
        sel = folded == _OPEN
        sel |= folded == _CLOSE
        del folded
        sel |= part == _COMMA
        sel |= part == _COLON
        sel |= part == _QUOTE
        escaped = self._escaped(part, a, b)
        if escaped.size:
            sel[escaped] = False
        found = np.flatnonzero(sel)
        del sel
        marks = part.take(found)
        quote = marks == _QUOTE
        quotes = np.count_nonzero(quote)
        if self.keep_quotes:
            self.quotes = found.compress(quote) + a
        if quotes:
            odd = (np.cumsum(quote, dtype=np.int32) & 1).astype(np.bool_)  # an odd count of the block's quotes so far
            keep = np.flatnonzero(odd & ~quote if self.inside else ~(odd | quote))
            del odd, quote
            found, marks = found.take(keep), marks.take(keep)
            self.inside ^= bool(quotes & 1)
        elif self.inside:
            found, marks = found[:0], marks[:0]
        self._at, self._found = a, found
        return marks

    def _escaped(self, part: np.ndarray, a: int, b: int) -> np.ndarray:
        """Offsets in ``part`` (``body[a:b]``) of the quotes that an odd run of backslashes precedes."""
        carried, self._slash = self._slash, False
        if self.body.find(b"\\", a, b) < 0:
            return np.zeros(1, np.intp) if carried and part[0] == _QUOTE else _NOTHING
        slashes = np.flatnonzero(part == _SLASH)
        breaks = np.flatnonzero(np.diff(slashes) != 1)
        first = slashes[np.r_[0, breaks + 1]]
        after = slashes[np.r_[breaks, slashes.size - 1]] + 1  # the byte after each run
        odd = ((after - first) & 1).astype(np.bool_)
        if first[0] == 0:
            odd[0] ^= carried
        elif carried and part[0] == _QUOTE:  # the run ending the previous block escapes this one's first byte
            after, odd = np.r_[0, after], np.r_[True, odd]
        if after[-1] == part.size:  # the last run reaches the block's end: its parity carries over
            self._slash = bool(odd[-1])
            after, odd = after[:-1], odd[:-1]
        escaped = after[odd]
        return escaped[part[escaped] == _QUOTE]

    def offsets(self, indices: np.ndarray) -> np.ndarray:
        """Offsets from ``start`` of the marks at ``indices`` among those of the block iterated last."""
        return self._found[indices] + (self._at - self.start)


def blocks(body: bytes, start: int = 0, stop: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The scan of ``body[start:stop]`` (read as a JSON text beginning at ``start``: outside strings, not escaped),
    one block of at most ``_BLOCK`` bytes at a time: per block, the offsets in ``body`` and the bytes of its
    brackets, commas and colons outside strings, and the offsets of its unescaped double quotes."""
    scan = _Scan(body, start, stop, quotes=True)
    for _, marks in scan:
        yield scan._found + scan._at, marks, scan.quotes


def _counts(body: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """Per depth: containers opened, commas directly inside; None when a string never closes or the brackets do not
    balance (a depth below 0 in a chunk of ``_CHUNK`` bytes, before or in the chunk where the nesting first exceeds
    ``MAX_DEPTH``, or a depth other than 0 at the end). Nesting deeper than ``MAX_DEPTH`` is ``InvalidFields``
    (400), as the parser would answer."""
    opens = np.zeros(MAX_DEPTH + 2, np.int64)
    commas = np.zeros(MAX_DEPTH + 2, np.int64)
    depth = 0
    too_deep: int | None = None  # the chunk where the nesting first exceeds MAX_DEPTH
    scan = _Scan(body)
    blocks = iter(scan)
    for offset, marks in blocks:
        if too_deep is not None and offset // _CHUNK != too_deep:
            break
        if marks.size == 0:
            continue
        step = _STEP.take(marks)
        levels = np.cumsum(step, dtype=np.int32)
        levels += depth
        if levels.min() < 0:
            return None
        if too_deep is None and levels.max() > MAX_DEPTH:
            too_deep = offset // _CHUNK
        if too_deep is None:
            opens += np.bincount(levels.compress(step == 1), minlength=MAX_DEPTH + 2)
            commas += np.bincount(levels.compress(marks == _COMMA), minlength=MAX_DEPTH + 2)
        depth = int(levels[-1])
    if too_deep is not None:
        for _ in blocks:  # whether a string is left open, which leaves the body to the parser
            pass
        if not scan.inside:
            raise InvalidFields(
                "The body is not valid JSON.",
                [{"loc": ["body"], "msg": f"nesting deeper than {MAX_DEPTH}", "type": "json_invalid"}],
                malformed=True,
            )
    return (opens, commas) if depth == 0 and not scan.inside else None


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
    for depth in range(2, MAX_DEPTH + 2):  # to the scalars inside the deepest containers the parser accepts
        values = max(int(opens[depth]), int(commas[depth - 1]))
        bound = bounds[depth - 1] if depth - 1 < len(bounds) else 0.0
        if values > bound:
            raise invalid(
                f"the body holds at least {values} values at nesting depth {depth}; "
                f"valid params hold at most {bound:.0f} there",
                loc,
                "too_many_values",
            )


MAX_MEMBERS = 16
"""``members`` splits objects of at most this many members (a request envelope has a handful)."""


def members(body: bytes) -> dict[str, bytes] | None:
    """The members of a JSON object body as {key: value bytes}, split without parsing (one scan, block by block:
    the commas and colons outside strings at the top level); None when the body is not one object of at most
    ``MAX_MEMBERS`` members (the caller then validates it whole, or refuses it)."""
    start = len(body) - len(body.lstrip())
    end = len(body.rstrip())
    if end - start < 2 or body[start : start + 1] != b"{" or body[end - 1 : end] != b"}":
        return None
    scan = _Scan(body, start, end)
    colons: list[int] = []
    commas: list[int] = []
    depth = 0
    for _, marks in scan:
        if marks.size == 0:
            continue
        levels = np.cumsum(_STEP.take(marks), dtype=np.int32)
        levels += depth
        depth = int(levels[-1])
        top = np.flatnonzero((levels == 1) & ((marks == _COLON) | (marks == _COMMA)))
        if top.size:
            if len(colons) + len(commas) + top.size > 2 * MAX_MEMBERS:
                return None  # more than MAX_MEMBERS colons, or commas that do not fit between them
            found = scan.offsets(top).tolist()
            for kind, at in zip(marks[top].tolist(), found, strict=True):
                (colons if kind == _COLON else commas).append(at)
    if not colons:
        return {} if not body[start + 1 : end - 1].strip() else None
    if len(colons) > MAX_MEMBERS or depth != 0 or len(commas) != len(colons) - 1:
        return None
    ends = [*commas, end - start - 1]
    starts = [0, *commas]
    out: dict[str, bytes] = {}
    for first, colon, last in zip(starts, colons, ends, strict=True):
        try:
            key = json.loads(body[start + first + 1 : start + colon])
        except ValueError:
            return None
        if not isinstance(key, str) or key in out:
            return None
        out[key] = body[start + colon + 1 : start + last]
    return out
