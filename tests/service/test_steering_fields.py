"""steering.gradient_signature: shape fields and layer labels from unequal methods (3 and 2 examples, L = 4 layers,
d = 3), each layer's pressure and mean-gradient cosine by hand with a per-layer axis, in both gradient conventions."""

import numpy as np
import pytest

from service.estimators.steering_gradients import GradientSignatureParams, gradient_signature
from service.registry import no_progress


def arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of 'base' (3 × 4 × 3) and 'pps' (2 × 4 × 3), and one axis per layer (4 × 3), so that a layer label
    read from the wrong row shows."""
    rng = np.random.default_rng(12)
    return rng.normal(size=(3, 4, 3)), rng.normal(size=(2, 4, 3)) + 0.5, rng.normal(size=(4, 3))


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def signature(convention: str) -> object:
    base, pps, axis = arrays()
    params = GradientSignatureParams.model_validate(
        {
            "grads": {"base": base.tolist(), "pps": pps.tolist()},
            "axis": axis.tolist(),
            "baseline": "base",
            "gradient_convention": convention,
        }
    )
    return gradient_signature(params, no_progress)


def test_shape_counts_and_layer_labels_from_unequal_methods() -> None:
    res = signature("loss_gradient")
    assert (res.num_layers, res.dim) == (4, 3)
    assert [s.n for s in res.signatures] == [3, 2]
    assert [[row.layer for row in s.layers] for s in res.signatures] == [[0, 1, 2, 3], [0, 1, 2, 3]]
    assert [c.layer for c in res.cosines] == [0, 1, 2, 3]


@pytest.mark.parametrize(("convention", "sign"), [("loss_gradient", 1.0), ("descent_direction", -1.0)])
def test_each_layer_label_carries_that_layers_pressure_and_cosines(convention: str, sign: float) -> None:
    """π_ℓ = −s·mean_i⟨g_i, v̂_ℓ⟩ (s = 1 for loss gradients, −1 for descent directions) and cos(ḡ^A_ℓ, ḡ^B_ℓ), written
    here per layer ℓ = row.layer."""
    res = signature(convention)
    base, pps, axis = arrays()
    unit = axis / np.linalg.norm(axis, axis=1, keepdims=True)
    for s, g in zip(res.signatures, (base, pps), strict=True):
        for row in s.layers:
            assert row.pressure == pytest.approx(-sign * np.mean(g[:, row.layer] @ unit[row.layer]), rel=1e-12)
    for c in res.cosines:
        assert c.mean_gradient[0][1] == pytest.approx(cos(base.mean(0)[c.layer], pps.mean(0)[c.layer]), rel=1e-12)
