"""3D visual grounding scorer: ScanRefer Acc@kIoU and Multi3DRefer F1@kIoU over axis-aligned boxes.

ScanRefer (Chen, Chang & Nießner, ECCV 2020): the first predicted box of a description counts when its IoU with
the single ground-truth box reaches k. Multi3DRefer (Zhang, Gong & Chang, ICCV 2023): per query, one Hungarian
assignment maximising the summed IoU on the zero-padded square IoU matrix (shared by every threshold), TP_k =
matched pairs with IoU ≥ k, F1_k = 2·TP_k/(|P| + |G|); a zero-target query scores 1 when no box is predicted.
Boxes are (cx, cy, cz, dx, dy, dz); IoU = inter/(V₁ + V₂ − inter + ε) with ε = 1e-8 in the boxes' units³ as in
the Chat-Scene evaluator (``iou_eps: reference``) or ε = 0 (``none``); a zero-volume predicted box scores IoU 0.
"""

from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field
from scipy.optimize import linear_sum_assignment

from service.errors import InvalidInput
from service.registry import Convention, ConventionOption, MetricInfo, ScorerSpec, Upstream, register
from service.scoring._common import (
    BootstrapParams,
    KeyItemBase,
    Label,
    PredItemBase,
    check_bootstrap,
    check_key_budget,
    check_key_size,
    column,
    match_items,
    metric,
    result,
)
from service.stats import bootstrap_mean_ci, factorize, wilson
from service.types import FiniteFloat

MAX_ITEMS = 50_000
MAX_BOXES = 64
IOU_EPS = {"reference": 1e-8, "none": 0.0}
"""Absolute ε added to the IoU's union (Chat-Scene ``utils/box_utils.py`` ``box3d_iou``: 1e-8 whatever the unit)."""
THRESHOLDS = (0.25, 0.5, 0.75)
PRIMARY_THRESHOLD = 0.5
COST_UNIT = "box-pair operations (20 per query, |P|·|G| IoUs, max(|P|,|G|)³ per Hungarian assignment)"
SYNC_BUDGET = 1e6
"""Box-pair operations in about 1 s on one core (measured: 50,000 ScanRefer queries 0.9 s; 5,000 Multi3DRefer
queries of 4 × 4 boxes 0.42 s)."""
HARD_CAP = 1e8
PAIRED_TESTS: dict[str, str] = {
    **{f"acc_at_{str(t).replace('.', '_')}": "mcnemar" for t in THRESHOLDS},
    **{f"f1_at_{str(t).replace('.', '_')}": "bootstrap" for t in THRESHOLDS},
}
"""Paired test per metric: accuracy flags are 0/1 (McNemar); F1 values are graded (paired bootstrap)."""
RECONSTRUCTED: list[str] = []

Box = Annotated[
    list[FiniteFloat],
    Field(
        min_length=6,
        max_length=6,
        description="Axis-aligned box [cx, cy, cz, dx, dy, dz]; sizes ≥ 0 (a zero-volume predicted box scores IoU 0; "
        "ground-truth sizes must be > 0 under iou_eps 'none').",
    ),
]
Boxes = Annotated[list[Box], Field(max_length=MAX_BOXES)]


def metric_name(kind: str, threshold: float) -> str:
    """``acc_at_0_25`` style name of a metric at an IoU threshold."""
    return f"{kind}_at_{str(threshold).replace('.', '_')}"


class AnswerKeyItem(KeyItemBase):
    """One referring description (ScanRefer) or query (Multi3DRefer) with its ground-truth boxes."""

    gt_boxes: Boxes = Field(
        description="Ground-truth boxes (at most 64): exactly one for scanrefer; zero or more for multi3drefer."
    )
    subset: Label | None = Field(
        None,
        description="Reporting subset, e.g. 'unique'/'multiple' (ScanRefer) or zt_w_d, zt_wo_d, st_w_d, st_wo_d, "
        "mt (Multi3DRefer).",
    )


class PredictionItem(PredItemBase):
    """A model's predicted boxes for one description or query."""

    pred_boxes: Boxes = Field(description="Predicted boxes (at most 64); scanrefer uses the first one.")


class Params(BootstrapParams):
    """Grounding scoring settings."""

    task: Literal["scanrefer", "multi3drefer"] = Field(
        "scanrefer", description="scanrefer: Acc@k of the first predicted box; multi3drefer: Hungarian F1@k."
    )
    thresholds: list[Literal[0.25, 0.5, 0.75]] = Field(
        default_factory=lambda: [0.25, 0.5],
        min_length=1,
        max_length=3,
        description="IoU thresholds (0.25, 0.5, 0.75; must include 0.5, the primary metric's).",
    )
    op: Literal["ge", "gt"] = Field(
        "ge", description="IoU comparison: 'ge' (IoU ≥ k, Chat-Scene and M3DRef-CLIP) or 'gt' (IoU > k, Scan2Cap)."
    )
    iou_eps: Literal["reference", "none"] = Field(
        "reference",
        description="'reference': IoU = inter/(union + 1e-8) as Chat-Scene, an absolute 1e-8 in the boxes' units³ "
        "(identical 1 cm cubes in metres score 0.99, 1 mm cubes 0.091); 'none': exact inter/union (zero-volume "
        "ground-truth boxes are refused).",
    )


CONVENTIONS = (
    Convention(
        "iou_eps",
        "reference",
        (
            ConventionOption(
                "reference", (Upstream("Chat-Scene utils/box_utils.py box3d_iou (ZzZZCHS/Chat-Scene)", "475e106"),)
            ),
            ConventionOption("none", ()),
        ),
    ),
)


METRICS = {
    metric_name(kind, t): MetricInfo(True, (0.0, 1.0), text.format(t=t))
    for t in THRESHOLDS
    for kind, text in (
        ("acc", "ScanRefer: fraction of descriptions whose first predicted box has IoU ≥ {t} (Wilson CI)."),
        (
            "f1",
            "Mean per-query F1 at IoU {t} (Multi3DRefer Hungarian matching; equal to acc for scanrefer); bootstrap CI.",
        ),
    )
}


def box_iou(a: np.ndarray, b: np.ndarray, eps: float = IOU_EPS["reference"]) -> np.ndarray:
    """Row-wise axis-aligned 3D IoU of boxes ``(cx, cy, cz, dx, dy, dz)``: inter/(V₁ + V₂ − inter + eps); 0 where
    the union is 0 (two zero-volume boxes with eps 0)."""
    lo = np.maximum(a[:, :3] - a[:, 3:] / 2, b[:, :3] - b[:, 3:] / 2)
    hi = np.minimum(a[:, :3] + a[:, 3:] / 2, b[:, :3] + b[:, 3:] / 2)
    inter = np.prod(np.maximum(hi - lo, 0.0), axis=1)
    union = np.prod(a[:, 3:], axis=1) + np.prod(b[:, 3:], axis=1) - inter + eps
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def box_array(
    boxes: Sequence[Sequence[Sequence[float]]], loc: tuple[str, str], allow_zero: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated boxes of every item and their counts; a size < 0 (or 0 unless ``allow_zero``) raises
    InvalidInput on ``(side, "items", i, field)`` for ``loc = (side, field)``."""
    counts = np.fromiter(map(len, boxes), dtype=np.int64, count=len(boxes))
    flat = np.array([box for item in boxes for box in item], dtype=np.float64).reshape(-1, 6)
    sizes = flat[:, 3:]
    bad = np.flatnonzero(((sizes < 0) if allow_zero else (sizes <= 0)).any(axis=1))
    if bad.size:
        item = int(np.searchsorted(np.cumsum(counts), bad[0], side="right"))
        rule = "≥ 0" if allow_zero else "> 0"
        raise InvalidInput(f"box sizes dx, dy, dz must be {rule}", (loc[0], "items", item, loc[1]))
    return flat, counts


def in_key_order(boxes: np.ndarray, counts: np.ndarray, index: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Prediction boxes regrouped in answer-key order (``index``: key position of each prediction); a key item
    without a prediction has no box."""
    key_counts = np.zeros(n, dtype=np.int64)
    key_counts[index] = counts
    order = np.argsort(index, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))[order]
    sizes = counts[order]
    gather = np.repeat(starts - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes) + np.arange(sizes.sum())
    return boxes[gather], key_counts


def passes(iou: np.ndarray, threshold: float, op: str) -> np.ndarray:
    """IoU ≥ k (``ge``) or IoU > k (``gt``)."""
    return iou >= threshold if op == "ge" else iou > threshold


def scanrefer_ious(
    gt: np.ndarray, gt_n: np.ndarray, pred: np.ndarray, pred_n: np.ndarray, eps: float = IOU_EPS["reference"]
) -> np.ndarray:
    """IoU of each item's first predicted box with its single ground-truth box (0 without a prediction)."""
    iou = np.zeros(gt_n.size)
    has = pred_n > 0
    first = np.concatenate(([0], np.cumsum(pred_n)[:-1]))[has]
    iou[has] = box_iou(pred[first], gt[np.flatnonzero(has)], eps)
    return iou


def multi3drefer_f1(
    gt: np.ndarray,
    gt_n: np.ndarray,
    pred: np.ndarray,
    pred_n: np.ndarray,
    thresholds: Sequence[float],
    op: str,
    eps: float = IOU_EPS["reference"],
) -> np.ndarray:
    """Per-query F1 at each threshold (rows) from one IoU-maximising Hungarian assignment per query."""
    n = gt_n.size
    sizes = gt_n * pred_n
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    item = np.repeat(np.arange(n), sizes)
    within = np.arange(item.size) - offsets[item]
    cols = np.maximum(gt_n[item], 1)
    p_idx = np.concatenate(([0], np.cumsum(pred_n)[:-1]))[item] + within // cols
    g_idx = np.concatenate(([0], np.cumsum(gt_n)[:-1]))[item] + within % cols
    iou = box_iou(pred[p_idx], gt[g_idx], eps)
    tp = np.zeros((len(thresholds), n))
    single = (np.minimum(gt_n, pred_n) == 1)[item]
    if single.any():
        starts = np.flatnonzero(np.concatenate(([True], item[single][1:] != item[single][:-1])))
        best = np.maximum.reduceat(iou[single], starts)
        owners = item[single][starts]
        for k, t in enumerate(thresholds):
            tp[k, owners] = passes(best, t, op)
    multi = np.flatnonzero(np.minimum(gt_n, pred_n) > 1)
    for i in multi:
        p, g = int(pred_n[i]), int(gt_n[i])
        size = max(p, g)
        square = np.zeros((size, size))
        square[:p, :g] = iou[offsets[i] : offsets[i + 1]].reshape(p, g)
        matched = square[linear_sum_assignment(-square)]
        for k, t in enumerate(thresholds):
            tp[k, i] = passes(matched, t, op).sum()
    f1 = 2 * tp / np.maximum(pred_n + gt_n, 1)
    zero_target = gt_n == 0
    f1[:, zero_target] = (pred_n[zero_target] == 0).astype(np.float64)
    return f1


def _check_thresholds(params: Params, loc: tuple[str, str]) -> None:
    """The thresholds hold 0.5 (the primary metric's), each once; else InvalidInput at ``loc``."""
    if PRIMARY_THRESHOLD not in params.thresholds:
        raise InvalidInput("thresholds must include 0.5 (the primary metric's threshold)", loc)
    if len(set(params.thresholds)) < len(params.thresholds):
        raise InvalidInput("thresholds must be distinct", loc)


def _gt_boxes(key_items: Sequence[AnswerKeyItem], params: Params) -> tuple[np.ndarray, np.ndarray]:
    """The ground-truth boxes and their counts: sizes > 0 (≥ 0 with ``iou_eps: reference``), one box a scanrefer
    item; else InvalidInput at the item's ``gt_boxes``."""
    gt, gt_n = box_array(column(key_items, "gt_boxes"), ("answer_key", "gt_boxes"), params.iou_eps == "reference")
    if params.task == "scanrefer":
        wrong = np.flatnonzero(gt_n != 1)
        if wrong.size:
            raise InvalidInput(
                "a scanrefer item has exactly one ground-truth box", ("answer_key", "items", int(wrong[0]), "gt_boxes")
            )
    return gt, gt_n


def check_key(key_items: list[AnswerKeyItem], params: Params) -> None:
    """The checks :func:`score` makes of the answer key and params (``ScorerSpec.check_key``): the thresholds, at
    most ``MAX_ITEMS`` items, the bootstrap budget and the ground-truth boxes."""
    _check_thresholds(params, ("scorer_params", "thresholds"))
    check_key_size(len(key_items), MAX_ITEMS)
    check_key_budget(params.n_resamples, len(key_items))
    _gt_boxes(key_items, params)


def _boxes(key_items: Sequence[AnswerKeyItem], pred_items: Sequence[PredictionItem], params: Params) -> tuple:
    """Validated key ids, prediction index, and the ground-truth and predicted boxes (with counts) in key order."""
    if len(key_items) > MAX_ITEMS:
        raise InvalidInput(f"{len(key_items)} items exceed the limit of {MAX_ITEMS}", ("answer_key", "items"))
    _check_thresholds(params, ("params", "thresholds"))
    ids = column(key_items, "item_id")
    index = match_items(ids, column(pred_items, "item_id"))
    gt, gt_n = _gt_boxes(key_items, params)
    pred, pred_n = in_key_order(
        *box_array(column(pred_items, "pred_boxes"), ("predictions", "pred_boxes"), True), index, len(key_items)
    )
    return ids, index, gt, gt_n, pred, pred_n


def score(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> dict[str, Any]:
    """Acc@k (scanrefer) or F1@k (multi3drefer) overall and per subset; a missing prediction predicts no box."""
    check_bootstrap(params, len(key_items))
    ids, index, gt, gt_n, pred, pred_n = _boxes(key_items, pred_items, params)
    thresholds = sorted(params.thresholds)
    n = len(key_items)
    eps = IOU_EPS[params.iou_eps]
    item_metrics: dict[str, list[float]] = {}
    scores: dict[str, dict] = {}
    if params.task == "scanrefer":
        iou = scanrefer_ious(gt, gt_n, pred, pred_n, eps)
        values = np.array([passes(iou, t, params.op) for t in thresholds], dtype=np.float64)
        for t, v in zip(thresholds, values, strict=True):
            k = int(v.sum())
            scores[metric_name("acc", t)] = metric(k / n, *wilson(k, n, params.confidence), n)
            item_metrics[metric_name("acc", t)] = v.tolist()
    else:
        values = multi3drefer_f1(gt, gt_n, pred, pred_n, thresholds, params.op, eps)
    for t, v in zip(thresholds, values, strict=True):
        name = metric_name("f1", t)
        item_metrics[name] = v.tolist()
        if params.n_resamples:
            low, high, _ = bootstrap_mean_ci(v, params.n_resamples, params.seed, params.confidence)
            scores[name] = metric(float(v.mean()), low, high, n)
        else:
            scores[name] = metric(float(v.mean()), n=n)
    codes, labels = factorize(column(key_items, "subset"))
    by_subset: dict[str, dict[str, float | int]] = {}
    for c, label in enumerate(labels):
        if label is not None:
            mask = codes == c
            by_subset[str(label)] = {"n": int(mask.sum())} | {
                name: float(np.asarray(vals)[mask].mean()) for name, vals in item_metrics.items()
            }
    breakdown = {
        "task": params.task,
        "op": params.op,
        "thresholds": thresholds,
        "n_items": n,
        "n_missing": n - int(index.size),
        "n_zero_target": int((gt_n == 0).sum()),
        "n_degenerate_pred_boxes": int((pred[:, 3:] == 0).any(axis=1).sum()),
        "by_subset": by_subset,
        "iou_eps": params.iou_eps,
        "iou": f"inter/(V1 + V2 - inter{' + 1e-8' if eps else ''}), axis-aligned boxes (cx, cy, cz, dx, dy, dz); "
        "a zero-volume predicted box scores 0",
    }
    primary = np.asarray(item_metrics[metric_name("f1", PRIMARY_THRESHOLD)])
    out = result(scores, breakdown, index.size / n, RECONSTRUCTED, ids, primary)
    out["item_metrics"] = item_metrics
    return out


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Box-pair operations (``COST_UNIT``): per query 20 (parsing, bookkeeping) + |P|·|G| IoUs + max(|P|, |G|)³
    when it needs a Hungarian assignment."""
    preds = {item.item_id: len(item.pred_boxes) for item in pred_items}
    total = 0.0
    for key in key_items:
        p, g = preds.get(key.item_id, 0), len(key.gt_boxes)
        total += 20 + p * g + (max(p, g) ** 3 if min(p, g) > 1 and params.task == "multi3drefer" else 0)
    return total


SPEC = register(
    ScorerSpec(
        name="scene3d_grounding",
        version="1",
        summary="3D visual grounding: ScanRefer Acc@0.25/0.5 of the first predicted box or Multi3DRefer F1@0.25/0.5 "
        "with Hungarian matching, overall and per subset (unique/multiple, zt/st/mt).",
        paper="SceneScaffold",
        citation="SceneScaffold, a unified 3D-LMM (NeurIPS 2026; only the abstract is available); grounding as in "
        "Chen, Chang & Nießner, 'ScanRefer: 3D Object Localization in RGB-D Scans using Natural Language', "
        "ECCV 2020, and Zhang, Gong & Chang, 'Multi3DRefer: Grounding Text Description to Multiple 3D "
        "Objects', ICCV 2023 (evaluators: Chat-Scene utils/eval.py, M3DRef-CLIP multi3drefer_evaluator.py)",
        answer_key_item_model=AnswerKeyItem,
        prediction_item_model=PredictionItem,
        params_model=Params,
        metrics=METRICS,
        primary_metric=metric_name("f1", PRIMARY_THRESHOLD),
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
