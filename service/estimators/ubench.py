"""U-Bench helper estimators (Tang et al., 2025): segmentation metrics, U-Score, paired tests, Friedman-Nemenyi.

Estimators: ``ubench.seg_metrics``, ``ubench.uscore``, ``ubench.paired_significance``, ``ubench.friedman_nemenyi``.
Mask metrics live in :mod:`service.estimators.ubench_masks`, the U-Score in :mod:`.ubench_uscore`, the tests in
:mod:`.ubench_stats` and the figures in :mod:`.ubench_plots`. User documentation: docs/ubench.md.
"""

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.estimators import ubench_masks as masks
from service.estimators import ubench_stats
from service.estimators.ubench_plots import friedman_plot, seg_metrics_plot
from service.estimators.ubench_uscore import (
    FPS_QUANTILES,
    IOU_QUANTILES,
    LOG_GFLOPS_QUANTILES,
    LOG_PARAMS_QUANTILES,
    uscore,
)
from service.registry import EstimatorSpec, Progress, register
from service.types import ArrayConstraints, ArrayRef, FiniteFloat, ResultModel, StrictModel, array_param

PAPER = "U-Bench: A Comprehensive Understanding of U-Net through 100-Variant Benchmarking"
CITATION = (
    "Fenghe Tang, Chengqi Dong, Wenxin Ma, Zikang Xu, Heqin Zhu, Zihang Jiang, Rongsheng Wang, Yuhao Wang, "
    "Chenxu Wu, S. Kevin Zhou. U-Bench: A Comprehensive Understanding of U-Net through 100-Variant "
    "Benchmarking. NeurIPS 2026; arXiv 2510.07041 (2025)."
)
MAX_CASES = 64
LIST_WEIGHT = 20.0
"""Cost per voxel of reading a nested-list mask (conversion to an array dominates), in voxel operations."""
ARRAY_WEIGHT = 2.0
"""Cost per voxel of thresholding and counting an uploaded array (measured ~1.7 ms per 1024² case)."""
HD95_WEIGHT = 160.0
"""Cost per voxel of the surface metrics (HD95, ASSD and NSD share one computation) when the surfaces fill the
image (two erosions and two EDTs: ~0.28 s per 1024²)."""
MAX_PAIRS = 100_000
MAX_MODELS = 200
MAX_MATRIX = 100_000
PAIRED_UNIT = 30.0
"""Cost per pair of the paired test, in elements (rank sort and scipy overhead)."""


def _mask_type(value: object, kind: Literal["float", "int"], doc: str) -> object:
    """A 2-D nested list (≤ 1024 per axis), a 3-D nested list (≤ 256 per axis) or an uploaded npy reference.

    Element values (0/1, or [0, 1]) are checked by ``ubench_masks.as_mask`` in one vectorised pass: a schema
    bound would report every offending voxel (a 0/255 mask would answer with half a million errors).
    """
    row2 = Annotated[list[value], Field(min_length=1, max_length=1024)]  # type: ignore[valid-type]
    plane = Annotated[list[row2], Field(min_length=1, max_length=1024)]  # type: ignore[valid-type]
    row3 = Annotated[list[value], Field(min_length=1, max_length=256)]  # type: ignore[valid-type]
    slab = Annotated[list[row3], Field(min_length=1, max_length=256)]  # type: ignore[valid-type]
    volume = Annotated[list[slab], Field(min_length=1, max_length=256)]  # type: ignore[valid-type]
    rules = ArrayConstraints(kind, ndim=2, ge=0, le=1, max_ndim=3)
    return Annotated[plane | volume | ArrayRef, rules, Field(description=doc)]  # type: ignore[valid-type]


PRED_DOC = (
    "One case's prediction: a 2-D (≤ 1024 per axis) or 3-D (≤ 256 per axis) nested list of 0/1 values or "
    'probabilities in [0, 1], or {"array": "sha256:..."} of an uploaded npy (≤ 1024² voxels in 2-D, ≤ 256³ in '
    "3-D; uint8, int or float). Foreground = value > threshold."
)
GT_DOC = "One case's ground truth: like a prediction, but holding only 0 and 1 (npy: an integer dtype, e.g. uint8)."
SURFACE_DOC = (
    "HD95 definition: 'medpy' (U-Bench's medpy 0.5.2 hd95: 95th percentile of both directed surface distance sets "
    "pooled) or 'monai' (MONAI compute_hausdorff_distance: the larger of the two directed 95th percentiles). ASSD "
    "is the mean of both sets pooled under both (medpy assd and MONAI's symmetric average surface distance agree)."
)
EMPTY_DOC = (
    "Cases with an empty mask: 'exclude' (IoU 0 and Dice 1 when both are empty; HD95 and ASSD null, left out of "
    "the means) or 'synapse' (U-Bench's Synapse path: empty prediction gives Dice = IoU = HD95 = ASSD = 0, empty "
    "ground truth only gives Dice = IoU = 1 and HD95 = ASSD = 0, averaged in)."
)
NSD_DOC = "Tolerance τ of the normalised surface Dice, in spacing units (default 1.0)."
PredMask = _mask_type(FiniteFloat, "float", PRED_DOC)
GtMask = _mask_type(int, "int", GT_DOC)
Spacing = Annotated[
    list[Annotated[float, Field(gt=0, le=1e6)]],
    Field(min_length=2, max_length=3, description="Voxel spacing, one positive float per axis (default all 1)."),
]


class SegMetricsParams(StrictModel):
    """Parameters of ``ubench.seg_metrics``."""

    pred: list[PredMask] = Field(min_length=1, max_length=MAX_CASES, description="Predicted masks, 1-64 cases.")  # type: ignore[valid-type]
    gt: list[GtMask] = Field(min_length=1, max_length=MAX_CASES, description="Ground-truth masks, same order.")  # type: ignore[valid-type]
    spacing: Spacing | None = None
    threshold: float = Field(
        0.5, ge=0, lt=1, description="Foreground where pred > threshold (U-Bench: sigmoid output > 0.5)."
    )
    hd95: bool = Field(True, description="Compute the surface metrics HD95, ASSD and NSD (default true).")
    surface_convention: masks.SurfaceConvention = Field("medpy", description=SURFACE_DOC)
    empty_cases: masks.EmptyCases = Field("exclude", description=EMPTY_DOC)
    nsd_tolerance: float = Field(1.0, ge=0, le=1e6, description=NSD_DOC)


Reason = Literal["empty_mask", "not_requested"] | None


class CaseResult(ResultModel):
    """Metrics of one case."""

    iou: float = Field(description="TP/(TP+FP+FN); 0 when both masks are empty (U-Bench).")
    dice: float = Field(description="2TP/(2TP+FP+FN); 1 when both masks are empty (medpy dc).")
    se: float = Field(description="Sensitivity TP/(TP+FN); 0 when the ground truth is empty (medpy).")
    pc: float = Field(description="Precision TP/(TP+FP); 0 when the prediction is empty (medpy).")
    sp: float = Field(description="Specificity TN/(TN+FP); 0 when TN+FP = 0 (medpy).")
    f1: float = Field(description="2·PC·SE/(PC+SE); 0 when PC+SE = 0.")
    acc: float = Field(description="(TP+TN)/N.")
    hd95: float | None = Field(description="95th-percentile Hausdorff distance in spacing units, or null.")
    hd95_reason: Reason = Field(
        description="Why hd95 is null: 'empty_mask' (either mask empty) or 'not_requested'; null when computed."
    )
    assd: float | None = Field(description="Average symmetric surface distance in spacing units, or null.")
    assd_reason: Reason = Field(description="Why assd is null (as hd95_reason); null when computed.")
    nsd: float | None = Field(description="Normalised surface Dice at nsd_tolerance (0 when one mask is empty).")
    nsd_reason: Reason = Field(description="Why nsd is null: 'empty_mask' (both masks empty) or 'not_requested'.")
    tp: int
    fp: int
    fn: int
    tn: int


class MetricSummary(ResultModel):
    """One statistic of every case metric over the cases (hd95, assd and nsd over the cases where defined)."""

    iou: float | None
    dice: float | None
    se: float | None
    pc: float | None
    sp: float | None
    f1: float | None
    acc: float | None
    hd95: float | None
    assd: float | None
    nsd: float | None


class SegMetricsResult(ResultModel):
    """Per-case metrics, their mean and sample SD over cases."""

    cases: list[CaseResult]
    mean: MetricSummary = Field(description="Mean over cases (U-Bench's dataset score: mean of per-image values).")
    sd: MetricSummary = Field(description="Sample SD (ddof = 1) over cases; null with fewer than 2 values.")
    n_cases: int
    n_hd95: int = Field(description="Cases with a defined hd95 (the n behind mean.hd95 and sd.hd95).")
    spacing: list[float] = Field(description="Spacing used, one value per axis of the cases.")
    threshold: float
    surface_convention: masks.SurfaceConvention
    empty_cases: masks.EmptyCases
    nsd_tolerance: float


def _spacing(spacing: list[float] | None, ndim: int) -> list[float]:
    if spacing is None:
        return [1.0] * ndim
    if len(spacing) != ndim:
        raise InvalidInput(f"spacing has {len(spacing)} values for {ndim}-D masks", loc=("spacing",))
    return list(spacing)


def summarise(rows: list[dict[str, float | None]]) -> tuple[dict[str, float | None], dict[str, float | None], int]:
    """Mean and sample SD of each metric over the rows (None entries skipped), and the count of defined hd95."""
    mean: dict[str, float | None] = {}
    sd: dict[str, float | None] = {}
    n_hd = 0
    for name in (*masks.CASE_METRICS, *masks.SURFACE_METRICS):
        values = np.array([r[name] for r in rows if r[name] is not None], dtype=np.float64)
        mean[name] = float(values.mean()) if values.size else None
        sd[name] = float(values.std(ddof=1)) if values.size > 1 else None
        if name == "hd95":
            n_hd = int(values.size)
    return mean, sd, n_hd


def seg_case(
    pred: np.ndarray,
    gt: np.ndarray,
    spacing: list[float],
    want_surface: bool,
    convention: masks.SurfaceConvention = "medpy",
    empty_cases: masks.EmptyCases = "exclude",
    nsd_tolerance: float = 1.0,
) -> dict[str, float | int | str | None]:
    """All metrics of one case of boolean masks; ``synapse`` replaces Dice, IoU, HD95 and ASSD of a case with an
    empty mask by U-Bench's Synapse values (:func:`~service.estimators.ubench_masks.synapse_empty_case`)."""
    c = masks.counts(pred, gt)
    row: dict[str, float | int | str | None] = {**masks.case_metrics(c), **vars(c)}
    has_pred, has_gt = c.tp + c.fp > 0, c.tp + c.fn > 0
    if not want_surface:
        row.update({name: None for name in masks.SURFACE_METRICS})
        row.update({f"{name}_reason": "not_requested" for name in masks.SURFACE_METRICS})
    else:
        values = masks.surface_metrics(pred, gt, spacing, convention, nsd_tolerance)
        row.update(values)
        row.update({f"{name}_reason": "empty_mask" if v is None else None for name, v in values.items()})
    if empty_cases == "synapse" and not (has_pred and has_gt):
        synapse = masks.synapse_empty_case(has_pred)
        if not want_surface:
            synapse = {k: v for k, v in synapse.items() if k not in masks.SURFACE_METRICS}
        row.update(synapse)
        row.update({f"{name}_reason": None for name in masks.SURFACE_METRICS if name in synapse})
    return row


def seg_metrics_fn(p: SegMetricsParams, progress: Progress) -> SegMetricsResult:
    """``ubench.seg_metrics``: per-case IoU, Dice, SE, PC, SP, F1, ACC, HD95, ASSD and NSD, mean and SD over cases."""
    if len(p.pred) != len(p.gt):
        raise InvalidInput(f"pred has {len(p.pred)} cases, gt has {len(p.gt)}", loc=("pred",))
    rows = []
    spacing: list[float] = []
    for i, (pv, gv) in enumerate(zip(p.pred, p.gt, strict=True)):
        pred = masks.as_mask(pv, ("pred", i), binary=False, threshold=p.threshold)
        gt = masks.as_mask(gv, ("gt", i), binary=True, threshold=p.threshold)
        if pred.shape != gt.shape:
            raise InvalidInput(f"pred shape {list(pred.shape)} differs from gt shape {list(gt.shape)}", ("pred", i))
        if i and gt.ndim != len(spacing):
            raise InvalidInput("every case must have the same number of dimensions", loc=("gt", i))
        spacing = _spacing(p.spacing, gt.ndim)
        rows.append(seg_case(pred, gt, spacing, p.hd95, p.surface_convention, p.empty_cases, p.nsd_tolerance))
        progress((i + 1) / len(p.pred), f"case {i + 1} of {len(p.pred)}")
    mean, sd, n_hd = summarise(rows)
    return SegMetricsResult(
        cases=[CaseResult(**r) for r in rows],
        mean=MetricSummary(**mean),
        sd=MetricSummary(**sd),
        n_cases=len(rows),
        n_hd95=n_hd,
        spacing=spacing,
        threshold=p.threshold,
        surface_convention=p.surface_convention,
        empty_cases=p.empty_cases,
        nsd_tolerance=p.nsd_tolerance,
    )


def mask_cost(pred: object, gt: object, want_hd95: bool) -> float:
    """Voxel operations of one case: LIST_WEIGHT (nested lists) or ARRAY_WEIGHT (arrays) per voxel, plus
    HD95_WEIGHT per voxel when HD95 is requested (bound: the bounding box of pred ∪ gt is the whole image)."""
    voxels = float(_size(gt))
    weight = sum(ARRAY_WEIGHT if isinstance(m, np.ndarray) else LIST_WEIGHT for m in (pred, gt)) / 2
    return voxels * (weight + (HD95_WEIGHT if want_hd95 else 0.0))


def _size(value: object) -> int:
    """Element count of an array or a rectangular nested list."""
    if isinstance(value, np.ndarray):
        return int(value.size)
    size = 1
    while isinstance(value, list):
        size *= len(value)
        value = value[0] if value else None
    return size


def seg_metrics_cost(p: SegMetricsParams) -> float:
    return sum(mask_cost(pv, gv, p.hd95) for pv, gv in zip(p.pred, p.gt, strict=False))


class Quantiles(StrictModel):
    """A pair of 10th/90th percentiles (q10 < q90)."""

    q10: FiniteFloat
    q90: FiniteFloat


class UScoreParams(StrictModel):
    """Parameters of ``ubench.uscore``."""

    iou: float = Field(ge=0, le=1, description="Mean IoU of the model on the dataset (A).")
    params_m: float = Field(gt=0, le=1e6, description="Parameters in millions (P).")
    gflops: float = Field(gt=0, le=1e9, description="GFLOPs per image (G).")
    fps: float = Field(gt=0, le=1e9, description="Frames per second (S).")
    dataset: Literal[tuple(IOU_QUANTILES)] | None = Field(  # type: ignore[valid-type]
        None,
        description="U-Bench in-domain dataset whose IoU quantiles apply (give this or iou_quantiles).",
    )
    iou_quantiles: Quantiles | None = Field(None, description="Explicit IoU Q10/Q90 (instead of dataset).")
    log_params_quantiles: Quantiles = Field(
        default_factory=lambda: Quantiles(q10=LOG_PARAMS_QUANTILES[0], q90=LOG_PARAMS_QUANTILES[1]),
        description="ln Q10/ln Q90 of parameters in millions (default 0.39, 4.32: U-Bench's zoo).",
    )
    log_gflops_quantiles: Quantiles = Field(
        default_factory=lambda: Quantiles(q10=LOG_GFLOPS_QUANTILES[0], q90=LOG_GFLOPS_QUANTILES[1]),
        description="ln Q10/ln Q90 of GFLOPs (default 0.88, 4.20).",
    )
    fps_quantiles: Quantiles = Field(
        default_factory=lambda: Quantiles(q10=FPS_QUANTILES[0], q90=FPS_QUANTILES[1]),
        description="Q10/Q90 of FPS (default 24.28, 121.63).",
    )
    floor: float = Field(
        0.05, ge=0, lt=1, description="Floor applied to every component after clipping (calculator 0.05; paper 0)."
    )
    alpha: float = Field(0.5, gt=0, lt=1, description="Weight of accuracy against efficiency (default 0.5).")
    weights: list[Annotated[float, Field(gt=0, le=1e6)]] = Field(
        default_factory=lambda: [1 / 3, 1 / 3, 1 / 3],
        min_length=3,
        max_length=3,
        description="Weights of p, g, s in the efficiency harmonic mean (normalised; default 1/3 each).",
    )


class UScoreResult(ResultModel):
    """U-Score and its components."""

    a: float = Field(description="clip((A − Q10)/(Q90 − Q10), 0, 1), before the floor.")
    p: float = Field(description="clip((ln Q90 − ln P)/(ln Q90 − ln Q10), 0, 1), before the floor.")
    g: float = Field(description="As p, for GFLOPs, before the floor.")
    s: float = Field(description="clip((S − Q10)/(Q90 − Q10), 0, 1), before the floor.")
    eff: float = Field(description="Weighted harmonic mean of the floored p, g, s.")
    uscore_100: float = Field(description="100 × harmonic mean (weights α, 1 − α) of the floored a and eff.")
    constants_used: dict[str, float] = Field(description="Quantiles, floor, alpha and weights used.")


def uscore_fn(p: UScoreParams, progress: Progress) -> UScoreResult:
    """``ubench.uscore``: U-Bench's Eqs. 1-3 (see :func:`service.estimators.ubench_uscore.uscore`)."""
    if (p.dataset is None) == (p.iou_quantiles is None):
        raise InvalidInput("give exactly one of dataset and iou_quantiles", loc=("dataset",))
    iou_q = IOU_QUANTILES[p.dataset] if p.dataset is not None else (p.iou_quantiles.q10, p.iou_quantiles.q90)  # type: ignore[union-attr]
    pairs = {
        "iou_quantiles": iou_q,
        "log_params_quantiles": (p.log_params_quantiles.q10, p.log_params_quantiles.q90),
        "log_gflops_quantiles": (p.log_gflops_quantiles.q10, p.log_gflops_quantiles.q90),
        "fps_quantiles": (p.fps_quantiles.q10, p.fps_quantiles.q90),
    }
    for name, (q10, q90) in pairs.items():
        if not q10 < q90:
            raise InvalidInput(f"{name}: q10 must be below q90", loc=(name,))
    w = tuple(p.weights)
    res = uscore(p.iou, p.params_m, p.gflops, p.fps, *pairs.values(), floor=p.floor, alpha=p.alpha, weights=w)  # type: ignore[arg-type]
    constants = {f"{name}_{k}": v for name, q in pairs.items() for k, v in zip(("q10", "q90"), q, strict=True)}
    constants.update(floor=p.floor, alpha=p.alpha, w_p=w[0], w_g=w[1], w_s=w[2])
    return UScoreResult(**vars(res), constants_used=constants)


Scores = array_param(FiniteFloat, "float", min_length=3, max_length=MAX_PAIRS)


class PairedParams(StrictModel):
    """Parameters of ``ubench.paired_significance``."""

    model: Scores = Field(description="Per-case scores of the model (e.g. IoU), 3-100,000 values.")  # type: ignore[valid-type]
    baseline: Scores = Field(description="Per-case scores of the baseline (e.g. U-Net), paired by position.")  # type: ignore[valid-type]
    test: Literal["wilcoxon", "ttest_rel"] = Field(
        "wilcoxon", description="Wilcoxon signed-rank (default) or the paired t-test."
    )
    alternative: Literal["two-sided", "less", "greater"] = "two-sided"
    method: Literal["auto", "exact", "approx"] = Field(
        "auto", description="Wilcoxon p-value: scipy's 'auto', the exact null distribution, or the normal approx."
    )


class PairedResult(ResultModel):
    """Paired test of model against baseline."""

    mean_diff: float = Field(description="mean(model − baseline).")
    statistic: float = Field(description="Wilcoxon: scipy's statistic (min(W+, W−) two-sided, W+ one-sided); t.")
    p: float
    bin: Literal["<=1e-4", "<=1e-3", "<=1e-2", "<=0.05", "ns"] = Field(description="U-Bench's significance bin of p.")
    n: int = Field(description="Number of pairs.")
    n_nonzero: int = Field(description="Pairs whose difference is non-zero after rounding to 1e-12.")
    test: str
    reconstructed: list[str] = Field(description="Fields resting on a reconstructed protocol choice.")


def paired_fn(p: PairedParams, progress: Progress) -> PairedResult:
    """``ubench.paired_significance``: paired test of per-case scores against a baseline."""
    model = np.asarray(p.model, dtype=np.float64)
    baseline = np.asarray(p.baseline, dtype=np.float64)
    if model.shape != baseline.shape:
        raise InvalidInput(f"model has {model.size} scores, baseline has {baseline.size}", loc=("baseline",))
    res = ubench_stats.paired_test(model, baseline, p.test, p.alternative, p.method)
    return PairedResult(
        **vars(res),
        n=int(model.size),
        n_nonzero=int(np.count_nonzero(np.round(model - baseline, 12))),
        test=p.test,
        reconstructed=["p", "bin"],
    )


def paired_cost(p: PairedParams) -> float:
    return PAIRED_UNIT * float(np.size(p.model))


Row = Annotated[list[FiniteFloat], Field(min_length=2, max_length=MAX_MODELS)]
Name = Annotated[str, Field(min_length=1, max_length=128)]


class FriedmanParams(StrictModel):
    """Parameters of ``ubench.friedman_nemenyi``."""

    scores: array_param(Row, "float", ndim=2, min_length=2, max_length=MAX_MATRIX // 2) = Field(  # type: ignore[valid-type]
        description="N datasets × k models matrix of scores (rows: datasets), N ≥ 2, 2 ≤ k ≤ 200, N·k ≤ 100,000."
    )
    models: list[Name] | None = Field(None, max_length=MAX_MODELS, description="Model names (k), for the plot.")
    higher_is_better: bool = Field(True, description="Rank 1 goes to the highest score (default) or the lowest.")
    alpha: float = Field(0.05, gt=0, lt=0.5, description="Significance level of the Nemenyi CD (default 0.05).")


class FriedmanResult(ResultModel):
    """Average ranks, Friedman test and Nemenyi critical difference."""

    avg_ranks: list[float] = Field(description="Average rank of each model over datasets (1 = best, ties averaged).")
    chi2: float = Field(description="Friedman χ² (tie-corrected as scipy.stats.friedmanchisquare).")
    p: float = Field(description="P(χ²(k − 1) ≥ chi2).")
    q_alpha: float = Field(description="studentized_range.ppf(1 − α, k, ∞)/√2.")
    cd: float = Field(description="Nemenyi critical difference q_α √(k(k+1)/(6N)).")
    n_datasets: int
    n_models: int
    models: list[str] = Field(description="Model names (given, or m1..mk).")


def friedman_fn(p: FriedmanParams, progress: Progress) -> FriedmanResult:
    """``ubench.friedman_nemenyi``: Friedman test over datasets and the Nemenyi CD (Demšar, 2006)."""
    try:
        scores = np.asarray(p.scores, dtype=np.float64)
    except ValueError as exc:
        raise InvalidInput("every row of scores must have the same length", loc=("scores",)) from exc
    if scores.ndim != 2 or not 2 <= scores.shape[1] <= MAX_MODELS:
        raise InvalidInput(f"scores must be N × k with 2 ≤ k ≤ {MAX_MODELS}", loc=("scores",))
    n, k = scores.shape
    if n < 2 or n * k > MAX_MATRIX:
        raise InvalidInput(f"scores must have N ≥ 2 rows and N·k ≤ {MAX_MATRIX}", loc=("scores",))
    if p.models is not None and len(p.models) != k:
        raise InvalidInput(f"models has {len(p.models)} names for {k} columns", loc=("models",))
    res = ubench_stats.friedman_nemenyi(scores, p.higher_is_better, p.alpha)
    return FriedmanResult(
        **vars(res),
        n_datasets=n,
        n_models=k,
        models=p.models if p.models is not None else [f"m{j + 1}" for j in range(k)],
    )


def friedman_cost(p: FriedmanParams) -> float:
    return float(np.size(p.scores)) if isinstance(p.scores, np.ndarray) else float(sum(map(len, p.scores)))


_COMMON = {"version": "1", "family": "ubench", "paper": PAPER, "citation": CITATION}
SPECS = [
    register(
        EstimatorSpec(
            name="ubench.seg_metrics",
            summary="Per-case IoU, Dice, SE, PC, SP, F1, ACC, HD95, ASSD and NSD of binary masks (2-D/3-D), mean, SD.",
            params_model=SegMetricsParams,
            result_model=SegMetricsResult,
            fn=seg_metrics_fn,
            cost=seg_metrics_cost,
            cost_unit="voxel operations",
            sync_budget=6e8,
            hard_cap=2e11,
            plot=seg_metrics_plot,
            **_COMMON,
        )
    ),
    register(
        EstimatorSpec(
            name="ubench.uscore",
            summary="U-Score: harmonic mean of normalised IoU and efficiency (params, GFLOPs, FPS).",
            params_model=UScoreParams,
            result_model=UScoreResult,
            fn=uscore_fn,
            cost=lambda p: 1.0,
            cost_unit="evaluations",
            sync_budget=10.0,
            hard_cap=10.0,
            **_COMMON,
        )
    ),
    register(
        EstimatorSpec(
            name="ubench.paired_significance",
            summary="Paired Wilcoxon signed-rank or t-test of per-case scores against a baseline, with p bin.",
            params_model=PairedParams,
            result_model=PairedResult,
            fn=paired_fn,
            cost=paired_cost,
            cost_unit="element operations",
            sync_budget=1e7,
            hard_cap=1e7,
            **_COMMON,
        )
    ),
    register(
        EstimatorSpec(
            name="ubench.friedman_nemenyi",
            summary="Average ranks, Friedman χ² and p, and the Nemenyi critical difference over datasets.",
            params_model=FriedmanParams,
            result_model=FriedmanResult,
            fn=friedman_fn,
            cost=friedman_cost,
            cost_unit="matrix entries",
            sync_budget=1e6,
            hard_cap=1e6,
            plot=friedman_plot,
            **_COMMON,
        )
    ),
]
