"""The structural pre-check's vectorised scan against a byte-by-byte walk of the same text: which brackets, commas
and colons are outside strings (a quote opens or closes a string unless an odd run of backslashes precedes it),
the containers and commas counted per depth, unbalanced texts, and a member split off a body counted from the
body's own scan (``members``) exactly as when it is scanned alone."""

import json
import random

import numpy as np
import pytest

from usecases import json_bounds
from usecases.errors import InvalidFields


def _walk(body: bytes) -> tuple[list[int], bool]:
    """Positions of the brackets, commas and colons outside strings, and whether a string is left open."""
    marks, inside, run = [], False, 0
    for i, c in enumerate(body):
        if c == ord("\\"):
            run += 1
            continue
        quote = c == ord('"') and run % 2 == 0
        run = 0
        if quote:
            inside = not inside
        elif not inside and c in b"[]{},:":
            marks.append(i)
    return marks, inside


def _walk_counts(body: bytes) -> tuple[list[int], list[int]] | None:
    """Per depth: containers opened and commas directly inside, by the walk; None when unbalanced."""
    marks, inside = _walk(body)
    if inside:
        return None
    opens, commas, depth = [0] * (json_bounds.MAX_DEPTH + 2), [0] * (json_bounds.MAX_DEPTH + 2), 0
    for i in marks:
        c = body[i]
        if c in b"[{":
            depth += 1
            opens[depth] += 1
        elif c in b"]}":
            depth -= 1
            if depth < 0:
                return None
        elif c == ord(","):
            commas[depth] += 1
    return (opens, commas) if depth == 0 else None


def _value(rng: random.Random, depth: int = 0) -> object:
    r = rng.random()
    if depth > 4 or r < 0.35:
        return rng.choice([0, -1.5, "a,b", 'q"}', "\\", '\\\\"', "[:{", None, True, "é😀"])
    if r < 0.65:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["k", "a:b", 'c"', "d\\"]) + str(i): _value(rng, depth + 1) for i in range(rng.randint(0, 4))}


def _bodies(seed: int, n: int) -> list[bytes]:
    """JSON bodies, some with a few bytes replaced by structural ones, quotes or backslashes."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        body = bytearray(json.dumps({"model": "m", "predictions": _value(rng), "metadata": _value(rng)}).encode())
        for _ in range(rng.choice([0, 0, 1, 2])):
            body[rng.randrange(len(body))] = rng.choice(b'[]{},:"\\ x')
        out.append(bytes(body))
    return out


def _counted(body: bytes) -> tuple[list[int], list[int]] | None:
    found = json_bounds._counts(body)
    return None if found is None else (found[0].tolist(), found[1].tolist())


@pytest.mark.parametrize("chunk", [1 << 20, 7, 64])
def test_the_scan_finds_what_a_byte_by_byte_walk_finds(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(json_bounds, "_CHUNK", chunk)
    for body in _bodies(chunk, 400):
        text = np.frombuffer(body, np.uint8)
        quotes = json_bounds.quote_positions(text)
        expected, open_string = _walk(body)
        if not open_string:
            assert json_bounds._marks(text, quotes).tolist() == expected, body
        assert _counted(body) == _walk_counts(body), body


@pytest.mark.parametrize("chunk", [1 << 20, 5])
def test_a_member_is_counted_from_the_bodys_scan_as_when_scanned_alone(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(json_bounds, "_CHUNK", chunk)
    checked = 0
    for body in _bodies(1000 + chunk, 600):
        for value in (json_bounds.members(body) or {}).values():
            assert _counted(value) == _counted(bytes(value)) == _walk_counts(bytes(value)), body
            checked += isinstance(value, json_bounds.Member)
    assert checked > 500


def test_nesting_deeper_than_the_parser_takes_is_refused_in_a_member_too() -> None:
    deep = b"[" * (json_bounds.MAX_DEPTH + 1) + b"]" * (json_bounds.MAX_DEPTH + 1)
    value = (json_bounds.members(b'{"a": ' + deep + b', "b": 1}') or {})["a"]
    assert isinstance(value, json_bounds.Member)
    for counted in (value, bytes(value)):
        with pytest.raises(InvalidFields) as err:
            json_bounds._counts(counted)
        assert err.value.status == 400 and err.value.errors[0]["msg"] == "nesting deeper than 201"


def test_a_member_is_cut_into_the_same_chunks_as_when_scanned_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nesting too deep in the first chunk is refused even though the next chunk unbalances the brackets: the
    202nd "[" is the first chunk's last byte, so marks placed one byte off would move it into the next chunk,
    which then ends below depth 0 (unbalanced: left to the validator) before the depth is looked at."""
    chunk, depth = 300, json_bounds.MAX_DEPTH + 1
    monkeypatch.setattr(json_bounds, "_CHUNK", chunk)
    value = b" " * (chunk - depth) + b"[" * depth + b"]" * (depth + 1) + b"["
    member = (json_bounds.members(b'{"a":' + value + b"}") or {})["a"]
    assert isinstance(member, json_bounds.Member) and member == value
    for counted in (member, value):
        with pytest.raises(InvalidFields):
            json_bounds._counts(counted)
    assert json_bounds._counts(b" " + value) is None  # one byte later: unbalanced first


def test_a_body_with_a_string_left_open_splits_into_plain_bytes() -> None:
    parts = json_bounds.members(b'{"a": 1}"}')  # the last "}" is inside the open string
    assert parts == {"a": b' 1}"'} and not isinstance(parts["a"], json_bounds.Member)
    assert json_bounds._counts(parts["a"]) is None
