"""Uploaded arrays checked and resolved by the use case (usecases/arrays.py), called directly on the test database:
the stored metadata and who may use an upload, each rule of a field's ``ArrayConstraints`` at and past its edge
(the error's ``loc``), the conversion to the field's dtype, and references resolved wherever they stand in params
(nested models, dict values, list items) while everything else keeps its identity. Written for the mutation run of
``usecases.arrays``."""

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import numpy as np
import pytest
from pydantic import Field

from db.repositories import arrays as repo
from service.errors import InvalidInput
from service.types import ArrayConstraints, ArrayRef, FiniteFloat, StrictModel, array_param
from tests.factories import admin, principal
from usecases import arrays
from usecases.api_keys import Principal
from usecases.errors import NotFound
from usecases.services import Services

LOC = ("body", "x")


def store(services: Services, values: np.ndarray, owner: Principal | None = None, salt: str = "") -> str:
    """``values`` stored under the SHA-256 of their bytes (and ``salt``); the reference ``sha256:<hex>``."""
    sha = hashlib.sha256(values.tobytes() + values.dtype.str.encode() + salt.encode()).hexdigest()
    arrays.store_array(services, sha, values.dtype, values.shape, values.tobytes(), owner)
    return f"sha256:{sha}"


def grants(services: Services, sha: str) -> set[str]:
    from sqlalchemy import select

    from db.models import ArrayGrant

    with services.engines.read.connect() as conn:
        return {r[0] for r in conn.execute(select(ArrayGrant.api_key_id).where(ArrayGrant.sha256 == sha))}


# --- storing and metadata -------------------------------------------------------------------------------------


def test_an_upload_is_stored_with_its_dtype_shape_size_and_time_and_granted_to_its_uploader(
    services: Services,
) -> None:
    alice = principal(services, "estimators:run")
    values = np.arange(6, dtype="<i4").reshape(2, 3)
    sha = hashlib.sha256(b"alice").hexdigest()
    before = datetime.now(UTC)
    meta = arrays.store_array(services, sha, values.dtype, values.shape, values.tobytes(), alice)
    assert (meta.sha256, meta.dtype, meta.shape, meta.nbytes) == (sha, "<i4", [2, 3], 24)
    assert before - timedelta(seconds=1) <= meta.created_at.replace(tzinfo=UTC) <= datetime.now(UTC)
    assert grants(services, sha) == {alice.key_id}
    with services.engines.read.connect() as conn:
        assert repo.load(conn, sha) == ("<i4", [2, 3], values.tobytes())
        assert repo.may_use(conn, sha, None) is False  # keyed: not anonymous
    bob = principal(services, "estimators:run")
    again = arrays.store_array(services, sha, values.dtype, values.shape, values.tobytes(), bob)
    assert again == meta  # the same content: the first upload's row, and bob granted it
    assert grants(services, sha) == {alice.key_id, bob.key_id}


def test_an_anonymous_upload_has_no_owner_and_grants_nothing(services: Services) -> None:
    ref = store(services, np.ones(3))
    sha = ref.removeprefix("sha256:")
    assert grants(services, sha) == set()
    with services.engines.read.connect() as conn:
        assert repo.may_use(conn, sha, None) is True
    someone = principal(services, "estimators:run")
    for who in (None, someone, admin(services)):
        meta = arrays.array_meta(services, who, ref)
        assert (meta.sha256, meta.dtype, meta.shape, meta.nbytes) == (sha, "<f8", [3], 24)
    assert arrays.array_meta(services, None, sha).sha256 == sha  # the bare hex names it too


def test_metadata_of_an_unknown_or_foreign_upload_is_not_found(services: Services) -> None:
    alice, bob = principal(services, "estimators:run"), principal(services, "estimators:run")
    ref = store(services, np.ones(4), alice)
    assert arrays.array_meta(services, alice, ref).shape == [4]
    assert arrays.array_meta(services, admin(services), ref).shape == [4]
    for who in (bob, None):
        with pytest.raises(NotFound):
            arrays.array_meta(services, who, ref)
    with pytest.raises(NotFound):
        arrays.array_meta(services, admin(services), "sha256:" + "0" * 64)


# --- a field's constraints ------------------------------------------------------------------------------------

FLOATS = ArrayConstraints("float", ge=-1.0, le=2.0)
INTS = ArrayConstraints("int", ndim=2, ge=0, le=100)


class Inner(StrictModel):
    v: array_param(FiniteFloat, "float", ge=0.0, le=1.0) = Field(description="v")  # type: ignore[valid-type]


class Params(StrictModel):
    a: array_param(FiniteFloat, "float", ge=-1.0, le=2.0) = Field(description="a")  # type: ignore[valid-type]
    m: array_param(list[int], "int", ndim=2, ge=0, le=100) | None = Field(  # type: ignore[valid-type]
        default=None, description="m"
    )
    flags: array_param(bool, "bool") | None = Field(default=None, description="flags")  # type: ignore[valid-type]
    plain: ArrayRef | None = Field(default=None, description="no constraints")
    inner: Inner | None = Field(default=None, description="nested")
    named: dict[str, ArrayRef] | None = Field(default=None, description="dict of references")
    many: list[ArrayRef] | None = Field(default=None, description="list of references")
    nums: list[float] | None = Field(default=None, description="numbers")
    models: list[Inner] | None = Field(default=None, description="list of models")
    n: int = Field(default=0, description="scalar")


class NoRefs(StrictModel):
    n: int = Field(default=0, description="n")
    xs: list[float] = Field(default_factory=list, description="xs")


def test_a_fields_constraints_are_found_in_its_metadata_or_inside_its_annotation() -> None:
    fields = Params.model_fields
    assert arrays._constraints(fields["a"].metadata, fields["a"].annotation) == FLOATS
    assert arrays._constraints(fields["m"].metadata, fields["m"].annotation) == INTS  # inside `... | None`
    assert arrays._constraints(fields["flags"].metadata, fields["flags"].annotation) == ArrayConstraints("bool")
    assert arrays._constraints(fields["plain"].metadata, fields["plain"].annotation) is None
    rule = ArrayConstraints("int")
    nested = Annotated[Annotated[list[int] | ArrayRef, rule] | None, "other"]
    assert arrays._constraints([], nested) == rule
    assert arrays._constraints(["x", rule, FLOATS], int) == rule  # the first one
    assert arrays._constraints([], Annotated[int, "x"] | Annotated[str, rule]) == rule  # found in a later arg


@pytest.mark.parametrize(
    ("shape", "rules", "ok"),
    [
        ((3,), ArrayConstraints("float"), True),
        ((3, 1), ArrayConstraints("float"), False),
        ((), ArrayConstraints("float"), False),
        ((2, 2), ArrayConstraints("float", ndim=2), True),
        ((4,), ArrayConstraints("float", ndim=2), False),
        ((2, 2), ArrayConstraints("float", ndim=2, max_ndim=3), True),
        ((2, 2, 2), ArrayConstraints("float", ndim=2, max_ndim=3), True),
        ((2, 2, 2, 2), ArrayConstraints("float", ndim=2, max_ndim=3), False),
        ((2,), ArrayConstraints("float", ndim=2, max_ndim=3), False),
        ((0,), ArrayConstraints("float"), False),
        ((0,), ArrayConstraints("float", min_size=0), True),
        ((4,), ArrayConstraints("float", min_size=4), True),
        ((3,), ArrayConstraints("float", min_size=4), False),
        ((2, 2), ArrayConstraints("float", ndim=2, min_size=4), True),
        ((2, 1), ArrayConstraints("float", ndim=2, min_size=3), False),
    ],
)
def test_dimensions_and_size_are_checked_against_the_rules(
    shape: tuple[int, ...], rules: ArrayConstraints, ok: bool
) -> None:
    if ok:
        arrays._check_shape(np.dtype("<f8"), shape, rules, LOC)
    else:
        with pytest.raises(InvalidInput) as err:
            arrays._check_shape(np.dtype("<f8"), shape, rules, LOC)
        assert err.value.loc == LOC


def test_the_dimension_error_names_the_accepted_range() -> None:
    with pytest.raises(InvalidInput, match=r"expected a 2- to 3-dimensional array, got shape \[4\]"):
        arrays._check_shape(np.dtype("<f8"), (4,), ArrayConstraints("float", ndim=2, max_ndim=3), LOC)
    with pytest.raises(InvalidInput, match=r"expected a 1-dimensional array, got shape \[1, 2\]"):
        arrays._check_shape(np.dtype("<f8"), (1, 2), ArrayConstraints("float"), LOC)


@pytest.mark.parametrize(
    ("kind", "accepted"),
    [("float", {"f8", "f4", "i8", "u1", "i2"}), ("int", {"i8", "u1", "i2"}), ("bool", {"b1"})],
)
def test_the_element_kind_is_checked(kind: str, accepted: set[str]) -> None:
    rules = ArrayConstraints(kind)  # type: ignore[arg-type]
    for code in ("f8", "f4", "i8", "u1", "i2", "b1", "c16", "U3", "M8[s]"):
        dtype = np.dtype(code)
        if code in accepted:
            arrays._check_shape(dtype, (2,), rules, LOC)
        else:
            with pytest.raises(InvalidInput, match="expected a") as err:
                arrays._check_shape(dtype, (2,), rules, LOC)
            assert err.value.loc == LOC


def test_a_referenced_array_is_converted_to_the_fields_dtype_and_read_only() -> None:
    raw = np.array([1, 0, 3], dtype=np.uint8)
    floats = arrays._check(raw, ArrayConstraints("float"), LOC)
    assert floats.dtype == np.float64 and floats.tolist() == [1.0, 0.0, 3.0] and not floats.flags.writeable
    ints = arrays._check(raw, ArrayConstraints("int"), LOC)
    assert ints.dtype == np.int64 and ints.tolist() == [1, 0, 3] and not ints.flags.writeable
    flags = np.array([True, False])
    kept = arrays._check(flags, ArrayConstraints("bool"), LOC)
    assert kept is flags and kept.dtype == np.bool_ and not kept.flags.writeable
    same = np.array([0.5, 1.5])
    assert arrays._check(same, ArrayConstraints("float"), LOC) is same  # already float64: no copy
    assert arrays._target(ArrayConstraints("bool")) is None
    assert arrays._target(ArrayConstraints("int")) == np.dtype(np.int64)
    assert arrays._target(ArrayConstraints("float")) == np.dtype(np.float64)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_float_array_with_a_non_finite_value_is_refused(bad: float) -> None:
    with pytest.raises(InvalidInput, match="NaN or infinite") as err:
        arrays._check(np.array([0.0, bad, 1.0]), ArrayConstraints("float"), LOC)
    assert err.value.loc == LOC
    arrays._check(np.array([0.0, 1.0]), ArrayConstraints("float"), LOC)


@pytest.mark.parametrize(
    ("values", "ok"),
    [
        ([-1.0, 2.0], True),
        ([-1.0000001, 0.0], False),
        ([0.0, 2.0000001], False),
        ([0.5], True),
    ],
)
def test_element_bounds_hold_inclusively(values: list[float], ok: bool) -> None:
    arr = np.array(values)
    if ok:
        assert arrays._check(arr, FLOATS, LOC).tolist() == values
    else:
        with pytest.raises(InvalidInput, match="array elements must be") as err:
            arrays._check(arr, FLOATS, LOC)
        assert err.value.loc == LOC


def test_integer_bounds_are_checked_after_conversion_and_an_empty_array_passes_every_bound() -> None:
    with pytest.raises(InvalidInput, match="≥ 0"):
        arrays._check(np.array([[1, -1]], dtype=np.int8), INTS, LOC)
    with pytest.raises(InvalidInput, match="≤ 100"):
        arrays._check(np.array([[101, 3]], dtype=np.uint8), INTS, LOC)
    assert arrays._check(np.array([[0, 100]], dtype=np.uint8), INTS, LOC).tolist() == [[0, 100]]
    empty = arrays._check(np.zeros(0), ArrayConstraints("float", ge=1.0, le=0.0, min_size=0), LOC)
    assert empty.shape == (0,) and not empty.flags.writeable
    only_ge = ArrayConstraints("float", ge=0.0)
    assert arrays._check(np.array([0.0, 1e300]), only_ge, LOC).max() == 1e300
    only_le = ArrayConstraints("float", le=0.0)
    assert arrays._check(np.array([-1e300, 0.0]), only_le, LOC).min() == -1e300
    with pytest.raises(InvalidInput, match="≥ 0"):
        arrays._check(np.array([-0.5]), only_ge, LOC)
    with pytest.raises(InvalidInput, match="≤ 0"):
        arrays._check(np.array([0.5]), only_le, LOC)


def test_a_bool_or_int_array_skips_the_finiteness_check() -> None:
    ints = np.array([1, 2], dtype=np.int64)
    assert arrays._check(ints, ArrayConstraints("int"), LOC).tolist() == [1, 2]
    flags = np.array([[True], [False]])
    assert arrays._check(flags, ArrayConstraints("bool", ndim=2), LOC).tolist() == [[True], [False]]


# --- loading and resolving ------------------------------------------------------------------------------------


def test_load_array_reads_the_stored_values_for_those_who_may_use_them(services: Services) -> None:
    alice = principal(services, "estimators:run")
    values = np.arange(6, dtype=">i2").reshape(3, 2)  # big-endian: the stored dtype string is kept
    ref = store(services, values, alice)
    for key_id in (alice.key_id, arrays.STORED):
        loaded = arrays.load_array(services.engines, ArrayRef(array=ref), key_id, LOC)
        assert loaded.dtype == np.dtype(">i2") and loaded.shape == (3, 2) and loaded.tolist() == values.tolist()
    for key_id in (None, "someone-else"):
        with pytest.raises(InvalidInput, match="no uploaded array") as err:
            arrays.load_array(services.engines, ArrayRef(array=ref), key_id, LOC)
        assert err.value.loc == LOC
    unknown = ArrayRef(array="sha256:" + "a" * 64)
    with pytest.raises(InvalidInput, match="no uploaded array") as err:
        arrays.load_array(services.engines, unknown, arrays.STORED, LOC)
    assert err.value.loc == LOC


def test_references_are_resolved_in_fields_nested_models_dicts_and_lists_with_their_locations(
    services: Services,
) -> None:
    a = store(services, np.array([-1, 0, 2], dtype=np.int16))
    m = store(services, np.array([[1, 2], [3, 4]], dtype=np.uint8))
    flags = store(services, np.array([True, False, True]))
    v = store(services, np.array([0.25, 1.0]))
    nums = [1.0, 2.0]
    params = Params(
        a=ArrayRef(array=a),
        m=ArrayRef(array=m),
        flags=ArrayRef(array=flags),
        plain=ArrayRef(array=v),
        inner=Inner(v=ArrayRef(array=v)),
        named={"p": ArrayRef(array=a), "q": ArrayRef(array=v)},
        many=[ArrayRef(array=v), ArrayRef(array=a)],
        nums=nums,
        models=[Inner(v=[0.5]), Inner(v=ArrayRef(array=v))],
        n=3,
    )
    out = arrays.resolve(services.engines, params, None, ("body",))
    assert isinstance(out, Params) and out is not params
    assert out.a.dtype == np.float64 and out.a.tolist() == [-1.0, 0.0, 2.0]
    assert out.m.dtype == np.int64 and out.m.tolist() == [[1, 2], [3, 4]]
    assert out.flags.dtype == np.bool_ and out.flags.tolist() == [True, False, True]
    assert out.plain.dtype == np.float64 and out.plain.tolist() == [0.25, 1.0]
    assert out.inner.v.tolist() == [0.25, 1.0]
    assert {k: x.tolist() for k, x in out.named.items()} == {"p": [-1.0, 0.0, 2.0], "q": [0.25, 1.0]}
    assert [x.tolist() for x in out.many] == [[0.25, 1.0], [-1.0, 0.0, 2.0]]
    assert out.nums is params.nums and out.n == 3
    assert out.models[0] is params.models[0] and out.models[1].v.tolist() == [0.25, 1.0]
    assert isinstance(params.a, ArrayRef)  # the original keeps its references (the cache key)


def test_params_without_references_come_back_as_the_same_objects(services: Services) -> None:
    nums = [1.0, 2.0]
    inner = Inner(v=[0.5])
    named: dict[str, ArrayRef] = {}
    params = Params(a=[0.0, 1.0], inner=inner, nums=nums, models=[inner], named=named, many=[])
    assert arrays.resolve(services.engines, params, None) is params
    assert arrays._resolve_value(None, {"k": 1.5, "j": [1]}, FLOATS, LOC) == {"k": 1.5, "j": [1]}  # type: ignore[arg-type]
    d: dict[str, Any] = {"k": [1.0]}
    assert arrays._resolve_value(None, d, FLOATS, LOC) is d  # type: ignore[arg-type]
    listed: list[Any] = [{"k": 1}, {"j": 2}]
    assert arrays._resolve_value(None, listed, FLOATS, LOC) is listed  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value", "loc"),
    [
        ("a", lambda g, r: ArrayRef(array=r), ("body", "a")),
        ("inner", lambda g, r: Inner(v=ArrayRef(array=r)), ("body", "inner", "v")),
        ("named", lambda g, r: {"ok": ArrayRef(array=g), "bad": ArrayRef(array=r)}, ("body", "named", "bad")),
        ("many", lambda g, r: [ArrayRef(array=g), ArrayRef(array=r)], ("body", "many", 1)),
        ("models", lambda g, r: [Inner(v=[0.5]), Inner(v=ArrayRef(array=r))], ("body", "models", 1, "v")),
    ],
)
def test_a_reference_that_breaks_its_rules_is_refused_at_its_location(
    services: Services, field: str, value: Any, loc: tuple[str | int, ...]
) -> None:
    good = store(services, np.array([0.5]))
    bad = store(services, np.array([0.5, np.nan]))  # refused under every field's rules
    with pytest.raises(InvalidInput, match="NaN") as err:
        arrays.resolve(services.engines, Params(**{"a": [0.0], field: value(good, bad)}), None, ("body",))
    assert err.value.loc == loc
    unknown = Params(**{"a": [0.0], field: value(good, "sha256:" + "e" * 64)})
    for shapes_only in (False, True):
        with pytest.raises(InvalidInput, match="no uploaded array") as err:
            arrays.resolve(services.engines, unknown, None, ("body",), shapes_only=shapes_only)
        assert err.value.loc == loc


def test_shapes_only_gives_zero_stand_ins_of_the_stored_shape_and_target_dtype(services: Services) -> None:
    alice = principal(services, "estimators:run")
    a = store(services, np.array([7, 8, 9, 10], dtype=np.int8), alice)
    m = store(services, np.array([[1, 2, 3]], dtype=np.uint16), alice)
    flags = store(services, np.array([True, False]), alice)
    params = Params(a=ArrayRef(array=a), m=ArrayRef(array=m), flags=ArrayRef(array=flags))
    with pytest.raises(InvalidInput, match="no uploaded array"):
        arrays.resolve(services.engines, params, None, ("body",), shapes_only=True)
    with pytest.raises(InvalidInput, match="no uploaded array"):
        arrays.resolve(services.engines, params, "another-key", ("body",), shapes_only=True)
    for key_id in (alice.key_id, arrays.STORED):
        out = arrays.resolve(services.engines, params, key_id, ("body",), shapes_only=True)
        assert out.a.shape == (4,) and out.a.dtype == np.float64 and out.a.strides == (0,)
        assert not out.a.any() and not out.a.flags.writeable
        assert out.m.shape == (1, 3) and out.m.dtype == np.int64 and not out.m.any()
        assert out.flags.shape == (2,) and out.flags.dtype == np.bool_  # no target: the stored dtype
    two_d = Params(a=ArrayRef(array=m))  # a 2-D upload where a 1-D array is expected: refused from the metadata
    with pytest.raises(InvalidInput, match="1-dimensional") as err:
        arrays.resolve(services.engines, two_d, alice.key_id, ("body",), shapes_only=True)
    assert err.value.loc == ("body", "a")
    big = Params(a=ArrayRef(array=store(services, np.array([1e9]), alice)))  # values are not read
    assert arrays.resolve(services.engines, big, alice.key_id, shapes_only=True).a.tolist() == [0.0]


def test_a_keyed_reference_resolves_for_the_key_granted_it_and_for_stored_content(services: Services) -> None:
    alice = principal(services, "estimators:run")
    ref = store(services, np.array([0.5, 1.5]), alice)
    params = Params(a=ArrayRef(array=ref))
    for key_id in (alice.key_id, arrays.STORED):
        assert arrays.resolve(services.engines, params, key_id).a.tolist() == [0.5, 1.5]
    for key_id in (None, "stored"):
        with pytest.raises(InvalidInput, match="no uploaded array") as err:
            arrays.resolve(services.engines, params, key_id, ("body",))
        assert err.value.loc == ("body", "a")


def test_which_models_may_hold_references() -> None:
    assert arrays.may_hold_refs(Params) is True
    assert arrays.may_hold_refs(Inner) is True
    assert arrays.may_hold_refs(NoRefs) is False

    class Wrapper(StrictModel):
        deep: dict[str, list[Inner]] = Field(default_factory=dict, description="deep")

    class Wrapped(StrictModel):
        deep: dict[str, list[NoRefs]] = Field(default_factory=dict, description="deep")

    assert arrays.may_hold_refs(Wrapper) is True
    assert arrays.may_hold_refs(Wrapped) is False
    assert arrays._annotation_holds_refs(ArrayRef) is True
    assert arrays._annotation_holds_refs(int | None) is False
    assert arrays._annotation_holds_refs(list[ArrayRef] | None) is True


def test_resolve_items_resolves_each_item_at_its_index_and_leaves_plain_items_alone(services: Services) -> None:
    ref = store(services, np.array([0.0, 1.0]))
    bad = store(services, np.array([2.0]))
    items = [Inner(v=[0.5]), Inner(v=ArrayRef(array=ref)), Inner(v=ArrayRef(array=ref))]
    out = arrays.resolve_items(services.engines, items, None, ("predictions", "items"))
    assert out[0] is items[0] and out[1].v.tolist() == [0.0, 1.0] and out[2].v is out[1].v
    with pytest.raises(InvalidInput, match="≤ 1") as err:
        arrays.resolve_items(services.engines, [*items, Inner(v=ArrayRef(array=bad))], None, ("predictions",))
    assert err.value.loc == ("predictions", 3, "v")
    shaped = arrays.resolve_items(services.engines, items, None, (), shapes_only=True)
    assert shaped[1].v.strides == (0,) and shaped[1].v.shape == (2,) and not shaped[1].v.any()
    plain = [NoRefs(n=1), NoRefs(n=2)]
    kept = arrays.resolve_items(services.engines, plain, None, ())
    assert kept == plain and kept is not plain and all(a is b for a, b in zip(kept, plain, strict=True))
    assert arrays.resolve_items(services.engines, [], None, ()) == []
    (single,) = arrays.resolve_items(services.engines, [Inner(v=ArrayRef(array=ref))], None, ())
    assert single.v.tolist() == [0.0, 1.0]


def test_a_wrong_shape_or_kind_found_on_loading_is_refused_at_the_references_location(services: Services) -> None:
    two_d = store(services, np.array([[1.0, 2.0]]))
    with pytest.raises(InvalidInput, match="1-dimensional") as err:
        arrays.resolve(services.engines, Params(a=ArrayRef(array=two_d)), None, ("body",))
    assert err.value.loc == ("body", "a")
    text = store(services, np.array(["x"]))
    with pytest.raises(InvalidInput, match="expected a") as err:
        arrays._check(np.array(["x"]), ArrayConstraints("float"), LOC)
    assert err.value.loc == LOC
    with pytest.raises(InvalidInput, match="expected a") as err:
        arrays.resolve(services.engines, Params(a=[0.0], inner=Inner(v=ArrayRef(array=text))), None, ("body",))
    assert err.value.loc == ("body", "inner", "v")


def test_resolve_items_reads_a_keyed_upload_for_the_key_granted_it(services: Services) -> None:
    alice = principal(services, "estimators:run")
    ref = store(services, np.array([0.25]), alice)
    (item,) = arrays.resolve_items(services.engines, [Inner(v=ArrayRef(array=ref))], alice.key_id, ("items",))
    assert item.v.tolist() == [0.25]
    with pytest.raises(InvalidInput, match="no uploaded array") as err:
        arrays.resolve_items(services.engines, [Inner(v=ArrayRef(array=ref))], None, ("items",))
    assert err.value.loc == ("items", 0, "v")
