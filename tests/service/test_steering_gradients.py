"""Tests of ``steering.gradient_signature`` (``service/estimators/steering_gradients.py``): hand computations of
the mean-gradient energy fraction and the per-example cosines, the locs of bad arrays, and the plot's contents."""

import warnings
from typing import Any

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from service.errors import InvalidInput
from service.estimators.steering_gradients import (
    SPEC,
    GradientSignatureParams,
    GradientSignatureResult,
    gradient_signature,
    layer_signatures,
    per_example_cosines,
)
from service.registry import no_progress


def signature(grads: dict[str, Any], axis: Any, **extra: Any) -> GradientSignatureResult:
    """Lists go through validation; arrays (as the API hands over resolved uploads) are set after it."""
    params = GradientSignatureParams.model_validate(
        {"grads": {k: [[[0.0]]] for k in grads}, "axis": [[1.0]], "baseline": next(iter(grads)), **extra}
    )
    return gradient_signature(params.model_copy(update={"grads": grads, "axis": axis}), no_progress)


def test_rho_of_the_mean_gradient_per_layer_by_hand() -> None:
    # Axis (1, 0) at both layers. Layer 0: both examples (0.3, 0.4), ḡ = (0.3, 0.4): ⟨ḡ, v̂⟩²/‖ḡ‖² = 0.09/0.25 = 0.36
    # (‖ḡ‖² < 1). Layer 1: examples (4, 3) and (4, 3): 16/25 = 0.64 (‖ḡ‖² > 1).
    g = np.array([[[0.3, 0.4], [4.0, 3.0]], [[0.3, 0.4], [4.0, 3.0]]])
    layers = signature({"m": g}, np.array([[1.0, 0.0]])).signatures[0].layers
    assert [s.rho_mean_gradient for s in layers] == pytest.approx([0.36, 0.64], rel=1e-14)
    assert [s.mean_gradient_norm for s in layers] == pytest.approx([0.5, 5.0], rel=1e-15)


def test_layer_signatures_give_float_nan_for_a_zero_layer() -> None:
    out = layer_signatures(np.zeros((2, 1, 3)), np.array([[1.0, 0.0, 0.0]]), 1.0)
    for key in ("rho", "rho_mean_gradient", "spectral_pr", "effective_rank", "coordinate_pr"):
        assert np.isnan(out[key]).all(), key


def test_per_example_cosines_skip_zero_examples_on_either_side() -> None:
    # a = (0, 0), (1, 0), (1, 1); b = (1, 0), (0, 0), (1, 0): only the third example has both non-zero, cos = 1/√2.
    # No RuntimeWarning for the skipped 0/0.
    a = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])[:, None, :]
    b = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]])[:, None, :]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = per_example_cosines([a, b])
    assert out[0, 1, 0] == out[1, 0, 0] == pytest.approx(1 / np.sqrt(2), rel=1e-15)
    assert out[0, 0, 0] == out[1, 1, 0] == 1.0


def test_per_example_cosines_unequal_n_is_nan_only_for_that_pair() -> None:
    # Methods of n = 4, 5, 4: the (0, 1) and (1, 2) pairs are NaN (a float), the (0, 2) pair is still computed.
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 1, 3)), rng.standard_normal((5, 1, 3))
    out = per_example_cosines([a, b, -a])
    assert np.isnan(out[0, 1, 0]) and np.isnan(out[1, 2, 0])
    assert out[0, 2, 0] == pytest.approx(-1.0, abs=1e-15)


def test_cosines_are_clipped_to_one_and_the_diagonal_is_exactly_one() -> None:
    # For g = (0.1, 0.7): ⟨g, g⟩/(‖g‖·‖g‖) rounds to 1 + 2⁻⁵²; |cos| ≤ 1 (Cauchy-Schwarz). For h = (0.1, 0.9),
    # ⟨h, h⟩/(√⟨h, h⟩)² rounds to 1 − 2⁻⁵², yet cos(h, h) = 1.
    g = np.array([[[0.1, 0.7]]])
    assert (g[0, 0] @ g[0, 0]) / np.linalg.norm(g) ** 2 > 1.0
    out = per_example_cosines([g, g.copy(), -g])
    assert out[:, :, 0].tolist() == [[1.0, 1.0, -1.0], [1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]]
    h = np.array([[[0.1, 0.9]]])
    assert (h[0, 0] @ h[0, 0]) / np.sqrt(h[0, 0] @ h[0, 0]) ** 2 < 1.0
    assert per_example_cosines([h])[0, 0, 0] == 1.0


@pytest.mark.parametrize(
    ("axis", "extra", "loc"),
    [
        (np.array([[1.0, np.nan]]), {}, ("axis",)),
        ([[1.0, 0.0]], {"losses": {"m": np.array([[1.0, 2.0]])}}, ("losses", "m")),
        ([[1.0, 0.0]], {"losses": {"m": np.array([1.0, np.inf])}}, ("losses", "m")),
    ],
)
def test_bad_arrays_name_their_field(axis: Any, extra: dict, loc: tuple) -> None:
    losses = extra.get("losses")
    params = GradientSignatureParams.model_validate(
        {"grads": {"m": [[[1.0, 0.0]], [[0.0, 1.0]]]}, "axis": [[1.0, 0.0]], "baseline": "m"}
    )
    params = params.model_copy(update={"axis": axis, "losses": losses})
    with pytest.raises(InvalidInput) as err:
        gradient_signature(params, no_progress)
    assert err.value.loc == loc


def test_plot_shows_pressure_and_spectral_pr_per_layer() -> None:
    # Two methods, three layers; method "z" is zero at layer 2, so its spectral PR is null and drawn as a gap.
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3, 5))
    z = rng.standard_normal((4, 3, 5))
    z[:, 2] = 0.0
    result = signature({"a": a, "z": z}, np.ones((1, 5)))
    fig = SPEC.plot(result)
    assert tuple(fig.get_size_inches()) == (7.0, 6.0)
    ax_p, ax_pr = fig.axes
    assert ax_p.get_shared_x_axes().joined(ax_p, ax_pr)
    assert ax_p.get_title() == "Gradient signature per layer"
    assert ax_p.get_ylabel() == "axis pressure π (> 0 amplifies)"
    assert ax_pr.get_ylabel() == "spectral participation ratio"
    assert ax_pr.get_xlabel() == "layer ℓ"
    assert [t.get_text() for t in ax_p.get_legend().get_texts()] == ["a", "z"]
    lines, zero = ax_p.get_lines()[:2], ax_p.get_lines()[2]
    assert (list(zero.get_ydata()), zero.get_linewidth()) == ([0.0, 0.0], 0.8)
    assert to_rgba(zero.get_color()) == to_rgba("grey")
    for line, sig in zip(lines, result.signatures, strict=True):
        assert (line.get_marker(), line.get_linestyle()) == ("o", "-")
        assert list(line.get_xdata()) == [0, 1, 2]
        assert list(line.get_ydata()) == [s.pressure for s in sig.layers]
    pr_a, pr_z = ax_pr.get_lines()
    assert (pr_a.get_marker(), pr_a.get_linestyle()) == ("o", "-")
    assert list(pr_a.get_ydata()) == [s.spectral_pr for s in result.signatures[0].layers]
    assert result.signatures[1].layers[2].spectral_pr is None
    assert list(pr_z.get_ydata())[:2] == [s.spectral_pr for s in result.signatures[1].layers[:2]]
    assert np.isnan(pr_z.get_ydata()[2])
