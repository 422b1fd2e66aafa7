"""usecases/scoring.py called directly: JSON of scores (numpy values, sorted compact text, non-finite refused), item
validation errors (their ``loc``, at most 50), duplicate ids, the canonical answer key and its hash, the scorer's
summary checked, scoring in item_id order, the split of a key (only public, only private, both) with the scorer
error's index moved back to the submitted list, and the metric with per-item values."""

import dataclasses
import hashlib
import json
import warnings
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel, Field

from service.errors import Degenerate, InvalidInput
from service.registry import SCORERS, load_all
from service.scoring import film_mcq
from service.scoring._common import ItemColumns, ItemValues
from service.types import StrictModel
from tests.factories import film_key_items, film_predictions
from usecases import scoring
from usecases.errors import InvalidFields
from usecases.scoring import (
    PRIVATE_KEY_ITEM,
    MetricValue,
    _answered,
    _id_order,
    _item_values,
    _json_default,
    _located,
    _score,
    _subset,
    canonical_key,
    check_unique,
    dump_columns,
    dump_items,
    dumps,
    item_columns,
    item_metric,
    key_columns,
    score_all,
    score_by_split,
    validate_columns,
    validate_items,
)

KEY = film_mcq.AnswerKeyItem
PRED = film_mcq.PredictionItem


@pytest.fixture(scope="module")
def spec() -> Any:
    load_all()
    return SCORERS["film_mcq"]


def _keys(items: list[dict]) -> list[Any]:
    return validate_items(KEY, items, ("answer_key", "items"))


def _preds(items: list[dict]) -> list[Any]:
    return validate_items(PRED, items, ("predictions", "items"))


def _fake(spec: Any, result: dict[str, Any], seen: list | None = None) -> Any:
    """film_mcq's spec whose ``score`` returns ``result`` (and records the item ids it was given)."""

    def score(key: list[Any], preds: list[Any], params: Any) -> dict[str, Any]:
        if seen is not None:
            seen.append(([k.item_id for k in key], [p.item_id for p in preds]))
        return result

    return dataclasses.replace(spec, score=score)


SUMMARY = {"scores": {"accuracy": {"value": 0.5}}, "breakdown": {"x": 1}, "coverage": 1.0, "reconstructed": []}


# -- JSON ----------------------------------------------------------------------------------------------------------


def test_numpy_values_and_models_are_written_as_plain_json() -> None:
    value = {
        "b": np.int64(3),
        "a": np.array([[1.5, 2.0]]),
        "c": np.float32(0.5),
        "m": MetricValue(value=1.0, n=2),
        "i": np.arange(2, dtype=np.int32),
    }
    assert dumps(value) == (
        '{"a":[[1.5,2.0]],"b":3,"c":0.5,"i":[0,1],"m":{"ci_high":null,"ci_low":null,"n":2,"value":1.0}}'
    )
    assert type(_json_default(np.int16(7))) is int and _json_default(np.int16(7)) == 7
    assert type(_json_default(np.float16(0.25))) is float and _json_default(np.float16(0.25)) == 0.25
    assert _json_default(np.array([1, 2])) == [1, 2]
    assert _json_default(MetricValue(value=2.0, ci_low=1.0)) == {
        "value": 2.0,
        "ci_low": 1.0,
        "ci_high": None,
        "n": None,
    }
    with pytest.raises(TypeError, match="not JSON-serialisable: set"):
        _json_default({1})
    with pytest.raises(TypeError):
        dumps({"x": object()})


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), np.float64(-np.inf), np.array([1.0, np.nan])])
def test_a_non_finite_score_is_degenerate(bad: Any) -> None:
    with pytest.raises(Degenerate) as refused:
        dumps({"value": bad})
    assert refused.value.loc == ()


# -- items -----------------------------------------------------------------------------------------------------------


def test_item_validation_errors_name_each_item_and_field_from_the_body() -> None:
    raw = [{"item_id": "a", "choice_idx": 1}, {"item_id": "b"}, {"item_id": "c", "choice_idx": "x", "z": 1}]
    with pytest.raises(InvalidFields) as refused:
        validate_items(PRED, raw, ("predictions", "items"))
    assert refused.value.detail == "items failed validation"
    got = [(e["loc"], e["type"]) for e in refused.value.errors]
    assert got == [
        (["body", "predictions", "items", 1, "choice_idx"], "missing"),
        (["body", "predictions", "items", 2, "choice_idx"], "int_type"),
        (["body", "predictions", "items", 2, "z"], "extra_forbidden"),
    ]
    assert refused.value.errors[0]["msg"] == "Field required"
    many = [{"item_id": f"q{i}"} for i in range(60)]
    with pytest.raises(InvalidFields) as capped:
        validate_items(PRED, many, ("x",))
    assert [e["loc"] for e in capped.value.errors] == [["body", "x", i, "choice_idx"] for i in range(50)]


def test_a_repeated_item_id_is_named_at_its_second_occurrence() -> None:
    items = _preds([{"item_id": i, "choice_idx": 0} for i in ("a", "b", "c", "b", "a")])
    with pytest.raises(InvalidInput) as refused:
        check_unique(items, ("answer_key", "items"))
    assert refused.value.loc == ("answer_key", "items", 3, "item_id")
    assert check_unique(items[:3], ("answer_key", "items")) is None
    assert check_unique([], ("x",)) is None


def test_the_canonical_key_is_sorted_compact_json_and_its_sha256() -> None:
    items = _keys(
        [
            {"item_id": "b", "num_options": 3, "answer_idx": 2, "film_id": "f"},
            {"item_id": "a", "num_options": 4, "answer_idx": 0, "film_id": "g", "split": "private"},
        ]
    )
    text, sha = canonical_key(items)
    dumped = [i.model_dump(mode="json") for i in reversed(items)]  # a before b
    assert text == json.dumps(dumped, sort_keys=True, separators=(",", ":"))
    assert text.startswith('[{"answer_idx":0,') and ", " not in text and '": ' not in text
    assert sha == hashlib.sha256(text.encode()).hexdigest()
    assert canonical_key(list(reversed(items))) == (text, sha)


# -- scoring ----------------------------------------------------------------------------------------------------------


def test_the_scorers_summary_is_checked_and_given_as_json(spec: Any) -> None:
    key = _keys(film_key_items(3, 0))
    result = {
        **SUMMARY,
        "scores": {"accuracy": {"value": np.float64(0.5), "n": np.int64(3)}},
        "extra": "ignored",
        "item_scores": [{"item_id": "q1", "value": 1.0}],
    }
    summary, values = _score(_fake(spec, result), key, [], None)
    assert summary == {
        "scores": {"accuracy": {"value": 0.5, "ci_low": None, "ci_high": None, "n": 3}},
        "breakdown": {"x": 1},
        "coverage": 1.0,
        "reconstructed": [],
    }
    assert values["accuracy"].tolist() == pytest.approx([np.nan, 1.0, np.nan], nan_ok=True)
    assert _score(_fake(spec, result), key, [], None, ["q1"])[1]["accuracy"].tolist() == [1.0]
    for broken in (
        {**SUMMARY, "coverage": "all"},
        {**SUMMARY, "scores": {"accuracy": {"value": 0.5, "extra": 1}}},
        {k: v for k, v in SUMMARY.items() if k != "breakdown"},
    ):
        with pytest.raises(Degenerate) as refused:
            _score(_fake(spec, broken), key, [], None)
        assert refused.value.loc == ()
    with pytest.raises(Degenerate):
        _score(_fake(spec, {**SUMMARY, "coverage": float("nan")}), key, [], None)


def test_stateless_scoring_sees_the_items_in_item_id_order(spec: Any) -> None:
    key = _keys(film_key_items(12, 0))
    preds = _preds(film_predictions(12, 0, 12, 0)["items"])
    seen: list = []
    score_all(_fake(spec, {**SUMMARY, "item_scores": []}, seen), key[::-1], preds[::-1], None)
    assert seen == [(sorted(k.item_id for k in key), sorted(p.item_id for p in preds))]
    out = score_all(spec, key[::-1], preds[5:][::-1], film_mcq.Params())
    assert out["scores"]["accuracy"]["value"] == pytest.approx(7 / 12)
    assert set(out) == {"scores", "breakdown", "coverage", "reconstructed"}


def test_item_values_refuse_unknown_metrics_wrong_lengths_and_non_finite_values(spec: Any) -> None:
    listed = [{"item_id": "a", "value": 1.0}, {"item_id": "b", "value": 0.0}]
    with pytest.raises(RuntimeError, match="malformed item values for 'nope'"):
        _item_values(spec, {"item_scores": listed, "item_metrics": {"nope": [1.0, 1.0]}}, ["a", "b"])
    with pytest.raises(RuntimeError, match="malformed item values for 'coverage'"):
        _item_values(spec, {"item_scores": listed, "item_metrics": {"coverage": [1.0]}}, ["a", "b"])
    with pytest.raises(Degenerate) as refused:
        _item_values(spec, {"item_scores": listed, "item_metrics": {"coverage": [None, float("inf")]}}, ["a", "b"])
    assert refused.value.loc == ("item_metrics", "coverage")
    with pytest.raises(Degenerate) as refused:
        _item_values(spec, {"item_scores": listed, "item_metrics": {"coverage": np.array([1.0, np.nan])}}, ["a", "b"])
    assert refused.value.loc == ("item_metrics", "coverage")
    # item_metrics names the primary metric itself: item_scores does not replace it
    got = _item_values(spec, {"item_scores": listed, "item_metrics": {"accuracy": [None, 0.5]}}, ["a", "b"])
    assert got["accuracy"].tolist() == pytest.approx([np.nan, 0.5], nan_ok=True)
    got = _item_values(spec, {"item_scores": listed, "item_metrics": None}, ["a", "b"])
    assert list(got) == ["accuracy"] and got["accuracy"].tolist() == [1.0, 0.0]
    assert _item_values(spec, {}, ["a"]) == {}


def test_item_values_given_as_arrays_are_aligned_like_lists(spec: Any) -> None:
    raw = {
        "item_scores": ItemValues(["c", "a"], np.array([0.25, 1.0])),
        "item_metrics": {"coverage": np.array([1.0, 0.0])},
    }
    got = _item_values(spec, raw, ["a", "b", "c"])
    assert got["accuracy"].tolist() == pytest.approx([1.0, np.nan, 0.25], nan_ok=True)
    assert got["coverage"].tolist() == pytest.approx([0.0, np.nan, 1.0], nan_ok=True)
    same = _item_values(spec, {"item_scores": ItemValues(["a", "c"], np.array([0.5, 0.75]))}, ["a", "c"])
    assert same["accuracy"].tolist() == [0.5, 0.75]
    with pytest.raises(RuntimeError, match="not in the answer key"):
        _item_values(spec, {"item_scores": ItemValues(["a", "z"], np.array([0.5, 0.75]))}, ["a", "c"])


# -- alignment helpers -------------------------------------------------------------------------------------------


def test_each_prediction_is_placed_at_its_key_item_and_bad_ones_are_named() -> None:
    assert _answered(["a", "b", "c"], ["a", "b", "c"]).tolist() == [0, 1, 2]
    assert _answered(["a", "b", "c"], ["c", "a"]).tolist() == [2, 0]
    with pytest.raises(InvalidInput) as twice:  # a key repeating an id: the same list is not the fast path
        _answered(["a", "b", "a"], ["a", "b", "a"])
    assert twice.value.loc == ("predictions", "items", 2, "item_id")
    assert _answered(["a", "b", "a"], ["b", "a"]).tolist() == [1, 2]  # the last key item with that id
    assert _answered([], []).tolist() == []
    with pytest.raises(InvalidInput) as unknown:  # unknown before duplicate, the first unknown one
        _answered(["a", "b"], ["a", "a", "x", "y"])
    assert (unknown.value.msg, unknown.value.loc) == ("unknown item_id 'x'", ("predictions", "items", 2, "item_id"))
    with pytest.raises(InvalidInput) as dup:  # the first prediction repeating an earlier one
        _answered(["a", "b", "c"], ["c", "b", "a", "b", "c"])
    assert (dup.value.msg, dup.value.loc) == ("duplicate item_id 'b'", ("predictions", "items", 3, "item_id"))


def test_a_subset_is_a_new_list_or_the_same_columns_when_it_is_everything() -> None:
    items = _preds([{"item_id": i, "choice_idx": 0} for i in "abcd"])
    whole = _subset(items, np.arange(4))
    assert whole == items and whole is not items
    assert _subset(items, np.array([2, 0])) == [items[2], items[0]]
    assert _subset(items, np.array([1, 2, 3, 0])) == [items[1], items[2], items[3], items[0]]
    assert _subset(items, np.array([0, 2, 3, 1])) == [items[0], items[2], items[3], items[1]]
    assert _subset([], np.arange(0)) == []
    columns = item_columns(PRED, [{"item_id": i, "choice_idx": 0} for i in "abcd"])
    assert columns is not None
    assert _subset(columns, np.arange(4)) is columns
    part = _subset(columns, np.array([3, 1]))
    assert isinstance(part, ItemColumns) and part.columns["item_id"] == ["d", "b"]
    shifted = _subset(columns, np.array([1, 2, 3, 0]))
    assert isinstance(shifted, ItemColumns) and shifted.columns["item_id"] == ["b", "c", "d", "a"]


def test_the_item_id_order_is_a_stable_sort() -> None:
    assert _id_order(["a", "b", "c"]).tolist() == [0, 1, 2]
    assert _id_order(["c", "a", "b", "a"]).tolist() == [1, 3, 2, 0]
    assert _id_order(["b", "a"]).dtype == np.int64
    assert _id_order([]).tolist() == []


# -- by split -----------------------------------------------------------------------------------------------------


def _splits(spec: Any, key: list, preds: list) -> dict[str, tuple[float, list[str], list[float]]]:
    outcomes, items = score_by_split(spec, key, preds, film_mcq.Params())
    assert [s.split for s in items] == list(outcomes)
    return {
        s.split: (outcomes[s.split]["scores"]["accuracy"]["value"], s.item_ids, s.values["accuracy"].tolist())
        for s in items
    }


def test_each_split_is_scored_on_its_own_items(spec: Any) -> None:
    key = _keys(film_key_items(3, 2))  # q0 q1 q2 public, p0 p1 private (answer 1)
    preds = _preds(
        [{"item_id": "p1", "choice_idx": 1}, {"item_id": "q2", "choice_idx": 2}, {"item_id": "q0", "choice_idx": 3}]
    )
    assert _splits(spec, key[::-1], preds) == {
        "public": (pytest.approx(1 / 3), ["q0", "q1", "q2"], [0.0, 0.0, 1.0]),
        "private": (pytest.approx(1 / 2), ["p0", "p1"], [0.0, 1.0]),
    }
    private = _keys(film_key_items(0, 3))
    assert _splits(spec, private, _preds([{"item_id": "p2", "choice_idx": 1}])) == {
        "private": (pytest.approx(1 / 3), ["p0", "p1", "p2"], [0.0, 0.0, 1.0]),
    }
    public = _keys(film_key_items(2, 0))[::-1]
    assert _splits(spec, public, _preds([{"item_id": "q1", "choice_idx": 1}])) == {
        "public": (pytest.approx(1 / 2), ["q0", "q1"], [0.0, 1.0]),
    }
    columns = item_columns(PRED, [{"item_id": "q1", "choice_idx": 1}])
    assert _splits(spec, public, columns) == {"public": (pytest.approx(1 / 2), ["q0", "q1"], [0.0, 1.0])}


def test_predictions_reach_the_scorer_in_item_id_order_per_split(spec: Any) -> None:
    seen: list = []
    result = {**SUMMARY, "item_scores": []}
    key = _keys(film_key_items(4, 3))
    order = ["p2", "q3", "q0", "p0", "q2"]
    score_by_split(_fake(spec, result, seen), key[::-1], _preds([{"item_id": i, "choice_idx": 0} for i in order]), None)
    assert seen == [(["q0", "q1", "q2", "q3"], ["q0", "q2", "q3"]), (["p0", "p1", "p2"], ["p0", "p2"])]


def test_a_scorer_error_names_the_submitted_item(spec: Any) -> None:
    key = _keys(film_key_items(4, 2))
    wide = [{"item_id": "q3", "choice_idx": 0}, {"item_id": "p1", "choice_idx": 1}, {"item_id": "q1", "choice_idx": 9}]
    with pytest.raises(InvalidInput) as refused:
        score_by_split(spec, key, _preds(wide), film_mcq.Params())
    assert refused.value.loc[:3] == ("predictions", "items", 2)
    assert refused.value.msg.startswith("choice_idx 9 is out of range")


def _err(loc: tuple, kind: type = InvalidInput, msg: str = "bad") -> Any:
    return kind(msg, loc)


KEY_IDS = (["k0", "k1", "k2", "k3"], ["k1", "k3"])
PRED_IDS = (["k3", "k1", "k0"], ["k1", "k3"])


@pytest.mark.parametrize(
    "loc",
    [
        (),
        ("predictions", "items"),
        ("answer_key", "items"),
        ("scorer_params", "items", 0),
        ("predictions", "things", 0),
        ("predictions", "items", "0"),
        ("predictions", "items", True),
        ("predictions", "items", 2),
        ("predictions", "items", -1),
    ],
)
def test_an_error_without_an_item_index_in_the_split_is_left_as_it_is(loc: tuple) -> None:
    exc = _err(loc)
    assert _located(exc, "private", KEY_IDS, PRED_IDS) is exc


def test_the_item_index_moves_to_the_submitted_list_and_private_key_items_are_not_quoted() -> None:
    moved = _located(_err(("predictions", "items", 1, "choice_idx")), "private", KEY_IDS, PRED_IDS)
    assert (type(moved), moved.msg, moved.loc) == (InvalidInput, "bad", ("predictions", "items", 0, "choice_idx"))
    moved = _located(_err(("predictions", "items", 0), Degenerate), "public", KEY_IDS, PRED_IDS)
    assert (type(moved), moved.msg, moved.loc) == (Degenerate, "bad", ("predictions", "items", 1))
    public = _located(_err(("answer_key", "items", 1, "answer_idx")), "public", KEY_IDS, PRED_IDS)
    assert (public.msg, public.loc) == ("bad", ("answer_key", "items", 3, "answer_idx"))
    private = _located(_err(("answer_key", "items", 0)), "private", KEY_IDS, PRED_IDS)
    assert (private.msg, private.loc) == (PRIVATE_KEY_ITEM, ("answer_key", "items", 1))


def test_only_metrics_with_per_item_values_are_offered(spec: Any) -> None:
    assert item_metric(spec, None) == "accuracy"
    assert item_metric(spec, "accuracy") == "accuracy"
    with pytest.raises(InvalidFields) as refused:
        item_metric(spec, "coverage")
    (error,) = refused.value.errors
    assert (error["loc"], error["type"], error["msg"]) == (["query", "metric"], "enum", "one of ['accuracy']")
    two = dataclasses.replace(
        spec, primary_metric="coverage", paired_tests={"coverage": "bootstrap", "accuracy": "mcnemar"}
    )
    assert (item_metric(two, None), item_metric(two, "accuracy")) == ("coverage", "accuracy")


class _Stamped(BaseModel):
    when: datetime
    tags: frozenset[str]


def test_a_model_in_a_score_is_written_in_its_json_form() -> None:
    value = {"m": _Stamped(when=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), tags=frozenset({"a"}))}
    assert dumps(value) == '{"m":{"tags":["a"],"when":"2026-01-02T03:04:05Z"}}'


def test_a_single_item_key_is_scored_with_predictions_as_columns(spec: Any) -> None:
    key = _keys(film_key_items(1, 0))
    columns = item_columns(PRED, [{"item_id": "q0", "choice_idx": 0}])
    assert _splits(spec, key, columns) == {"public": (pytest.approx(1.0), ["q0"], [1.0])}
    private = _keys(film_key_items(0, 1))
    columns = item_columns(PRED, [{"item_id": "p0", "choice_idx": 2}])
    assert _splits(spec, private, columns) == {"private": (pytest.approx(0.0), ["p0"], [0.0])}


def test_predictions_for_an_empty_key_are_unknown_items(spec: Any) -> None:
    columns = item_columns(PRED, [{"item_id": "q0", "choice_idx": 0}])
    for preds in (columns, list(columns)):
        with pytest.raises(InvalidInput) as refused:
            score_by_split(spec, [], preds, film_mcq.Params())
        assert refused.value.loc == ("predictions", "items", 0, "item_id")
    assert score_by_split(spec, [], [], film_mcq.Params()) == ({}, [])


def test_the_columns_of_several_keys_are_kept_at_once(monkeypatch: Any) -> None:
    monkeypatch.setattr(scoring, "_KEY_COLUMNS", OrderedDict())
    x, y, z, w = _keys([{"item_id": i, "num_options": 4, "answer_idx": 0, "film_id": "f"} for i in "xyzw"])
    first, second, third = [x, y, z], [w, y, z], [x, y, w]  # the same length; pairs share two of three items
    a, b, c = key_columns(first), key_columns(second), key_columns(third)
    assert a.columns["item_id"] == ["x", "y", "z"] and b.columns["item_id"] == ["w", "y", "z"]
    assert key_columns(list(first)) is a and key_columns(list(second)) is b and key_columns(list(third)) is c
    assert key_columns([x]) is key_columns([x]) and key_columns([x]).columns["item_id"] == ["x"]


def test_an_answer_key_items_problem_names_it_in_the_stored_key_and_hides_a_private_ones_text(spec: Any) -> None:
    raw = film_key_items(3, 3)  # q0 q1 q2 p0 p1 p2
    raw[4]["answer_idx"] = 7  # p1
    key = _keys(raw[::-1])  # p2 p1 p0 q2 q1 q0: p1 at 1
    preds = _preds([{"item_id": "q0", "choice_idx": 0}])
    with pytest.raises(InvalidInput) as private:
        score_by_split(spec, key, preds, film_mcq.Params())
    assert (private.value.msg, private.value.loc) == (PRIVATE_KEY_ITEM, ("answer_key", "items", 1, "answer_idx"))
    raw[4]["answer_idx"] = 1
    raw[2]["answer_idx"] = 6  # q2, at 3
    with pytest.raises(InvalidInput) as public:
        score_by_split(spec, _keys(raw[::-1]), preds, film_mcq.Params())
    assert public.value.loc == ("answer_key", "items", 3, "answer_idx")
    assert public.value.msg == "answer_idx 6 is out of range for num_options=4"


def test_per_item_values_that_are_not_finite_are_named_by_metric_not_as_the_summary(spec: Any) -> None:
    key = _keys(film_key_items(2, 0))
    listed = [{"item_id": "q0", "value": 1.0}, {"item_id": "q1", "value": 0.0}]
    for bad in (np.array([np.nan, 1.0]), [float("inf"), 1.0]):
        result = {**SUMMARY, "item_scores": listed, "item_metrics": {"coverage": bad}}
        with pytest.raises(Degenerate) as refused:
            _score(_fake(spec, result), key, [], None)
        assert refused.value.loc == ("item_metrics", "coverage")


class _Short(StrictModel):
    item_id: str = Field(max_length=3)


class _Long(StrictModel):
    item_id: str = Field(min_length=3)


class _Free(StrictModel):
    item_id: str


@pytest.mark.parametrize(
    ("model", "good", "bad"),
    [(_Short, ["", "abc"], "abcd"), (_Long, ["abc", "abcdef"], "ab"), (_Free, ["", "a" * 500], None)],
)
def test_string_bounds_are_checked_as_columns_whichever_is_set(model: Any, good: list[str], bad: str | None) -> None:
    assert scoring._column_fields(model) is not None
    columns = item_columns(model, [{"item_id": s} for s in good])
    assert columns is not None and columns.columns == {"item_id": good}
    if bad is not None:
        raw = [{"item_id": good[0]}, {"item_id": bad}]
        assert item_columns(model, raw) is None
        with pytest.raises(InvalidFields) as refused:
            validate_columns(model, raw, ("x",))
        assert refused.value.errors[0]["loc"] == ["body", "x", 1, "item_id"]


def test_validated_items_are_written_without_a_serialiser_warning() -> None:
    items = _preds([{"item_id": "a", "choice_idx": 1}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dump_items(PRED, items) == '[{"item_id":"a","choice_idx":1}]'
    assert dump_columns(ItemColumns(PRED, {"item_id": [], "choice_idx": []})) == "[]"


class _Dated(BaseModel):
    item_id: str
    when: datetime
    weight: float = 1.0


def test_the_canonical_key_writes_each_field_in_its_json_form_and_refuses_nan() -> None:
    text, _ = canonical_key([_Dated(item_id="a", when=datetime(2026, 1, 2, tzinfo=UTC))])
    assert text == '[{"item_id":"a","weight":1.0,"when":"2026-01-02T00:00:00Z"}]'
    with pytest.raises(ValueError):
        canonical_key([_Dated(item_id="a", when=datetime(2026, 1, 2, tzinfo=UTC), weight=float("nan"))])


def test_integer_item_values_are_stored_as_float64(spec: Any) -> None:
    raw = {"item_scores": [{"item_id": "a", "value": 1}, {"item_id": "b", "value": 0}]}
    got = _item_values(spec, raw, ["a", "b"])
    assert got["accuracy"].dtype == np.float64 and got["accuracy"].tolist() == [1.0, 0.0]
    got = _item_values(spec, {**raw, "item_metrics": {"coverage": [1, 0]}}, ["b", "a"])
    assert got["coverage"].dtype == np.float64 and got["coverage"].tolist() == [0.0, 1.0]
