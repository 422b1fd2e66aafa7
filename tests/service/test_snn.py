"""SNN threshold tail and gradient mismatch: the reference instance's values, FD and one-step identities, LocalZO."""

import numpy as np
import pydantic
import pytest
from scipy.stats import norm, spearmanr

from service.errors import Cancelled, InvalidInput
from service.estimators.snn import (
    SPECS,
    GradientMismatchParams,
    ThresholdTailParams,
    gradient_mismatch,
    gradient_mismatch_cost,
    threshold_tail,
    threshold_tail_cost,
)
from service.estimators.snn_lif import hard_spike, localzo_node_grad, surrogate_cdf, surrogate_grad
from service.registry import no_progress

# Reference instance R0: seed 0 (w_scale 1.3481439185, p 0.2079146855), sizes 20→30→5, T = 8, B = 32, β = 0.5,
# ϑ = 1, zero reset, reset path not detached. Independent figures: (kind, width) → L_F, ‖g_F‖, ‖∇L_F‖,
# mismatch_abs, mismatch_rel, cosine, kernel_tail.
V1 = {
    ("gaussian", 0.5): (
        0.1834175782,
        0.0712846749,
        0.0541644170,
        0.0336961953,
        0.6221094422,
        0.8909207345,
        0.1470528280,
    ),
    ("sigmoid", 4.0): (
        0.1866584142,
        0.0576432869,
        0.0452103830,
        0.0225691051,
        0.4992018109,
        0.9319307013,
        0.1239371130,
    ),
    ("atan", 2.0): (0.1689674995, 0.0512683170, 0.0272077858, 0.0350926087, 1.289800244, 0.7660824266, 0.2466304264),
    ("rect", 1.0): (0.1963620407, 0.0433324536, 0.0336868900, 0.0227008499, 0.6738778774, 0.8553533632, 0.0753275202),
}


ARRAYS = ("theta", "x", "y")
REF = {"array": "sha256:" + "0" * 64}


def params_of(model: type, **kw: object):
    """Validated params; numpy arrays are swapped in afterwards, as the API does for uploaded references."""
    arrays = {k: kw[k] for k in ARRAYS if isinstance(kw.get(k), np.ndarray)}
    refs = {k: REF for k in arrays}
    if isinstance(kw.get("v"), list) and all(isinstance(a, np.ndarray) for a in kw["v"]):
        arrays["v"] = kw["v"]
        refs["v"] = [REF] * len(kw["v"])
    return model.model_validate({**kw, **refs}).model_copy(update=arrays)


def mismatch(**kw: object):
    return gradient_mismatch(params_of(GradientMismatchParams, **kw), no_progress)


@pytest.mark.parametrize(("kind", "width"), list(V1))
def test_reference_instance_values(kind: str, width: float) -> None:
    res = mismatch(surrogate=kind, eps=[0.1, 0.5])
    assert res.w_scale == pytest.approx(1.3481439185, rel=1e-9)
    assert res.p == pytest.approx(0.2079146855, rel=1e-9)
    assert res.n_params == 785 and res.tail.n_u == 8 * 32 * 35
    assert res.loss == 51 / 256  # exact: rates are multiples of 1/8
    assert res.tail.band_frac == pytest.approx([0.02578125, 0.1697544643], rel=1e-8)
    got = (
        res.loss_smoothed,
        res.norm_g_f,
        res.norm_grad_lf,
        res.mismatch_abs,
        res.mismatch_rel,
        res.cosine,
        res.tail.kernel_tail,
    )
    assert got == pytest.approx(V1[(kind, width)], rel=1e-8)
    assert res.gap == pytest.approx(abs(res.loss_smoothed - res.loss), rel=1e-12)


def test_reference_instance_reset_variants() -> None:
    detached = mismatch(detach_reset=True)
    assert detached.norm_g_f == pytest.approx(0.0802796670, rel=1e-8)
    assert detached.mismatch_rel == pytest.approx(0.7842080628, rel=1e-8)
    sub = mismatch(reset="subtract")
    assert sub.loss == pytest.approx(0.1991210938, rel=1e-8)
    assert sub.loss_smoothed == pytest.approx(0.1846240607, rel=1e-8)
    assert sub.mismatch_rel == pytest.approx(0.6269464134, rel=1e-8)


@pytest.mark.parametrize(
    ("reset", "kind"),
    [
        (reset, kind) if (reset, kind) == ("zero", "rect") else pytest.param(reset, kind, marks=pytest.mark.slow)
        for kind in ("gaussian", "sigmoid", "atan", "rect")
        for reset in ("zero", "subtract")
    ],
)
def test_adjoint_is_the_exact_gradient_of_the_smoothed_objective(kind: str, reset: str) -> None:
    # Central differences (h = 1e-6) on all 785 coordinates; independently measured agreement ≤ 1.1e-8.
    fd = mismatch(surrogate=kind, reset=reset, fd_check=True).fd
    assert fd is not None and fd.n_coords == 785
    assert fd.rel_err < 1e-6
    assert fd.max_abs < 1e-9


@pytest.mark.parametrize("kind", ["gaussian", "sigmoid", "atan", "rect"])
def test_one_step_one_layer_identity(kind: str) -> None:
    # L = 1, T = 1: g_F − ∇L_F = (2/(BK))·Σ_b q_b [x_b, 1], q_b = (H(u_b) − F(u_b))⊙F′(u_b), u_b = W x_b + b − ϑ.
    res = mismatch(sizes=[20, 5], time_steps=1, seed=7, w_scale=2.0, p=0.3, surrogate=kind)
    rng = np.random.default_rng(7)
    w = rng.standard_normal((5, 20)) * 2.0 / np.sqrt(20)
    x = (rng.random((32, 20)) < 0.3).astype(float)
    width = {"gaussian": 0.5, "sigmoid": 4.0, "atan": 2.0, "rect": 1.0}[kind]
    u = x @ w.T - 1.0
    q = (hard_spike(u) - surrogate_cdf(kind, width, u)) * surrogate_grad(kind, width, u)
    delta = np.concatenate([(2 / (32 * 5) * q.T @ x).ravel(), 2 / (32 * 5) * q.sum(axis=0)])
    assert res.mismatch_abs == pytest.approx(np.linalg.norm(delta), rel=1e-12, abs=1e-17)


def test_rect_with_a_tiny_width_has_no_gradient() -> None:
    # rect(a = 1e-3): no output offset lies strictly inside |u| < a/2, so g_F = ∇L_F = 0 and L_F = L.
    for seed in range(5):
        res = mismatch(seed=seed, surrogate="rect", width=1e-3)
        assert res.norm_g_f == 0.0 and res.norm_grad_lf == 0.0
        assert res.mismatch_rel is None and res.cosine is None
        assert res.loss_smoothed == res.loss


@pytest.mark.slow
def test_localzo_node_factor_is_unbiased_for_the_gaussian_kernel() -> None:
    # E ĥ(u) = φ(u/δ)/δ; 1e5 samples per node, tolerance 4 standard errors of the sample mean.
    delta, n = 0.5, 100_000
    u = np.linspace(-2, 2, 41)
    h = localzo_node_grad(np.random.default_rng(1), [np.broadcast_to(u, (n, 41))], delta, 1, n)[0]
    se = h.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(h.mean(axis=0) - norm.pdf(u / delta) / delta) <= 4 * se + 1e-12)


@pytest.mark.slow
def test_localzo_mean_converges_to_the_gaussian_direction_like_one_over_sqrt_r() -> None:
    # zo_seed 123, M = 5: independently measured mc_rel_err 0.27 / 0.048 / 0.020 at R = 1 / 16 / 256.
    errs = {r: mismatch(localzo={"draws": r}).localzo.mc_rel_err for r in (1, 16, 256)}
    assert errs[1] == pytest.approx(0.27, abs=0.005)
    assert errs[16] == pytest.approx(0.048, abs=0.0015)
    assert errs[256] == pytest.approx(0.020, abs=0.0015)
    assert errs[16] / errs[256] == pytest.approx(4.0, rel=0.4)  # √(256/16) = 4


def test_localzo_is_reproducible_and_reports_the_spread() -> None:
    a = mismatch(localzo={"draws": 4, "samples": 3}).localzo
    b = mismatch(localzo={"draws": 4, "samples": 3}).localzo
    assert a == b
    assert a.spread > 0 and a.mismatch_rel is not None and -1 <= a.cosine <= 1


# Spearman ρ over seeds 0..59 (instance draw order), ε = δ for gaussian and 0.5 otherwise:
# band/abs, kernel/abs, band/rel, kernel/rel, kernel/spike_gap, kernel/rate_gap, kernel/gap.
V6 = {
    ("gaussian", 0.2): (0.91, 0.90, 0.30, 0.30, 1.00, 0.91, 0.87),
    ("gaussian", 0.5): (0.89, 0.85, 0.44, 0.49, 0.98, 0.65, -0.29),
    ("sigmoid", 4.0): (0.90, 0.85, 0.55, 0.57, 0.99, 0.67, -0.24),
    ("atan", 2.0): (0.90, 0.57, -0.21, 0.05, 0.96, 0.13, -0.19),
    ("rect", 1.0): (0.81, 0.86, -0.36, -0.43, 1.00, 0.86, 0.82),
}


@pytest.mark.parametrize(("kind", "width"), list(V6))
def test_tail_tracks_the_absolute_mismatch_over_seeds(kind: str, width: float) -> None:
    eps = width if kind == "gaussian" else 0.5
    runs = [mismatch(seed=s, surrogate=kind, width=width, eps=[eps]) for s in range(60)]
    band = np.array([r.tail.band_frac[0] for r in runs])
    kern = np.array([r.tail.kernel_tail for r in runs])
    keep = np.array([r.mismatch_rel is not None for r in runs])
    rel = np.array([r.mismatch_rel for r in runs if r.mismatch_rel is not None])
    pairs = [
        (band, [r.mismatch_abs for r in runs]),
        (kern, [r.mismatch_abs for r in runs]),
        (band[keep], rel),
        (kern[keep], rel),
        (kern, [r.spike_gap for r in runs]),
        (kern, [r.rate_gap for r in runs]),
        (kern, [r.gap for r in runs]),
    ]
    rho = [spearmanr(a, b).statistic for a, b in pairs]
    assert rho == pytest.approx(V6[(kind, width)], abs=0.01)
    assert keep.sum() == (34 if kind == "rect" else 60)


def test_width_sweep_tail_shrinks_but_mismatch_does_not() -> None:
    widths = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02)
    band = (0.468, 0.170, 0.053, 0.026, 0.014, 0.005)
    rel = (1.97, 0.62, 0.64, 0.91, 0.99, 1.00)
    absolute = (0.108, 0.0337, 0.0130, 0.0062, 0.0215, 0.0429)
    for w, b, r, a in zip(widths, band, rel, absolute, strict=True):
        res = mismatch(width=w, eps=[w])
        assert res.tail.band_frac[0] == pytest.approx(b, abs=0.0006)
        assert res.mismatch_rel == pytest.approx(r, abs=0.006)
        assert res.mismatch_abs == pytest.approx(a, rel=0.02)


def test_per_layer_blocks_add_up() -> None:
    res = mismatch(sizes=[20, 30, 10, 5])
    assert sum(row.mismatch_abs**2 for row in res.per_layer) == pytest.approx(res.mismatch_abs**2, rel=1e-12)
    assert sum(row.norm_grad_lf**2 for row in res.per_layer) == pytest.approx(res.norm_grad_lf**2, rel=1e-12)
    weights = [row.n_units for row in res.per_layer]
    pooled = sum(row.spike_gap * n for row, n in zip(res.per_layer, weights, strict=True)) / sum(weights)
    assert res.spike_gap == pytest.approx(pooled, rel=1e-12)
    assert res.rate_gap == res.per_layer[-1].rate_gap


def test_given_inputs_replace_the_draws() -> None:
    base = mismatch()
    rng = np.random.default_rng(0)
    w_scale, p = np.exp(rng.uniform(np.log(0.2), np.log(4))), rng.uniform(0.1, 0.5)
    w1 = rng.standard_normal((30, 20)) * w_scale / np.sqrt(20)
    w2 = rng.standard_normal((5, 30)) * w_scale / np.sqrt(30)
    x = (rng.random((8, 32, 20)) < p).astype(float)
    labels = rng.integers(0, 5, size=32)
    theta = np.concatenate([w1.ravel(), np.zeros(30), w2.ravel(), np.zeros(5)])
    given = mismatch(theta=theta.tolist(), x=x.tolist(), labels=labels.tolist())
    assert given.w_scale is None and given.p is None
    assert given.mismatch_abs == pytest.approx(base.mismatch_abs, rel=1e-12)
    as_y = mismatch(theta=theta, x=x, y=np.eye(5)[labels])
    assert as_y.loss_smoothed == pytest.approx(base.loss_smoothed, rel=1e-12)


@pytest.mark.parametrize(
    ("kw", "loc"),
    [
        ({"width": 20.0}, ("width",)),
        ({"surrogate": "sigmoid", "width": 0.05}, ("width",)),
        ({"sizes": [20, 513, 5]}, ("sizes", 1)),
        ({"sizes": [1024, 512, 512, 512, 10], "time_steps": 64, "batch_size": 256}, ("sizes",)),
        ({"fd_check": True, "sizes": [40, 50, 5]}, ("fd_check",)),
        ({"localzo": {"draws": 256, "samples": 64}, "sizes": [100, 512, 512], "batch_size": 64}, ("localzo", "draws")),
        ({"theta": [0.1] * 784}, ("theta",)),
        ({"x": np.full((8, 32, 20), 0.5)}, ("x",)),
        ({"x": np.zeros((8, 32, 21))}, ("x",)),
        ({"y": np.zeros((32, 4))}, ("y",)),
        ({"labels": [5] * 32}, ("labels",)),
        ({"labels": [0] * 31}, ("labels",)),
        ({"labels": [0] * 32, "y": np.zeros((32, 5))}, ("labels",)),
    ],
)
def test_inconsistent_inputs_name_the_field(kw: dict, loc: tuple) -> None:
    with pytest.raises(InvalidInput) as err:
        params = params_of(GradientMismatchParams, **kw)
        gradient_mismatch_cost(params)
        gradient_mismatch(params, no_progress)
    assert err.value.loc == loc


@pytest.mark.parametrize(
    "kw", [{"beta": 0.0}, {"beta": 1.5}, {"threshold": 0.0}, {"theta": [float("nan")] * 785}, {"time_steps": 65}]
)
def test_schema_rejects_out_of_range_values(kw: dict) -> None:
    with pytest.raises(pydantic.ValidationError):
        GradientMismatchParams(**kw)


def test_cost_counts_passes_and_stays_under_budget_for_the_benchmark_size() -> None:
    spec = {s.name: s for s in SPECS}["snn.gradient_mismatch"]
    r0 = GradientMismatchParams()
    macs, nodes = 8 * 32 * (20 * 30 + 30 * 5), 8 * 32 * 35
    assert gradient_mismatch_cost(r0) == 4 * (macs + 40 * nodes)
    big = GradientMismatchParams(sizes=[256, 256, 256, 10], time_steps=32, batch_size=64)
    assert gradient_mismatch_cost(big) < spec.sync_budget
    assert gradient_mismatch_cost(GradientMismatchParams(fd_check=True)) == (4 + 2 * 785) * (macs + 40 * nodes)


def test_threshold_tail_hand_computed() -> None:
    # T = 2, B = 1, two layers of 1 and 2 units with ϑ = 1 and 2: offsets u = [[0.05 | 0.3, −0.5], [2.0 | 0.0, −1.2]].
    v = [[[[1.05]], [[3.0]]], [[[2.3, 1.5]], [[2.0, 0.8]]]]
    res = threshold_tail(
        ThresholdTailParams(v=v, threshold=[1.0, 2.0], eps=[0.1, 0.5], surrogate="rect"),
        no_progress,
    )
    assert res.n_u == 6
    assert res.band_frac == pytest.approx([2 / 6, 4 / 6], rel=1e-12)
    assert res.band_density == pytest.approx([2 / 6 / 0.2, 4 / 6 / 1.0], rel=1e-12)
    # rect(1): κ(u) = max(0, 1 − 2|u|) = 0.9, 0.4, 0, 0, 1, 0
    assert res.kernel_tail == pytest.approx(2.3 / 6, rel=1e-12)
    assert res.per_layer[0].band_frac == pytest.approx([0.5, 0.5], rel=1e-12)
    assert res.per_layer[1].kernel_tail == pytest.approx(1.4 / 4, rel=1e-12)
    assert res.per_time.t == [1, 2]
    np.testing.assert_allclose(res.per_time.band_frac, [[1 / 3, 1 / 3], [1.0, 1 / 3]], rtol=1e-12)
    assert res.per_time.kernel_tail == pytest.approx([1.3 / 3, 1 / 3], rel=1e-12)


def test_threshold_tail_of_network_traces_equals_the_network_statistics() -> None:
    from service.estimators.snn_lif import Lif, forward, unflatten

    p = GradientMismatchParams()
    net = gradient_mismatch(p, no_progress)
    rng = np.random.default_rng(0)
    w_scale, prob = np.exp(rng.uniform(np.log(0.2), np.log(4))), rng.uniform(0.1, 0.5)
    theta = np.concatenate(
        [
            (rng.standard_normal((30, 20)) * w_scale / np.sqrt(20)).ravel(),
            np.zeros(30),
            (rng.standard_normal((5, 30)) * w_scale / np.sqrt(30)).ravel(),
            np.zeros(5),
        ]
    )
    x = (rng.random((8, 32, 20)) < prob).astype(float)
    ws, bs = unflatten(theta, [20, 30, 5])
    traj = forward(x, ws, bs, Lif(0.5, 1.0, "zero"), hard_spike)
    traces = params_of(ThresholdTailParams, v=traj.v)
    tail = threshold_tail(traces, no_progress)
    assert tail.band_frac == pytest.approx(net.tail.band_frac, rel=1e-12)
    assert tail.kernel_tail == pytest.approx(net.tail.kernel_tail, rel=1e-12)
    assert tail.per_time == net.tail.per_time


def test_threshold_tail_downsamples_time_and_validates() -> None:
    v = np.zeros((2500, 1, 2))
    res = threshold_tail(params_of(ThresholdTailParams, v=[v]), no_progress)
    assert len(res.per_time.t) == 1000 and res.per_time.t[0] == 1 and res.per_time.t[-1] == 2500
    assert threshold_tail_cost(params_of(ThresholdTailParams, v=[v, v])) == 10000 * 9
    with pytest.raises(InvalidInput) as err:
        threshold_tail(params_of(ThresholdTailParams, v=[v, np.zeros((2500, 2, 2))]), no_progress)
    assert err.value.loc == ("v", 1)
    with pytest.raises(InvalidInput) as err:
        threshold_tail(params_of(ThresholdTailParams, v=[v, v], threshold=[1.0]), no_progress)
    assert err.value.loc == ("threshold",)
    with pytest.raises(InvalidInput) as err:
        threshold_tail(params_of(ThresholdTailParams, v=[np.zeros((2000, 100, 30))] * 2), no_progress)
    assert err.value.loc == ("v",)
    bad = [
        ([[[[1.0, 2.0]], [[1.0]]]], ("v", 0)),  # ragged
        ([[[[0.0]]], [[[0.0] * 400] * 300]], ("v", 1)),  # a JSON array over 100,000 values
        ([[[[]]]], ("v", 0)),  # empty
    ]
    for traces, loc in bad:
        with pytest.raises(InvalidInput) as err:
            threshold_tail(ThresholdTailParams(v=traces), no_progress)
        assert err.value.loc == loc


def test_plots_draw_the_result() -> None:
    spec = {s.name: s for s in SPECS}
    res = threshold_tail(params_of(ThresholdTailParams, v=[np.linspace(0, 2, 60).reshape(5, 3, 4)]), no_progress)
    ax = spec["snn.threshold_tail"].plot(res).axes[0]
    assert [list(line.get_ydata()) for line in ax.lines[:-1]] == res.per_time.band_frac
    assert list(ax.lines[-1].get_ydata()) == res.per_time.kernel_tail
    net = mismatch()
    ax = spec["snn.gradient_mismatch"].plot(net).axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights[-2:] == [row.mismatch_abs for row in net.per_layer]


def test_long_work_reports_progress_and_can_be_cancelled() -> None:
    seen: list[tuple[float, str]] = []

    def progress(fraction: float, message: str = "") -> None:
        seen.append((fraction, message))
        if message.startswith("finite differences"):
            raise Cancelled

    with pytest.raises(Cancelled):
        gradient_mismatch(GradientMismatchParams(localzo={"draws": 2}, fd_check=True), progress)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.2
    assert [m for _, m in seen[1:3]] == ["LocalZO draw 1/2", "LocalZO draw 2/2"]
