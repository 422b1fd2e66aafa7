"""predictive_coding.target_alignment: the fields listed as RECONSTRUCTED, and the per-layer optimal learning rates
over a batch of 3 by hand (docs/predictive_coding.md)."""

import numpy as np
import pytest

from service.estimators.predictive_coding import TargetAlignmentParams, TargetAlignmentResult, target_alignment
from service.registry import no_progress
from tests.service.field_paths import names_a_field


def test_everything_resting_on_the_pc_equilibrium_is_listed_as_reconstructed() -> None:
    """docs/predictive_coding.md: the PC update at the exact equilibrium (RECONSTRUCTED, the standard energy
    formulation) carries ta_pc, its first-order value, the PC − BP differences, the per-draw values, the
    equilibrium residual and the loss after PC; the BP figures and the loss before are not listed."""
    res = target_alignment(TargetAlignmentParams(dims=[3, 4, 2], n_draws=3), no_progress)
    assert res.reconstructed == [
        "ta_pc", "ta_pc_first_order", "pc_minus_bp", "pc_minus_bp_se", "per_draw", "equilibrium_residual",
        "loss_after_pc",
    ]  # fmt: skip
    assert all(names_a_field(TargetAlignmentResult, name) for name in res.reconstructed)
    assert not {"ta_bp", "ta_bp_first_order", "loss_before", "loss_after_bp"} & set(res.reconstructed)


def test_optimal_rates_per_layer_over_a_batch_by_hand() -> None:
    """dims [3, 2, 2], B = 3, optimal_pc_lr: PC η_l = lr/(⟨x_{l−1}, a_{l−1}⟩/B) and BP η_l = lr/(‖a_{l−1}‖²/B) differ
    per layer; ΔW_l = η_l·(error)·(activity)ᵀ/B. The draw (docs/predictive_coding.md): X (3 × B), then Y (2 × B),
    from default_rng(6) with the weights given."""
    w1 = np.array([[0.5, -1.0, 0.3], [0.2, 0.4, -0.7]])
    w2 = np.array([[1.1, -0.3], [0.6, 0.9]])
    lr, b = 0.2, 3
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((3, b)), rng.standard_normal((2, b))
    a1 = w1 @ x
    e = y - w2 @ a1
    eps2 = np.linalg.solve(np.eye(2) + w2 @ w2.T, e)  # S = U_2U_2ᵀ + U_1U_1ᵀ = I + W2W2ᵀ
    eps1 = w2.T @ eps2
    x1 = a1 + eps1
    pc_rates = (lr / (np.sum(x * x) / b), lr / (np.sum(x1 * a1) / b))
    bp_rates = (lr / (np.sum(x * x) / b), lr / (np.sum(a1 * a1) / b))
    pc = (pc_rates[0] * eps1 @ x.T / b, pc_rates[1] * eps2 @ x1.T / b)
    bp = (bp_rates[0] * (w2.T @ e) @ x.T / b, bp_rates[1] * e @ a1.T / b)

    def cos(a: np.ndarray, c: np.ndarray) -> float:
        return float(np.sum(a * c) / np.sqrt(np.sum(a * a) * np.sum(c * c)))

    def finite(d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
        return (w2 + d2) @ ((w1 + d1) @ x) - w2 @ a1

    def first(d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
        return d2 @ a1 + w2 @ (d1 @ x)

    params = TargetAlignmentParams(weights=[w1.tolist(), w2.tolist()], batch=b, lr=lr, seed=6, optimal_pc_lr=True)
    res = target_alignment(params, no_progress)
    assert res.ta_pc == pytest.approx(cos(finite(*pc), e), rel=1e-12)
    assert res.ta_pc_first_order == pytest.approx(cos(first(*pc), e), rel=1e-12)
    assert res.ta_bp == pytest.approx(cos(finite(*bp), e), rel=1e-12)
    assert res.ta_bp_first_order == pytest.approx(cos(first(*bp), e), rel=1e-12)
    assert res.ta_pc_first_order < 1 - 1e-3  # over a batch the rule no longer aligns exactly (it does for B = 1)
