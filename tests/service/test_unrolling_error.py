"""Closed form and recursion of `unrolling_error` against an explicit unroll written here, and their progress."""

import numpy as np
import pytest

from service.estimators import unrolling_error
from service.estimators.unrolling_error import Problem, closed_form_errors, eigen, recursion_errors, truth


def unrolled_errors(problem: Problem, step: float, x0: np.ndarray, k0: int, iterations: int) -> np.ndarray:
    """‖J_t − J*‖₂, t = 1..K, of x_{t+1} = x_t − h(Hx_t − b), J_{t+1} = (I − hH)J_t − h(∂H x_t − ∂b), J_t = 0 for
    t ≤ k0, with J* = H⁻¹(∂b − ∂H x*) from numpy's solver."""
    x_star = np.linalg.solve(problem.h, problem.b)
    j_star = np.linalg.solve(problem.h, problem.db - problem.dh @ x_star)
    x, jac, out = x0.copy(), np.zeros_like(x0), np.empty(iterations)
    for t in range(iterations):
        if t >= k0:
            jac = jac - step * (problem.h @ jac) - step * (problem.dh @ x - problem.db)
        x = x - step * (problem.h @ x - problem.b)
        out[t] = np.linalg.norm(jac - j_star)
    return out


@pytest.mark.filterwarnings("error")
def test_cancelling_error_over_many_chunks_matches_the_unroll(monkeypatch: pytest.MonkeyPatch) -> None:
    # H = diag(1, 0.5), ∂H = diag(1, 0), b = 0 (x* = 0), h = 1e-4, x0 = (12345.678, 1): component 1 has
    # B = hδx0 = 1.2345678 and A = −r·J* = 2000·B (∂b_1 = −2000·B/r), so e_1(m) = r^(m−1)·B·(2000 − m) vanishes at
    # m = 2000 while the power sums are ~1e7: the rows near it must be recomputed component by component (the
    # power-sum form is off by ~3e-10 relative next to the zero and by 3e-5 at it). Component 2 has J* = 0 and
    # δ = 0 (no error). Chunks of 4 rows (8 entries / n = 2) exercise the chunk offsets and the scale r^(2·start).
    monkeypatch.setattr(unrolling_error, "CHUNK_ELEMENTS", 8)
    step, r, big_b = 1e-4, 1.0 - 1e-4, 1e-4 * 12345.678
    problem = Problem(
        h=np.diag([1.0, 0.5]), dh=np.diag([1.0, 0.0]), b=np.zeros(2), db=np.array([-2000.0 * big_b / r, 0.0])
    )
    x0 = np.array([12345.678, 1.0])
    eig = eigen(problem)
    got = closed_form_errors(eig, eig.delta, truth(problem, eig), step, x0, 0, 2100, lambda f: None)
    want = unrolled_errors(problem, step, x0, 0, 2100)
    assert want[1999] < 1e-11  # the zero at m = 2000
    np.testing.assert_allclose(got, want, rtol=2e-11, atol=1e-11)
    m = np.array([1990, 2010])
    assert got[m - 1] == pytest.approx(r ** (m - 1) * big_b * np.abs(2000 - m), rel=1e-9)


def test_closed_form_with_k0_over_several_chunks_matches_the_unroll(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unrolling_error, "CHUNK_ELEMENTS", 30)
    rng = np.random.default_rng(7)
    lam = rng.uniform(0.5, 2.0, 3)
    q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    h = q @ np.diag(lam) @ q.T
    problem = Problem(h=h, dh=q @ np.diag([0.3, -0.2, 0.7]) @ q.T, b=rng.standard_normal(3), db=rng.standard_normal(3))
    x0 = rng.standard_normal(3)
    eig = eigen(problem)
    assert eig.delta is not None
    got = closed_form_errors(eig, eig.delta, truth(problem, eig), 0.05, x0, 5, 57, lambda f: None)
    np.testing.assert_allclose(got, unrolled_errors(problem, 0.05, x0, 5, 57), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize(("iterations", "every"), [(10, 1), (120, 2), (150, 3)])
def test_recursion_reports_progress_every_max_1_k_over_50_steps(iterations: int, every: int) -> None:
    problem = Problem(h=np.eye(2), dh=np.eye(2), b=np.ones(2), db=np.zeros(2))
    eig = eigen(problem)
    seen: list[float] = []
    recursion_errors(problem, truth(problem, eig), 0.1, np.zeros(2), [0], iterations, seen.append)
    assert seen == pytest.approx([t / iterations for t in range(every, iterations + 1, every)], rel=1e-15)
