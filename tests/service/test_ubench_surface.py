"""U-Bench surface metrics against their references: HD95 and ASSD against medpy 0.5.2 (U-Bench's pin, run
here); HD95, ASSD and NSD against MONAI 1.5.0's definitions (``monai/metrics/utils.py`` ``get_mask_edges`` and
``get_surface_distance``, ``hausdorff_distance.py``, ``surface_distance.py``, ``surface_dice.py``: MONAI needs
torch, so they are re-implemented here by all-pairs point distances in float32, as MONAI computes them); the
empty-case conventions (U-Bench ``utils/util.py`` ``calculate_metric_percase``, commit eafbb9f)."""

from collections.abc import Iterator

import numpy as np
import pytest
from medpy.metric import binary as medpy
from scipy.ndimage import binary_erosion, gaussian_filter

from service.estimators import ubench as U
from service.estimators.ubench_masks import surface_metrics
from service.registry import no_progress
from service.scoring import ubench as S

Case = tuple[np.ndarray, np.ndarray, list[float]]


def monai_edges(mask: np.ndarray) -> np.ndarray:
    """MONAI ``get_mask_edges``: crop with a margin of 1 (zeros beyond the image), scipy's default erosion, XOR."""
    padded = np.pad(mask, 1)
    return (binary_erosion(padded) ^ padded)[tuple(slice(1, -1) for _ in mask.shape)]


def monai_directed(src: np.ndarray, dst: np.ndarray, spacing: list[float]) -> np.ndarray:
    """MONAI ``get_surface_distance(edges_src, edges_dst)``: per edge voxel of src the nearest edge voxel of dst,
    Euclidean in spacing units, returned as float32."""
    a = np.argwhere(monai_edges(src)) * np.asarray(spacing)
    b = np.argwhere(monai_edges(dst)) * np.asarray(spacing)
    d = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    return d.astype(np.float32)


def monai_reference(pred: np.ndarray, gt: np.ndarray, spacing: list[float], tau: float) -> dict[str, float]:
    """``compute_hausdorff_distance(percentile=95)``: max of the two directed ``torch.quantile`` (linear);
    ``compute_average_surface_distance(symmetric=True)``: mean of both sets concatenated;
    ``compute_surface_dice([tau])``: (#a ≤ τ + #b ≤ τ)/(|a| + |b|), compared in float32."""
    a, b = monai_directed(pred, gt, spacing), monai_directed(gt, pred, spacing)
    both = np.concatenate([a, b])
    tau32 = np.float32(tau)
    return {
        "hd95": float(max(np.quantile(a, 0.95), np.quantile(b, 0.95))),
        "assd": float(both.mean(dtype=np.float32)),
        "nsd": float(((a <= tau32).sum() + (b <= tau32).sum()) / both.size),
    }


def blobs(rng: np.random.Generator, shape: tuple[int, ...], level: float = 0.5) -> np.ndarray:
    return gaussian_filter(rng.random(shape), 1.5) > level


def generated_cases() -> Iterator[Case]:
    """2-D and 3-D blobs with anisotropic spacing, masks touching the image border, one-pixel masks."""
    rng = np.random.default_rng(2026)
    for shape in [(23, 31), (40, 17), (9, 11, 13), (12, 8, 10)]:
        for _ in range(5):
            a, b = blobs(rng, shape), blobs(rng, shape, 0.52)
            if a.any() and b.any():
                yield a, b, rng.uniform(0.3, 3.0, len(shape)).round(3).tolist()
    for shape in [(20, 20), (8, 9, 7)]:
        a, b = blobs(rng, shape), blobs(rng, shape)
        a[(0,) * (len(shape) - 1)] = True
        b[(-1,) * (len(shape) - 1)] = True
        yield a, b, [1.0] * len(shape)
        one = np.zeros(shape, dtype=bool)
        one[(3,) * len(shape)] = True
        yield one, b, [0.5, *([2.0] * (len(shape) - 1))]
        yield one, np.roll(one, 2, axis=0), [1.0] * len(shape)


CASES = list(generated_cases())


def test_the_generated_cases_cover_what_they_claim() -> None:
    dims = [p.ndim for p, _, _ in CASES]
    assert dims.count(2) >= 10 and dims.count(3) >= 10
    assert sum(int(p.sum()) == 1 for p, _, _ in CASES) >= 4
    assert sum(bool(p[(0,) * (p.ndim - 1)].any()) for p, _, _ in CASES) >= 2


def test_one_pixel_hand_computed() -> None:
    """gt: one pixel; pred: it and a pixel 3 away. a = {0, 3}, b = {0}. medpy: P95 of {0, 0, 3} = 2.7, ASSD
    (medpy 0.5.2: pooled mean) 3/3 = 1; MONAI: max(P95{0, 3} = 2.85, 0), ASSD 1; NSD(τ = 1) = 2/3 either way."""
    gt = np.zeros((5, 6), dtype=bool)
    gt[1, 1] = True
    pred = gt.copy()
    pred[1, 4] = True
    medpy_values = surface_metrics(pred, gt, [1.0, 1.0], "medpy", 1.0)
    monai_values = surface_metrics(pred, gt, [1.0, 1.0], "monai", 1.0)
    assert medpy_values["hd95"] == pytest.approx(2.7, abs=1e-12)
    assert medpy_values["assd"] == pytest.approx(1.0, abs=1e-15)
    assert monai_values["hd95"] == pytest.approx(2.85, abs=1e-12)
    assert monai_values["assd"] == pytest.approx(1.0, abs=1e-15)
    assert medpy_values["nsd"] == monai_values["nsd"] == pytest.approx(2 / 3, abs=1e-15)


@pytest.mark.parametrize("i", range(len(CASES)))
def test_medpy_convention_equals_medpy(i: int) -> None:
    pred, gt, spacing = CASES[i]
    ours = surface_metrics(pred, gt, spacing, "medpy", 1.0)
    assert ours["hd95"] == pytest.approx(medpy.hd95(pred, gt, voxelspacing=spacing), rel=1e-12, abs=1e-12)
    assert ours["assd"] == pytest.approx(medpy.assd(pred, gt, voxelspacing=spacing), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("i", range(len(CASES)))
def test_monai_convention_and_nsd_equal_monai(i: int) -> None:
    """Equal to MONAI's float32 values within float32 rounding; NSD exactly, at two tolerances."""
    pred, gt, spacing = CASES[i]
    for tau in (1.0, 2.5):
        ours = surface_metrics(pred, gt, spacing, "monai", tau)
        ref = monai_reference(pred, gt, spacing, tau)
        assert ours["hd95"] == pytest.approx(ref["hd95"], rel=1e-6, abs=1e-6)
        assert ours["assd"] == pytest.approx(ref["assd"], rel=1e-6, abs=1e-6)
        assert ours["nsd"] == ref["nsd"]


def test_conventions_differ_where_the_sets_are_unbalanced() -> None:
    """The two HD95 definitions are not the same function: on the generated cases MONAI's is never below medpy's
    (the max of two directed percentiles bounds the pooled one) and above it on most."""
    diffs = []
    for pred, gt, spacing in CASES:
        hd = {c: surface_metrics(pred, gt, spacing, c, 1.0)["hd95"] for c in ("medpy", "monai")}
        diffs.append(hd["monai"] - hd["medpy"])
    assert min(diffs) >= -1e-12
    assert sum(d > 1e-9 for d in diffs) > len(diffs) / 2


def test_empty_masks_follow_monai_for_nsd() -> None:
    """One mask empty: HD95 and ASSD null (MONAI: inf), NSD 0 (MONAI: no boundary point matched); both empty:
    all null (MONAI: nan)."""
    empty = np.zeros((6, 6), dtype=bool)
    one = empty.copy()
    one[2, 2] = True
    for pred, gt in ((one, empty), (empty, one)):
        assert surface_metrics(pred, gt, [1.0, 1.0], "monai", 1.0) == {"hd95": None, "assd": None, "nsd": 0.0}
    assert surface_metrics(empty, empty, [1.0, 1.0], "medpy", 1.0) == {"hd95": None, "assd": None, "nsd": None}
    cases = U.seg_metrics_fn(
        U.SegMetricsParams(
            pred=[one.astype(int).tolist(), empty.astype(int).tolist()], gt=[empty.astype(int).tolist()] * 2
        ),
        no_progress,
    ).cases
    assert (cases[0].assd_reason, cases[0].nsd, cases[0].nsd_reason) == ("empty_mask", 0.0, None)
    assert (cases[1].nsd, cases[1].nsd_reason) == (None, "empty_mask")


def four_cases() -> tuple[list[list], list[list]]:
    """Square fixture (IoU 0.6, Dice 0.75, HD95 1, ASSD 0.5), both empty, prediction only, ground truth only."""
    gt = np.zeros((8, 8), dtype=np.uint8)
    gt[2:6, 2:6] = 1
    empty = np.zeros_like(gt)
    return [m.tolist() for m in (np.roll(gt, 1, axis=0), empty, gt, empty)], [
        m.tolist() for m in (gt, empty, empty, gt)
    ]


def test_synapse_empty_cases_in_the_estimator() -> None:
    """calculate_metric_percase: pred non-empty and gt empty → (Dice 1, HD95 0, Jaccard 1, ASD 0); pred empty →
    all 0; exclude (default) keeps IoU 0 / Dice 1 on both empty and leaves the surface metrics out."""
    pred, gt = four_cases()
    res = U.seg_metrics_fn(U.SegMetricsParams(pred=pred, gt=gt, empty_cases="synapse"), no_progress)
    assert [c.dice for c in res.cases] == [0.75, 0.0, 1.0, 0.0]
    assert [c.iou for c in res.cases] == [pytest.approx(0.6, abs=1e-15), 0.0, 1.0, 0.0]
    assert [c.hd95 for c in res.cases] == [1.0, 0.0, 0.0, 0.0]
    assert [c.assd for c in res.cases] == [0.5, 0.0, 0.0, 0.0]
    assert res.mean.dice == pytest.approx(1.75 / 4, abs=1e-15)
    assert res.mean.hd95 == 0.25 and res.n_hd95 == 4
    assert [c.nsd for c in res.cases] == [1.0, None, 0.0, 0.0]
    default = U.seg_metrics_fn(U.SegMetricsParams(pred=pred, gt=gt), no_progress)
    assert [c.dice for c in default.cases] == [0.75, 1.0, 0.0, 0.0]
    assert default.mean.hd95 == 1.0 and default.n_hd95 == 1


def test_synapse_without_surface_metrics_keeps_them_null() -> None:
    pred, gt = four_cases()
    res = U.seg_metrics_fn(U.SegMetricsParams(pred=pred, gt=gt, empty_cases="synapse", hd95=False), no_progress)
    assert [c.dice for c in res.cases] == [0.75, 0.0, 1.0, 0.0]
    assert {c.hd95_reason for c in res.cases} == {c.nsd_reason for c in res.cases} == {"not_requested"}


def test_scorer_means_follow_the_conventions() -> None:
    pred, gt = four_cases()
    key = [S.AnswerKeyItem(item_id=str(i), mask=m) for i, m in enumerate(gt)]
    preds = [S.PredictionItem(item_id=str(i), mask=m) for i, m in enumerate(pred)]
    out = S.score(key, preds, S.Params(n_resamples=0, empty_cases="synapse", surface_convention="monai"))
    assert out["scores"]["dice"]["value"] == pytest.approx(1.75 / 4, abs=1e-15)
    assert out["scores"]["hd95"]["value"] == 0.25
    assert out["scores"]["assd"]["value"] == pytest.approx(0.5 / 4, abs=1e-15)
    assert out["scores"]["nsd"]["value"] == pytest.approx(1 / 3, abs=1e-15)
    assert out["item_metrics"]["nsd"] == [1.0, None, 0.0, 0.0]
    assert out["breakdown"]["surface_convention"] == "monai" and out["breakdown"]["n_nsd"] == 3
    default = S.score(key, preds, S.Params(n_resamples=0))
    assert default["scores"]["dice"]["value"] == pytest.approx(1.75 / 4, abs=1e-15)
    assert default["scores"]["hd95"]["value"] == 1.0 and default["scores"]["hd95"]["n"] == 1


def test_nsd_tolerance_is_in_spacing_units() -> None:
    """Square fixture with spacing (0.5, 2): 12 of 24 surface distances are 0.5, the rest 0."""
    pred, gt = four_cases()
    p, g = np.array(pred[0], dtype=bool), np.array(gt[0], dtype=bool)
    assert surface_metrics(p, g, [0.5, 2.0], "monai", 0.4)["nsd"] == 0.5
    assert surface_metrics(p, g, [0.5, 2.0], "monai", 0.5)["nsd"] == 1.0
    assert surface_metrics(p, g, [1.0, 1.0], "monai", 0.5)["nsd"] == 0.5


def test_nsd_compares_in_float32_as_monai() -> None:
    """Spacing 0.1: a pixel 3 rows away is at 0.30000000000000004 in float64, 0.3 in MONAI's float32 distances,
    so at τ = 0.3 MONAI counts it within: NSD 3/3, not 2/3."""
    gt = np.zeros((6, 6), dtype=bool)
    gt[0, 0] = True
    pred = gt.copy()
    pred[3, 0] = True
    assert surface_metrics(pred, gt, [0.1, 0.1], "monai", 0.3)["nsd"] == 1.0
    assert monai_reference(pred, gt, [0.1, 0.1], 0.3)["nsd"] == 1.0
