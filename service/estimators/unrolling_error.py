"""Jacobian error of unrolled gradient descent on a quadratic: exact per-eigencomponent form and explicit recursion."""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

CHUNK_ELEMENTS = 1 << 20
"""Work on at most this many (t, i) entries at a time."""
COMMUTE_TOL = 1e-12


@dataclass(frozen=True)
class Problem:
    """f(x) = ½ xᵀHx − bᵀx with ∂H, ∂b the derivatives of H and b in the hyperparameter."""

    h: np.ndarray
    dh: np.ndarray
    b: np.ndarray
    db: np.ndarray


@dataclass(frozen=True)
class Eigen:
    """H = Q diag(λ) Qᵀ, and δ = diag(Qᵀ ∂H Q) when ∂H is diagonal in that basis (None otherwise)."""

    lam: np.ndarray
    q: np.ndarray
    delta: np.ndarray | None


def eigen(problem: Problem) -> Eigen:
    """eigh of H; ∂H commutes with H in the usable sense when Qᵀ∂HQ is diagonal to 1e-12 of its largest entry."""
    lam, q = np.linalg.eigh(problem.h)
    if np.count_nonzero(problem.dh - np.diag(np.diag(problem.dh))) == 0 and np.ptp(np.diag(problem.dh)) == 0:
        return Eigen(lam, q, np.full(lam.size, problem.dh[0, 0]))
    rotated = q.T @ problem.dh @ q
    scale = max(float(np.abs(rotated).max()), np.finfo(float).tiny)
    off = rotated - np.diag(np.diag(rotated))
    return Eigen(lam, q, np.diag(rotated).copy() if np.abs(off).max() <= COMMUTE_TOL * scale else None)


@dataclass(frozen=True)
class Truth:
    """x* = H⁻¹b and J* = H⁻¹(∂b − ∂H x*) from the implicit function theorem."""

    x_star: np.ndarray
    j_star: np.ndarray


def solve(eig: Eigen, rhs: np.ndarray) -> np.ndarray:
    """H⁻¹ rhs through the eigendecomposition."""
    return eig.q @ ((eig.q.T @ rhs) / eig.lam)


def truth(problem: Problem, eig: Eigen) -> Truth:
    x_star = solve(eig, problem.b)
    return Truth(x_star, solve(eig, problem.db - problem.dh @ x_star))


def power_table(q: np.ndarray, rows: int) -> np.ndarray:
    """T[j, i] = q_i^j for j < rows, by doubling (log2(rows) multiplications deep, no exp)."""
    table = np.empty((rows, q.size))
    table[0] = 1.0
    filled, base = 1, q.copy()
    while filled < rows:
        n = min(filled, rows - filled)
        np.multiply(table[:n], base, out=table[filled : filled + n])
        filled += n
        base = base * base
    return table


def closed_form_errors(
    eig: Eigen,
    delta: np.ndarray,
    tr: Truth,
    step: float,
    x0: np.ndarray,
    k0: int,
    iterations: int,
    progress: Callable[[float], None],
) -> np.ndarray:
    """‖J_t − J*‖₂ for t = 1..K, J_t = 0 for t ≤ k0, when ∂H = Q diag(δ) Qᵀ (``delta`` = δ).

    With m = t − k0, r = 1 − hλ, a = −QᵀJ* and b = r^k0 ⊙ Qᵀ(x0 − x*), each component is
    e_i(t) = r_i^(m−1) (A_i − m B_i) with A = r ⊙ a, B = hδ ⊙ b (the exact error of the unrolled derivative
    iteration), so ‖e‖² = Σ q^(m−1)A² − 2m Σ q^(m−1)AB + m² Σ q^(m−1)B² with q = r²: three weighted power sums,
    one matrix product per block of m. Rows where the sum cancels to below 1e-4 of its positive part are
    recomputed component by component.
    """
    r = 1.0 - step * eig.lam
    q = r * r
    log_q = np.log(np.maximum(q, np.finfo(float).tiny))
    a = -(eig.q.T @ tr.j_star)
    b = r**k0 * (eig.q.T @ (x0 - tr.x_star))
    big_a, big_b = r * a, step * delta * b
    weights = np.stack([big_a * big_a, big_a * big_b, big_b * big_b], axis=1)
    out = np.empty(iterations)
    out[:k0] = np.linalg.norm(tr.j_star)
    total = iterations - k0
    rows = min(total, max(1, CHUNK_ELEMENTS // r.size))
    table = power_table(q, rows)
    for start in range(0, total, rows):
        count = min(rows, total - start)
        scale = np.exp(start * log_q)
        sums = table[:count] @ (scale[:, None] * weights)
        m = np.arange(start + 1, start + count + 1, dtype=np.float64)
        positive = sums[:, 0] + m * m * sums[:, 2]
        squared = positive - 2.0 * m * sums[:, 1]
        bad = np.flatnonzero(squared < 1e-4 * positive)
        if bad.size:
            comp = table[bad] * scale * (big_a - m[bad, None] * big_b) ** 2
            squared[bad] = comp.sum(axis=1)
        out[k0 + start : k0 + start + count] = np.sqrt(np.maximum(squared, 0.0))
        progress((start + count) / total)
    return out


def recursion_errors(
    problem: Problem,
    tr: Truth,
    step: float,
    x0: np.ndarray,
    k0_list: list[int],
    iterations: int,
    progress: Callable[[float], None],
) -> np.ndarray:
    """‖J_t − J*‖₂ for t = 1..K (rows) and each k0 (columns) from the explicit iteration
    x_{t+1} = x_t − h(Hx_t − b), J_{t+1} = (I − hH)J_t − h(∂H x_t − ∂b), J_t = 0 for t ≤ k0."""
    k0s = np.asarray(k0_list)
    jac = np.zeros((tr.j_star.size, k0s.size))
    x = x0.astype(np.float64, copy=True)
    out = np.empty((iterations, k0s.size))
    report = max(1, iterations // 50)
    for t in range(iterations):
        drive = problem.dh @ x - problem.db
        jac = jac - step * (problem.h @ jac) - step * drive[:, None] * (t >= k0s)
        x = x - step * (problem.h @ x - problem.b)
        out[t] = np.linalg.norm(jac - tr.j_star[:, None], axis=0)
        if (t + 1) % report == 0:
            progress((t + 1) / iterations)
    return out
