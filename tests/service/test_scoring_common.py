"""The shared scorer helpers of service/scoring/_common.py: item matching, letters, group means, results."""

from types import SimpleNamespace

import numpy as np
import pytest

from service.errors import Degenerate, InvalidInput
from service.scoring._common import (
    BootstrapParams,
    check_bootstrap,
    column,
    finite,
    group_means,
    int_column,
    match_items,
    metric,
    multi_group_means,
    result,
)


def _invalid_loc(fn, *args) -> tuple:
    with pytest.raises(InvalidInput) as err:
        fn(*args)
    return err.value.loc


def _degenerate_loc(fn, *args) -> tuple:
    with pytest.raises(Degenerate) as err:
        fn(*args)
    return err.value.loc


# --- bootstrap budget ---------------------------------------------------------------------------------------------


def test_bootstrap_budget_is_b_times_n_at_most_5e7():
    check_bootstrap(BootstrapParams(n_resamples=10_000), 5_000)  # B·n = 5e7 exactly: accepted
    check_bootstrap(BootstrapParams(n_resamples=0), 10**9)  # bootstrap off: any n
    loc = _invalid_loc(check_bootstrap, BootstrapParams(n_resamples=10_000), 5_001)
    assert loc == ("params", "n_resamples")
    assert _invalid_loc(check_bootstrap, BootstrapParams(n_resamples=1), 50_000_001) == ("params", "n_resamples")


# --- item matching ------------------------------------------------------------------------------------------------


def test_predictions_in_key_order_map_to_positions():
    index = match_items(["a", "b", "c"], ["a", "b", "c"])
    assert index.dtype == np.int64 and index.tolist() == [0, 1, 2]


def test_predictions_in_any_order_or_subset_map_to_their_key_positions():
    assert match_items(["a", "b", "c", "d"], ["d", "b"]).tolist() == [3, 1]
    assert match_items(["a", "b", "c"], ["a", "b"]).tolist() == [0, 1]  # a key-order prefix, not all of it
    assert match_items(["a", "b", "c"], ["c"]).tolist() == [2]
    assert match_items(["a", "b", "c"], []).tolist() == []
    assert match_items(["x"], ["x"]).tolist() == [0]


def test_empty_answer_key_is_rejected():
    assert _invalid_loc(match_items, [], []) == ("answer_key", "items")
    assert _invalid_loc(match_items, [], ["a"]) == ("answer_key", "items")


def test_duplicate_key_ids_name_the_second_occurrence():
    # also when the predictions repeat the key exactly (the key-order shortcut must not hide it)
    assert _invalid_loc(match_items, ["a", "b", "a"], ["a", "b", "a"]) == ("answer_key", "items", 2, "item_id")
    assert _invalid_loc(match_items, ["a", "a"], ["a"]) == ("answer_key", "items", 1, "item_id")
    assert _invalid_loc(match_items, ["x", "b", "c", "b", "c"], []) == ("answer_key", "items", 3, "item_id")


def test_unknown_prediction_id_names_the_first_unknown():
    assert _invalid_loc(match_items, ["a", "b"], ["a", "z", "y"]) == ("predictions", "items", 1, "item_id")
    assert _invalid_loc(match_items, ["a", "b"], ["q"]) == ("predictions", "items", 0, "item_id")
    # same length as the key but a different id in the last place
    assert _invalid_loc(match_items, ["a", "b"], ["a", "c"]) == ("predictions", "items", 1, "item_id")


def test_duplicate_prediction_names_the_earliest_repeated_answer():
    # index [1, 0, 1, 0]: the repeats sit at 2 ("b") and 3 ("a"); the earliest repeat is 2
    assert _invalid_loc(match_items, ["a", "b"], ["b", "a", "b", "a"]) == ("predictions", "items", 2, "item_id")
    assert _invalid_loc(match_items, ["a", "b"], ["a", "a"]) == ("predictions", "items", 1, "item_id")
    assert _invalid_loc(match_items, ["a", "b", "c"], ["b", "b"]) == ("predictions", "items", 1, "item_id")
    # the repeat of the key's first item (index 0) is found too
    assert _invalid_loc(match_items, ["a", "b", "c"], ["c", "a", "b", "a"]) == ("predictions", "items", 3, "item_id")
    # long answers repeated many times over: still the earliest repeat (a stable sort keeps each id's first
    # answer first), here position 2, the second "a"
    assert _invalid_loc(match_items, ["a", "b"], ["a", "b"] * 100) == ("predictions", "items", 2, "item_id")


# --- columns ------------------------------------------------------------------------------------------------------


def test_columns_read_one_attribute_per_item_in_order():
    items = [SimpleNamespace(item_id="p", k=3), SimpleNamespace(item_id="q", k=-7)]
    assert column(items, "item_id") == ["p", "q"]
    ints = int_column(items, "k")
    assert ints.dtype == np.int64 and ints.tolist() == [3, -7]
    assert int_column([], "k").tolist() == []


# --- finite values, metrics and results ---------------------------------------------------------------------------


def test_finite_returns_a_float_and_names_non_finite_values():
    value = finite(np.float32(0.5), "what")
    assert type(value) is float and value == 0.5
    assert finite(3, "x") == 3.0 and type(finite(3, "x")) is float
    for bad in (float("nan"), float("inf"), -float("inf")):
        assert _degenerate_loc(finite, bad, "ci_low") == ("ci_low",)


def test_metric_entry_has_plain_python_values():
    entry = metric(np.float64(0.25), np.float64(0.1), 0.4, np.int64(12))
    assert entry == {"value": 0.25, "ci_low": 0.1, "ci_high": 0.4, "n": 12}
    assert [type(entry[k]) for k in ("value", "ci_low", "ci_high", "n")] == [float, float, float, int]
    assert metric(1.0) == {"value": 1.0, "ci_low": None, "ci_high": None, "n": None}
    assert metric(2.0, n=0) == {"value": 2.0, "ci_low": None, "ci_high": None, "n": 0}
    assert metric(0.0, 0.0, 0.0) == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": None}


def test_metric_names_the_non_finite_field():
    assert _degenerate_loc(metric, float("nan")) == ("value",)
    assert _degenerate_loc(metric, 0.5, float("-inf"), 1.0) == ("ci_low",)
    assert _degenerate_loc(metric, 0.5, 0.0, float("inf")) == ("ci_high",)


def test_result_keeps_key_order_and_plain_floats():
    out = result({"m": metric(1.0)}, {"b": 1}, np.float64(0.5), ["m"], ["x", "y"], np.array([1, 0]))
    assert out == {
        "scores": {"m": {"value": 1.0, "ci_low": None, "ci_high": None, "n": None}},
        "breakdown": {"b": 1},
        "coverage": 0.5,
        "reconstructed": ["m"],
        "item_scores": [{"item_id": "x", "value": 1.0}, {"item_id": "y", "value": 0.0}],
    }
    assert type(out["coverage"]) is float and type(out["item_scores"][0]["value"]) is float
    assert result({}, {}, 1.0, [], [], np.array([]))["item_scores"] == []


def test_result_rejects_non_finite_item_scores_and_coverage():
    assert _degenerate_loc(result, {}, {}, 1.0, [], ["a", "b"], np.array([1.0, -np.inf])) == ("item_scores",)
    assert _degenerate_loc(result, {}, {}, float("nan"), [], ["a"], np.array([1.0])) == ("coverage",)
    with pytest.raises(ValueError):  # ids and values must pair up
        result({}, {}, 1.0, [], ["a", "b"], np.array([1.0]))


# --- group means --------------------------------------------------------------------------------------------------


def test_group_means_are_scaled_per_label_means_in_first_appearance_order():
    out = group_means(["y", "x", "y", None, "x", "y"], np.array([1.0, 2.0, 3.0, 100.0, 6.0, 5.0]), 100.0)
    assert out == {"y": {"n": 3, "score": 300.0}, "x": {"n": 2, "score": 400.0}}
    assert list(out) == ["y", "x"]
    assert type(out["y"]["n"]) is int and type(out["y"]["score"]) is float
    # non-string labels are reported under their string form; the default scale is 1
    assert group_means([1, 2, 1], np.array([0.5, 0.25, 1.0])) == {
        "1": {"n": 2, "score": 0.75},
        "2": {"n": 1, "score": 0.25},
    }
    assert group_means([None, None], np.array([1.0, 2.0])) == {}
    assert group_means([], np.array([])) == {}


def test_multi_group_means_count_an_item_under_each_of_its_labels():
    out = multi_group_means([["a", "b"], ["b"], [], ["c", "a"]], np.array([1.0, 2.0, 50.0, 4.0]), 10.0)
    assert out == {"a": {"n": 2, "score": 25.0}, "b": {"n": 2, "score": 15.0}, "c": {"n": 1, "score": 40.0}}
    assert multi_group_means([["a"]], np.array([3.0])) == {"a": {"n": 1, "score": 3.0}}
    assert multi_group_means([], np.array([])) == {}
    assert multi_group_means([[], []], np.array([1.0, 2.0])) == {}
