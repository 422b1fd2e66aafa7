"""snn.gradient_mismatch's LocalZO statistics by hand on a one-step, one-layer network: the spread of the draws and
the mean draw's mismatch to the exact gradient of the gaussian(δ) objective."""

import numpy as np
import pytest
from scipy.stats import norm

from tests.service.test_snn_fields import DELTA, ZO_SEED, B, M, R, W, X, Y, localzo_run

U = X @ W.T + B - 1.0  # [[−0.05, 0.1, −0.1], [0.25, −0.1, 0.25]]


def through_one_step(spikes: np.ndarray, h: np.ndarray) -> np.ndarray:
    """θ-gradient (W row-major, then b) of mean (s − Y)² with node factors h: ē_v = 2(s − Y)/(B·K)·h."""
    e_v = 2.0 * (spikes - Y) / Y.size * h
    return np.concatenate([(e_v.T @ X).ravel(), e_v.sum(axis=0)])


def test_localzo_spread_mismatch_and_cosine_by_hand() -> None:
    rng = np.random.default_rng(ZO_SEED)
    hard = (U > 0).astype(float)
    draws = []
    for _ in range(R):
        z = np.abs(rng.standard_normal((M, *U.shape)))
        draws.append(through_one_step(hard, np.where(np.abs(U) / DELTA < z, z, 0.0).sum(axis=0) / (2 * DELTA * M)))
    draws = np.array(draws)
    mean = draws.mean(axis=0)
    # ∇L_gauss(δ): the smoothed spikes Φ(u/δ) with their own derivative φ(u/δ)/δ
    exact = through_one_step(norm.cdf(U / DELTA), norm.pdf(U / DELTA) / DELTA)
    spread = np.sqrt(np.mean([np.sum((d - mean) ** 2) for d in draws])) / np.linalg.norm(mean)
    zo = localzo_run(delta=DELTA, samples=M, draws=R, zo_seed=ZO_SEED).localzo
    assert zo.spread == pytest.approx(spread, rel=1e-10)
    assert zo.mismatch_abs == pytest.approx(np.linalg.norm(mean - exact), rel=1e-10)
    assert zo.mismatch_rel == pytest.approx(np.linalg.norm(mean - exact) / np.linalg.norm(exact), rel=1e-10)
    cosine = mean @ exact / (np.linalg.norm(mean) * np.linalg.norm(exact))
    assert zo.cosine == pytest.approx(cosine, rel=1e-10)
    assert zo.spread > 0.0 and -1.0 < zo.cosine < 1.0


def test_a_single_draw_has_no_spread() -> None:
    zo = localzo_run(delta=DELTA, samples=M, draws=1, zo_seed=ZO_SEED).localzo
    assert zo.spread == 0.0 and zo.draws == 1


def test_localzo_with_no_offset_within_reach_is_zero_and_the_ratios_are_null() -> None:
    # δ = 1e-3: |u| ≥ 0.05 needs |z| > 50, which no normal draw of 64 × 6 reaches, so every ĥ and ḡ is 0; the
    # gaussian(δ) objective's derivative φ(u/δ)/δ ≤ φ(50)/δ ≈ 1e-540 is 0 in float64 too.
    zo = localzo_run(delta=1e-3, samples=64, draws=2, zo_seed=1).localzo
    assert zo.mismatch_abs == 0.0
    assert zo.spread is None and zo.mc_rel_err is None and zo.mismatch_rel is None and zo.cosine is None
