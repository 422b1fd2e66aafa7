"""The structural pre-check's memory on 8 MB hostile bodies (docs/security.md, "Cost before work"): every byte a
bracket, comma, colon, quote or backslash, so that a scan holding a position or a mask per byte of the whole body
would allocate several times the body. The scan goes block by block (``json_bounds._BLOCK`` bytes at a time), so
its temporaries do not grow with the body: measured with tracemalloc at 3.5-6.8 MB for these 8 MB bodies, where
the whole-body scans took 4.0-29x the body (``_counts``) and 10-29x (``members``, which also copies each value)."""

import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from service.scoring.film_mcq import PredictionItem
from usecases import json_bounds
from usecases.errors import InvalidFields
from usecases.submissions import _typed_predictions

SIZE = 8_000_000
ITEMS: dict[str, bytes] = {
    "empty lists": b"[" + b"[]," * (SIZE // 3) + b"[]]",
    "nested lists": b"[" * 150 + b"],[" * (SIZE // 3) + b"]" * 150,
    "commas": b"[" + b"1," * (SIZE // 2) + b"1]",
    "quotes": b'["' + b'","' * (SIZE // 3) + b'"]',
    "objects": b"[" + b'{"a":1},' * (SIZE // 8) + b"{}]",
    "escaped quotes": b'["' + b'\\"' * (SIZE // 2) + b'"]',
    "backslash runs": b"[" + b'"\\\\",' * (SIZE // 5) + b'"a"]',
}
SCAN_PEAK = 1.0
"""The scan's peak allocation as a multiple of an 8 MB body (measured: at most 0.85)."""
SPLIT_PEAK = 1.5
"""``members``' peak as a multiple of the body: its scan, and the values it hands back (copies, at most the body)."""


def _peak(call: Callable[[], Any]) -> tuple[int, Any]:
    tracemalloc.start()
    try:
        try:
            out = call()
        except InvalidFields as exc:
            out = exc
        return tracemalloc.get_traced_memory()[1], out
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", list(ITEMS))
def test_the_pre_check_of_a_hostile_body_allocates_less_than_the_body(kind: str) -> None:
    predictions = b'{"items":' + ITEMS[kind] + b"}"
    typed = _typed_predictions("film_mcq", PredictionItem)
    peak, out = _peak(lambda: json_bounds.check(typed, predictions, ("body", "predictions")))
    assert peak <= SCAN_PEAK * len(predictions), (kind, peak / len(predictions))
    if kind != "escaped quotes":  # one string: no values to count
        assert isinstance(out, InvalidFields) and out.errors[0]["type"] == "too_many_values", (kind, out)


@pytest.mark.parametrize("kind", list(ITEMS))
def test_splitting_a_hostile_body_allocates_its_values_and_a_bounded_scan(kind: str) -> None:
    body = b'{"model":"m","predictions":{"items":' + ITEMS[kind] + b"}}"
    peak, parts = _peak(lambda: json_bounds.members(body))
    assert parts is not None and sorted(parts) == ["model", "predictions"], kind
    assert peak <= SPLIT_PEAK * len(body), (kind, peak / len(body))
