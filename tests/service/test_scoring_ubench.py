"""U-Bench scorer: the 8×8 mask fixture, per-metric item values, bootstrap CIs, paired Wilcoxon through item values."""

import numpy as np
import pytest

from service.errors import InvalidInput
from service.estimators import ubench as U
from service.registry import SCORERS, no_progress
from service.scoring import ubench as ubench_scorer
from service.scoring.ubench import (
    HARD_CAP,
    PAIRED_TESTS,
    SYNC_BUDGET,
    AnswerKeyItem,
    Params,
    PredictionItem,
    cost,
    score,
)
from service.stats import bootstrap_mean_ci
from tests.service.test_ubench import MODEL, UNET, square_fixture


def key(item_id: str, mask: object, spacing: list[float] | None = None) -> AnswerKeyItem:
    return AnswerKeyItem(item_id=item_id, mask=mask, spacing=spacing)


def pred(item_id: str, mask: object) -> PredictionItem:
    return PredictionItem(item_id=item_id, mask=mask)


def fixture_items() -> tuple[list[AnswerKeyItem], list[PredictionItem]]:
    """Case a: the square shifted one row (IoU 0.6, Dice 0.75, HD95 1); case b: exact (IoU 1, Dice 1, HD95 0)."""
    shifted, gt = square_fixture()
    return [key("a", gt), key("b", gt)], [pred("a", shifted), pred("b", gt)]


def run(keys: list, preds: list, **kw: object) -> dict:
    return score(keys, preds, Params(**kw))


def subset_masks(ious: list[float]) -> tuple[list[AnswerKeyItem], list[PredictionItem]]:
    """Cases whose IoU is exactly k/100: gt = a 10×10 square in a 12×12 image, pred = its first k pixels."""
    keys, preds = [], []
    gt = np.zeros((12, 12), dtype=int)
    gt[1:11, 1:11] = 1
    inside = np.argwhere(gt == 1)
    for i, iou in enumerate(ious):
        p = np.zeros_like(gt)
        k = round(iou * 100)
        p[inside[:k, 0], inside[:k, 1]] = 1
        keys.append(key(f"c{i}", gt.tolist()))
        preds.append(pred(f"c{i}", p.tolist()))
    return keys, preds


def test_fixture_means_and_item_values() -> None:
    out = run(*fixture_items(), n_resamples=200)
    s = out["scores"]
    assert s["iou"]["value"] == pytest.approx(0.8, abs=1e-15)
    assert s["dice"]["value"] == pytest.approx(0.875, abs=1e-15)
    assert s["se"]["value"] == s["pc"]["value"] == pytest.approx(0.875, abs=1e-15)
    assert s["sp"]["value"] == pytest.approx((44 / 48 + 1) / 2, abs=1e-15)
    assert s["acc"]["value"] == pytest.approx((0.875 + 1) / 2, abs=1e-15)
    assert s["hd95"]["value"] == 0.5 and s["hd95"]["n"] == 2
    assert [x["value"] for x in out["item_scores"]] == [0.6, 1.0]
    assert out["item_metrics"]["hd95"] == [1.0, 0.0]
    assert out["item_metrics"]["dice"] == [0.75, 1.0]
    assert set(out["item_metrics"]) == set(PAIRED_TESTS)
    assert out["coverage"] == 1.0
    for name in ("iou", "dice"):
        assert s[name]["ci_low"] <= s[name]["value"] <= s[name]["ci_high"]


def test_spacing_per_item() -> None:
    keys, preds = fixture_items()
    keys[0] = key("a", keys[0].mask, spacing=[0.5, 2.0])
    out = run(keys, preds, n_resamples=0)
    assert out["item_metrics"]["hd95"] == [0.5, 0.0]
    assert out["scores"]["hd95"]["value"] == 0.25
    assert out["scores"]["iou"]["ci_low"] is None


def test_missing_prediction_is_an_empty_mask() -> None:
    keys, preds = fixture_items()
    out = run(keys, preds[1:], n_resamples=0)
    assert out["coverage"] == 0.5
    assert out["item_metrics"]["iou"] == [0.0, 1.0]
    assert out["item_metrics"]["hd95"] == [None, 0.0]
    assert out["scores"]["hd95"]["n"] == 1
    assert out["breakdown"]["n_missing"] == 1 and out["breakdown"]["n_hd95_empty_mask"] == 1


def test_no_defined_hd95_leaves_the_metric_out() -> None:
    keys, preds = fixture_items()
    out = run(keys, preds, hd95=False, n_resamples=0)
    assert "hd95" not in out["scores"]
    assert out["item_metrics"]["hd95"] == [None, None]


def test_bootstrap_is_seeded() -> None:
    keys, preds = subset_masks(MODEL)
    a = run(keys, preds, seed=3, n_resamples=500)["scores"]["iou"]
    b = run(keys, preds, seed=3, n_resamples=500)["scores"]["iou"]
    c = run(keys, preds, seed=4, n_resamples=500)["scores"]["iou"]
    assert a == b
    assert (a["ci_low"], a["ci_high"]) != (c["ci_low"], c["ci_high"])
    assert a["value"] == pytest.approx(np.mean(MODEL), abs=1e-12)
    assert min(MODEL) < a["ci_low"] < a["value"] < a["ci_high"] < max(MODEL)


def test_paired_wilcoxon_through_item_metrics() -> None:
    """Two submissions with per-case IoU equal to the spec's U-Net / model lists: the exact p is 6/1024."""
    keys, unet_preds = subset_masks(UNET)
    _, model_preds = subset_masks(MODEL)
    unet = run(keys, unet_preds, n_resamples=0)["item_metrics"]["iou"]
    model = run(keys, model_preds, n_resamples=0)["item_metrics"]["iou"]
    assert PAIRED_TESTS["iou"] == "wilcoxon"
    r = U.paired_fn(U.PairedParams(model=model, baseline=unet, method="exact"), no_progress)
    assert r.statistic == 1.5
    assert r.p == pytest.approx(0.005859375, rel=1e-12, abs=0)


def test_arrays_give_the_same_scores_as_lists() -> None:
    """Masks arriving as arrays (resolved npy uploads: uint8 key, float prediction) score like the JSON lists."""
    keys, preds = fixture_items()
    listed = run(keys, preds, n_resamples=100)
    for k in keys:
        k.mask = np.array(k.mask, dtype=np.uint8)
    for p in preds:
        p.mask = np.array(p.mask, dtype=np.float64)
    arrays = run(keys, preds, n_resamples=100)
    assert arrays["scores"] == listed["scores"]
    assert arrays["item_metrics"] == listed["item_metrics"]


def test_shape_mismatch_names_the_prediction() -> None:
    keys, preds = fixture_items()
    preds[1] = pred("b", [[1, 0], [0, 1]])
    with pytest.raises(InvalidInput) as err:
        run(keys, preds)
    assert err.value.loc == ("predictions", "items", 1, "mask")


def test_prediction_values_outside_0_1_name_the_prediction() -> None:
    keys, preds = fixture_items()
    preds[1] = pred("b", (np.array(preds[1].mask) * 1.5).tolist())
    with pytest.raises(InvalidInput) as err:
        run(keys, preds)
    assert err.value.loc == ("predictions", "items", 1, "mask")


def test_key_errors_name_the_field() -> None:
    keys, preds = fixture_items()
    keys[1].mask = np.full((8, 8), 2, dtype=np.uint8)
    with pytest.raises(InvalidInput) as err:
        run(keys, preds)
    assert err.value.loc == ("answer_key", "items", 1, "mask")
    keys, preds = fixture_items()
    keys[0] = key("a", keys[0].mask, spacing=[1.0, 1.0, 1.0])
    with pytest.raises(InvalidInput) as err:
        run(keys, preds)
    assert err.value.loc == ("answer_key", "items", 0)
    keys, preds = fixture_items()
    with pytest.raises(InvalidInput) as err:
        run(keys, [*preds, pred("zz", preds[0].mask)])
    assert err.value.loc == ("predictions", "items", 2, "item_id")


def test_cost_and_registration() -> None:
    keys, preds = fixture_items()
    per_case = 64 * (U.LIST_WEIGHT + U.HD95_WEIGHT)
    assert cost(keys, preds, Params()) == 2 * per_case
    assert cost(keys, preds, Params(hd95=False)) == 2 * 64 * U.LIST_WEIGHT
    assert 64 * 1024 * 1024 * (U.ARRAY_WEIGHT + U.HD95_WEIGHT) <= HARD_CAP
    assert 1024 * 1024 * (U.ARRAY_WEIGHT + U.HD95_WEIGHT) <= SYNC_BUDGET
    spec = SCORERS["ubench"]
    assert spec.primary_metric == "iou" and set(spec.metrics) == set(PAIRED_TESTS)
    assert spec.metrics["hd95"].higher_is_better is False


def test_probability_maps_are_thresholded() -> None:
    """A probability map 0.6 on the square and 0.4 on the row below: at threshold 0.5 the prediction is the exact
    square (IoU 1); at 0.3 it gains the 4 pixels below (IoU 16/20); at 0.6 (strictly greater) it is empty."""
    _, gt = square_fixture()
    prob = np.where(np.array(gt) == 1, 0.6, 0.0)
    prob[6, 2:6] = 0.4
    keys, preds = [key("a", gt)], [pred("a", prob.tolist())]
    assert run(keys, preds, n_resamples=0)["item_metrics"]["iou"] == [1.0]
    low = run(keys, preds, n_resamples=0, threshold=0.3)
    assert low["item_metrics"]["iou"] == [0.8] and low["breakdown"]["threshold"] == 0.3
    assert run(keys, preds, n_resamples=0, threshold=0.6)["item_metrics"]["iou"] == [0.0]


def test_ground_truth_must_be_binary() -> None:
    """A ground-truth array holding 0.7 is rejected at its item, though 0.7 would be a valid prediction."""
    keys, preds = fixture_items()
    keys[1].mask = np.where(np.array(keys[1].mask) == 1, 0.7, 0.0)
    with pytest.raises(InvalidInput) as err:
        run(keys, preds)
    assert err.value.loc == ("answer_key", "items", 1, "mask")


def test_prediction_order_and_missing_first_case() -> None:
    """Predictions listed in reverse order score as in key order; with the first case missing it is the one
    scored as an empty mask."""
    keys, preds = fixture_items()
    assert run(keys, preds[::-1], n_resamples=0)["item_metrics"] == run(keys, preds, n_resamples=0)["item_metrics"]
    out = run(keys, preds[1:], n_resamples=0)
    assert out["item_metrics"]["hd95"] == [None, 0.0]
    for name, values in {"iou": [0.0, 1.0], "se": [0.0, 1.0], "sp": [1.0, 1.0], "acc": [0.75, 1.0]}.items():
        assert out["item_metrics"][name] == values, name  # missing case: TN = 48 of 64 pixels, TP = FP = 0
    out = run(keys, preds[:1], n_resamples=0)
    assert out["item_metrics"]["iou"] == [0.6, 0.0]
    assert out["reconstructed"] == []
    assert out["breakdown"] | {"conventions": None} == {
        "n_items": 2,
        "n_predicted": 1,
        "n_missing": 1,
        "n_hd95": 1,
        "n_hd95_empty_mask": 1,
        "n_nsd": 2,
        "hd95_requested": True,
        "threshold": 0.5,
        "surface_convention": "medpy",
        "empty_cases": "exclude",
        "nsd_tolerance": 1.0,
        "bootstrap": {"seed": 0, "n_resamples": 0, "confidence": 0.95},
        "conventions": None,
    }


def test_breakdown_states_its_conventions() -> None:
    out = run(*fixture_items(), n_resamples=50, seed=9, confidence=0.9, hd95=False)
    b = out["breakdown"]
    assert b["bootstrap"] == {"seed": 9, "n_resamples": 50, "confidence": 0.9}
    assert (b["hd95_requested"], b["n_hd95"], b["n_hd95_empty_mask"], b["n_missing"]) == (False, 0, 0, 0)
    assert b["conventions"] == {
        "missing_prediction": "scored as an empty mask",
        "empty_mask": "both empty: iou 0, dice 1, se = pc = f1 = 0; hd95 and assd null when a mask is empty, nsd "
        "null when both are",
        "hd95": "95th percentile of both directed surface distance sets pooled (medpy hd95)",
        "assd": "mean of both directed surface distance sets pooled (medpy assd, MONAI symmetric ASD)",
        "nsd": "share of both surfaces within nsd_tolerance of the other (MONAI compute_surface_dice)",
    }
    monai = run(*fixture_items(), n_resamples=0, surface_convention="monai", empty_cases="synapse")
    rules = monai["breakdown"]["conventions"]
    assert rules["hd95"] == "larger of the two directed 95th percentiles (MONAI compute_hausdorff_distance)"
    assert rules["empty_mask"].startswith("U-Bench Synapse path")


def test_every_interval_is_the_bootstrap_of_the_case_values() -> None:
    """Each metric's interval is the seeded percentile bootstrap of its per-case values (HD95: of the cases where
    it is defined), at the requested confidence."""
    keys, preds = subset_masks(MODEL)
    keys.append(key("empty", np.zeros((12, 12), dtype=int).tolist()))
    preds.append(pred("empty", np.zeros((12, 12)).tolist()))
    out = run(keys, preds, seed=7, n_resamples=300, confidence=0.9)
    for name, entry in out["scores"].items():
        values = np.array([v for v in out["item_metrics"][name] if v is not None], dtype=np.float64)
        low, high, _ = bootstrap_mean_ci(values, 300, 7, 0.9)
        assert entry == {
            "value": pytest.approx(values.mean(), rel=1e-12),
            "ci_low": low,
            "ci_high": high,
            "n": values.size,
        }
    assert out["scores"]["hd95"]["n"] == 10 and out["scores"]["iou"]["n"] == 11
    assert (out["breakdown"]["n_hd95"], out["breakdown"]["n_hd95_empty_mask"]) == (10, 1)


def test_item_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """More than MAX_ITEMS cases is rejected on answer_key.items; exactly MAX_ITEMS is accepted."""
    monkeypatch.setattr(ubench_scorer, "MAX_ITEMS", 2)
    keys, preds = fixture_items()
    assert run(keys, preds, n_resamples=0)["breakdown"]["n_items"] == 2
    with pytest.raises(InvalidInput) as err:
        run([*keys, key("c", keys[0].mask)], preds, n_resamples=0)
    assert err.value.loc == ("answer_key", "items")


def test_cost_of_a_missing_prediction_follows_the_key_format() -> None:
    """A case without a prediction costs as if its prediction had the key mask's format (array: ARRAY_WEIGHT)."""
    keys, preds = fixture_items()
    for k in keys:
        k.mask = np.array(k.mask, dtype=np.uint8)
    per_voxel = (U.ARRAY_WEIGHT + U.LIST_WEIGHT) / 2 + U.HD95_WEIGHT
    assert cost(keys, preds[:1], Params()) == 64 * per_voxel + 64 * (U.ARRAY_WEIGHT + U.HD95_WEIGHT)
