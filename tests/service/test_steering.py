"""Tests of ``steering.persona_vector`` and ``steering.gradient_signature``: hand computations, published checks."""

import io
import itertools
from typing import Any

import numpy as np
import pytest

from service.errors import Cancelled, InvalidInput
from service.estimators.steering_gradients import (
    SPEC as SIGNATURE_SPEC,
)
from service.estimators.steering_gradients import (
    GradientSignatureParams,
    GradientSignatureResult,
    gradient_signature,
    signature_cost,
)
from service.estimators.steering_metrics import gram_singular_values
from service.estimators.steering_persona import (
    SPEC as PERSONA_SPEC,
)
from service.estimators.steering_persona import (
    PersonaVectorParams,
    PersonaVectorResult,
    persona_cost,
    persona_vector,
)
from service.registry import ESTIMATORS, no_progress


def persona(pos: Any, neg: Any, **extra: Any) -> PersonaVectorResult:
    """Lists go through validation; arrays (as the API hands over resolved uploads) are set after it."""
    params = PersonaVectorParams.model_validate({"pos": [[[0.0]]], "neg": [[[0.0]]], **extra})
    return persona_vector(params.model_copy(update={"pos": pos, "neg": neg}), no_progress)


def signature(grads: dict[str, Any], axis: Any, baseline: str | None = None, **extra: Any) -> GradientSignatureResult:
    params = GradientSignatureParams.model_validate(
        {"grads": {k: [[[0.0]]] for k in grads}, "axis": [[1.0]], "baseline": baseline or next(iter(grads)), **extra}
    )
    return gradient_signature(params.model_copy(update={"grads": grads, "axis": axis}), no_progress)


def one_layer(g: np.ndarray) -> np.ndarray:
    """(n, d) → (n, 1, d)."""
    return g[:, None, :]


# ================================================================== persona_vector


def test_persona_vector_hand_computation() -> None:
    # pos (2 examples × 2 layers × d = 2) and neg: v_0 = (2, 0) − (0.5, 0) = (1.5, 0), v_1 = (0, 3) − (0, 1) = (0, 2).
    # Layer 0 projections: pos 1, 3; neg 0, 1 → AUC = (1 + ½ + 1 + 1)/4 = 0.875; pooled sd √(2.5/2) → d = 1.5/1.1180.
    # Query (2, 5), (1, 1) projects to 2 on v̂_0 and 1 on v̂_1.
    pos = [[[1.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [0.0, 4.0]]]
    neg = [[[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 2.0]]]
    params = PersonaVectorParams.model_validate({"pos": pos, "neg": neg, "query": [[[2.0, 5.0], [1.0, 1.0]]]})
    result = persona_vector(params, no_progress)
    assert result.vectors == [[1.5, 0.0], [0.0, 2.0]]
    assert result.unit_vectors == [[1.0, 0.0], [0.0, 1.0]]
    assert [s.norm for s in result.layers] == [1.5, 2.0]
    assert [s.auc for s in result.layers] == [0.875, 0.875]
    assert (result.layers[0].pos_mean_projection, result.layers[0].neg_mean_projection) == (2.0, 0.5)
    assert result.layers[0].separation == pytest.approx(1.5 / np.sqrt(1.25), rel=1e-12)
    assert result.query_projections == [[2.0, 1.0]]
    assert result.best_layer == 0
    assert result.reconstructed == []


def test_auc_equals_pairwise_count_with_ties_and_follows_the_labels() -> None:
    # Rounded activations create ties: AUC = (#{pos > neg} + ½#{pos = neg}) / (n_pos·n_neg) by a double loop.
    # Swapping pos and neg negates v, so the projections flip too and the AUC is unchanged (v is oriented by the
    # labels: AUC > ½ means the trait-positive side projects higher).
    rng = np.random.default_rng(3)
    pos = np.round(rng.normal(0.4, 1.0, size=(17, 3, 4)), 0)
    neg = np.round(rng.normal(0.0, 1.0, size=(23, 3, 4)), 0)
    result = persona(pos, neg)
    swapped = persona(neg, pos)
    for ell in range(3):
        v = pos[:, ell].mean(axis=0) - neg[:, ell].mean(axis=0)
        vh = v / np.linalg.norm(v)
        a, b = pos[:, ell] @ vh, neg[:, ell] @ vh
        expected = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x, y in itertools.product(a, b)) / (17 * 23)
        assert result.layers[ell].auc == pytest.approx(expected, rel=1e-12)
        assert swapped.layers[ell].auc == pytest.approx(expected, rel=1e-12)
        assert swapped.vectors[ell] == pytest.approx((-v).tolist(), rel=1e-12)


def test_auc_invariant_to_affine_rescaling_of_a_layer() -> None:
    rng = np.random.default_rng(4)
    pos, neg = rng.normal(0.3, 1, size=(30, 2, 8)), rng.normal(size=(25, 2, 8))
    base = persona(pos, neg)
    scaled = persona(pos * 7.0 + 3.0, neg * 7.0 + 3.0)
    assert [s.auc for s in scaled.layers] == pytest.approx([s.auc for s in base.layers], rel=1e-12)
    assert [s.norm for s in scaled.layers] == pytest.approx([7 * s.norm for s in base.layers], rel=1e-12)


def test_zero_vector_layer_gives_nulls_and_fp16_is_read_as_float64() -> None:
    # Layer 1 is identical in pos and neg (v_1 = 0): AUC, projections and v̂ are null, not NaN. fp16 inputs of
    # 60000 (sum 2.4e5 overflows fp16, max 65504) are cast to float64 first: v_0 = 60000 − 0.
    pos = np.zeros((4, 2, 3), dtype=np.float16)
    pos[:, 0, 0] = 60000
    neg = np.zeros((3, 2, 3), dtype=np.float16)
    with np.errstate(over="ignore"):
        assert np.isinf(pos[:, 0, 0].sum())
    result = persona(pos, neg, query=[[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]])
    assert result.vectors[0] == [60000.0, 0.0, 0.0]
    assert result.layers[0].auc == 1.0
    assert result.layers[1].norm == 0.0
    assert (result.layers[1].auc, result.layers[1].separation, result.layers[1].pos_mean_projection) == (
        None,
        None,
        None,
    )
    assert result.unit_vectors[1] is None
    assert result.query_projections == [[1.0, None]]
    assert result.best_layer == 0


@pytest.mark.parametrize(
    ("pos", "neg", "extra", "loc"),
    [
        (np.zeros((2, 3, 4)), np.zeros((2, 2, 4)), {}, ("neg",)),
        (np.zeros((2, 3, 4)), np.zeros((2, 3, 4)), {"query": [[[0.0, 0.0]] * 3]}, ("query",)),
        ([[[0.0, 1.0], [2.0]]], np.zeros((1, 2, 2)), {}, ("pos",)),
        (np.zeros((1, 129, 1)), np.zeros((1, 129, 1)), {}, ("pos",)),
    ],
)
def test_persona_inconsistent_inputs_name_the_field(pos: Any, neg: Any, extra: dict, loc: tuple) -> None:
    with pytest.raises(InvalidInput) as err:
        persona(pos, neg, **extra)
    assert err.value.loc == loc


def test_persona_cost_and_plot() -> None:
    params = PersonaVectorParams.model_validate({"pos": [[[0.0] * 5] * 3] * 4, "neg": [[[0.0] * 5] * 3] * 2})
    assert persona_cost(params) == 4 * 15 + 2 * 15
    assert persona_cost(params.model_copy(update={"pos": np.zeros((10, 3, 5))})) == 150 + 30
    rng = np.random.default_rng(5)
    result = persona(rng.normal(1, 1, (10, 4, 6)), rng.normal(size=(12, 4, 6)))
    fig = PERSONA_SPEC.plot(result)
    assert list(fig.axes[0].get_lines()[0].get_ydata()) == [s.auc for s in result.layers]
    assert list(fig.axes[1].get_lines()[0].get_ydata()) == [s.norm for s in result.layers]
    assert ESTIMATORS["steering.persona_vector"] is PERSONA_SPEC


# ================================================================== gradient_signature: the sign-reversal law

W = np.array([2.0, -1.0, 0.5, 1.0])
H = np.array([0.25, 0.5, 0.0, 0.25])
Q = 0.7
TILT = np.array([0.6, 0.0, 0.0, 0.8])


def toy_gradient(alpha: float, axis: np.ndarray) -> np.ndarray:
    """g = ∂loss/∂h' = (p_α − q)·w for p_α = σ(w·(h + α v̂)), soft target q."""
    p = 1 / (1 + np.exp(-(W @ (H + alpha * axis))))
    return (p - Q) * W


def test_toy_gradient_matches_central_differences() -> None:
    def loss(hp: np.ndarray) -> float:
        p = 1 / (1 + np.exp(-(W @ hp)))
        return float(-Q * np.log(p) - (1 - Q) * np.log(1 - p))

    hp = H + 0.3 * TILT
    numeric = [(loss(hp + 1e-6 * e) - loss(hp - 1e-6 * e)) / 2e-6 for e in np.eye(4)]
    assert np.abs(np.array(numeric) - toy_gradient(0.3, TILT)).max() < 1e-9


@pytest.mark.parametrize(
    ("axis", "c", "alpha_star", "pressures", "cos_sign", "rho"),
    [
        (TILT, 2.0, 0.2986489, (0.2756470, -0.3276191, -0.4903577), -1.0, 0.64),
        (W / 2.5, 2.5, 0.2389191, (0.3445587, -0.4766007, -0.6650406), -1.0, 1.0),
        (-TILT, -2.0, -0.2986489, (-0.2756470, -0.4762031, -0.9200083), 1.0, 0.64),
        (np.array([1.0, 2.0, 0.0, 0.0]) / np.sqrt(5), 0.0, None, (0.0, 0.0, 0.0), 1.0, 0.0),
    ],
    ids=["tilt", "parallel", "negative", "perpendicular"],
)
def test_sign_reversal_law_fixture(
    axis: np.ndarray, c: float, alpha_star: float | None, pressures: tuple, cos_sign: float, rho: float
) -> None:
    # π(α) = (q − p_α)·c with c = w·v̂, flipping at α* = (logit q − w·h)/c (not /‖w‖ unless v̂ ∥ w). Gradients at
    # α = 0, α* + ½, α* + 1 (for c = 0: 0, ½, 1) go in as three one-example methods: the pressures, ρ = cos²θ and
    # the sign of cos(g(0), g(α* + 1)) are the published fixture table to 1e-7.
    assert W @ axis == pytest.approx(c, abs=1e-12)
    if alpha_star is not None:
        assert (np.log(Q / (1 - Q)) - W @ H) / c == pytest.approx(alpha_star, abs=1e-7)
    start = alpha_star or 0.0
    alphas = {"a0": 0.0, "a_half": start + 0.5, "a_one": start + 1.0}
    grads = {name: toy_gradient(a, axis)[None, None, :] for name, a in alphas.items()}
    result = signature(grads, axis[None, :])
    got = [s.layers[0].pressure for s in result.signatures]
    assert got == pytest.approx(list(pressures), abs=1e-7)
    for s in result.signatures:
        assert s.layers[0].rho == pytest.approx(rho, abs=1e-12)
        assert s.layers[0].spectral_pr == pytest.approx(1.0, abs=1e-12)
    assert result.cosines[0].mean_gradient[0][2] == pytest.approx(cos_sign, abs=1e-12)
    assert result.cosines[0].per_example[0][2] == pytest.approx(cos_sign, abs=1e-12)


def test_spec_alpha_star_is_not_the_root_for_a_tilted_axis() -> None:
    # The ‖w‖-based α* = (logit q − w·h)/‖w‖ = 0.2389191 leaves π = +0.0513386 on the tilted axis.
    spec_alpha = (np.log(Q / (1 - Q)) - W @ H) / np.linalg.norm(W)
    result = signature({"a": toy_gradient(spec_alpha, TILT)[None, None, :]}, TILT[None, :])
    assert result.signatures[0].layers[0].pressure == pytest.approx(0.0513386, abs=1e-7)


# ================================================================== published checks 1-3: diffuseness


def test_coordinate_measures_of_an_iid_gaussian_and_a_one_hot_gradient() -> None:
    # i.i.d. Gaussian g, d = 4096: coordinate PR/d → 1/3 (E g²)²/E g⁴ and exp(H)/d → exp(−(2 − γ − ln 2)) = 0.482
    # (published 0.342 and 0.491; tolerance ±0.03). One-hot: both exactly 1.
    g = np.random.default_rng(8).standard_normal((1, 1, 4096))
    layer = signature({"g": g}, np.ones((1, 4096))).signatures[0].layers[0]
    assert layer.coordinate_pr / 4096 == pytest.approx(1 / 3, abs=0.03)
    assert layer.coordinate_entropy_rank / 4096 == pytest.approx(np.exp(-(2 - np.euler_gamma - np.log(2))), abs=0.03)
    hot = np.zeros((1, 1, 64))
    hot[0, 0, 5] = -3.0
    layer = signature({"g": hot}, np.ones((1, 64))).signatures[0].layers[0]
    assert (layer.coordinate_pr, layer.coordinate_entropy_rank) == (1.0, 1.0)


@pytest.mark.parametrize(("n", "d", "spec_measured"), [(2000, 200, 182.0), (500, 500, 250.9), (200, 1000, 166.4)])
def test_spectral_pr_marchenko_pastur(n: int, d: int, spec_measured: float) -> None:
    # Isotropic n × d: spectral PR ≈ nd/(n + d) (Marchenko–Pastur); ours and the published measurement within 1.5%.
    g = np.random.default_rng(n + d).standard_normal((n, 1, d))
    layer = signature({"iso": g}, np.ones((1, d))).signatures[0].layers[0]
    predicted = n * d / (n + d)
    assert layer.spectral_pr == pytest.approx(predicted, rel=0.015)
    assert layer.spectral_pr == pytest.approx(spec_measured, rel=0.015)
    assert layer.spectral_pr_normalized == pytest.approx(layer.spectral_pr / min(n, d), rel=1e-12)
    assert 1.0 <= layer.effective_rank <= min(n, d)


@pytest.mark.slow
def test_concentrated_vs_isotropic_and_the_basis_caveat() -> None:
    # 256 gradients, d = 512. Concentrated a_i·v̂ + noise of norm ≈ 0.05 (a_i ~ U(1, 2)): spectral PR ≈ 1, ρ ≈ 1
    # (published 1.00, 0.997). Isotropic: PR ≈ 256·512/768 = 170.7, ρ = 1/d in expectation (published 170,
    # 0.0020; each ρ_i is Beta(½, (d−1)/2), so the mean of 256 has a 9% sd: tolerance 30%). A single dense
    # direction: coordinate PR/d ≈ 1/3 yet spectral PR = 1: coordinate measures alone cannot show "diffuse".
    rng = np.random.default_rng(9)
    v = rng.standard_normal(512)
    vh = v / np.linalg.norm(v)
    conc = rng.uniform(1, 2, (256, 1)) * vh + 0.05 * rng.standard_normal((256, 512)) / np.sqrt(512)
    iso = rng.standard_normal((256, 512))
    dense = rng.uniform(1, 2, (256, 1)) * vh
    result = signature({"conc": one_layer(conc), "iso": one_layer(iso), "dense": one_layer(dense)}, vh[None, :])
    c, i, d = (s.layers[0] for s in result.signatures)
    assert 1.0 <= c.spectral_pr < 1.01 and c.rho > 0.99
    assert i.spectral_pr == pytest.approx(256 * 512 / 768, rel=0.03)
    assert i.rho == pytest.approx(1 / 512, rel=0.3)
    assert d.spectral_pr == pytest.approx(1.0, abs=1e-9)
    assert d.coordinate_pr / 512 == pytest.approx(1 / 3, abs=0.06)


@pytest.mark.parametrize(("n", "d"), [(40, 300), (300, 40), (64, 64)])
def test_gram_side_singular_values_equal_the_full_svd(n: int, d: int) -> None:
    g = np.random.default_rng(n * d).standard_normal((2, n, d)) * np.array([1.0, 1e-3])[:, None, None]
    ours = gram_singular_values(g)
    full = np.linalg.svd(g, compute_uv=False)
    assert ours.shape == full.shape == (2, min(n, d))
    assert np.abs(ours - full).max() <= 1e-9 * full.max()


# ================================================================== gradient_signature: hand computations


def test_pressure_fractions_cosines_and_ce_by_hand() -> None:
    # d = 2, axis v̂ = (0, 1) at both layers, 3 examples. Base gradients (1, 0) at every example and layer:
    # π = 0, ρ = 0. PPS: g_i = (1, s_i) with s = (1, −1, 2) at layer 0 → π = −mean s = −2/3, two of three examples
    # attenuating (π_i = −s_i < 0 for s_i > 0); mean gradient (1, 2/3), change vs base (0, 2/3) ∥ v̂ → cos 1.
    # Layer 1 of PPS is 0 (a zero gradient): null cosines, ρ and spectral PR, never NaN. Layer energies of base
    # (1, 1) → layer-energy PR 2. ΔCE: mean(0.5, 1, 1.5) − mean(1, 2, 3) = −1.
    base = np.zeros((3, 2, 2))
    base[:, :, 0] = 1.0
    pps = np.zeros((3, 2, 2))
    pps[:, 0, 0] = 1.0
    pps[:, 0, 1] = [1.0, -1.0, 2.0]
    losses = {"base": [1.0, 2.0, 3.0], "pps": [0.5, 1.0, 1.5]}
    params = GradientSignatureParams.model_validate(
        {
            "grads": {"base": base.tolist(), "pps": pps.tolist()},
            "axis": [[0.0, 1.0]],
            "baseline": "base",
            "losses": losses,
        }
    )
    result = gradient_signature(params, no_progress)
    b, p = result.signatures
    assert [s.pressure for s in b.layers] == [0.0, 0.0]
    assert [s.rho for s in b.layers] == [0.0, 0.0]
    assert b.layer_energy_pr == 2.0
    assert p.layers[0].pressure == pytest.approx(-2 / 3, abs=1e-15)
    assert p.layers[0].frac_attenuating == pytest.approx(2 / 3, abs=1e-15)
    assert p.layers[0].rho == pytest.approx((1 / 2 + 1 / 2 + 4 / 5) / 3, abs=1e-15)
    assert p.layers[0].cos_change_axis == pytest.approx(1.0, abs=1e-15)
    assert b.layers[0].cos_change_axis is None
    assert p.layers[0].spectral_pr == pytest.approx(
        np.sum(np.linalg.svd(pps[:, 0], compute_uv=False) ** 2) ** 2
        / np.sum(np.linalg.svd(pps[:, 0], compute_uv=False) ** 4),
        rel=1e-12,
    )
    zero = p.layers[1]
    assert (zero.pressure, zero.frac_attenuating, zero.mean_gradient_norm) == (0.0, 0.0, 0.0)
    assert (zero.rho, zero.rho_mean_gradient, zero.spectral_pr, zero.effective_rank, zero.coordinate_pr) == (None,) * 5
    cos1 = result.cosines[1]
    assert cos1.mean_gradient == [[1.0, None], [None, None]]
    assert cos1.per_example == [[1.0, None], [None, None]]
    mean_cos = result.cosines[0].mean_gradient[0][1]
    assert mean_cos == pytest.approx(1 / np.sqrt(1 + 4 / 9), abs=1e-15)
    per = np.mean([1 / np.sqrt(2), 1 / np.sqrt(2), 1 / np.sqrt(5)])
    assert result.cosines[0].per_example[0][1] == pytest.approx(per, abs=1e-15)
    assert (b.mean_ce, p.mean_ce, b.delta_ce, p.delta_ce) == (2.0, 1.0, 0.0, -1.0)
    assert "pressure" in result.reconstructed


def test_descent_convention_negates_pressure_and_single_axis_row_broadcasts() -> None:
    rng = np.random.default_rng(10)
    g = rng.standard_normal((6, 3, 5))
    row = rng.standard_normal(5)
    a = signature({"m": g}, row[None, :])
    b = signature({"m": g}, np.tile(row, (3, 1)), gradient_convention="descent_direction")
    for x, y in zip(a.signatures[0].layers, b.signatures[0].layers, strict=True):
        assert y.pressure == pytest.approx(-x.pressure, abs=1e-15)
        assert y.frac_attenuating == pytest.approx(1 - x.frac_attenuating, abs=1e-15)
        assert y.rho == pytest.approx(x.rho, rel=1e-12)


def test_unequal_n_gives_null_per_example_cosines_and_fp16_is_cast() -> None:
    rng = np.random.default_rng(12)
    a = rng.standard_normal((4, 1, 3)).astype(np.float16)
    b = rng.standard_normal((5, 1, 3))
    result = signature({"a": a, "b": b}, [[1.0, 0.0, 0.0]])
    assert result.cosines[0].per_example[0][1] is None
    assert result.cosines[0].per_example[0][0] == pytest.approx(1.0, abs=1e-15)
    expected = -a.astype(np.float64)[:, 0, 0].mean()
    assert result.signatures[0].layers[0].pressure == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("grads", "axis", "extra", "loc"),
    [
        ({"base": np.ones((2, 2, 3))}, [[1.0, 0.0]], {}, ("axis",)),
        ({"base": np.ones((2, 2, 3))}, [[1.0, 0.0, 0.0]] * 3, {}, ("axis",)),
        ({"base": np.ones((2, 2, 3))}, [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], {}, ("axis", 1)),
        ({"base": np.ones((2, 2, 3)), "ip": np.ones((2, 1, 3))}, [[1.0, 0, 0]], {}, ("grads", "ip")),
        ({"base": np.ones((2, 2, 3))}, [[1.0, 0, 0]], {"baseline": "pps"}, ("baseline",)),
        ({"base": np.ones((2, 2, 3))}, [[1.0, 0, 0]], {"losses": {"base": [1.0]}}, ("losses", "base")),
        ({"base": np.ones((2, 2, 3))}, [[1.0, 0, 0]], {"losses": {"ip": [1.0, 2.0]}}, ("losses", "ip")),
        ({"bad name": np.ones((2, 2, 3))}, [[1.0, 0, 0]], {}, ("grads", "bad name")),
    ],
)
def test_signature_inconsistent_inputs_name_the_field(grads: dict, axis: Any, extra: dict, loc: tuple) -> None:
    baseline = extra.pop("baseline", next(iter(grads)))
    with pytest.raises(InvalidInput) as err:
        signature(grads, axis, baseline, **extra)
    assert err.value.loc == loc


def test_signature_cost_progress_and_plot() -> None:
    # Cost per method: 200·n·L·d + n·L·d·k/2 + 1.25·L·k³ + 10⁶·L with k = min(n, d); progress can cancel the run.
    rng = np.random.default_rng(13)
    grads = {"base": rng.standard_normal((6, 2, 4)), "pps": rng.standard_normal((6, 2, 4))}
    params = GradientSignatureParams.model_validate(
        {"grads": {k: v.tolist() for k, v in grads.items()}, "axis": [[1.0, 0, 0, 0]], "baseline": "base"}
    )
    assert signature_cost(params) == 2 * (200 * 48 + 48 * 4 / 2 + 1.25 * 2 * 4**3 + 1e6 * 2)

    def cancel(fraction: float, message: str = "") -> None:
        raise Cancelled

    with pytest.raises(Cancelled):
        gradient_signature(params, cancel)
    result = gradient_signature(params, no_progress)
    fig = SIGNATURE_SPEC.plot(result)
    lines = fig.axes[0].get_lines()
    assert [list(line.get_ydata()) for line in lines[:2]] == [
        [s.pressure for s in sig.layers] for sig in result.signatures
    ]
    assert ESTIMATORS["steering.gradient_signature"] is SIGNATURE_SPEC


# ================================================================== through the API: npy references in dicts


def npy_id(client: Any, arr: np.ndarray) -> dict[str, str]:
    buf = io.BytesIO()
    np.save(buf, arr)
    r = client.post("/v1/arrays", content=buf.getvalue(), headers={"Content-Type": "application/x-npy"})
    assert r.status_code == 201, r.text
    return {"array": r.json()["id"]}


@pytest.mark.slow
def test_npy_references_inside_grads_and_losses_resolve_through_the_api(client: Any) -> None:
    # grads and losses are dicts of arrays: references there resolve like top-level ones (same result as JSON
    # lists; the cached run keeps the references); a wrong-shaped reference is a 422 naming grads.<method>.
    rng = np.random.default_rng(14)
    grads = {"base": rng.standard_normal((5, 2, 6)), "ip": rng.standard_normal((5, 2, 6)).astype(np.float32)}
    axis, losses = rng.standard_normal((2, 6)), rng.random(5)
    listed = {"grads": {k: v.tolist() for k, v in grads.items()}, "axis": axis.tolist(), "baseline": "base"}
    refs = {
        "grads": {k: npy_id(client, v) for k, v in grads.items()},
        "axis": npy_id(client, axis),
        "baseline": "base",
        "losses": {"ip": npy_id(client, losses)},
    }
    by_list = client.post("/v1/estimators/steering.gradient_signature", json=listed)
    by_ref = client.post("/v1/estimators/steering.gradient_signature", json=refs)
    assert by_list.status_code == by_ref.status_code == 200, by_ref.text
    assert by_ref.json()["result"]["signatures"][1]["layers"] == by_list.json()["result"]["signatures"][1]["layers"]
    assert by_ref.json()["result"]["signatures"][1]["mean_ce"] == pytest.approx(losses.mean(), abs=1e-15)
    bad = {**refs, "grads": {"base": npy_id(client, rng.standard_normal((5, 6)))}}
    r = client.post("/v1/estimators/steering.gradient_signature", json=bad)
    assert r.status_code == 422
    assert r.json()["errors"][0]["loc"] == ["body", "grads", "base"]


def test_persona_vector_reports_its_shape_from_unequal_groups() -> None:
    """3 trait-positive and 2 trait-negative examples of 4 layers × d = 3: the counts and layer indices come from
    the inputs' shape (equal groups or L = d would hide a swapped axis)."""
    rng = np.random.default_rng(2)
    pos, neg = rng.normal(size=(3, 4, 3)) + 1.0, rng.normal(size=(2, 4, 3))
    result = persona_vector(PersonaVectorParams.model_validate({"pos": pos.tolist(), "neg": neg.tolist()}), no_progress)
    assert (result.n_pos, result.n_neg, result.num_layers, result.dim) == (3, 2, 4, 3)
    assert [s.layer for s in result.layers] == [0, 1, 2, 3]
    np.testing.assert_allclose(result.vectors, pos.mean(axis=0) - neg.mean(axis=0), rtol=1e-12)
