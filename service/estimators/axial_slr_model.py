"""Axial single-location regression: data, the axial attention predictor and its variants, gradients, exact 1-D risk.

Data (Marion et al. 2025 extended to an M×N grid of d-dimensional tokens): one planted cell x = ℓ·k* + γ·g, every
other cell N(0, I_d), y = xᵀv* + ε·ξ with g, ξ standard normal, unit k* ⊥ v*. The predictors are invariant under
permutations of the rows and of the cells inside a row, so the planted cell is put at (0, 0).
Axial predictor: h_i = Σ_j σ_r(λ_r x_ijᵀk)·x_ij (row attention), T = Σ_i σ_c(λ_c h_iᵀk)·h_iᵀv (column attention),
with σ = erf (TErf) or a softmax over the attended axis (TSoftmax). Simplified inner weights: linear (2/√π)λ_r x_ijᵀk
(erf to first order) or constant 1 (sum pooling). The flattened 1-D predictor is Σ_ij erf(λ_r x_ijᵀk)·x_ijᵀv.
"""

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.integrate import quad
from scipy.special import erf, softmax

Inner = Literal["nonlinear", "linear", "const"]
Attention = Literal["erf", "softmax"]
TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
QUAD_HALF_WIDTH = 12.0
"""Standard-normal integrals are taken over [−12, 12] (mass outside below 1e-32)."""


@dataclass(frozen=True)
class Task:
    """Grid size, signal and noise levels, and the oracle directions k* = e_1, v* = e_2."""

    m: int
    n: int
    d: int
    ell: float
    gamma: float
    eps: float

    @property
    def k_star(self) -> np.ndarray:
        return np.eye(self.d)[0]

    @property
    def v_star(self) -> np.ndarray:
        return np.eye(self.d)[1]


def sample(task: Task, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``size`` draws of (X, y): X (size, M, N, d) with x_00 = ℓk* + γg, y = x_00ᵀv* + εξ.

    Draw order: all of X as standard normals (g is the (0, 0) cell's draw), then ξ.
    """
    x = rng.standard_normal((size, task.m, task.n, task.d))
    x[:, 0, 0, :] *= task.gamma
    x[:, 0, 0, 0] += task.ell
    y = x[:, 0, 0, 1] + task.eps * rng.standard_normal(size)
    return x, y


def _weights(logits: np.ndarray, attention: Attention, axis: int) -> np.ndarray:
    return erf(logits) if attention == "erf" else softmax(logits, axis=axis)


def axial_predict(
    x: np.ndarray, k: np.ndarray, v: np.ndarray, lam_r: float, lam_c: float, inner: Inner, attention: Attention
) -> np.ndarray:
    """T(X) for each draw: row attention then column attention."""
    a = x @ k
    if inner == "nonlinear":
        w = _weights(lam_r * a, attention, axis=2)
    elif inner == "linear":
        w = TWO_OVER_SQRT_PI * lam_r * a
    else:
        w = np.ones_like(a)
    h = np.matmul(w[:, :, None, :], x)[:, :, 0, :]
    c = _weights(lam_c * (h @ k), attention, axis=1)
    return np.sum(c * (h @ v), axis=1)


def flattened_predict(x: np.ndarray, k: np.ndarray, v: np.ndarray, lam: float, attention: Attention) -> np.ndarray:
    """Marion et al.'s 1-D predictor over all M·N tokens: Σ σ(λ x_lᵀk)·x_lᵀv."""
    flat = x.reshape(x.shape[0], -1, x.shape[-1])
    return np.sum(_weights(lam * (flat @ k), attention, axis=1) * (flat @ v), axis=1)


def erf_prime(z: np.ndarray) -> np.ndarray:
    return TWO_OVER_SQRT_PI * np.exp(-z * z)


def risk_gradient(
    x: np.ndarray, y: np.ndarray, k: np.ndarray, v: np.ndarray, lam_r: float, lam_c: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """Empirical risk mean (T − y)² of the erf axial predictor and its gradients in k and v.

    With a_ij = λ_r x_ijᵀk, b_i = λ_c h_iᵀk, c_i = erf(b_i), val_i = h_iᵀv: ∂T/∂v = Σ_i c_i h_i and
    ∂T/∂k = Σ_i val_i erf′(b_i) λ_c h_i + Σ_ij λ_r erf′(a_ij) x_ij·x_ijᵀ(val_i erf′(b_i) λ_c k + c_i v).
    """
    d = x.shape[-1]
    flat = x.reshape(-1, d)
    proj = flat @ np.stack([k, v], axis=1)
    xk = proj[:, 0].reshape(x.shape[:-1])
    xv = proj[:, 1].reshape(x.shape[:-1])
    a = lam_r * xk
    ea = erf(a)
    h = np.matmul(ea[:, :, None, :], x)[:, :, 0, :]
    b = lam_c * (h @ k)
    c = erf(b)
    val = h @ v
    r = np.sum(c * val, axis=1) - y
    scale = (2.0 / y.size) * r
    outer = val * erf_prime(b) * lam_c
    grad_v = (scale[:, None] * c).ravel() @ h.reshape(-1, d)
    coef = (lam_r * scale[:, None, None]) * erf_prime(a) * (outer[:, :, None] * xk + c[:, :, None] * xv)
    grad_k = (scale[:, None] * outer).ravel() @ h.reshape(-1, d) + coef.ravel() @ flat
    return float(np.mean(r * r)), grad_k, grad_v


def _gauss(fn: object, mean: float, sd: float) -> float:
    """E f(a) for a ~ N(mean, sd²) by adaptive quadrature over z = (a − mean)/sd (exact value when sd = 0)."""
    if sd == 0.0:
        return float(fn(mean))  # type: ignore[operator]
    kink = float(np.clip(-mean / sd, -QUAD_HALF_WIDTH, QUAD_HALF_WIDTH))
    val, _ = quad(
        lambda z: fn(mean + sd * z) * np.exp(-0.5 * z * z),  # type: ignore[operator]
        -QUAD_HALF_WIDTH,
        QUAD_HALF_WIDTH,
        points=[kink],
        epsabs=1e-13,
        epsrel=1e-11,
        limit=400,
    )
    return val / np.sqrt(2.0 * np.pi)


def exact_risk_1d(task: Task, k: np.ndarray, v: np.ndarray, lam: float) -> float:
    """E(T − y)² of the 1-D predictor T = Σ_j erf(λ x_jᵀk)·x_jᵀv over one row of N tokens (one of them planted).

    Every term reduces to a 1-D Gaussian integral over a = xᵀk: given a, b = xᵀv and y are Gaussian with
    linear conditional means. Noise token: a ~ N(0, 1), Cov(a, b) = ρ = kᵀv. Planted token: a ~ N(ℓκ, γ²),
    b ~ N(ℓθ, γ²), y ~ N(ℓτ, γ² + ε²), Cov(a, b) = γ²ρ, Cov(a, y) = γ²η, Cov(b, y) = γ²ν, with κ = kᵀk*, θ = vᵀk*,
    η = kᵀv*, ν = vᵀv*, τ = k*ᵀv*. Then E T² = E f₀² + (N−1)E f² + 2(N−1)E f₀ E f + (N−1)(N−2)(E f)² and
    E Ty = E f₀y + (N−1) E f · E y.
    """
    ks, vs = task.k_star, task.v_star
    kappa, theta, eta, nu, rho = k @ ks, v @ ks, k @ vs, v @ vs, k @ v
    tau = ks @ vs
    g2, ell, n_tok = task.gamma**2, task.ell, task.n

    def erf_l(a: float) -> float:
        return float(erf(lam * a))

    ef = _gauss(lambda a: erf_l(a) * rho * a, 0.0, 1.0)
    ef2 = _gauss(lambda a: erf_l(a) ** 2 * (rho * rho * a * a + 1.0 - rho * rho), 0.0, 1.0)
    m_a, m_b, m_y = ell * kappa, ell * theta, ell * tau
    if task.gamma > 0:
        beta_b, beta_y = rho, eta

        def mb(a: float) -> float:
            return m_b + beta_b * (a - m_a)

        def my(a: float) -> float:
            return m_y + beta_y * (a - m_a)

        var_b = g2 * (1.0 - rho * rho)
        cov_by = g2 * (nu - rho * eta)
    else:

        def mb(a: float) -> float:
            return m_b

        def my(a: float) -> float:
            return m_y

        var_b, cov_by = 0.0, 0.0
    ef0 = _gauss(lambda a: erf_l(a) * mb(a), m_a, task.gamma)
    ef02 = _gauss(lambda a: erf_l(a) ** 2 * (mb(a) ** 2 + var_b), m_a, task.gamma)
    ef0y = _gauss(lambda a: erf_l(a) * (mb(a) * my(a) + cov_by), m_a, task.gamma)
    ey, ey2 = m_y, m_y * m_y + g2 + task.eps**2
    et2 = ef02 + (n_tok - 1) * ef2 + 2 * (n_tok - 1) * ef0 * ef + (n_tok - 1) * (n_tok - 2) * ef * ef
    ety = ef0y + (n_tok - 1) * ef * ey
    return float(et2 - 2.0 * ety + ey2)


def init_directions(task: Task, rng: np.random.Generator, on_manifold: bool) -> tuple[np.ndarray, np.ndarray]:
    """Unit (k, v): uniform on the sphere, or on 𝓜 = {k ⊥ v*, v ⊥ k*, v ⊥ k} (k drawn first, then v)."""
    k = rng.standard_normal(task.d)
    v = rng.standard_normal(task.d)
    if on_manifold:
        ks, vs = task.k_star, task.v_star
        k -= (k @ vs) * vs
        k /= np.linalg.norm(k)
        v -= (v @ ks) * ks
        orth = k - (k @ ks) * ks
        size = np.linalg.norm(orth)
        if size > 1e-12:
            orth /= size
            v -= (v @ orth) * orth
        return k, v / np.linalg.norm(v)
    return k / np.linalg.norm(k), v / np.linalg.norm(v)


def manifold_distance(task: Task, k: np.ndarray, v: np.ndarray) -> float:
    """(kᵀv)² + (kᵀv*)² + (vᵀk*)²: zero exactly on the invariant manifold 𝓜."""
    return float((k @ v) ** 2 + (k @ task.v_star) ** 2 + (v @ task.k_star) ** 2)


def pgd_step(k: np.ndarray, v: np.ndarray, grad_k: np.ndarray, grad_v: np.ndarray, lr: float) -> tuple:
    """Projected gradient step on the sphere: k ← normalize(k − α(g_k − (kᵀg_k)k)), and the same for v."""
    k = k - lr * (grad_k - (k @ grad_k) * k)
    v = v - lr * (grad_v - (v @ grad_v) * v)
    return k / np.linalg.norm(k), v / np.linalg.norm(v)
