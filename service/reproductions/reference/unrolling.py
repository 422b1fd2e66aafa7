"""The unrolled Jacobian of gradient descent on a quadratic by its forward recursion (no eigen-decomposition)."""

import numpy as np


def relative_errors(
    h: np.ndarray, dh: np.ndarray, b: np.ndarray, db: np.ndarray, x0: np.ndarray, iterations: int, k0: int
) -> np.ndarray:
    """‖J_t − J*‖/‖J*‖ for t = 1..K of x_{t+1} = x_t − η(Hx_t − b), η = 1/λ_max(H), with the derivative recursion
    J_{t+1} = J_t − η(H J_t + ∂H x_t − ∂b) started from J = 0 at t = k0 (truncation), and J* = H⁻¹(∂b − ∂H x*)."""
    step = 1.0 / float(np.linalg.eigvalsh(h).max())
    x_star = np.linalg.solve(h, b)
    j_star = np.linalg.solve(h, db - dh @ x_star)
    x, j = x0.astype(float).copy(), np.zeros_like(j_star)
    out = np.empty(iterations)
    for t in range(iterations):
        if t >= k0:
            j = j - step * (h @ j + dh @ x - db)
        x = x - step * (h @ x - b)
        out[t] = np.linalg.norm(j - j_star) / np.linalg.norm(j_star)
    return out


def contraction(h: np.ndarray) -> float:
    """ρ = max |1 − λ_i/λ_max| over the eigenvalues of H (gradient descent with step 1/L)."""
    lam = np.linalg.eigvalsh(h)
    return float(np.max(np.abs(1.0 - lam / lam.max())))
