"""The structural pre-check's bounds and refusals on hand-made schemas and bodies: ``_levels`` and ``level_bounds``
against the most values per depth computed by hand from each schema, ``check`` against bodies whose values per
depth are known by construction (and against pydantic's own validation: a body the model accepts is never
refused), ``balanced`` and ``blocks`` against a byte-by-byte walk. Written for the mutation run of
``usecases.json_bounds``."""

import json
import math
import random
from typing import Any

import pytest
from pydantic import Field, ValidationError

from service.types import StrictModel
from tests.usecases.test_json_bounds_scan import walk
from usecases import json_bounds
from usecases.errors import InvalidFields

INF = math.inf
UNBOUNDED = (1.0, *[INF] * json_bounds.MAX_DEPTH)
"""A value, then no bound at any depth the parser accepts."""
INT = {"type": "integer"}


def levels(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> tuple[float, ...]:
    return json_bounds._levels(schema, defs or {}, frozenset())


def array(items: dict[str, Any], max_items: int | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "array", "items": items, **extra}
    if max_items is not None:
        out["maxItems"] = max_items
    return out


def closed(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "additionalProperties": False}


# --- _levels: the most values at each relative depth, by hand -------------------------------------------------


def test_a_scalar_an_enum_and_a_const_are_one_value() -> None:
    assert levels(INT) == (1.0,)
    assert levels({"type": "string", "maxLength": 3}) == (1.0,)
    assert levels({"enum": [1, [2, 3]]}) == (1.0,)
    assert levels({"const": "x"}) == (1.0,)


def test_no_type_or_several_types_bound_nothing_below() -> None:
    assert levels({}) == UNBOUNDED
    assert levels({"description": "anything"}) == UNBOUNDED
    assert levels({"type": ["integer", "array"]}) == UNBOUNDED
    assert len(UNBOUNDED) == json_bounds.MAX_DEPTH + 1


def test_an_array_holds_max_items_times_what_one_item_holds() -> None:
    assert levels(array(INT, 3)) == (1.0, 3.0)
    assert levels(array(array(INT, 3), 2)) == (1.0, 2.0, 6.0)  # 2 lists of 3
    assert levels(array(array(array(INT, 4), 3), 2)) == (1.0, 2.0, 6.0, 24.0)
    assert levels(array(INT)) == (1.0, INF)  # no maxItems
    assert levels(array(INT, 0)) == (1.0, 0.0)
    assert levels(array(array(INT, 5), 0)) == (1.0, 0.0, 0.0)  # an empty list holds nothing below either


def test_an_unbounded_array_of_empty_arrays_holds_no_values_two_levels_down() -> None:
    """``inf * 0`` is NaN: a depth where one item holds nothing stays 0 however many items there are."""
    assert levels(array(array(INT, 0))) == (1.0, INF, 0.0)


def test_an_array_without_items_admits_anything() -> None:
    assert levels({"type": "array", "maxItems": 2}) == (1.0, 2.0, *[INF] * json_bounds.MAX_DEPTH)


def test_prefix_items_and_items_each_bound_one_item() -> None:
    """Each item is one of ``prefixItems`` or ``items``: per depth, the largest of them, times ``maxItems``."""
    schema = array(INT, 3, prefixItems=[array(INT, 4), array(array(INT, 2), 1)])
    # one item holds at most max(0, 4, 1) = 4 values below it, then max(0, 0, 2) = 2
    assert levels(schema) == (1.0, 3.0, 12.0, 6.0)
    only_prefix = array(array(INT, 2), 5, prefixItems=[array(INT, 7)])
    assert levels(only_prefix) == (1.0, 5.0, 35.0)


def test_a_closed_object_sums_its_properties() -> None:
    assert levels(closed(a=INT, b=INT, c=INT)) == (1.0, 3.0)
    assert levels(closed()) == (1.0,)
    # a: 1 value, 2 below it, 6 below those; b: 1 value; c: 1 value, 4 below it
    schema = closed(a=array(array(INT, 3), 2), b=INT, c=array(INT, 4))
    assert levels(schema) == (1.0, 3.0, 6.0, 6.0)


def test_an_object_open_to_more_properties_bounds_nothing_below() -> None:
    for extra in ({}, {"additionalProperties": True}, {"additionalProperties": INT}):
        schema = {"type": "object", "properties": {"a": INT}, **extra}
        assert levels(schema) == UNBOUNDED, extra


def test_alternatives_take_the_larger_bound_at_each_depth() -> None:
    deep, wide = array(array(INT, 2), 3), array(INT, 5)  # (1, 3, 6) and (1, 5)
    for key in ("anyOf", "oneOf", "allOf"):
        assert levels({key: [deep, wide]}) == (1.0, 5.0, 6.0), key
        assert levels({key: [INT, {"type": "null"}]}) == (1.0,), key
    assert levels({"anyOf": [deep], "oneOf": [wide]}) == (1.0, 5.0, 6.0)
    assert levels({"anyOf": [INT], "allOf": [array(INT, 9)]}) == (1.0, 9.0)
    assert levels({"anyOf": [INT, {}]}) == UNBOUNDED
    assert levels({"anyOf": [], "type": "array", "maxItems": 2, "items": INT}) == (1.0, 2.0)  # none listed


def test_a_shorter_alternative_adds_nothing_below_its_own_depths() -> None:
    """An always-empty list or an int: nothing at all below depth 1, whichever alternative comes first."""
    empty = array(array(INT, 2), 0)  # (1, 0, 0)
    assert levels({"anyOf": [empty, INT]}) == (1.0, 0.0, 0.0)
    assert levels({"anyOf": [INT, empty]}) == (1.0, 0.0, 0.0)
    assert levels(array(INT, 3, prefixItems=[array(INT, 0)])) == (1.0, 3.0, 0.0)


def test_an_alternative_may_be_a_reference() -> None:
    """``Optional[Model]`` is ``anyOf: [{$ref}, {type: null}]``; a reference inside alternatives inside a reference."""
    defs = {"Pair": array(INT, 2), "Either": {"oneOf": [{"$ref": "#/$defs/Pair"}, INT]}}
    assert levels({"anyOf": [{"$ref": "#/$defs/Pair"}, {"type": "null"}]}, defs) == (1.0, 2.0)
    assert levels({"$ref": "#/$defs/Either"}, defs) == (1.0, 2.0)
    loop = {"Loop": {"anyOf": [INT, array({"$ref": "#/$defs/Loop"}, 2)]}}
    assert levels({"$ref": "#/$defs/Loop"}, loop) == (1.0, 2.0, *[INF] * json_bounds.MAX_DEPTH)


def test_a_reference_reads_the_definition() -> None:
    defs = {"Pair": array(INT, 2), "Box": closed(p={"$ref": "#/$defs/Pair"}, q=INT)}
    assert levels({"$ref": "#/$defs/Pair"}, defs) == (1.0, 2.0)
    assert levels({"$ref": "#/$defs/Box"}, defs) == (1.0, 2.0, 2.0)
    assert levels(array({"$ref": "#/$defs/Box"}, 3), defs) == (1.0, 3.0, 6.0, 6.0)
    assert levels({"$ref": "#/$defs/Missing"}, defs) == UNBOUNDED


def test_a_recursive_reference_bounds_nothing_below_its_recursion() -> None:
    """A node: a value and at most 2 children, each a node (unbounded below its first repetition)."""
    defs = {"Node": closed(v=INT, kids=array({"$ref": "#/$defs/Node"}, 2))}
    assert levels({"$ref": "#/$defs/Node"}, defs) == (1.0, 2.0, 2.0, *[INF] * json_bounds.MAX_DEPTH)
    # the same definition reached twice side by side is no recursion
    defs = {"P": array(INT, 2), "Two": closed(a={"$ref": "#/$defs/P"}, b={"$ref": "#/$defs/P"})}
    assert levels({"$ref": "#/$defs/Two"}, defs) == (1.0, 2.0, 4.0)


class Inner(StrictModel):
    a: list[int] = Field(max_length=3)
    b: int


class Outer(StrictModel):
    xs: list[Inner] = Field(max_length=5)
    pair: list[list[int]] = Field(max_length=2)
    n: int | None = None


def test_level_bounds_of_a_model() -> None:
    """Root 1; xs, pair, n: 3; 5 Inner + 2 lists: 7; 5 x (a, b) + 2 x unbounded ints: inf; 5 x 3 ints in a: 15."""
    assert json_bounds.level_bounds(Outer) == (1.0, 3.0, 7.0, INF, 15.0)


def test_level_bounds_keep_one_bound_per_depth_the_parser_accepts() -> None:
    """An array of arrays of anything: its levels run one past the parser's depths; only those are kept."""
    schema = array(array({}, 2), 3)
    assert len(levels(schema)) == json_bounds.MAX_DEPTH + 3
    assert json_bounds.level_bounds(_schema_model(schema)) == levels(schema)[: json_bounds.MAX_DEPTH + 1]


# --- check: refusals on bodies whose values per depth are known ---------------------------------------------


def _schema_model(schema: dict[str, Any]) -> type[StrictModel]:
    """A stand-in model whose JSON Schema is ``schema`` (``level_bounds`` reads only ``model_json_schema``)."""

    class Stand(StrictModel):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
            return schema

    return Stand


def padded(text: bytes, size: int = json_bounds.MIN_CHECKED_BYTES) -> bytes:
    """``text`` followed by whitespace up to ``size`` bytes (the same JSON text)."""
    assert len(text) <= size
    return text + b" " * (size - len(text))


def refusal(model: type[StrictModel], body: bytes, *loc: str) -> dict[str, Any] | None:
    try:
        json_bounds.check(model, body, *([tuple(loc)] if loc else []))
    except InvalidFields as exc:
        assert exc.status == 422
        (error,) = exc.errors
        assert error["type"] == "too_many_values"
        return error
    return None


class Rows(StrictModel):
    rows: list[list[int]] = Field(max_length=40)


class Flat(StrictModel):
    xs: list[int] = Field(max_length=40)


def test_as_many_lists_as_the_model_admits_pass_one_more_is_refused() -> None:
    """Rows: the root, ``rows``, at most 40 lists (depth 3), unbounded ints in them."""
    assert json_bounds.level_bounds(Rows)[:3] == (1.0, 1.0, 40.0)
    full = padded(json.dumps({"rows": [[]] * 40}).encode())
    Rows.model_validate_json(full)
    assert refusal(Rows, full) is None
    over = padded(json.dumps({"rows": [[]] * 41}).encode())
    with pytest.raises(ValidationError):
        Rows.model_validate_json(over)
    error = refusal(Rows, over)
    assert error is not None and error["loc"] == ["body"]
    assert error["msg"] == "the body holds at least 41 values at nesting depth 3; valid params hold at most 40 there"


def test_commas_count_the_values_a_list_holds() -> None:
    """41 commas separate 42 ints: at least 41 values at depth 3, where 40 is the most."""
    over = padded(json.dumps({"xs": [0] * 42}).encode())
    error = refusal(Flat, over, "body", "params")
    assert error is not None and error["loc"] == ["body", "params"]
    assert "at least 41 values at nesting depth 3" in error["msg"]
    full = padded(json.dumps({"xs": [0] * 40}).encode())
    Flat.model_validate_json(full)
    assert refusal(Flat, full) is None


def test_commas_and_containers_are_counted_at_their_own_depth() -> None:
    """Rows' lists hold unbounded ints: many commas at depth 3 (inside the lists) are no values at depth 3."""
    body = padded(json.dumps({"rows": [[0] * 500] * 40}).encode(), 2 * json_bounds.MIN_CHECKED_BYTES)
    Rows.model_validate_json(body)
    assert refusal(Rows, body) is None
    # Flat: 30 lists in xs are 30 values at depth 3 (fine) but 30 containers where ints hold no values below
    nested = padded(json.dumps({"xs": [[]] * 30}).encode())
    assert json_bounds.level_bounds(Flat)[:3] == (1.0, 1.0, 40.0)
    assert refusal(Flat, nested) is None  # 30 values at depth 3 and nothing at depth 4
    deeper = padded(json.dumps({"xs": [[[]]] * 30}).encode())
    error = refusal(Flat, deeper)
    assert error is not None and "at least 30 values at nesting depth 4" in error["msg"]
    assert "valid params hold at most 0 there" in error["msg"]


def test_one_container_where_the_schema_holds_nothing_is_refused() -> None:
    """Beyond the depths a schema bounds, a valid body holds no value: one empty list there is one too many."""

    class One(StrictModel):
        a: int

    assert json_bounds.level_bounds(One) == (1.0, 1.0)
    error = refusal(One, padded(b'{"a": [[]]}'))
    assert error is not None and "at least 1 values at nesting depth 3" in error["msg"]
    assert refusal(One, padded(b'{"a": []}')) is None  # one value at depth 2: the list, empty


def test_the_values_at_depth_2_are_counted() -> None:
    """Two properties, each an unbounded list: 3 containers at depth 2 are one too many."""
    model = _schema_model(closed(a=array(INT), b=array(INT)))
    assert json_bounds.level_bounds(model) == (1.0, 2.0, INF)
    error = refusal(model, padded(b'{"a": [], "b": [], "c": []}'))
    assert error is not None and "at least 3 values at nesting depth 2" in error["msg"]
    assert refusal(model, padded(b'{"a": [1, 2, 3], "b": []}')) is None


def test_the_values_at_the_deepest_depth_the_parser_accepts_are_counted() -> None:
    """199 nested single-item arrays of an int bound depths 1 to 200; a body nested 201 deep (the parser's
    limit, so no 400) holds a container at depth 201, where a valid body holds nothing."""
    schema: dict[str, Any] = INT
    for _ in range(json_bounds.MAX_DEPTH - 2):
        schema = array(schema, 1)
    model = _schema_model(schema)
    assert json_bounds.level_bounds(model) == (1.0,) * (json_bounds.MAX_DEPTH - 1)
    depth = json_bounds.MAX_DEPTH
    error = refusal(model, padded(b"[" * depth + b"]" * depth))
    assert error is not None and f"at least 1 values at nesting depth {depth}" in error["msg"]
    assert refusal(model, padded(b"[" * (depth - 1) + b"]" * (depth - 1))) is None


def test_a_body_under_the_threshold_is_left_to_the_validator() -> None:
    body = json.dumps({"rows": [[]] * 41}).encode()
    assert refusal(Rows, padded(body, json_bounds.MIN_CHECKED_BYTES - 1)) is None
    assert refusal(Rows, padded(body, json_bounds.MIN_CHECKED_BYTES)) is not None
    assert json_bounds.MIN_CHECKED_BYTES == 65536


def test_an_unbalanced_body_is_left_to_the_validator() -> None:
    over = json.dumps({"rows": [[]] * 41}).encode()
    for broken in (over[:-1], over + b"]", over[:-1] + b']"', b"]" + over[1:]):
        body = padded(broken)
        with pytest.raises(ValueError):
            json.loads(body)
        assert refusal(Rows, body) is None, broken[-10:]


def test_valid_bodies_are_never_refused() -> None:
    """Bodies pydantic accepts, of every size up to the bounds: the pre-check refuses none of them."""
    rng = random.Random(3)
    for _ in range(60):
        rows = [[rng.randint(-9, 9) for _ in range(rng.randint(0, 60))] for _ in range(rng.randint(0, 40))]
        body = padded(json.dumps({"rows": rows}, separators=(",", ":")).encode())
        Rows.model_validate_json(body)
        assert refusal(Rows, body) is None
        xs = [rng.randint(0, 9) for _ in range(rng.randint(0, 40))]
        body = padded(json.dumps({"xs": xs}).encode())
        Flat.model_validate_json(body)
        assert refusal(Flat, body) is None


# --- balanced and blocks against a walk ------------------------------------------------------------------


def test_balanced() -> None:
    assert json_bounds.balanced(b'{"a": [1, {"b": "]"}]}')
    assert json_bounds.balanced(b"1")
    for body in (b"[", b"]", b"[]]", b'["]', b'{"a": "}'):
        assert not json_bounds.balanced(body), body


@pytest.mark.parametrize(("chunk", "block"), [(1 << 20, 1 << 18), (16, 16), (12, 5)])
def test_blocks_give_the_offsets_in_the_body_of_a_walk_of_the_slice(
    monkeypatch: pytest.MonkeyPatch, chunk: int, block: int
) -> None:
    monkeypatch.setattr(json_bounds, "_CHUNK", chunk)
    monkeypatch.setattr(json_bounds, "_BLOCK", block)
    rng = random.Random(chunk + block)
    values: list[Any] = [0, "a,b", 'q"}', "\\", '\\\\"', "[:{", None, {"k:": [1, "]"]}]
    for _ in range(150):
        text = json.dumps([rng.choice(values) for _ in range(rng.randint(0, 8))]).encode()
        head, tail = b"x" * rng.randint(0, 20), b'"]' * rng.randint(0, 3)
        body = head + text + tail
        marks, quotes, _ = walk(text)
        offsets: list[int] = []
        found: list[int] = []
        seen = b""
        for at, got, q in json_bounds.blocks(body, len(head), len(head) + len(text)):
            offsets += at.tolist()
            seen += bytes(got)
            found += q.tolist()
        assert offsets == [i + len(head) for i in marks], body
        assert seen == bytes(text[i] for i in marks), body
        assert found == [i + len(head) for i in quotes], body
        # to the body's end by default
        assert [int(i) for at, _, _ in json_bounds.blocks(body, len(head)) for i in at] == [
            i + len(head) for i in walk(body[len(head) :])[0]
        ]


def test_blocks_start_at_the_body_start_by_default() -> None:
    body = b'[1, "a,b", {"c": 2}]'
    offsets, _, _ = walk(body)
    assert [int(i) for at, _, _ in json_bounds.blocks(body) for i in at] == offsets == [0, 2, 9, 11, 15, 18, 19]


# --- the refusals' fields and what is left to the parser --------------------------------------------------------


def test_an_object_without_listed_properties() -> None:
    """``dict[str, int]`` is an object with ``additionalProperties`` and no ``properties``."""
    assert levels({"type": "object", "additionalProperties": INT}) == UNBOUNDED
    assert levels({"type": "object", "additionalProperties": False}) == (1.0,)


def test_nesting_too_deep_is_the_parsers_error() -> None:
    deep = json_bounds.MAX_DEPTH + 1
    with pytest.raises(InvalidFields) as err:
        json_bounds._counts(b"[" * deep + b"]" * deep)
    assert err.value.status == 400
    assert err.value.errors == [{"loc": ["body"], "msg": "nesting deeper than 201", "type": "json_invalid"}]


def test_several_top_level_values_are_left_to_the_parser() -> None:
    """Not one JSON text: the parser's error (400), not a count of values."""
    for text in (b"[] []", b"{}, {}", b"[1], [2], [3]", b"1, 2"):
        body = padded(text)
        with pytest.raises(ValueError):
            json.loads(body)
        assert refusal(Flat, body) is None, text


# --- members: where it refuses to split ----------------------------------------------------------------------------


def test_members_need_one_object_from_first_to_last_byte() -> None:
    for body in (b'{"a": 1}x', b'{"a": 1} 2', b"x}", b"1}", b" ]}", b'x{"a": 1}', b"{", b"}", b"", b"  "):
        assert json_bounds.members(body) is None, body
    assert json_bounds.members(b' \n{"a": 1}\t') == {"a": b" 1"}


def test_members_refuse_repeated_and_non_string_keys() -> None:
    for body in (b'{"a": 1, "a": 2}', b'{"a": 1, "b": 2, "a": 3}', b"{1: 2}", b'{null: 1, "a": 2}', b'{["a"]: 1}'):
        assert json_bounds.members(body) is None, body
    assert json_bounds.members(b'{"a": 1, "A": 2}') == {"a": b" 1", "A": b" 2"}


@pytest.mark.parametrize("body", [b"{" + b"1," * 400 + b"1}", b"{" + b'"k": 1, ' * 300 + b'"k": 1}'])
def test_members_keep_at_most_twice_max_members_positions(monkeypatch: pytest.MonkeyPatch, body: bytes) -> None:
    """A split of at most 16 members needs at most 16 colons and 15 commas: however many the body holds, no more
    than 2 x MAX_MEMBERS positions are kept (read as ``_Scan.offsets``), in small blocks as in one."""
    for block in (4, 64, 1 << 18):
        monkeypatch.setattr(json_bounds, "_BLOCK", block)
        kept: list[int] = []
        offsets = json_bounds._Scan.offsets

        def counted(scan: Any, indices: Any, offsets: Any = offsets, kept: list[int] = kept) -> Any:
            kept.append(len(indices))
            return offsets(scan, indices)

        monkeypatch.setattr(json_bounds._Scan, "offsets", counted)
        assert json_bounds.members(body) is None
        assert sum(kept) <= 2 * json_bounds.MAX_MEMBERS, (block, sum(kept))
        monkeypatch.setattr(json_bounds._Scan, "offsets", offsets)


def test_the_scalars_inside_the_deepest_containers_are_counted() -> None:
    """Nesting 201 deep (the parser's limit) holds scalars at depth 202, the last depth ``level_bounds`` keeps: 200
    single-item arrays around one of at most 2 ints bound depth 202 to 2 values; 3 commas there are 4 values."""
    schema: dict[str, Any] = array(INT, 2)
    for _ in range(json_bounds.MAX_DEPTH - 1):
        schema = array(schema, 1)
    model = _schema_model(schema)
    bounds = json_bounds.level_bounds(model)
    assert bounds == (1.0,) * json_bounds.MAX_DEPTH + (2.0,) and len(bounds) == json_bounds.MAX_DEPTH + 1
    depth = json_bounds.MAX_DEPTH
    assert refusal(model, padded(b"[" * depth + b"1, 2" + b"]" * depth)) is None
    error = refusal(model, padded(b"[" * depth + b"1, 2, 3, 4" + b"]" * depth))
    assert error is not None and f"at least 3 values at nesting depth {depth + 1}" in error["msg"]
