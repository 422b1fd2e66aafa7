"""axial_slr: the fields listed as RECONSTRUCTED (docs/axial_slr.md), and the risk with λ_c ≠ λ_r on an M ≠ N grid,
for erf and softmax attention and every variant, against a Monte Carlo written here from the documented draw
order."""

import numpy as np
import pytest
from scipy.special import erf, softmax

from service.estimators.axial_slr import PgdParams, PgdResult, RiskParams, RiskResult, axial_pgd, axial_risk
from service.registry import no_progress
from tests.service.field_paths import names_a_field

M, N, D, ELL, GAMMA, EPS, N_MC = 3, 4, 5, 3.0, 0.7, 0.2, 400


def test_risk_lists_the_bayes_risk_and_the_variants_as_reconstructed() -> None:
    """docs/axial_slr.md: ε² as the Bayes risk (hence the two excess risks) and the variants' simplified predictors
    are the RECONSTRUCTED parts; the model's and the oracle's Monte Carlo risks are not."""
    res = axial_risk(RiskParams(m=2, n=2, d=3, n_mc=100), no_progress)
    assert res.reconstructed == ["bayes_risk", "excess_risk", "oracle_excess_risk", "variants"]
    assert all(names_a_field(RiskResult, name) for name in res.reconstructed)


def test_pgd_lists_the_trajectory_as_reconstructed() -> None:
    res = axial_pgd(PgdParams(m=2, n=2, d=3, iterations=2, batch_size=4, eval_samples=100), no_progress)
    assert res.reconstructed == ["trajectory"]
    assert all(names_a_field(PgdResult, name) for name in res.reconstructed)


def draws(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """docs/axial_slr.md: all tokens as standard normals (the planted cell's is g), then ξ."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N_MC, M, N, D))
    x[:, 0, 0, :] = GAMMA * x[:, 0, 0, :] + ELL * np.eye(D)[0]  # ℓk* + γg with k* = e₁
    y = x[:, 0, 0, 1] + EPS * rng.standard_normal(N_MC)  # x_plantedᵀv* + εξ with v* = e₂
    return x, y


def hand_risk(
    lam_r: float, lam_c: float, k: np.ndarray, v: np.ndarray, seed: int, attention: str = "erf", inner: str = "erf"
) -> tuple[float, float]:
    """E(T − y)² and its standard error, T = Σ_i σ_c(λ_c h_iᵀk)·h_iᵀv with h_i = Σ_j σ_r(λ_r x_ijᵀk)·x_ij: σ = erf,
    or a softmax over the row's tokens (σ_r) and over the rows (σ_c); inner 'linear' is (2/√π)λ_r x_ijᵀk, 'const'
    is 1."""
    x, y = draws(seed)
    a = np.einsum("bijd,d->bij", x, k)
    if inner == "linear":
        w = 2 / np.sqrt(np.pi) * lam_r * a
    elif inner == "const":
        w = np.ones_like(a)
    else:
        w = erf(lam_r * a) if attention == "erf" else softmax(lam_r * a, axis=2)
    h = np.einsum("bij,bijd->bid", w, x)
    logits = lam_c * (h @ k)
    c = erf(logits) if attention == "erf" else softmax(logits, axis=1)
    t = np.sum(c * (h @ v), axis=1)
    sq = (t - y) ** 2
    return float(sq.mean()), float(sq.std(ddof=1) / np.sqrt(N_MC))


def flattened_risk(lam: float, seed: int, attention: str) -> float:
    """Σ_l σ(λ x_lᵀk*)·x_lᵀv* over all M·N tokens at the oracle."""
    x, y = draws(seed)
    flat = x.reshape(N_MC, M * N, D)
    logits = lam * flat[:, :, 0]
    weight = erf(logits) if attention == "erf" else softmax(logits, axis=1)
    return float(np.mean((np.sum(weight * flat[:, :, 1], axis=1) - y) ** 2))


def test_column_and_row_temperatures_enter_their_own_attention() -> None:
    """λ_r = 0.4 in the row (inner) erf, λ_c = 1.3 in the column (outer) erf, at a non-oracle (k, v): the risk and
    its standard error equal the hand Monte Carlo, and swapping the two temperatures changes the risk."""
    k = np.array([0.8, 0.1, -0.3, 0.2, 0.4])
    v = np.array([0.1, 0.9, 0.2, -0.3, 0.1])
    k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
    task = {"m": M, "n": N, "d": D, "ell": ELL, "gamma": GAMMA, "eps": EPS, "n_mc": N_MC, "seed": 5}
    res = axial_risk(RiskParams(**task, lambda_r=0.4, lambda_c=1.3, k=k.tolist(), v=v.tolist()), no_progress)
    risk, se = hand_risk(0.4, 1.3, k, v, seed=5)
    assert res.risk == pytest.approx(risk, rel=1e-10, abs=0)
    assert res.risk_se == pytest.approx(se, rel=1e-8, abs=0)
    swapped = hand_risk(1.3, 0.4, k, v, seed=5)[0]
    assert swapped > 2 * risk  # the two temperatures are not interchangeable here (6.17 against 2.18)


def test_softmax_attention_on_rows_and_columns_and_every_variant() -> None:
    """attention = softmax on the 3 × 4 grid (λ_r = 0.4, λ_c = 1.3): the row softmax runs over a row's 4 tokens
    and the column softmax over the 3 rows, so the two axes cannot be exchanged; the variants are the oracle risks
    of the softmax, linear- and constant-inner predictors and of the flattened predictor on the same draws."""
    task = {"m": M, "n": N, "d": D, "ell": ELL, "gamma": GAMMA, "eps": EPS, "n_mc": N_MC, "seed": 8}
    res = axial_risk(RiskParams(**task, lambda_r=0.4, lambda_c=1.3, attention="softmax"), no_progress)
    ks, vs = np.eye(D)[0], np.eye(D)[1]
    assert res.risk == pytest.approx(hand_risk(0.4, 1.3, ks, vs, 8, "softmax")[0], rel=1e-10)
    expected = {
        "axial_nonlinear": hand_risk(0.4, 1.3, ks, vs, 8, "softmax")[0],
        "axial_linear": hand_risk(0.4, 1.3, ks, vs, 8, "softmax", "linear")[0],
        "axial_const": hand_risk(0.4, 1.3, ks, vs, 8, "softmax", "const")[0],
        "flattened_1d": flattened_risk(0.4, 8, "softmax"),
    }
    assert {v.predictor: v.risk for v in res.variants} == pytest.approx(expected, rel=1e-10)
