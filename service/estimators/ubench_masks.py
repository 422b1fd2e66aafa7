"""Per-case binary segmentation metrics and HD95 with U-Bench's conventions (medpy's dc, precision, recall, hd95)."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.ndimage import binary_erosion, distance_transform_edt, generate_binary_structure

from service.errors import InvalidInput
from service.types import ArrayRef

CASE_METRICS = ("iou", "dice", "se", "pc", "sp", "f1", "acc")
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


def surface_distances(pred: np.ndarray, gt: np.ndarray, spacing: Sequence[float]) -> np.ndarray:
    """Both directed surface-to-surface distance sets, concatenated (pred→gt first), in units of ``spacing``.

    Computed on the bounding box of ``pred ∪ gt``: every surface voxel lies inside it and the voxels just outside
    are background, so erosion with border value 0 and the Euclidean distance transform (nearest surface voxel
    of the other mask) give the same values as on the full image.
    """
    box = _bbox(pred | gt)
    sp, sg = _surface(pred[box]), _surface(gt[box])
    to_gt = distance_transform_edt(~sg, sampling=spacing)[sp]
    to_pred = distance_transform_edt(~sp, sampling=spacing)[sg]
    return np.concatenate([to_gt, to_pred])


def hd95(pred: np.ndarray, gt: np.ndarray, spacing: Sequence[float]) -> float | None:
    """95th percentile (linear interpolation) of the union of both directed surface distance sets (medpy
    ``hd95``); None when either mask is empty."""
    if not pred.any() or not gt.any():
        return None
    return float(np.percentile(surface_distances(pred, gt, spacing), 95))
