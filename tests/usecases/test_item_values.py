"""A scorer's per-item output as the arrays stored: aligned to the split's key items in item_id order whatever
order the scorer lists them in, NaN where an item has no value, nothing stored for a metric without values."""

import numpy as np
import pytest

from service.errors import Degenerate
from service.registry import SCORERS, load_all
from usecases.scoring import _item_values


@pytest.fixture(scope="module")
def spec():
    load_all()
    return SCORERS["film_mcq"]


def test_values_follow_the_key_order_not_the_scorers(spec) -> None:
    raw = {
        "item_scores": [{"item_id": "c", "value": 1.0}, {"item_id": "a", "value": 0.0}],
        "item_metrics": {"coverage": [None, 0.5]},
    }
    out = _item_values(spec, raw, ["a", "b", "c"])
    np.testing.assert_array_equal(out["accuracy"], [0.0, np.nan, 1.0])
    np.testing.assert_array_equal(out["coverage"], [0.5, np.nan, np.nan])


def test_in_key_order_the_values_are_taken_as_they_are(spec) -> None:
    out = _item_values(
        spec, {"item_scores": [{"item_id": "a", "value": 0.25}, {"item_id": "b", "value": -0.0}]}, ["a", "b"]
    )
    assert out["accuracy"].tolist() == [0.25, -0.0] and np.signbit(out["accuracy"][1])


def test_no_values_store_no_array_and_bad_values_are_refused(spec) -> None:
    assert _item_values(spec, {"item_scores": []}, ["a"]) == {}
    assert _item_values(
        spec, {"item_scores": [{"item_id": "a", "value": 1.0}], "item_metrics": {"coverage": [None]}}, ["a"]
    ).keys() == {"accuracy"}
    with pytest.raises(Degenerate):
        _item_values(spec, {"item_scores": [{"item_id": "a", "value": float("nan")}]}, ["a"])
    with pytest.raises(RuntimeError, match="not in the answer key"):
        _item_values(spec, {"item_scores": [{"item_id": "z", "value": 1.0}]}, ["a"])
