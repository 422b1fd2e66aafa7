"""The structural pre-check's vectorised scan against a byte-by-byte walk of the same text: which brackets, commas
and colons are outside strings (a quote opens or closes a string unless an odd run of backslashes precedes it),
the containers and commas counted per depth, unbalanced texts, the members of an object split where the walk
splits them, whatever the chunk and block sizes."""

import json
import random

import numpy as np
import pytest

from usecases import json_bounds
from usecases.errors import InvalidFields


def walk(body: bytes) -> tuple[list[int], list[int], bool]:
    """Positions of the brackets, commas and colons outside strings, of the unescaped quotes, and whether a string
    is left open."""
    marks, quotes, inside, run = [], [], False, 0
    for i, c in enumerate(body):
        if c == ord("\\"):
            run += 1
            continue
        quote = c == ord('"') and run % 2 == 0
        run = 0
        if quote:
            inside = not inside
            quotes.append(i)
        elif not inside and c in b"[]{},:":
            marks.append(i)
    return marks, quotes, inside


def _walk_counts(body: bytes) -> tuple[list[int], list[int]] | None:
    """Per depth: containers opened and commas directly inside, by the walk; None when unbalanced."""
    marks, _, inside = walk(body)
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


def _walk_members(body: bytes) -> dict[str, bytes] | None:
    """The members of a JSON object body split at its top-level colons and commas found by the walk (keys read with
    ``json.loads``), with the rules ``members`` documents; None when they do not apply."""
    text = body.strip()
    if len(text) < 2 or text[:1] != b"{" or text[-1:] != b"}":
        return None
    marks, _, _ = walk(text)
    colons, commas, depth = [], [], 0
    for i in marks:
        depth += 1 if text[i] in b"[{" else -1 if text[i] in b"]}" else 0
        if depth == 1 and text[i] in b",:":
            (colons if text[i] == ord(":") else commas).append(i)
    if not colons:
        return {} if not text[1:-1].strip() else None
    if len(colons) > json_bounds.MAX_MEMBERS or depth != 0 or len(commas) != len(colons) - 1:
        return None
    out: dict[str, bytes] = {}
    for first, colon, last in zip([0, *commas], colons, [*commas, len(text) - 1], strict=True):
        try:
            key = json.loads(text[first + 1 : colon])
        except ValueError:
            return None
        if not isinstance(key, str) or key in out:
            return None
        out[key] = text[colon + 1 : last]
    return out


def _scanned(body: bytes) -> tuple[list[int], bool]:
    """The scan's marks (offsets) and whether it leaves a string open."""
    scan = json_bounds._Scan(body)
    found: list[int] = []
    for _, marks in scan:
        found += scan.offsets(np.arange(marks.size)).tolist()
        assert bytes(marks) == bytes(body[i] for i in found[len(found) - marks.size :])
    return found, scan.inside


@pytest.mark.parametrize(
    ("chunk", "block"),
    [
        (1 << 20, 1 << 18),
        (64, 64),
        *(pytest.param(*cb, marks=pytest.mark.slow) for cb in [(7, 3), (64, 5), (1 << 20, 1)]),
    ],
)
def test_the_scan_finds_what_a_byte_by_byte_walk_finds(monkeypatch: pytest.MonkeyPatch, chunk: int, block: int) -> None:
    monkeypatch.setattr(json_bounds, "_CHUNK", chunk)
    monkeypatch.setattr(json_bounds, "_BLOCK", block)
    for body in _bodies(chunk + block, 400):
        assert _scanned(body) == walk(body)[::2], body
        assert _counted(body) == _walk_counts(body), body


def test_runs_of_backslashes_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Quotes after runs of 0 to 5 backslashes, at every offset from a block's start (a run cut by a block's end
    carries its parity over)."""
    rng = random.Random(5)
    for block in (1, 2, 3, 4):
        monkeypatch.setattr(json_bounds, "_BLOCK", block)
        for _ in range(300):
            body = b"".join(rng.choice([b"\\" * rng.randint(0, 5) + b'"', b"[", b",", b"x", b":"]) for _ in range(12))
            assert _scanned(body) == walk(body)[::2], body


@pytest.mark.parametrize(
    ("chunk", "block"), [(1 << 20, 1 << 18), *(pytest.param(*cb, marks=pytest.mark.slow) for cb in [(5, 5), (6, 4)])]
)
def test_members_split_where_a_byte_by_byte_walk_splits(
    monkeypatch: pytest.MonkeyPatch, chunk: int, block: int
) -> None:
    monkeypatch.setattr(json_bounds, "_CHUNK", chunk)
    monkeypatch.setattr(json_bounds, "_BLOCK", block)
    split = 0
    for body in [*_bodies(1000 + chunk, 600), b' {"a": 1}\n', b"{}", b"{ }", b"{,}", b'{"a":1,}', b'{"a":1:2}']:
        parts = json_bounds.members(body)
        assert parts == _walk_members(body), body
        for value in (parts or {}).values():
            assert _counted(value) == _walk_counts(value), body
        split += len(parts or {})
    assert split > 500


def test_an_object_with_too_many_members_is_not_split() -> None:
    many = {f"k{i}": [i, {"x": ","}] for i in range(json_bounds.MAX_MEMBERS + 1)}
    assert json_bounds.members(json.dumps(many).encode()) is None
    assert json_bounds.members(json.dumps(dict(list(many.items())[:-1])).encode()) is not None
    assert json_bounds.members(b"{" + b"," * 100 + b"}") is None


def test_nesting_deeper_than_the_parser_takes_is_refused_in_a_member_too() -> None:
    deep = b"[" * (json_bounds.MAX_DEPTH + 1) + b"]" * (json_bounds.MAX_DEPTH + 1)
    value = (json_bounds.members(b'{"a": ' + deep + b', "b": 1}') or {})["a"]
    assert value == b" " + deep
    with pytest.raises(InvalidFields) as err:
        json_bounds._counts(value)
    assert err.value.status == 400 and err.value.errors[0]["msg"] == "nesting deeper than 201"


@pytest.mark.parametrize("block", [300, 64, 1])
def test_depth_is_checked_per_chunk_whatever_the_block(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """Nesting too deep in the first chunk is refused even though the next chunk unbalances the brackets: the
    202nd "[" is the first chunk's last byte; one byte later it falls in the next chunk, which then ends below
    depth 0 (unbalanced: left to the validator) before the depth is looked at. Within a chunk, the depth below 0
    wins wherever it is, as when the chunk is scanned at once."""
    chunk, depth = 300, json_bounds.MAX_DEPTH + 1
    monkeypatch.setattr(json_bounds, "_CHUNK", chunk)
    monkeypatch.setattr(json_bounds, "_BLOCK", block)
    value = b" " * (chunk - depth) + b"[" * depth + b"]" * (depth + 1) + b"["
    assert (json_bounds.members(b'{"a":' + value + b"}") or {})["a"] == value
    with pytest.raises(InvalidFields):
        json_bounds._counts(value)
    assert json_bounds._counts(b" " + value) is None  # one byte later: unbalanced first
    with pytest.raises(InvalidFields):  # too deep, the brackets balanced, no string left open
        json_bounds._counts(value[: chunk + depth] + b"]" * 2 * depth)
    assert json_bounds._counts(value[: chunk + depth] + b'"') is None  # a string left open: the parser's
    monkeypatch.setattr(json_bounds, "_CHUNK", 1024)
    assert json_bounds._counts(b"[" * depth + b"]" * (depth + 1)) is None  # in one chunk: below 0 wins


def test_a_body_with_a_string_left_open_splits_into_plain_bytes() -> None:
    parts = json_bounds.members(b'{"a": 1}"}')  # the last "}" is inside the open string
    assert parts == {"a": b' 1}"'}
    assert json_bounds._counts(parts["a"]) is None
