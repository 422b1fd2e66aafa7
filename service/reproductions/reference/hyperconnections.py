"""Stability of the zero state of hyper-connected self-attention from its Jacobian built by Kronecker products."""

from collections.abc import Sequence

import numpy as np


def jacobian(
    a_r: np.ndarray, alpha: Sequence[float], beta: Sequence[float], v: np.ndarray, n_tokens: int, causal: bool
) -> np.ndarray:
    """J = (A_r − I) ⊗ I_{Nd} + (β αᵀ) ⊗ (Vᵀ ⊗ P) of dH_i/dt = Σ_j (A_r − I)_ij H_j + β_i SA(Σ_k α_k H_k) at H = 0,
    where attention at zero scores averages the tokens: P = 11ᵀ/N, or row t of the lower triangle equal to 1/t."""
    n = n_tokens
    p = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None] if causal else np.full((n, n), 1.0 / n)
    m, d = a_r.shape[0], v.shape[0]
    coupling = np.outer(beta, alpha)
    return np.kron(a_r - np.eye(m), np.eye(n * d)) + np.kron(coupling, np.kron(v.T, p))


def abscissa(j: np.ndarray) -> tuple[float, float]:
    """The largest real part of J's eigenvalues and the largest |imaginary part| among those attaining it."""
    lam = np.linalg.eigvals(j)
    top = lam.real.max()
    return float(top), float(np.abs(lam.imag[np.isclose(lam.real, top, atol=1e-9)]).max())


def crossings(
    a_r: np.ndarray,
    alpha: Sequence[float],
    beta: Sequence[float],
    v: np.ndarray,
    n_tokens: int,
    causal: bool,
    lo: float,
    hi: float,
    n_points: int,
) -> list[dict[str, float | str]]:
    """Values of a_r[0][0] in [lo, hi] where the spectral abscissa changes sign (grid of n_points, then bisection to
    1e-12), each with its type (hopf when the crossing eigenvalues are complex) and angular frequency."""

    def s(value: float) -> tuple[float, float]:
        a = a_r.astype(float).copy()
        a[0, 0] = value
        return abscissa(jacobian(a, alpha, beta, v, n_tokens, causal))

    grid = np.linspace(lo, hi, n_points)
    signs = [s(g)[0] for g in grid]
    out: list[dict[str, float | str]] = []
    for left, right, fl, fr in zip(grid[:-1], grid[1:], signs[:-1], signs[1:], strict=True):
        if (fl < 0) == (fr < 0):
            continue
        for _ in range(200):
            mid = 0.5 * (left + right)
            if (s(mid)[0] < 0) == (fl < 0):
                left = mid
            else:
                right = mid
            if right - left < 1e-12:
                break
        omega = s(0.5 * (left + right))[1]
        out.append({"value": float(0.5 * (left + right)), "type": "hopf" if omega > 1e-6 else "static", "omega": omega})
    return out
