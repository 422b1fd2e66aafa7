"""U-Bench helper estimators: the spec's measured figures, HD95 against brute force, conventions and validation."""

import math

import numpy as np
import pydantic
import pytest
from scipy import stats
from scipy.ndimage import binary_erosion, gaussian_filter, generate_binary_structure

from service.errors import Cancelled, Degenerate, InvalidInput
from service.estimators import ubench as U
from service.estimators.ubench_masks import directed_surface_distances, surface_metrics
from service.estimators.ubench_plots import friedman_plot, seg_metrics_plot
from service.estimators.ubench_stats import p_bin
from service.registry import ESTIMATORS, no_progress

UNET = [0.61, 0.72, 0.55, 0.80, 0.67, 0.59, 0.74, 0.70, 0.63, 0.58]
MODEL = [0.65, 0.74, 0.54, 0.83, 0.71, 0.64, 0.75, 0.76, 0.66, 0.60]
RANKS = np.array([[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 4, 3], [1, 3, 2, 4], [2, 1, 3, 4]])
"""A 6 × 4 rank matrix with the spec's average ranks [7/6, 2, 3, 23/6]."""


def square_fixture() -> tuple[list[list[int]], list[list[int]]]:
    """8×8 ground truth with a 4×4 square at rows/cols 2-5; the prediction is shifted down one row."""
    gt = np.zeros((8, 8), dtype=int)
    gt[2:6, 2:6] = 1
    return np.roll(gt, 1, axis=0).tolist(), gt.tolist()


def seg(**kw: object) -> U.SegMetricsResult:
    return U.seg_metrics_fn(U.SegMetricsParams(**kw), no_progress)


def uscore(**kw: object) -> U.UScoreResult:
    return U.uscore_fn(U.UScoreParams(**kw), no_progress)


def paired(**kw: object) -> U.PairedResult:
    return U.paired_fn(U.PairedParams(**kw), no_progress)


def hd95(pred: np.ndarray, gt: np.ndarray, spacing: list[float]) -> float | None:
    return surface_metrics(pred, gt, spacing, "medpy", 1.0)["hd95"]


def brute_hd95(pred: np.ndarray, gt: np.ndarray, spacing: list[float]) -> float:
    """Independent HD95: pairwise distances between surface voxel coordinates (surfaces by the cross erosion)."""
    cross = generate_binary_structure(pred.ndim, 1)
    sp = np.argwhere(pred ^ binary_erosion(pred, cross)) * spacing
    sg = np.argwhere(gt ^ binary_erosion(gt, cross)) * spacing
    d = np.sqrt(((sp[:, None, :] - sg[None, :, :]) ** 2).sum(axis=2))
    return float(np.percentile(np.concatenate([d.min(axis=1), d.min(axis=0)]), 95))


def blobs(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return gaussian_filter(rng.random(shape), 1.5) > 0.5


# --- seg_metrics: the 8×8 fixture ------------------------------------------------------------------------


def test_square_fixture_counts_and_metrics() -> None:
    pred, gt = square_fixture()
    (case,) = seg(pred=[pred], gt=[gt]).cases
    assert (case.tp, case.fp, case.fn, case.tn) == (12, 4, 4, 44)
    assert case.iou == pytest.approx(0.6, abs=1e-15)
    assert case.dice == pytest.approx(0.75, abs=1e-15)
    assert case.se == case.pc == pytest.approx(0.75, abs=1e-15)
    assert case.sp == pytest.approx(44 / 48, abs=1e-15)
    assert case.f1 == pytest.approx(0.75, abs=1e-15)
    assert case.acc == pytest.approx(0.875, abs=1e-15)
    assert case.hd95 == 1.0
    assert case.hd95_reason is None


def test_square_fixture_with_spacing() -> None:
    """Spacing (0.5, 2.0): the side columns of the two 12-voxel surfaces coincide (distance 0), the top and bottom
    rows are one row (0.5) apart; 12 of the 24 distances are 0.5, so HD95 = 0.5."""
    pred, gt = square_fixture()
    result = seg(pred=[pred], gt=[gt], spacing=[0.5, 2.0])
    assert result.cases[0].hd95 == 0.5
    assert result.spacing == [0.5, 2.0]
    d = np.concatenate(directed_surface_distances(np.array(pred, bool), np.array(gt, bool), [0.5, 2.0]))
    assert sorted(d.tolist()) == [0.0] * 12 + [0.5] * 12


@pytest.mark.parametrize("shape", [(23, 31), (9, 11, 13)])
def test_hd95_matches_brute_force(shape: tuple[int, ...]) -> None:
    """Bounding-box EDT equals all-pairs surface distances, with anisotropic spacing, 2-D and 3-D."""
    rng = np.random.default_rng(7)
    for _ in range(10):
        a, b = blobs(rng, shape), blobs(rng, shape)
        if not (a.any() and b.any()):
            continue
        spacing = rng.uniform(0.3, 3.0, len(shape)).tolist()
        assert hd95(a, b, spacing) == pytest.approx(brute_hd95(a, b, spacing), rel=1e-12, abs=0)


def test_hd95_invariant_to_zero_padding_and_symmetric() -> None:
    """Masks touching the image border: the border counts as background (erosion border value 0)."""
    rng = np.random.default_rng(3)
    a, b = blobs(rng, (30, 30)), blobs(rng, (30, 30))
    a[0, :] = True
    padded = [np.pad(m, 5) for m in (a, b)]
    assert hd95(*padded, [1.0, 1.0]) == pytest.approx(hd95(a, b, [1.0, 1.0]), rel=1e-15, abs=0)
    assert hd95(b, a, [1.0, 1.0]) == hd95(a, b, [1.0, 1.0])


def test_hd95_matches_medpy_where_installed() -> None:
    binary = pytest.importorskip("medpy.metric.binary")
    rng = np.random.default_rng(11)
    a, b = blobs(rng, (64, 48)), blobs(rng, (64, 48))
    assert hd95(a, b, [0.7, 1.3]) == pytest.approx(binary.hd95(a, b, voxelspacing=[0.7, 1.3]), rel=1e-12, abs=0)


def test_empty_masks_conventions() -> None:
    """Empty gt: hd95 null (empty_mask); both empty (empty_cases 'exclude'): IoU 0 (U-Bench), Dice 1, SE = PC = 0."""
    empty = [[0, 0], [0, 0]]
    one = [[1, 0], [0, 0]]
    both, gt_empty = seg(pred=[empty, one], gt=[empty, empty]).cases
    assert (both.iou, both.dice, both.se, both.pc, both.sp, both.f1, both.acc) == (0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0)
    assert both.hd95 is None and both.hd95_reason == "empty_mask"
    assert (gt_empty.iou, gt_empty.dice, gt_empty.sp, gt_empty.acc) == (0.0, 0.0, 3 / 4, 3 / 4)
    assert gt_empty.hd95 is None and gt_empty.hd95_reason == "empty_mask"


def test_hd95_not_requested() -> None:
    pred, gt = square_fixture()
    case = seg(pred=[pred], gt=[gt], hd95=False).cases[0]
    assert case.hd95 is None and case.hd95_reason == "not_requested"


def test_probability_map_threshold_is_strict() -> None:
    """Foreground is pred > threshold (U-Bench: sigmoid > 0.5): 0.5 itself is background."""
    probs = [[0.5, 0.51], [0.2, 0.9]]
    gt = [[1, 1], [0, 1]]
    case = seg(pred=[probs], gt=[gt]).cases[0]
    assert (case.tp, case.fp, case.fn, case.tn) == (2, 0, 1, 1)
    case = seg(pred=[probs], gt=[gt], threshold=0.1).cases[0]
    assert (case.tp, case.fp, case.fn, case.tn) == (3, 1, 0, 0)


def test_mean_and_sd_over_cases() -> None:
    """Case 1 IoU 0.6 / HD95 1; case 2 identical masks IoU 1 / HD95 0; case 3 empty gt (hd95 skipped)."""
    pred, gt = square_fixture()
    empty = np.zeros((8, 8), dtype=int).tolist()
    result = seg(pred=[pred, gt, pred], gt=[gt, gt, empty])
    assert result.mean.iou == pytest.approx((0.6 + 1.0 + 0.0) / 3, abs=1e-15)
    assert result.sd.iou == pytest.approx(float(np.std([0.6, 1.0, 0.0], ddof=1)), abs=1e-15)
    assert result.mean.hd95 == 0.5
    assert result.sd.hd95 == pytest.approx(math.sqrt(0.5), abs=1e-15)
    assert result.n_hd95 == 2 and result.n_cases == 3


def test_three_d_case() -> None:
    """A 4×4×4 cube shifted one slice: surfaces one voxel apart along z (spacing 2.5 there)."""
    gt = np.zeros((8, 8, 8), dtype=int)
    gt[2:6, 2:6, 2:6] = 1
    pred = np.roll(gt, 1, axis=0)
    case = seg(pred=[pred.tolist()], gt=[gt.tolist()], spacing=[2.5, 1.0, 1.0]).cases[0]
    assert (case.tp, case.fp, case.fn) == (48, 16, 16)
    assert case.iou == pytest.approx(48 / 80, abs=1e-15)
    assert case.hd95 == pytest.approx(brute_hd95(pred == 1, gt == 1, [2.5, 1.0, 1.0]), rel=1e-12, abs=0)


def test_uploaded_arrays_are_accepted() -> None:
    """The API hands resolved references to the function as numpy arrays (uint8 / float)."""
    pred, gt = square_fixture()
    case = seg(pred=[pred], gt=[gt]).cases[0]
    params = U.SegMetricsParams(pred=[pred], gt=[gt])
    params.pred[0] = np.array(pred, dtype=np.float64)
    params.gt[0] = np.array(gt, dtype=np.uint8)
    assert U.seg_metrics_fn(params, no_progress).cases[0] == case


@pytest.mark.parametrize(
    ("kw", "loc"),
    [
        ({"pred": [[[1, 0]]], "gt": [[[1, 0, 0]]]}, ("pred", 0)),
        ({"pred": [[[1, 0]], [[1, 0]]], "gt": [[[1, 0]]]}, ("pred",)),
        ({"pred": [[[1, 0]]], "gt": [[[1, 0]]], "spacing": [1.0, 1.0, 1.0]}, ("spacing",)),
        ({"pred": [[[1, 0]], [[[1]]]], "gt": [[[1, 0]], [[[1]]]]}, ("gt", 1)),
        ({"pred": [[[1, 0], [1]]], "gt": [[[1, 0], [1, 0]]]}, ("pred", 0)),
    ],
)
def test_inconsistent_masks_name_the_field(kw: dict, loc: tuple) -> None:
    with pytest.raises(InvalidInput) as err:
        seg(**kw)
    assert err.value.loc == loc


def test_out_of_range_values_give_one_error() -> None:
    """A 0/255 ground truth or a prediction above 1 is one domain error naming the case (lists or arrays)."""
    big = (np.arange(1024 * 1024).reshape(1024, 1024) % 3 == 0).astype(int)
    with pytest.raises(InvalidInput) as err:
        seg(pred=[big.tolist()], gt=[(big * 255).tolist()])
    assert err.value.loc == ("gt", 0)
    with pytest.raises(InvalidInput) as err:
        seg(pred=[[[1.5, 0]]], gt=[[[1, 0]]])
    assert err.value.loc == ("pred", 0)
    params = U.SegMetricsParams(pred=[[[1, 0]]], gt=[[[1, 0]]])
    params.gt[0] = np.array([[2, 0]], dtype=np.uint8)
    with pytest.raises(InvalidInput) as err:
        U.seg_metrics_fn(params, no_progress)
    assert err.value.loc == ("gt", 0)


@pytest.mark.parametrize(
    "kw",
    [
        {"pred": [[[1, 0]]], "gt": [[[0.5, 0]]]},
        {"pred": [[["1", 0]]], "gt": [[[1, 0]]]},
        {"pred": [[1, 0]], "gt": [[1, 0]]},
        {"pred": [], "gt": []},
        {"pred": [[[1]]], "gt": [[[1]]], "spacing": [0.0, 1.0]},
    ],
)
def test_schema_rejects(kw: dict) -> None:
    with pytest.raises(pydantic.ValidationError):
        U.SegMetricsParams(**kw)


def test_seg_cost_and_registration() -> None:
    pred, gt = square_fixture()
    spec = ESTIMATORS["ubench.seg_metrics"]
    assert spec.cost(U.SegMetricsParams(pred=[pred], gt=[gt])) == 64 * (U.LIST_WEIGHT + U.HD95_WEIGHT)
    assert spec.cost(U.SegMetricsParams(pred=[pred], gt=[gt], hd95=False)) == 64 * U.LIST_WEIGHT
    big = np.zeros((1024, 1024), dtype=np.uint8)
    params = U.SegMetricsParams(pred=[[[0]]], gt=[[[0]]])
    params.pred[0], params.gt[0] = big, big
    assert spec.cost(params) == 1024 * 1024 * (U.ARRAY_WEIGHT + U.HD95_WEIGHT) <= spec.sync_budget


def test_seg_metrics_plot_draws_the_cases() -> None:
    pred, gt = square_fixture()
    result = seg(pred=[pred, gt], gt=[gt, gt])
    ax = seg_metrics_plot(result).axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == [0.6, 1.0, 0.75, 1.0]


# --- uscore -----------------------------------------------------------------------------------------------


def test_uscore_unet_on_busi() -> None:
    """The calculator's U-Net on BUSI: a 0.58767, p 0.19803, g 0.00530 (floored), s 1, Eff 0.115164, 19.2588."""
    r = uscore(iou=0.6557507, params_m=34.527041, gflops=65.522368512, fps=137.05495, dataset="busi")
    assert (r.a, r.p, r.g, r.s) == pytest.approx((0.58767, 0.19803, 0.00530, 1.0), abs=5e-6)
    assert r.eff == pytest.approx(0.115164, abs=5e-7)
    assert r.uscore_100 == pytest.approx(19.2588, abs=5e-5)
    w033 = uscore(iou=0.6557507, params_m=34.527041, gflops=65.522368512, fps=137.05495, dataset="busi",
                  weights=[0.33, 0.33, 0.33])  # fmt: skip
    assert w033.uscore_100 == pytest.approx(r.uscore_100, rel=1e-14, abs=0)
    assert r.constants_used["iou_quantiles_q10"] == 0.5837592
    assert r.constants_used["log_params_quantiles_q90"] == 4.32


def test_uscore_midpoint_and_ceiling() -> None:
    mid = uscore(iou=0.645, params_m=math.exp(2.355), gflops=math.exp(2.54), fps=72.955, dataset="busi")
    assert mid.uscore_100 == pytest.approx(49.9955, abs=5e-5)
    top = uscore(iou=0.9, params_m=1.0, gflops=1.0, fps=500.0, dataset="busi")
    assert top.uscore_100 == pytest.approx(100.0, rel=1e-15, abs=0)


def test_uscore_floor_zero_is_the_paper_formula() -> None:
    """floor = 0: a component at 0 drives the harmonic mean, hence U-Score, to 0; otherwise the closed form."""
    zero = uscore(iou=0.6557507, params_m=34.527041, gflops=100.0, fps=137.05495, dataset="busi", floor=0.0)
    assert zero.g == 0.0 and zero.eff == 0.0 and zero.uscore_100 == 0.0
    r = uscore(iou=0.65, params_m=10.0, gflops=10.0, fps=60.0, iou_quantiles={"q10": 0.5, "q90": 0.8}, floor=0.0)
    a, p, g = 0.5, (4.32 - math.log(10)) / 3.93, (4.20 - math.log(10)) / 3.32
    s = (60 - 24.28) / (121.63 - 24.28)
    eff = 3 / (1 / p + 1 / g + 1 / s)
    assert r.uscore_100 == pytest.approx(100 * 2 / (1 / a + 1 / eff), rel=1e-13, abs=0)


def test_uscore_input_errors() -> None:
    base = {"iou": 0.7, "params_m": 5.0, "gflops": 5.0, "fps": 50.0}
    with pytest.raises(InvalidInput) as err:
        uscore(**base)
    assert err.value.loc == ("dataset",)
    with pytest.raises(InvalidInput) as err:
        uscore(**base, iou_quantiles={"q10": 0.8, "q90": 0.8})
    assert err.value.loc == ("iou_quantiles",)
    with pytest.raises(pydantic.ValidationError):
        U.UScoreParams(**{**base, "params_m": 0.0}, dataset="busi")
    with pytest.raises(pydantic.ValidationError):
        U.UScoreParams(**base, dataset="zero_shot_target")


# --- paired_significance ----------------------------------------------------------------------------------


def test_wilcoxon_exact_and_approx() -> None:
    """W = 1.5; exact p = 6/1024; normal approx 0.0078822 after rounding to 1e-12 (0.0079635 unrounded)."""
    exact = paired(model=MODEL, baseline=UNET, method="exact")
    assert exact.statistic == 1.5
    assert exact.p == pytest.approx(0.005859375, rel=1e-12, abs=0)
    assert exact.bin == "<=1e-2"
    assert exact.mean_diff == pytest.approx(0.029, abs=1e-12)
    approx = paired(model=MODEL, baseline=UNET, method="approx")
    assert approx.p == pytest.approx(0.0078822, abs=5e-8)
    unrounded = stats.wilcoxon(np.array(MODEL) - np.array(UNET), method="asymptotic").pvalue
    assert unrounded == pytest.approx(0.0079635, abs=5e-8)
    assert approx.n == 10 and approx.n_nonzero == 10


def test_paired_t_test() -> None:
    r = paired(model=MODEL, baseline=UNET, test="ttest_rel")
    assert r.statistic == pytest.approx(4.529, abs=5e-4)
    assert r.p == pytest.approx(0.001428, abs=5e-7)
    assert r.bin == "<=1e-2"


def test_one_sided_halves_the_exact_p() -> None:
    greater = paired(model=MODEL, baseline=UNET, alternative="greater", method="exact")
    assert greater.p == pytest.approx(0.005859375 / 2, rel=1e-12, abs=0)
    less = paired(model=MODEL, baseline=UNET, alternative="less", method="exact")
    assert less.p > 0.99


def test_p_bins() -> None:
    assert [p_bin(x) for x in (1e-5, 1e-4, 5e-4, 0.01, 0.05, 0.0500001)] == [
        "<=1e-4",
        "<=1e-4",
        "<=1e-3",
        "<=1e-2",
        "<=0.05",
        "ns",
    ]


def test_paired_errors() -> None:
    with pytest.raises(InvalidInput) as err:
        paired(model=MODEL, baseline=UNET[:-1])
    assert err.value.loc == ("baseline",)
    with pytest.raises(Degenerate):
        paired(model=UNET, baseline=UNET)
    with pytest.raises(Degenerate):
        paired(model=[x + 0.1 for x in UNET], baseline=UNET, test="ttest_rel")
    with pytest.raises(pydantic.ValidationError):
        U.PairedParams(model=[0.1, 0.2], baseline=[0.1, 0.2])


# --- friedman_nemenyi -------------------------------------------------------------------------------------


def test_friedman_nemenyi_spec_figures() -> None:
    r = U.friedman_fn(U.FriedmanParams(scores=(10 - RANKS).tolist()), no_progress)
    assert r.avg_ranks == pytest.approx([7 / 6, 2, 3, 23 / 6], abs=1e-15)
    assert r.chi2 == pytest.approx(14.6, rel=1e-13, abs=0)
    assert r.p == pytest.approx(0.002192, abs=5e-7)
    assert r.q_alpha == pytest.approx(2.569, abs=5e-4)
    assert r.cd == pytest.approx(1.9148, abs=5e-5)
    lower = U.friedman_fn(U.FriedmanParams(scores=RANKS.astype(float).tolist(), higher_is_better=False), no_progress)
    assert lower.avg_ranks == r.avg_ranks


def test_friedman_tie_correction_matches_scipy() -> None:
    rng = np.random.default_rng(5)
    for _ in range(10):
        x = rng.integers(0, 3, size=(8, 5)).astype(float)
        r = U.friedman_fn(U.FriedmanParams(scores=x.tolist()), no_progress)
        ref = stats.friedmanchisquare(*x.T)
        assert r.chi2 == pytest.approx(ref.statistic, rel=1e-12, abs=0)
        assert r.p == pytest.approx(ref.pvalue, rel=1e-10, abs=0)


def test_friedman_two_models_closed_form() -> None:
    """k = 2 (scipy needs 3): χ² = (wins − losses)²/N, the sign-test statistic, with CD = q √(1/N)."""
    x = [[0.9, 0.8], [0.7, 0.75], [0.6, 0.5], [0.9, 0.1], [0.3, 0.2]]
    r = U.friedman_fn(U.FriedmanParams(scores=x), no_progress)
    assert r.chi2 == pytest.approx((4 - 1) ** 2 / 5, rel=1e-13, abs=0)
    assert r.cd == pytest.approx(r.q_alpha * math.sqrt(2 * 3 / 30), rel=1e-14, abs=0)
    assert r.q_alpha == pytest.approx(stats.norm.ppf(0.975), rel=1e-6, abs=0)


def test_friedman_errors() -> None:
    with pytest.raises(InvalidInput) as err:
        U.friedman_fn(U.FriedmanParams(scores=[[1.0, 2.0], [1.0, 2.0, 3.0]]), no_progress)
    assert err.value.loc == ("scores",)
    with pytest.raises(InvalidInput) as err:
        U.friedman_fn(U.FriedmanParams(scores=[[1.0, 2.0], [1.0, 2.0]], models=["a"]), no_progress)
    assert err.value.loc == ("models",)
    with pytest.raises(Degenerate):
        U.friedman_fn(U.FriedmanParams(scores=[[1.0, 1.0], [2.0, 2.0]]), no_progress)


def test_friedman_plot_places_models_at_their_ranks() -> None:
    r = U.friedman_fn(U.FriedmanParams(scores=(10 - RANKS).tolist(), models=list("ABCD")), no_progress)
    ax = friedman_plot(r).axes[0]
    points, cd_bar = ax.lines[0], ax.lines[1]
    assert list(points.get_xdata()) == sorted(r.avg_ranks)
    assert list(cd_bar.get_xdata()) == [1, 1 + r.cd]
    assert [t.get_text() for t in ax.texts[:4]] == ["A", "B", "C", "D"]


def test_seg_metrics_reports_progress_and_stops_on_cancel() -> None:
    pred, gt = square_fixture()
    seen: list[float] = []

    def progress(fraction: float, message: str = "") -> None:
        seen.append(fraction)
        if len(seen) == 2:
            raise Cancelled

    with pytest.raises(Cancelled):
        U.seg_metrics_fn(U.SegMetricsParams(pred=[pred] * 3, gt=[gt] * 3), progress)
    assert seen == [1 / 3, 2 / 3]
