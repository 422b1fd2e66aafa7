"""The exact 1-D risk of `axial_slr_model` against Gauss–Hermite cubature and a closed form for erf → sign."""

import numpy as np
import pytest
from scipy.special import erf
from scipy.stats import norm

from service.estimators.axial_slr_model import Task, exact_risk_1d, init_directions, pgd_step


def gauss_expect(fn, mean: np.ndarray, cov: np.ndarray, nodes: int = 48) -> float:
    """E fn(x) for x ~ N(mean, cov) by tensor Gauss–Hermite cubature (x = mean + L·z, L the Cholesky factor)."""
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    dim = mean.size
    grid = np.stack(np.meshgrid(*([z] * dim), indexing="ij"), axis=-1).reshape(-1, dim)
    weight = np.prod(np.stack(np.meshgrid(*([w] * dim), indexing="ij"), axis=-1).reshape(-1, dim), axis=1)
    x = mean + grid @ np.linalg.cholesky(cov).T
    return float(weight @ fn(x) / (2 * np.pi) ** (dim / 2))


def risk_by_cubature(task: Task, k: np.ndarray, v: np.ndarray, lam: float) -> float:
    """E(T − y)², T = Σ_j erf(λa_j)·b_j over N independent tokens (a = xᵀk, b = xᵀv): the planted token's
    (a, b, y) is Gaussian with mean ℓ·(kᵀk*, vᵀk*, v*ᵀk*) and covariance γ²·Gram(k, v, v*) + ε²·e_y e_yᵀ, a noise
    token's (a, b) has mean 0 and covariance Gram(k, v); then expand the square over independent tokens."""
    ks, vs = task.k_star, task.v_star
    basis = np.stack([k, v, vs])
    cov3 = task.gamma**2 * basis @ basis.T + np.diag([0.0, 0.0, task.eps**2])
    mean3 = task.ell * (basis @ ks)

    def f(x: np.ndarray) -> np.ndarray:
        return erf(lam * x[:, 0]) * x[:, 1]

    planted = gauss_expect(lambda x: (f(x) - x[:, 2]) ** 2, mean3, cov3)
    planted_mean = gauss_expect(lambda x: f(x) - x[:, 2], mean3, cov3)
    cov2 = basis[:2] @ basis[:2].T
    ef = gauss_expect(f, np.zeros(2), cov2, nodes=80)
    ef2 = gauss_expect(lambda x: f(x) ** 2, np.zeros(2), cov2, nodes=80)
    others = task.n - 1
    return planted + 2 * others * planted_mean * ef + others * ef2 + others * (others - 1) * ef * ef


@pytest.mark.parametrize(("n_tokens", "lam"), [(1, 0.8), (4, 0.8), (3, 1.2)])
def test_exact_risk_equals_gauss_hermite_cubature_for_generic_directions(n_tokens: int, lam: float) -> None:
    # Unit k, v in general position (kᵀv, kᵀk*, kᵀv*, vᵀk*, vᵀv* all non-zero), ℓ = 1.5, γ = 0.7, ε = 0.4.
    rng = np.random.default_rng(11)
    k, v = rng.standard_normal(5), rng.standard_normal(5)
    k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
    task = Task(1, n_tokens, 5, 1.5, 0.7, 0.4)
    assert exact_risk_1d(task, k, v, lam) == pytest.approx(risk_by_cubature(task, k, v, lam), rel=1e-9)


def test_exact_risk_with_a_step_like_erf_matches_the_sign_closed_form() -> None:
    # λ = 1e6: erf(λa) = sign(a) but for |a| < 4e-6. One token (N = 1), k = k*, v = v*, ℓ = 3, γ = 0.2, ε = 0:
    # a ~ N(3, 0.04), b = y ~ N(0, 0.04) independent of a, so (T − y)² = (sign(a) − 1)²·b² = 4·1{a < 0}·b²
    # and R = 4·Φ(−15)·0.04; with ℓ = −0.5 the same gives 4·Φ(2.5)·0.04 (the planted cell's a at 15 and −2.5 SD).
    e = np.eye(3)
    for ell, z in ((3.0, -15.0), (-0.5, 2.5)):
        task = Task(1, 1, 3, ell, 0.2, 0.0)
        assert exact_risk_1d(task, e[0], e[1], 1e6) == pytest.approx(4 * norm.cdf(z) * 0.04, rel=1e-6)


def test_initial_directions_are_the_normalised_draws_k_first() -> None:
    task = Task(2, 2, 6, 1.0, 1.0, 0.1)
    k, v = init_directions(task, np.random.default_rng(5), on_manifold=False)
    draws = np.random.default_rng(5).standard_normal((2, 6))
    np.testing.assert_allclose(k, draws[0] / np.linalg.norm(draws[0]), rtol=1e-14)
    np.testing.assert_allclose(v, draws[1] / np.linalg.norm(draws[1]), rtol=1e-14)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_initial_directions_on_the_manifold_are_unit_and_orthogonal(seed: int) -> None:
    task = Task(2, 2, 6, 1.0, 1.0, 0.1)
    k, v = init_directions(task, np.random.default_rng(seed), on_manifold=True)
    assert np.linalg.norm(k) == pytest.approx(1.0, abs=1e-14) and np.linalg.norm(v) == pytest.approx(1.0, abs=1e-14)
    assert [k @ task.v_star, v @ task.k_star, k @ v] == pytest.approx([0.0, 0.0, 0.0], abs=1e-14)


def test_pgd_step_moves_against_the_tangent_gradient_and_renormalises() -> None:
    # k = e1, g_k = (1, 2, 0): tangent part (0, 2, 0); k ← (1, −0.2, 0)/√1.04. v = e2, g_v = (3, −1, 0): tangent part
    # (3, 0, 0); v ← (−0.3, 1, 0)/√1.09.
    e = np.eye(3)
    k, v = pgd_step(e[0], e[1], np.array([1.0, 2.0, 0.0]), np.array([3.0, -1.0, 0.0]), 0.1)
    np.testing.assert_allclose(k, np.array([1.0, -0.2, 0.0]) / np.sqrt(1.04), rtol=1e-14)
    np.testing.assert_allclose(v, np.array([-0.3, 1.0, 0.0]) / np.sqrt(1.09), rtol=1e-14)
