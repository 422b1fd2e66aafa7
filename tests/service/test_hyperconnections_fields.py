"""hyperconnections.token_dynamics: the reported eigenvalues, their (p, μ) labels and the 2 × 2 blocks against a
dense Jacobian written here (docs/hyperconnections.md: dH_i/dt = Σ_j R_ij H_j + β_i·SA(Z), R = (A_r − I)ᵀ)."""

import numpy as np
import pytest

from service.estimators.hyperconnections import TokenDynamicsParams, TokenDynamicsResult, token_dynamics
from service.registry import no_progress
from tests.service.field_paths import names_a_field

N_TOKENS, DIM = 3, 2


def test_eigenvalues_and_blocks_match_a_dense_jacobian() -> None:
    """At H = 0 bidirectional attention averages (P0 = 11ᵀ/N, spectrum {1, 0 × (N − 1)}) and SA(Z) ≈ P0·Z·V, so
    J = R ⊗ I + βαᵀ ⊗ (P0 ⊗ Vᵀ) on row-major vec(H); each λ is an eigenvalue of R + p·μ·βαᵀ."""
    rng = np.random.default_rng(3)
    a_r, alpha, beta = rng.normal(size=(2, 2)), rng.normal(size=2), rng.normal(size=2)
    v = np.array([[0.3, -1.2], [0.8, 0.1]])  # complex pair μ = 0.2 ± 0.98i
    res = token_dynamics(
        TokenDynamicsParams(
            n_streams=2, n_tokens=N_TOKENS, dim=DIM, a_r=a_r.tolist(), alpha=alpha.tolist(), beta=beta.tolist(),
            w=np.eye(2).tolist(), v=v.tolist(), simulate=False,
        ),
        no_progress,
    )  # fmt: skip
    r = (a_r - np.eye(2)).T
    p0 = np.full((N_TOKENS, N_TOKENS), 1 / N_TOKENS)
    jac = np.kron(r, np.eye(N_TOKENS * DIM)) + np.kron(np.outer(beta, alpha), np.kron(p0, v.T))
    dense = np.linalg.eigvals(jac)
    reported = np.array([complex(e.re, e.im) for e in res.eigenvalues for _ in range(e.multiplicity)])
    assert reported.size == dense.size == 2 * N_TOKENS * DIM
    assert np.sort_complex(np.round(reported, 9)) == pytest.approx(np.sort_complex(np.round(dense, 9)), abs=1e-8)
    mus = np.linalg.eigvals(v)
    for e in res.eigenvalues:
        mu = complex(e.mu_re, e.mu_im)
        assert np.min(np.abs(mus - mu)) < 1e-12 and e.p in (1.0, 0.0)
        block = r + e.p * mu * np.outer(beta, alpha)
        assert np.min(np.abs(np.linalg.eigvals(block) - complex(e.re, e.im))) < 1e-10
        assert e.multiplicity == (1 if e.p == 1.0 else N_TOKENS - 1)
    expected = np.array(sorted((p, m.real, m.imag) for p in (1.0, 0.0) for m in mus))
    np.testing.assert_allclose(np.array(sorted((b.p, b.mu_re, b.mu_im) for b in res.blocks)), expected, atol=1e-12)
    for b in res.blocks:
        block = r + b.p * complex(b.mu_re, b.mu_im) * np.outer(beta, alpha)
        assert complex(b.trace_re, b.trace_im) == pytest.approx(np.trace(block), abs=1e-12)
        assert complex(b.det_re, b.det_im) == pytest.approx(np.linalg.det(block), abs=1e-12)


def test_every_field_resting_on_the_reconstructed_ode_is_listed() -> None:
    """docs/hyperconnections.md: the continuous-depth ODE is RECONSTRUCTED and every result field resting on it is
    listed, in the result's order; the list names fields of the result."""
    params = TokenDynamicsParams(n_streams=1, n_tokens=2, dim=1, a_r=[[1.0]], alpha=[1.0], beta=[1.0], simulate=False)
    res = token_dynamics(params, no_progress)
    assert res.reconstructed == [
        "eigenvalues", "spectral_abscissa", "hyperbolic", "linear_label", "critical_a_r", "blocks", "simulation",
        "crossings", "sweep_curve", "fd_residual", "fd_jacobian_residual",
    ]  # fmt: skip
    assert all(names_a_field(TokenDynamicsResult, name) for name in res.reconstructed)
