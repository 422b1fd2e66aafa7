"""The text guard's memory on 8 MB hostile bodies with a NUL in their last string (docs/security.md, "Expensive
JSON"): every byte a bracket, comma, colon, quote or backslash, so that a scan holding a position or a mask per
byte of the whole body allocates several times the body. Naming the NUL's field goes block by block
(``json_bounds.blocks``), so its temporaries do not grow with the body: measured with tracemalloc at 0.78-1.30x
these 8 MB bodies, where the whole-body scan took 6.0-29x."""

import pytest

from api import text_guard
from tests.usecases.test_json_bounds_memory import ITEMS, _peak

PEAK = 1.5
"""The scan's peak allocation as a multiple of an 8 MB body (measured: at most 1.30)."""


@pytest.mark.parametrize("kind", list(ITEMS))
def test_naming_the_field_of_a_nul_in_a_hostile_body_allocates_about_the_body(kind: str) -> None:
    body = b'{"model":"m","predictions":{"items":' + ITEMS[kind] + b'},"meta":{"note":"\\u0000"}}'
    peak, loc = _peak(lambda: text_guard._bad_loc(body))
    assert loc == ("meta", "note"), kind
    assert peak <= PEAK * len(body), (kind, peak / len(body))


@pytest.mark.parametrize("kind", ["quotes", "objects"])
def test_a_hostile_json_lines_body_is_scanned_without_copying_its_line(kind: str) -> None:
    line = b'{"items":' + ITEMS[kind] + b',"x":[1,{"k\\u0000":2}]}'
    body = b'{"a":1}\n' + line + b"\n{}"
    peak, loc = _peak(lambda: text_guard._bad_loc(body, lines=True))
    assert loc == (2, "x", 1, "k\x00")
    assert peak <= PEAK * len(body), (kind, peak / len(body))


def test_nesting_deeper_than_a_loc_names_is_cut_at_its_levels() -> None:
    """40,000 arrays deep: the loc names the first ``LOC_LEVELS`` (each the array's item 0)."""
    body = b"[" * 40_000 + b'"\\u0000"' + b"]" * 40_000
    assert text_guard._bad_loc(body) == (0,) * text_guard.LOC_LEVELS


@pytest.mark.parametrize(
    ("body", "loc"),
    [(b"{:\\u0000}", ()), (b'{:"\\u0000', ()), (b'[1,{:"\\u0000', (1,)), (b'{:"\\u0000":"b"}', ("b", "\x00"))],
)
def test_a_colon_no_quote_precedes_is_read_as_before_or_ends_the_loc(body: bytes, loc: tuple[str | int, ...]) -> None:
    """Not JSON: an object whose colon no quote precedes. The whole-body scan took the text's last string as its key
    (kept: the last case) and failed with an IndexError (a 500) when the text has fewer than two quotes; now the
    loc ends before that object."""
    assert text_guard._bad_loc(body) == loc


def test_escaped_escapes_are_skipped_without_copying_what_precedes_them() -> None:
    """150,000 ``\\\\u0000`` (a backslash, then ``u0000``: not a NUL) before a real ``\\u0000``: the parity of each
    backslash run is read back from the run's end, not from a copy of the body before it (which made the scan
    allocate 2x the body and take time quadratic in it)."""
    body = b'["' + b"\\\\u0000" * 150_000 + b'\\u0000"]'
    peak, offset = _peak(lambda: text_guard.bad_text_offset(body))
    assert offset == len(body) - 8
    assert peak <= 0.1 * len(body), peak / len(body)
