"""The registry, the strict base models, the domain errors and figure labels: checks written for the survivors of
the second wave's mutation run (docs/testing.md). Every model and spec is built inside its test, so the code under
test runs during the test (mutmut attributes nothing that runs at import)."""

from typing import Annotated, get_args

import pydantic
import pytest
from pydantic import Field

from service.errors import Cancelled, Degenerate, DomainError, InvalidInput, TooExpensive
from service.plot_text import MAX_LABEL, plain_label
from service.registry import (
    ESTIMATORS,
    PAIRED_TESTS,
    SCORERS,
    Convention,
    ConventionOption,
    EstimatorSpec,
    MetricInfo,
    ScorerSpec,
    Upstream,
    no_progress,
    register,
)
from service.types import (
    MAX_JSON_ARRAY,
    ArrayConstraints,
    ArrayRef,
    ResultModel,
    StrictModel,
    _integral,
    _integral_items,
    array_param,
)

# ---------------------------------------------------------------- registry


class _Params(StrictModel):
    mode: str = "a"
    setting: str = "x"


class _Item(StrictModel):
    item_id: str


def _metric() -> MetricInfo:
    return MetricInfo(higher_is_better=True, range=(0.0, 1.0), description="share")


def scorer(**kw: object) -> ScorerSpec:
    """A scorer spec with two metrics (``acc`` primary, ``f1``); ``kw`` overrides any field."""
    fields: dict[str, object] = {
        "name": "test.scorer",
        "version": "1",
        "summary": "s",
        "paper": "p",
        "citation": "c",
        "answer_key_item_model": _Item,
        "prediction_item_model": _Item,
        "params_model": _Params,
        "metrics": {"acc": _metric(), "f1": _metric()},
        "primary_metric": "acc",
        "score": lambda key, pred, params: {},
        "cost": lambda key, pred, params: 1.0,
        "cost_unit": "items",
        "sync_budget": 10.0,
        "hard_cap": 100.0,
    }
    return ScorerSpec(**(fields | kw))


def test_paired_tests_default_to_the_bootstrap_of_the_primary_metric() -> None:
    assert scorer().paired_tests == {"acc": "bootstrap"}
    assert scorer(primary_metric="f1").paired_tests == {"f1": "bootstrap"}
    declared = {"acc": "mcnemar", "f1": "wilcoxon"}
    assert scorer(paired_tests=declared).paired_tests == declared  # a declaration is kept as it is
    assert PAIRED_TESTS == ("mcnemar", "wilcoxon", "bootstrap")
    assert scorer().kind == "scorer"


@pytest.mark.parametrize(
    "paired",
    [
        {"f1": "bootstrap"},  # the primary metric is missing
        {"acc": "bootstrap", "recall": "bootstrap"},  # not a metric
        {"acc": "t-test"},  # not a paired test
        {"acc": "bootstrap", "f1": "anova"},
    ],
)
def test_paired_tests_must_name_known_metrics_and_tests(paired: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        scorer(paired_tests=paired)


def test_every_paired_test_is_accepted_on_every_metric() -> None:
    for test in PAIRED_TESTS:
        assert scorer(paired_tests={"acc": test, "f1": test}).paired_tests == {"acc": test, "f1": test}


def test_metadata_params_must_be_params_fields() -> None:
    assert scorer(metadata_params=("setting", "mode")).metadata_params == ("setting", "mode")
    with pytest.raises(ValueError):
        scorer(metadata_params=("setting", "colour"))


def _convention(param: str, default: str) -> Convention:
    up = (Upstream("ref", "1.0"),)
    return Convention(param, default, (ConventionOption("a", up), ConventionOption("b", up)))


def test_conventions_name_a_params_field_and_default_to_one_of_their_options() -> None:
    ok = (_convention("mode", "a"), _convention("setting", "b"))
    assert scorer(conventions=ok).conventions == ok
    with pytest.raises(ValueError):
        scorer(conventions=(_convention("mode", "a"), _convention("colour", "a")))
    with pytest.raises(ValueError):
        scorer(conventions=(_convention("mode", "a"), _convention("setting", "c")))


def _estimator(name: str) -> EstimatorSpec:
    return EstimatorSpec(
        name=name,
        version="1",
        family="test",
        summary="s",
        paper="p",
        citation="c",
        params_model=_Params,
        result_model=ResultModel,
        fn=lambda params, progress: ResultModel(),
        cost=lambda params: 1.0,
        cost_unit="u",
        sync_budget=1.0,
        hard_cap=2.0,
    )


def test_register_files_each_kind_in_its_own_table_and_refuses_a_second_name(monkeypatch) -> None:
    monkeypatch.setattr("service.registry.ESTIMATORS", estimators := {})
    monkeypatch.setattr("service.registry.SCORERS", scorers := {})
    est, sc = _estimator("test.same"), scorer(name="test.same")
    assert est.kind == "estimator"
    assert register(est) is est and register(sc) is sc  # one name may be an estimator and a scorer
    assert estimators == {"test.same": est} and scorers == {"test.same": sc}
    with pytest.raises(ValueError):
        register(_estimator("test.same"))
    with pytest.raises(ValueError):
        register(scorer(name="test.same"))
    assert estimators == {"test.same": est} and scorers == {"test.same": sc}  # the first registration stays
    assert "test.same" not in ESTIMATORS and "test.same" not in SCORERS


def test_no_progress_accepts_both_call_forms() -> None:
    assert no_progress(0.5) is None and no_progress(1.0, "done") is None


# ---------------------------------------------------------------- errors


def test_domain_errors_carry_message_location_and_type() -> None:
    err = InvalidInput("bad r", loc=["params", "r", 0])
    assert (err.msg, str(err), err.loc, err.type) == ("bad r", "bad r", ("params", "r", 0), "invalid_input")
    assert DomainError("x").loc == () and DomainError.type == "domain_error"
    assert Degenerate("nan", loc=("n",)).type == "degenerate"
    cap = TooExpensive("too much", cost=5.0, cap=2.0, loc=("reps",))
    assert (cap.msg, cap.cost, cap.cap, cap.loc, cap.type) == ("too much", 5.0, 2.0, ("reps",), "cost_cap")
    assert TooExpensive("t", 1.0, 0.5).loc == ()
    assert isinstance(cap, DomainError) and not issubclass(Cancelled, DomainError)


# ---------------------------------------------------------------- figure labels


def test_plain_label_is_one_line_of_at_most_the_limit() -> None:
    assert MAX_LABEL == 60
    assert plain_label("model\nv2\r\nfinal") == "model v2 final"
    exact = "m" * 60
    assert plain_label(exact) == exact
    long = "abcdefghij" * 7  # 70 characters: 59 kept, then "…"
    assert plain_label(long) == long[:59] + "…" and len(plain_label(long)) == 60
    assert plain_label("abcdef", 4) == "abc…" and plain_label("abcd", 4) == "abcd"


# ---------------------------------------------------------------- integral numbers


def test_integral_turns_whole_floats_below_2_to_the_63_into_ints() -> None:
    for value, expected in [(4032.0, 4032), (-7.0, -7), (0.0, 0), (2.0**63 - 1024, 2**63 - 1024)]:
        out = _integral(value)
        assert type(out) is int and out == expected
    for value in [2.5, 2.0**63, -(2.0**63), 1e300, True, "3", 3]:
        out = _integral(value)
        assert out is value


def test_integral_items_converts_a_list_only_when_it_holds_a_float() -> None:
    ints = [1, 2, 3]
    assert _integral_items(ints) is ints
    out = _integral_items([1.0, 2, 2.5])
    assert out == [1, 2, 2.5] and [type(v) for v in out] == [int, int, float]
    floats = (1.0, 2.0)
    assert _integral_items(floats) is floats  # only lists: a tuple is left to the schema


def test_strict_models_accept_integral_numbers_for_integers_only() -> None:
    class Inner(StrictModel):
        k: int

    class Model(StrictModel):
        n: int
        ns: list[int] = Field(default_factory=list)
        maybe: int | None = None
        x: float = 0.0
        xs: list[float | int] = Field(default_factory=list)
        raw: list = Field(default_factory=list)  # a list of any items
        inner: Inner | None = None

    m = Model.model_validate(
        {"n": 4032.0, "ns": [1.0, 2], "maybe": 3.0, "x": 2.0, "xs": [1.0, 2], "raw": [1.0], "inner": {"k": 5.0}}
    )
    assert (m.n, m.ns, m.maybe, m.inner.k) == (4032, [1, 2], 3, 5)
    assert [type(v) for v in (m.n, *m.ns, m.maybe, m.inner.k)] == [int] * 5
    assert type(m.x) is float
    assert [type(v) for v in m.xs] == [float, int] and type(m.raw[0]) is float  # only integer fields take 1.0 as 1
    for bad in [{"n": 2.5}, {"n": "3"}, {"n": True}, {"n": 1, "ns": [1.5]}, {"n": 1, "x": "1"}, {"n": 1, "y": 0}]:
        with pytest.raises(pydantic.ValidationError):
            Model.model_validate(bad)
    with pytest.raises(pydantic.ValidationError):
        Model.model_validate({"n": 1, "x": float("inf")})


def test_integral_conversion_wraps_each_integer_schema_once() -> None:
    """A model reusing another StrictModel walks the inner schema again: it is not wrapped a second time."""

    class Inner(StrictModel):
        k: int

    class Outer(StrictModel):
        inner: Inner
        ks: list[int]

    def wrappers(schema: object) -> list[object]:
        if isinstance(schema, list):
            return [f for s in schema for f in wrappers(s)]
        if not isinstance(schema, dict):
            return []
        own = [schema["function"]["function"]] if schema.get("type") == "function-before" else []
        return own + [f for v in schema.values() for f in wrappers(v)]

    assert wrappers(Inner.__pydantic_core_schema__) == [_integral]
    # inner.k, then the list as a whole (one pass over its item types, its items not wrapped again)
    assert wrappers(Outer.__pydantic_core_schema__) == [_integral, _integral_items]
    assert Outer.model_validate({"inner": {"k": 2.0}, "ks": [3.0]}).model_dump() == {"inner": {"k": 2}, "ks": [3]}


def test_result_models_forbid_extra_fields_and_non_finite_floats() -> None:
    class Result(ResultModel):
        v: float

    with pytest.raises(pydantic.ValidationError):
        Result(v=float("nan"))
    with pytest.raises(pydantic.ValidationError):
        Result(v=1.0, w=2.0)


def test_array_param_is_a_bounded_list_or_a_reference_with_its_constraints() -> None:
    typ = array_param(Annotated[float, Field(ge=0, le=1)], "float", ndim=1, ge=0, le=1, min_length=2, max_length=3)
    listed, constraints = get_args(typ)[0], get_args(typ)[1]
    assert constraints == ArrayConstraints("float", 1, 0, 1, 2)
    assert constraints.max_ndim is None

    class Model(StrictModel):
        a: typ

    assert Model.model_validate({"a": [0.5, 1.0]}).a == [0.5, 1.0]
    ref = "sha256:" + "ab" * 32
    assert Model.model_validate({"a": {"array": ref}}).a == ArrayRef(array=ref)
    for bad in [[0.5], [0.1, 0.2, 0.3, 0.4], [0.5, 2.0], {"array": "sha256:xyz"}]:
        with pytest.raises(pydantic.ValidationError):
            Model.model_validate({"a": bad})
    assert listed is not None


def test_array_param_defaults_one_to_max_json_array_elements() -> None:
    assert get_args(array_param(float, "float"))[1] == ArrayConstraints("float", 1, None, None, 1)
    typ = array_param(int, "int", ndim=2)
    assert get_args(typ)[1] == ArrayConstraints("int", 2, None, None, 1)
    assert MAX_JSON_ARRAY == 100_000

    class Model(StrictModel):
        a: typ

    assert len(Model.model_validate({"a": [0] * MAX_JSON_ARRAY}).a) == MAX_JSON_ARRAY
    for bad in [[], [0] * (MAX_JSON_ARRAY + 1)]:
        with pytest.raises(pydantic.ValidationError):
            Model.model_validate({"a": bad})
