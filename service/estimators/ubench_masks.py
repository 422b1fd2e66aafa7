"""Per-case binary segmentation metrics (U-Bench's ``get_metrics``) and the surface metrics HD95, ASSD and NSD
under medpy's or MONAI's definitions."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.ndimage import binary_erosion, distance_transform_edt, generate_binary_structure

from service.errors import InvalidInput
from service.types import ArrayRef

CASE_METRICS = ("iou", "dice", "se", "pc", "sp", "f1", "acc")
SURFACE_METRICS = ("hd95", "assd", "nsd")
SurfaceConvention = Literal["medpy", "monai"]
EmptyCases = Literal["exclude", "synapse"]
MAX_VOXELS_2D = 1024 * 1024
MAX_VOXELS_3D = 256**3


@dataclass(frozen=True)
class Counts:
    """Confusion counts of one case."""

    tp: int
    fp: int
    fn: int
    tn: int


def as_mask(value: object, loc: Sequence[str | int], *, binary: bool, threshold: float) -> np.ndarray:
    """A 2-D or 3-D boolean mask: ``value > threshold`` for predictions, ``value == 1`` for ground truth.

    Ground truth must hold only 0 and 1 (``binary``); predictions may be probability maps in [0, 1].
    """
    if isinstance(value, ArrayRef):
        raise InvalidInput(f"the array reference {value.array} was not resolved to an array", loc=loc)
    try:
        arr = np.asarray(value)
    except ValueError as exc:
        raise InvalidInput("a mask must be a rectangular 2-D or 3-D array", loc=loc) from exc
    if arr.dtype == object or arr.ndim not in (2, 3):
        raise InvalidInput("a mask must be a rectangular 2-D or 3-D array", loc=loc)
    if arr.dtype.kind not in "biuf":
        raise InvalidInput(f"a mask must be numeric, got dtype {arr.dtype.str}", loc=loc)
    cap = MAX_VOXELS_2D if arr.ndim == 2 else MAX_VOXELS_3D
    if arr.size > cap:
        raise InvalidInput(f"a {arr.ndim}-D mask holds at most {cap} voxels, got {arr.size}", loc=loc)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise InvalidInput("the mask holds NaN or infinite values", loc=loc)
    if binary:
        ones = arr == 1
        if np.count_nonzero(ones) + np.count_nonzero(arr == 0) != arr.size:
            raise InvalidInput("the ground-truth mask must hold only 0 and 1", loc=loc)
        return ones
    if arr.min() < 0 or arr.max() > 1:
        raise InvalidInput("prediction values must lie in [0, 1] (a 0/1 mask or a probability map)", loc=loc)
    return arr > threshold


def counts(pred: np.ndarray, gt: np.ndarray) -> Counts:
    """TP = |P∧G|, FP = |P∧¬G|, FN = |¬P∧G|, TN = |¬P∧¬G|."""
    tp = int(np.count_nonzero(pred & gt))
    n_pred = int(np.count_nonzero(pred))
    n_gt = int(np.count_nonzero(gt))
    return Counts(tp, n_pred - tp, n_gt - tp, pred.size - n_pred - n_gt + tp)


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else 0.0


def case_metrics(c: Counts) -> dict[str, float]:
    """U-Bench's ``get_metrics``: IoU = TP/(TP+FP+FN) (0 on an empty union), Dice = 2TP/(2TP+FP+FN) (medpy ``dc``:
    1 when both masks are empty), SE = TP/(TP+FN), PC = TP/(TP+FP), SP = TN/(TN+FP) (medpy: 0 on a zero
    denominator), F1 = 2·PC·SE/(PC+SE) (0 if PC+SE = 0) and ACC = (TP+TN)/N."""
    se = _ratio(c.tp, c.tp + c.fn)
    pc = _ratio(c.tp, c.tp + c.fp)
    dice_den = 2 * c.tp + c.fp + c.fn
    return {
        "iou": _ratio(c.tp, c.tp + c.fp + c.fn),
        "dice": 2 * c.tp / dice_den if dice_den > 0 else 1.0,
        "se": se,
        "pc": pc,
        "sp": _ratio(c.tn, c.tn + c.fp),
        "f1": _ratio(2 * pc * se, pc + se),
        "acc": (c.tp + c.tn) / (c.tp + c.fp + c.fn + c.tn),
    }


def _bbox(mask: np.ndarray) -> tuple[slice, ...]:
    """Smallest box holding every true voxel of a non-empty mask."""
    box = []
    for axis in range(mask.ndim):
        hit = np.flatnonzero(np.any(mask, axis=tuple(a for a in range(mask.ndim) if a != axis)))
        box.append(slice(int(hit[0]), int(hit[-1]) + 1))
    return tuple(box)


def _surface(mask: np.ndarray) -> np.ndarray:
    """``mask XOR binary_erosion(mask)`` with the connectivity-1 (cross) structure and border value 0 (medpy)."""
    return mask ^ binary_erosion(mask, structure=generate_binary_structure(mask.ndim, 1), iterations=1)


def directed_surface_distances(
    pred: np.ndarray, gt: np.ndarray, spacing: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """Distances from every surface voxel of ``pred`` to the surface of ``gt``, and from ``gt``'s to ``pred``'s, in
    units of ``spacing`` (both masks non-empty).

    Computed on the bounding box of ``pred ∪ gt``: every surface voxel lies inside it and the voxels just outside
    are background, so erosion with border value 0 and the Euclidean distance transform (nearest surface voxel
    of the other mask) give the same values as on the full image. medpy (``__surface_distances``) and MONAI
    (``get_mask_edges`` then ``get_surface_distance``) both find surfaces and distances this way.
    """
    box = _bbox(pred | gt)
    sp, sg = _surface(pred[box]), _surface(gt[box])
    return distance_transform_edt(~sg, sampling=spacing)[sp], distance_transform_edt(~sp, sampling=spacing)[sg]


def surface_metrics(
    pred: np.ndarray, gt: np.ndarray, spacing: Sequence[float], convention: SurfaceConvention, tolerance: float
) -> dict[str, float | None]:
    """HD95, ASSD and NSD of one case from the directed distance sets a (pred→gt) and b (gt→pred).

    HD95: ``medpy`` P95(a ∪ b) (medpy ``hd95``; percentiles by linear interpolation), ``monai`` max(P95(a), P95(b))
    (``compute_hausdorff_distance(percentile=95)``). ASSD = mean(a ∪ b) under both: medpy ``assd`` since 0.5.0
    and MONAI ``compute_average_surface_distance(symmetric=True)`` agree (medpy 0.4 averaged the two directed
    means). NSD = (#{a ≤ τ} + #{b ≤ τ})/(|a| + |b|) with τ = ``tolerance`` (MONAI ``compute_surface_dice``,
    comparing in float32 as it does). A mask empty: HD95 and ASSD None; NSD 0 when one mask is empty and None
    when both are (MONAI's values).
    """
    has_pred, has_gt = bool(pred.any()), bool(gt.any())
    if not (has_pred and has_gt):
        return {"hd95": None, "assd": None, "nsd": 0.0 if has_pred or has_gt else None}
    a, b = directed_surface_distances(pred, gt, spacing)
    pooled = np.concatenate([a, b])
    if convention == "medpy":
        hd = float(np.percentile(pooled, 95))
    else:
        hd = max(float(np.percentile(a, 95)), float(np.percentile(b, 95)))
    tau = np.float32(tolerance)
    within = np.count_nonzero(a.astype(np.float32) <= tau) + np.count_nonzero(b.astype(np.float32) <= tau)
    return {"hd95": hd, "assd": float(pooled.mean()), "nsd": within / pooled.size}


def synapse_empty_case(has_pred: bool) -> dict[str, float]:
    """U-Bench's Synapse path (``utils/util.py`` ``calculate_metric_percase``) for a case with an empty mask:
    prediction non-empty and ground truth empty gives Dice = Jaccard = 1, HD95 = ASD = 0; an empty prediction
    gives all four 0."""
    value = 1.0 if has_pred else 0.0
    return {"dice": value, "iou": value, "hd95": 0.0, "assd": 0.0}
