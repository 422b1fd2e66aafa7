"""U-Score of U-Bench (Tang et al., 2025, Eqs. 1-3) with the quantile constants of its public calculator."""

import math
from dataclasses import dataclass

IOU_QUANTILES: dict[str, tuple[float, float]] = {
    "busi": (0.5837592, 0.7062627),
    "busbra": (0.77664876, 0.839330144),
    "tnscui": (0.664944187, 0.784390885),
    "isic": (0.81180614, 0.84177554),
    "skincancer": (0.7906120483830283, 0.8538840522323546),
    "kvasir": (0.75085247, 0.8428773),
    "robotool": (0.6940658864425706, 0.8462163286238785),
    "chasedb": (0.4657582467803476, 0.8117408180656985),
    "drive": (0.15081815, 0.6244703),
    "dsb": (0.84518087, 0.8814354),
    "glas": (0.63124824, 0.83085126),
    "monusac": (0.5333726221401941, 0.6691882627377632),
    "cell": (0.7750129177712127, 0.8449313275090908),
    "covid": (0.6272003645175361, 0.6967376585434479),
    "montgomery": (0.9157433067449976, 0.9587296),
    "dca": (0.5091263834701759, 0.6327484215070674),
    "acdc": (0.7268479093509606, 0.8477579210353294),
    "promise": (0.7816956737173072, 0.8686860589568378),
    "synapse": (0.548646052, 0.721961595),
    "cystoidfluid": (0.6349444722562034, 0.8339477863820954),
}
"""Per-dataset 10th/90th percentiles of IoU over the U-Bench model zoo (the 20 in-domain datasets)."""
LOG_PARAMS_QUANTILES = (0.39, 4.32)
"""ln of the 10th/90th percentiles of parameters in millions (1.48 M and 75.2 M)."""
LOG_GFLOPS_QUANTILES = (0.88, 4.20)
"""ln of the 10th/90th percentiles of GFLOPs (2.41 and 66.7)."""
FPS_QUANTILES = (24.28, 121.63)
"""10th/90th percentiles of frames per second (global, not per dataset)."""


@dataclass(frozen=True)
class UScore:
    """Normalised components (before the floor), the efficiency and the U-Score (x100)."""

    a: float
    p: float
    g: float
    s: float
    eff: float
    uscore_100: float


def up01(x: float, q10: float, q90: float) -> float:
    """clip((x − Q10)/(Q90 − Q10), 0, 1): accuracy and speed (higher is better)."""
    return min(max((x - q10) / (q90 - q10), 0.0), 1.0)


def down01_log(x: float, lq10: float, lq90: float) -> float:
    """clip((ln Q90 − ln x)/(ln Q90 − ln Q10), 0, 1): parameters and FLOPs (lower is better), quantiles in ln."""
    return min(max((lq90 - math.log(x)) / (lq90 - lq10), 0.0), 1.0)


def weighted_harmonic(values: tuple[float, ...], weights: tuple[float, ...]) -> float:
    """Σw / Σ(w/v), with the limit 0 when a value is 0."""
    if min(values) == 0.0:
        return 0.0
    return sum(weights) / sum(w / v for w, v in zip(weights, values, strict=True))


def uscore(
    iou: float,
    params_m: float,
    gflops: float,
    fps: float,
    iou_q: tuple[float, float],
    log_params_q: tuple[float, float] = LOG_PARAMS_QUANTILES,
    log_gflops_q: tuple[float, float] = LOG_GFLOPS_QUANTILES,
    fps_q: tuple[float, float] = FPS_QUANTILES,
    floor: float = 0.05,
    alpha: float = 0.5,
    weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
) -> UScore:
    """Eff = weighted harmonic mean of max(p, floor), max(g, floor), max(s, floor) (Eq. 2) and
    U-Score = 100 / (α/max(a, floor) + (1 − α)/Eff) (Eq. 3); ``floor = 0`` is the paper's formula, 0.05 the
    calculator's."""
    a = up01(iou, *iou_q)
    p = down01_log(params_m, *log_params_q)
    g = down01_log(gflops, *log_gflops_q)
    s = up01(fps, *fps_q)
    eff = weighted_harmonic((max(p, floor), max(g, floor), max(s, floor)), weights)
    score = weighted_harmonic((max(a, floor), eff), (alpha, 1 - alpha))
    return UScore(a=a, p=p, g=g, s=s, eff=eff, uscore_100=100 * score)
