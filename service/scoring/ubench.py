"""U-Bench segmentation scorer (Tang et al., 2025): mean over cases of per-case IoU, Dice, HD95 and the other metrics.

Each answer-key item is one case (a 2-D or 3-D ground-truth mask with an optional voxel spacing); its prediction
is a 0/1 mask or a probability map thresholded at ``threshold`` (foreground = value > threshold, U-Bench's
sigmoid > 0.5). Per-case metrics follow U-Bench's ``get_metrics`` and medpy (see
:mod:`service.estimators.ubench_masks`); the dataset score is the mean over cases with a seeded percentile bootstrap
CI. A case without a prediction is scored against an empty mask (IoU 0 when its ground truth is not empty) and
lowers ``coverage``. HD95 is averaged over the cases where both masks are non-empty.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.estimators.ubench import CITATION, PAPER, GtMask, PredMask, Spacing, mask_cost, seg_case
from service.estimators.ubench_masks import CASE_METRICS, as_mask
from service.registry import MetricInfo, ScorerSpec, register
from service.scoring._common import (
    BootstrapParams,
    KeyItemBase,
    PredItemBase,
    check_bootstrap,
    column,
    match_items,
    metric,
    result,
)
from service.stats import bootstrap_mean_ci

MAX_ITEMS = 10_000
COST_UNIT = "voxel operations"
SYNC_BUDGET = 6e8
"""Voxel operations in about 1 s (weights as ``ubench.seg_metrics``: list 20, array 2, HD95 160 per voxel)."""
HARD_CAP = 2e11
METRIC_NAMES = (*CASE_METRICS, "hd95")
PAIRED_TESTS: dict[str, str] = dict.fromkeys(METRIC_NAMES, "wilcoxon")
"""Paired test of each metric with per-item values: all are graded, so Wilcoxon signed-rank (U-Bench vs U-Net)."""
RECONSTRUCTED: list[str] = []


class AnswerKeyItem(KeyItemBase):
    """One case: its ground-truth mask and voxel spacing."""

    mask: GtMask  # type: ignore[valid-type]
    spacing: Spacing | None = Field(None, description="Voxel spacing, one value per mask axis (default all 1).")


class PredictionItem(PredItemBase):
    """A model's mask for one case."""

    mask: PredMask  # type: ignore[valid-type]


class Params(BootstrapParams):
    """U-Bench scoring settings."""

    threshold: float = Field(0.5, ge=0, lt=1, description="Foreground where the prediction > threshold.")
    hd95: bool = Field(True, description="Compute HD95 (default true).")


METRICS = {
    "iou": MetricInfo(True, (0.0, 1.0), "Mean over cases of TP/(TP+FP+FN) (0 when both masks are empty)."),
    "dice": MetricInfo(True, (0.0, 1.0), "Mean over cases of 2TP/(2TP+FP+FN) (1 when both masks are empty)."),
    "se": MetricInfo(True, (0.0, 1.0), "Mean sensitivity TP/(TP+FN)."),
    "pc": MetricInfo(True, (0.0, 1.0), "Mean precision TP/(TP+FP)."),
    "sp": MetricInfo(True, (0.0, 1.0), "Mean specificity TN/(TN+FP)."),
    "f1": MetricInfo(True, (0.0, 1.0), "Mean per-case 2·PC·SE/(PC+SE)."),
    "acc": MetricInfo(True, (0.0, 1.0), "Mean pixel accuracy (TP+TN)/N."),
    "hd95": MetricInfo(
        False,
        (0.0, 1e9),
        "Mean 95th-percentile symmetric surface distance (spacing units) over cases with both masks non-empty.",
    ),
}


def _masks(
    key: AnswerKeyItem, pred: PredictionItem | None, i: int, j: int, threshold: float
) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Boolean (pred, gt) masks of one case and its spacing; an absent prediction is an empty mask."""
    gt = as_mask(key.mask, ("answer_key", "items", i, "mask"), binary=True, threshold=threshold)
    if pred is None:
        p = np.zeros_like(gt)
    else:
        p = as_mask(pred.mask, ("predictions", "items", j, "mask"), binary=False, threshold=threshold)
        if p.shape != gt.shape:
            raise InvalidInput(
                f"mask shape {list(p.shape)} differs from the answer key's {list(gt.shape)}",
                ("predictions", "items", j, "mask"),
            )
    spacing = [1.0] * gt.ndim if key.spacing is None else list(key.spacing)
    if len(spacing) != gt.ndim:
        raise InvalidInput(f"spacing has {len(spacing)} values for a {gt.ndim}-D mask", ("answer_key", "items", i))
    return p, gt, spacing


def per_item(
    key_items: Sequence[AnswerKeyItem], pred_items: Sequence[PredictionItem], params: Params
) -> tuple[list[dict[str, Any]], np.ndarray]:
    """Per-case metric rows in answer-key order and the key index each prediction answers."""
    index = match_items(column(key_items, "item_id"), column(pred_items, "item_id"))
    pred_at = np.full(len(key_items), -1, dtype=np.int64)
    pred_at[index] = np.arange(index.size)
    rows = []
    for i, key in enumerate(key_items):
        j = int(pred_at[i])
        p, gt, spacing = _masks(key, pred_items[j] if j >= 0 else None, i, j, params.threshold)
        rows.append(seg_case(p, gt, spacing, params.hd95))
    return rows, index


def _entry(values: np.ndarray, params: Params) -> dict:
    if params.n_resamples == 0:
        return metric(float(values.mean()), n=values.size)
    low, high, _ = bootstrap_mean_ci(values, params.n_resamples, params.seed, params.confidence)
    return metric(float(values.mean()), low, high, values.size)


def score(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> dict[str, Any]:
    """Mean over cases of every U-Bench case metric with bootstrap CIs; per-item values of each metric."""
    if len(key_items) > MAX_ITEMS:
        raise InvalidInput(f"{len(key_items)} items exceed the limit of {MAX_ITEMS}", ("answer_key", "items"))
    check_bootstrap(params, len(key_items))
    rows, index = per_item(key_items, pred_items, params)
    item_metrics = {name: [row[name] for row in rows] for name in METRIC_NAMES}
    scores = {name: _entry(np.array(item_metrics[name], dtype=np.float64), params) for name in CASE_METRICS}
    hd = np.array([v for v in item_metrics["hd95"] if v is not None], dtype=np.float64)
    if hd.size:
        scores["hd95"] = _entry(hd, params)
    reasons = [row["hd95_reason"] for row in rows]
    breakdown = {
        "n_items": len(key_items),
        "n_predicted": int(index.size),
        "n_missing": len(key_items) - int(index.size),
        "n_hd95": int(hd.size),
        "n_hd95_empty_mask": reasons.count("empty_mask"),
        "hd95_requested": params.hd95,
        "threshold": params.threshold,
        "bootstrap": {"seed": params.seed, "n_resamples": params.n_resamples, "confidence": params.confidence},
        "conventions": {
            "missing_prediction": "scored as an empty mask",
            "both_empty": "iou 0 (U-Bench), dice 1 (medpy dc), se = pc = f1 = 0, hd95 null",
            "hd95": "95th percentile of both directed surface distance sets; surfaces by one cross erosion",
        },
    }
    ids = column(key_items, "item_id")
    out = result(scores, breakdown, index.size / len(key_items), RECONSTRUCTED, ids, np.array(item_metrics["iou"]))
    out["item_metrics"] = item_metrics
    return out


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Voxel operations (``COST_UNIT``): per case, voxels × (read weight + HD95 weight when requested), with the
    weights of ``ubench.seg_metrics``."""
    preds = {item.item_id: item.mask for item in pred_items}
    return float(sum(mask_cost(preds.get(key.item_id, key.mask), key.mask, params.hd95) for key in key_items))


SPEC = register(
    ScorerSpec(
        name="ubench",
        version="1",
        summary="U-Bench medical image segmentation: mean over cases of IoU (primary), Dice, HD95, SE, PC, SP, F1 "
        "and ACC with bootstrap CIs; per-case values of every metric for paired Wilcoxon comparisons.",
        paper=PAPER,
        citation=CITATION,
        answer_key_item_model=AnswerKeyItem,
        prediction_item_model=PredictionItem,
        params_model=Params,
        metrics=METRICS,
        primary_metric="iou",
        score=score,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        paired_tests=PAIRED_TESTS,
    )
)
