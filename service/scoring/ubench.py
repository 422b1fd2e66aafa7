"""U-Bench segmentation scorer (Tang et al., 2025): mean over cases of per-case IoU, Dice, HD95 and the other metrics.

Each answer-key item is one case (a 2-D or 3-D ground-truth mask with an optional voxel spacing); its prediction
is a 0/1 mask or a probability map thresholded at ``threshold`` (foreground = value > threshold, U-Bench's
sigmoid > 0.5). Per-case metrics follow U-Bench's ``get_metrics``; HD95 follows medpy or MONAI
(``surface_convention``), ASSD both (they agree) and NSD MONAI's ``compute_surface_dice`` (see
:mod:`service.estimators.ubench_masks`); the dataset score is the mean over cases with a seeded percentile
bootstrap CI. A case without a prediction is scored against an empty mask (IoU 0 when its ground truth is not
empty) and lowers ``coverage``. Surface metrics are averaged over the cases where they are defined
(``empty_cases: synapse`` defines HD95 and ASSD on empty masks).
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.estimators.ubench import (
    CITATION,
    EMPTY_DOC,
    NSD_DOC,
    PAPER,
    SURFACE_DOC,
    GtMask,
    PredMask,
    Spacing,
    mask_cost,
    seg_case,
)
from service.estimators.ubench_masks import CASE_METRICS, SURFACE_METRICS, EmptyCases, SurfaceConvention, as_mask
from service.registry import Convention, ConventionOption, MetricInfo, ScorerSpec, Upstream, register
from service.scoring._common import (
    BootstrapParams,
    KeyItemBase,
    PredItemBase,
    check_bootstrap,
    check_key_budget,
    check_key_size,
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
METRIC_NAMES = (*CASE_METRICS, *SURFACE_METRICS)
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
    hd95: bool = Field(True, description="Compute the surface metrics HD95, ASSD and NSD (default true).")
    surface_convention: SurfaceConvention = Field("medpy", description=SURFACE_DOC)
    empty_cases: EmptyCases = Field("exclude", description=EMPTY_DOC)
    nsd_tolerance: float = Field(1.0, ge=0, le=1e6, description=NSD_DOC)


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
        "Mean 95th-percentile Hausdorff distance (spacing units; surface_convention) over cases where defined.",
    ),
    "assd": MetricInfo(
        False,
        (0.0, 1e9),
        "Mean average symmetric surface distance (spacing units; surface_convention) over cases where defined.",
    ),
    "nsd": MetricInfo(
        True, (0.0, 1.0), "Mean normalised surface Dice at nsd_tolerance (MONAI) over cases where defined."
    ),
}
MEDPY = Upstream("medpy", "0.5.2")
MONAI = Upstream("MONAI", "1.5.0")
UBENCH_2D = Upstream("U-Bench (FengheTan9/U-Bench) utils/metrics_medpy.py get_metrics", "eafbb9f")
UBENCH_SYNAPSE = Upstream("U-Bench (FengheTan9/U-Bench) utils/util.py calculate_metric_percase", "eafbb9f")
CONVENTIONS = (
    Convention(
        "surface_convention",
        "medpy",
        (ConventionOption("medpy", (MEDPY, UBENCH_SYNAPSE)), ConventionOption("monai", (MONAI,))),
    ),
    Convention(
        "empty_cases",
        "exclude",
        (ConventionOption("exclude", (UBENCH_2D, MEDPY)), ConventionOption("synapse", (UBENCH_SYNAPSE,))),
    ),
)


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
            expected = "this private item's mask" if key.split == "private" else f"the answer key's {list(gt.shape)}"
            raise InvalidInput(
                f"mask shape {list(p.shape)} differs from {expected}", ("predictions", "items", j, "mask")
            )
    spacing = [1.0] * gt.ndim if key.spacing is None else list(key.spacing)
    if len(spacing) != gt.ndim:
        raise InvalidInput(f"spacing has {len(spacing)} values for a {gt.ndim}-D mask", ("answer_key", "items", i))
    return p, gt, spacing


def check_key(key_items: list[AnswerKeyItem], params: Params) -> None:
    """The answer-key checks of :func:`score` (``ScorerSpec.check_key``): at most ``MAX_ITEMS`` cases, the bootstrap
    budget, each ground truth a rectangular 2-D or 3-D mask of 0 and 1 within the voxel caps, and its spacing one
    value per mask axis (named here as the item's ``spacing``)."""
    check_key_size(len(key_items), MAX_ITEMS)
    check_key_budget(params.n_resamples, len(key_items))
    for i, key in enumerate(key_items):
        gt = as_mask(key.mask, ("answer_key", "items", i, "mask"), binary=True, threshold=params.threshold)
        if key.spacing is not None and len(key.spacing) != gt.ndim:
            raise InvalidInput(
                f"spacing has {len(key.spacing)} values for a {gt.ndim}-D mask", ("answer_key", "items", i, "spacing")
            )


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
        rows.append(
            seg_case(p, gt, spacing, params.hd95, params.surface_convention, params.empty_cases, params.nsd_tolerance)
        )
    return rows, index


EMPTY_RULES = {
    "exclude": "both empty: iou 0, dice 1, se = pc = f1 = 0; hd95 and assd null when a mask is empty, nsd null when "
    "both are",
    "synapse": "U-Bench Synapse path: empty prediction gives dice = iou = hd95 = assd = 0; empty ground truth only "
    "gives dice = iou = 1, hd95 = assd = 0",
}
HD95_RULES = {
    "medpy": "95th percentile of both directed surface distance sets pooled (medpy hd95)",
    "monai": "larger of the two directed 95th percentiles (MONAI compute_hausdorff_distance)",
}


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
    defined = {}
    for name in SURFACE_METRICS:
        defined[name] = np.array([v for v in item_metrics[name] if v is not None], dtype=np.float64)
        if defined[name].size:
            scores[name] = _entry(defined[name], params)
    reasons = [row["hd95_reason"] for row in rows]
    breakdown = {
        "n_items": len(key_items),
        "n_predicted": int(index.size),
        "n_missing": len(key_items) - int(index.size),
        "n_hd95": int(defined["hd95"].size),
        "n_hd95_empty_mask": reasons.count("empty_mask"),
        "n_nsd": int(defined["nsd"].size),
        "hd95_requested": params.hd95,
        "threshold": params.threshold,
        "surface_convention": params.surface_convention,
        "empty_cases": params.empty_cases,
        "nsd_tolerance": params.nsd_tolerance,
        "bootstrap": {"seed": params.seed, "n_resamples": params.n_resamples, "confidence": params.confidence},
        "conventions": {
            "missing_prediction": "scored as an empty mask",
            "empty_mask": EMPTY_RULES[params.empty_cases],
            "hd95": HD95_RULES[params.surface_convention],
            "assd": "mean of both directed surface distance sets pooled (medpy assd, MONAI symmetric ASD)",
            "nsd": "share of both surfaces within nsd_tolerance of the other (MONAI compute_surface_dice)",
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
        summary="U-Bench medical image segmentation: mean over cases of IoU (primary), Dice, HD95, ASSD, NSD, SE, PC, "
        "SP, F1 and ACC with bootstrap CIs; per-case values of every metric for paired Wilcoxon comparisons.",
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
        conventions=CONVENTIONS,
        check_key=check_key,
    )
)
