"""fdslm: layer labels of a selected, reordered subset of layers, the dialogue count, the steering law's α and
crossing x* = L + τ·ln((½ − α)/(½ + α)) at asymmetric α, and the reconstructed lists (docs/fdslm.md)."""

import math

import numpy as np
import pytest

from service.estimators import fdslm
from service.registry import no_progress
from tests.service.field_paths import names_a_field


def test_selected_layers_keep_their_request_order_and_their_own_vectors() -> None:
    """Four layers of d = 2, layers [3, 0, 2] requested: each entry's label is the layer whose frame means its
    vector and midpoint are (v_ℓ = μ_P − μ_G written out here)."""
    rng = np.random.default_rng(4)
    h = rng.normal(size=(7, 4, 2)) + np.arange(4)[None, :, None] * np.array([1.0, -2.0])  # layers differ
    labels = [1, -1, 1, 0, -1, 1, -1]
    res = fdslm.perception_vector(
        fdslm.PerceptionVectorParams(hidden_states=h.tolist(), labels=labels, layers=[3, 0, 2]), no_progress
    )
    assert [row.layer for row in res.layers] == [3, 0, 2]
    for row in res.layers:
        mu_p = (h[0, row.layer] + h[2, row.layer] + h[5, row.layer]) / 3
        mu_g = (h[1, row.layer] + h[4, row.layer] + h[6, row.layer]) / 3
        assert row.vector == pytest.approx((mu_p - mu_g).tolist(), rel=1e-12, abs=1e-12)
        assert row.midpoint == pytest.approx(((mu_p + mu_g) / 2).tolist(), rel=1e-12, abs=1e-12)
    assert res.best_layer in (3, 0, 2)


def test_perception_vector_lists_the_layers_and_best_layer_as_reconstructed() -> None:
    """docs/fdslm.md: every definition is RECONSTRUCTED; the frame counts and d are counts, not definitions."""
    res = fdslm.perception_vector(
        fdslm.PerceptionVectorParams(hidden_states=[[[1.0]], [[0.0]]], labels=[1, -1]), no_progress
    )
    assert res.reconstructed == ["layers", "best_layer"]
    assert all(names_a_field(fdslm.PerceptionVectorResult, name) for name in res.reconstructed)


def test_dialogue_count_and_the_steering_law_at_asymmetric_alphas() -> None:
    """Three dialogues of T = 9 frames (n ≠ T) with their own onsets; the law with L = 3.5, τ = 1.5 at
    α = 0.3, −0.1, 0.5, −0.6, 0.45: x* by hand, lag = ⌊x*⌋ + 1 unless beyond W − K + 1 = 4."""
    scores = [[-1.0] * 9, [-1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0], [1.0] * 9]
    alphas = [0.3, -0.1, 0.5, -0.6, 0.45]
    law = fdslm.SteeringLaw(delay=3.5, tau=1.5, alphas=alphas)
    res = fdslm.state_lag(
        fdslm.StateLagParams(scores=scores, onset=[1, 2, 0], window=5, k=2, steering=law), no_progress
    )
    assert res.n_dialogues == 3
    assert res.lag_frames == [None, 3, 0]  # dialogue 2 from frame 2: +1, −1, −1, +1, +1: a lone +1 is not K = 2
    assert [p.alpha for p in res.predicted] == alphas
    x_03 = 3.5 + 1.5 * math.log(0.2 / 0.8)  # 1.4206
    x_m01 = 3.5 + 1.5 * math.log(0.6 / 0.4)  # 4.1082
    x_045 = 3.5 + 1.5 * math.log(0.05 / 0.95)  # −0.9167
    assert res.predicted[0].crossing == pytest.approx(x_03, rel=1e-12)
    assert res.predicted[1].crossing == pytest.approx(x_m01, rel=1e-12)
    assert res.predicted[2].crossing is None and res.predicted[3].crossing is None
    assert res.predicted[4].crossing == pytest.approx(x_045, rel=1e-12)
    assert [(p.lag_frames, p.censored) for p in res.predicted] == [(2, False), (None, True), (0, False),
                                                                  (None, True), (0, False)]  # fmt: skip


def test_state_lag_lists_its_reconstructed_fields() -> None:
    res = fdslm.state_lag(fdslm.StateLagParams(scores=[[1.0, 1.0, 1.0]], onset=0, window=2), no_progress)
    assert res.reconstructed == ["lag_frames", "lag_ms", "km_median_frames", "frac_perceptive", "predicted"]
    assert all(names_a_field(fdslm.StateLagResult, name) for name in res.reconstructed)
