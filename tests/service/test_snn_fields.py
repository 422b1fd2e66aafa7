"""snn: per-layer labels and unit counts of layers of unequal width (the layer means weighted by n_l give the network
means), LocalZO's δ, M, R and Monte Carlo error by hand on a one-step network, and the reconstructed lists
(docs/snn.md)."""

import numpy as np
import pytest
from scipy.stats import norm

from service.estimators import snn
from service.registry import no_progress
from tests.service.field_paths import names_a_field

SIZES = [3, 5, 2, 4]  # L = 3 layers of 5, 2 and 4 units


@pytest.fixture(scope="module")
def mismatch() -> snn.GradientMismatchResult:
    params = snn.GradientMismatchParams(sizes=SIZES, time_steps=4, batch_size=3, w_scale=2.5, p=0.6, seed=2)
    return snn.gradient_mismatch(params, no_progress)


def test_layer_labels_and_unit_counts_weight_the_layer_means(mismatch: snn.GradientMismatchResult) -> None:
    """spike_gap is a mean over (l, t, b, i) and each layer's over (t, b, i), so spike_gap = Σ n_l·gap_l / Σ n_l;
    the blocks (W^l, b^l) partition θ, so ‖∇L_F‖² = Σ_l ‖∇L_F‖²_l. The tail statistics decompose the same way."""
    res = mismatch
    assert [row.layer for row in res.per_layer] == [1, 2, 3]
    assert [row.n_units for row in res.per_layer] == [5, 2, 4]
    weights = np.array([row.n_units for row in res.per_layer], dtype=float)
    assert res.spike_gap == pytest.approx(weights @ [row.spike_gap for row in res.per_layer] / weights.sum(), rel=1e-12)
    assert res.norm_grad_lf**2 == pytest.approx(sum(row.norm_grad_lf**2 for row in res.per_layer), rel=1e-12)
    assert [row.layer for row in res.tail.per_layer] == [1, 2, 3]
    assert [row.n_units for row in res.tail.per_layer] == [5, 2, 4]
    tail_weights = np.array([row.n_units for row in res.tail.per_layer], dtype=float)
    per_layer = np.array([row.band_frac for row in res.tail.per_layer])
    np.testing.assert_allclose(res.tail.band_frac, tail_weights @ per_layer / tail_weights.sum(), rtol=1e-12)
    assert res.tail.n_u == 4 * 3 * tail_weights.sum()


def test_threshold_tail_layers_with_their_own_thresholds() -> None:
    """Three trace layers (T = 2, B = 1) of 2, 3 and 1 units with thresholds 1, 0.5 and 2: band_frac(ε = 0.1) per
    layer by hand, labelled 1..3 with their widths."""
    v = [
        [[[1.05, 0.5]], [[0.95, 1.5]]],  # u = 0.05, −0.5, −0.05, 0.5: 2 of 4 within 0.1
        [[[0.5, 0.55, 0.0]], [[0.9, 0.45, 0.52]]],  # u = 0, 0.05, −0.5, 0.4, −0.05, 0.02: 4 of 6
        [[[2.2]], [[1.0]]],  # u = 0.2, −1: 0 of 2
    ]
    res = snn.threshold_tail(snn.ThresholdTailParams(v=v, threshold=[1.0, 0.5, 2.0], eps=[0.1]), no_progress)
    assert [row.layer for row in res.per_layer] == [1, 2, 3]
    assert [row.n_units for row in res.per_layer] == [2, 3, 1]
    assert [row.band_frac for row in res.per_layer] == [[0.5], [pytest.approx(4 / 6)], [0.0]]
    assert res.band_frac == [pytest.approx(6 / 12)]
    assert res.reconstructed == ["band_frac", "band_density", "kernel_tail", "per_layer", "per_time"]
    assert all(names_a_field(snn.ThresholdTailResult, name) for name in res.reconstructed)


# One LIF layer, T = 1, B = 2, K = 3: u = x Wᵀ + b − ϑ (no earlier step, so neither β nor the reset enters).
W = np.array([[0.6, 0.3], [1.1, -0.2], [0.8, 0.35]])
B = np.array([0.35, 0.0, 0.1])
X = np.array([[1.0, 0.0], [1.0, 1.0]])
Y = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
DELTA, M, R, ZO_SEED = 0.3, 4, 3, 7


def localzo_run(**localzo: object) -> snn.GradientMismatchResult:
    """``snn.gradient_mismatch`` on this one-step network with the LocalZO settings ``localzo``."""
    params = snn.GradientMismatchParams(
        sizes=[2, 3],
        time_steps=1,
        batch_size=2,
        theta=np.concatenate([W.ravel(), B]).tolist(),
        x=[X.tolist()],
        y=Y.tolist(),
        localzo=snn.LocalZoParams(**localzo),
    )
    return snn.gradient_mismatch(params, no_progress)


def hand_gradient(h: np.ndarray, u: np.ndarray) -> np.ndarray:
    """θ-gradient (W row-major, then b) of mean (s − Y)² through one step with node factors h:
    ē_v = 2(s − Y)/(B·K)·h, ∇W = ē_vᵀX, ∇b = Σ_b ē_v."""
    s = (u > 0).astype(float)
    e_v = 2.0 * (s - Y) / Y.size * h
    return np.concatenate([(e_v.T @ X).ravel(), e_v.sum(axis=0)])


def test_localzo_settings_and_monte_carlo_error_by_hand() -> None:
    """ĥ = (1/(2δM))·Σ_m 1{|u| < δ|z_m|}·|z_m| with z drawn from default_rng(zo_seed) as (M, T, B, n) per draw
    (docs/snn.md); ḡ = mean of R draws; mc_rel_err = ‖ḡ − g_gauss(δ)‖/‖g_gauss(δ)‖ with h = φ(u/δ)/δ."""
    u = X @ W.T + B - 1.0  # [[−0.05, 0.1, −0.1], [0.25, −0.1, 0.25]]
    rng = np.random.default_rng(ZO_SEED)
    draws = []
    for _ in range(R):
        z = np.abs(rng.standard_normal((M, 1, *u.shape)))[:, 0]
        draws.append(hand_gradient(np.where(np.abs(u) / DELTA < z, z, 0.0).sum(axis=0) / (2 * DELTA * M), u))
    g_gauss = hand_gradient(norm.pdf(u / DELTA) / DELTA, u)
    expected = np.linalg.norm(np.mean(draws, axis=0) - g_gauss) / np.linalg.norm(g_gauss)
    res = localzo_run(delta=DELTA, samples=M, draws=R, zo_seed=ZO_SEED)
    zo = res.localzo
    assert (zo.delta, zo.samples, zo.draws) == (DELTA, M, R)
    assert zo.mc_rel_err == pytest.approx(expected, rel=1e-10)
    assert 0.05 < zo.mc_rel_err < 2.0  # a real Monte Carlo error, not 0 (R = 3 draws of M = 4)


def test_gradient_mismatch_lists_its_reconstructed_fields(mismatch: snn.GradientMismatchResult) -> None:
    """docs/snn.md: the smoothed objective L_F and the mismatch are RECONSTRUCTED (with the tail reading and the
    LocalZO comparison against ∇L_gauss); the hard loss, ‖g_F‖ and the instance draws are not."""
    assert mismatch.reconstructed == [
        "loss_smoothed", "gap", "rate_gap", "spike_gap", "norm_grad_lf", "mismatch_abs", "mismatch_rel", "cosine",
        "per_layer", "tail", "localzo.mismatch_abs", "localzo.mismatch_rel", "localzo.cosine", "fd",
    ]  # fmt: skip
    assert all(names_a_field(snn.GradientMismatchResult, name) for name in mismatch.reconstructed)
