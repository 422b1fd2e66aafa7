"""unrolling.jacobian_error: ρ, the absolute errors, their peak and the predicted transient peak against a dense
unroll written here (docs/unrolling.md)."""

import math

import numpy as np
import pytest

from service.estimators.unrolling import JacobianErrorParams, JacobianErrorResult, jacobian_error
from service.registry import no_progress
from tests.service.field_paths import names_a_field

K, STEP, K0S = 40, 1.5, [0, 4]


@pytest.fixture
def problem() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    h = q @ np.diag([0.05, 0.2, 0.5, 0.8, 1.0]) @ q.T  # μ = 0.05, L = 1: hL = 1.5, ρ = 1 − hμ = 0.925
    return {
        "h": h,
        "dh": rng.standard_normal((5, 5)),
        "b": rng.standard_normal(5),
        "db": rng.standard_normal(5),
        "x0": 2.0 * rng.standard_normal(5),
    }


def dense_abs_errors(pb: dict[str, np.ndarray], k0: int) -> np.ndarray:
    """‖J_t − J*‖ for t = 0..K by unrolling GD and its forward derivative (J_t = 0 for t ≤ k0)."""
    h, dh, b, db = pb["h"], pb["dh"], pb["b"], pb["db"]
    x_star = np.linalg.solve(h, b)
    j_star = np.linalg.solve(h, db - dh @ x_star)
    x, jac, out = pb["x0"].copy(), np.zeros(5), []
    for t in range(K + 1):
        out.append(np.linalg.norm(jac - j_star))
        if t >= k0:
            jac = jac - STEP * (h @ jac) - STEP * (dh @ x - db)
        x = x - STEP * (h @ x - b)
    return np.array(out)


def test_rho_abs_errors_peaks_and_predicted_peak_by_hand(problem: dict[str, np.ndarray]) -> None:
    pb = problem
    res = jacobian_error(
        JacobianErrorParams(
            problem={"kind": "quadratic", **{k: pb[k].tolist() for k in ("h", "dh", "b", "db")}},
            step=STEP,
            iterations=K,
            k0_list=K0S,
            x0=pb["x0"].tolist(),
        ),
        no_progress,
    )
    lam = np.linalg.eigvalsh(pb["h"])
    rho = max(abs(1 - STEP * lam[0]), abs(1 - STEP * lam[-1]))
    assert res.rho == pytest.approx(rho, rel=1e-12)
    x_star = np.linalg.solve(pb["h"], pb["b"])
    j_star = np.linalg.norm(np.linalg.solve(pb["h"], pb["db"] - pb["dh"] @ x_star))
    gap0 = np.linalg.norm(pb["x0"] - x_star)
    dh_norm = np.linalg.norm(pb["dh"], 2)
    for curve, k0 in zip(res.curves, K0S, strict=True):
        dense = dense_abs_errors(pb, k0)
        assert set(range(k0 + 1, K + 1)) <= set(curve.t)  # K ≤ 996: every iteration after k0 is sampled
        np.testing.assert_allclose(curve.abs_error, dense[curve.t], rtol=1e-9, atol=1e-12)
        assert curve.peak_abs_error == pytest.approx(dense[k0 + 1 :].max(), rel=1e-9)
        # h‖∂H‖ρ^k0‖x0 − x*‖ / (e·ρ·ln(1/ρ)·‖J*‖): the peak of the bound's transient term m·h‖∂H‖ρ^(m−1)ρ^k0‖x0 − x*‖
        predicted = STEP * dh_norm * rho**k0 * gap0 / (math.e * rho * math.log(1 / rho) * j_star)
        assert curve.predicted_peak == pytest.approx(predicted, rel=1e-9)
        m = np.arange(1, 400)
        transient = (m * STEP * dh_norm * rho ** (m - 1) * rho**k0 * gap0).max() / j_star
        assert transient <= predicted * (1 + 1e-12) and transient == pytest.approx(predicted, rel=0.02)


def test_the_bound_its_peak_and_the_curse_criterion_are_listed_as_reconstructed(problem: dict[str, np.ndarray]) -> None:
    """docs/unrolling.md marks the bound (with its predicted transient peak and its time) and the x0 ≠ 0 curse
    criterion RECONSTRUCTED; the measured errors are not."""
    pb = problem
    res = jacobian_error(
        JacobianErrorParams(
            problem={"kind": "quadratic", **{k: pb[k].tolist() for k in ("h", "dh", "b", "db")}},
            step=STEP,
            iterations=5,
            k0_list=[0],
            x0=pb["x0"].tolist(),
        ),
        no_progress,
    )
    assert res.reconstructed == ["curves.bound", "curves.predicted_t_peak", "curves.predicted_peak", "curse_expected"]
    assert all(names_a_field(JacobianErrorResult, name) for name in res.reconstructed)
