"""fdslm estimators: the lag estimator on the logistic-transition generator, the steering law, Kaplan-Meier and
censoring fixtures, and the perception vector against hand computations."""

import warnings

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from pydantic import ValidationError
from scipy.stats import mannwhitneyu

from service.errors import InvalidInput
from service.estimators import fdslm
from service.plot_overlay import Curve, Curves
from service.registry import ESTIMATORS, no_progress

D, T, T0, W, K = 256, 48, 16, 24, 2
REF = {"array": "sha256:" + "0" * 64}


def build(cls: type, **kwargs: object) -> object:
    """Params as the API hands them to the estimator: uploaded arrays resolved to ndarrays in place of references."""
    arrays = {k: v for k, v in kwargs.items() if isinstance(v, np.ndarray)}
    return cls(**{k: REF if k in arrays else v for k, v in kwargs.items()}).model_copy(update=arrays)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def generator(delay: float, tau: float, alpha: float, noise: float, seed: int) -> tuple[np.ndarray, ...]:
    """Dialogue of the logistic-transition generator G: h(t) = μ_G + (σ((t − t₀ − L)/τ) + α)·v + noise·E[t].

    Returns (h (T, d), v̂, m, μ_P, μ_G); draws μ_P, μ_G, E in this order from default_rng(seed)."""
    rng = np.random.default_rng(seed)
    mu_p = rng.standard_normal(D)
    mu_g = rng.standard_normal(D)
    e = rng.standard_normal((T, D))
    v = mu_p - mu_g
    t = np.arange(T)
    h = mu_g + (sigmoid((t - T0 - delay) / tau) + alpha)[:, None] * v + noise * e
    return h, v / np.linalg.norm(v), (mu_p + mu_g) / 2, mu_p, mu_g


def lags_of(seeds: list[int], delay: float, alpha: float = 0.0, noise: float = 0.3) -> list[int | None]:
    """Lags of one dialogue per seed, each scored with its own true v̂ and m (state_lag is linear per row)."""
    scores = []
    for seed in seeds:
        h, unit, mid, *_ = generator(delay, 2.0, alpha, noise, seed)
        scores.append((h - mid) @ unit)
    params = build(fdslm.StateLagParams, scores=np.array(scores).tolist(), onset=T0)
    return fdslm.state_lag(params, no_progress).lag_frames


def test_registered():
    assert ESTIMATORS["fdslm.perception_vector"].plot is fdslm.perception_plot
    assert ESTIMATORS["fdslm.state_lag"].fn is fdslm.state_lag


def test_noise_free_lags_follow_the_strict_rule_and_the_steering_law():
    """s_α(t) = σ((t − t₀ − 8)/2) − ½ + α: lags 9, 7, 4, 0, 10 at α = 0, 0.2, 0.4, 0.6, −0.2 (x* = 8 gives 9)."""
    alphas = [0.0, 0.2, 0.4, 0.6, -0.2]
    t = np.arange(T)
    scores = np.array([sigmoid((t - T0 - 8) / 2.0) - 0.5 + a for a in alphas])
    assert scores[0, T0 + 8] == 0.0
    law = fdslm.SteeringLaw(delay=8.0, tau=2.0, alphas=alphas)
    out = fdslm.state_lag(build(fdslm.StateLagParams, scores=scores.tolist(), onset=T0, steering=law), no_progress)
    assert out.lag_frames == [9, 7, 4, 0, 10]
    assert out.lag_ms == [720.0, 560.0, 320.0, 0.0, 800.0]
    assert [p.lag_frames for p in out.predicted] == [9, 7, 4, 0, 10]
    crossings = [p.crossing for p in out.predicted]
    assert crossings[3] is None
    assert [crossings[i] for i in (0, 1, 2, 4)] == pytest.approx([8.0, 6.3054, 3.6056, 9.6946], abs=5e-5)


def test_steering_law_edges():
    assert fdslm.predicted_lag(0.5, 8.0, 2.0) == (None, 0)
    assert fdslm.predicted_lag(-0.5, 8.0, 2.0) == (None, None)
    law = fdslm.SteeringLaw(delay=30.0, tau=2.0, alphas=[0.0, -0.7])
    out = fdslm.state_lag(build(fdslm.StateLagParams, scores=[[1.0] * T], onset=T0, steering=law), no_progress)
    assert [(p.lag_frames, p.censored) for p in out.predicted] == [(None, True), (None, True)]  # 31 > W − K + 1


def test_lag_estimator_on_the_generator():
    """L ∈ {0, 2, 4, 6, 9}, 20 seeds each: every lag is L or L + 1 (a coin flip at s(t₀ + L) = noise);
    L + 1 occurs 12, 11, 10, 11, 11 times (55/100, mean bias +0.55) with the generator reproduced bit for bit."""
    late = []
    for delay in (0, 2, 4, 6, 9):
        lags = lags_of([1000 * delay + r for r in range(20)], delay)
        assert set(lags) <= {delay, delay + 1}
        late.append(sum(lag == delay + 1 for lag in lags))
    assert 35 <= sum(late) <= 65
    assert late == [12, 11, 10, 11, 11]


@pytest.mark.parametrize(
    ("alpha", "expected"),
    [
        (0.2, {r: 6 if r == 6 else 7 for r in range(20)}),
        (0.4, {r: 5 if r in (1, 5, 17, 19) else 4 for r in range(20)}),
        (0.6, dict.fromkeys(range(20), 0)),
    ],
)
def test_noisy_steering_matches_the_law(alpha, expected):
    """Noise 0.3, seeds 8000 + r: per-seed lags and medians 7, 4, 0 = the law's predictions."""
    lags = lags_of([8000 + r for r in range(20)], 8, alpha)
    assert dict(enumerate(lags)) == expected
    assert np.median(lags) == fdslm.predicted_lag(alpha, 8.0, 2.0)[1]


def test_noisy_steering_at_zero_is_a_coin_flip_between_8_and_9():
    lags = lags_of([8000 + r for r in range(20)], 8, 0.0)
    assert set(lags) <= {8, 9}
    assert lags == [8, 9, 8, 8, 8, 9, 8, 9, 9, 8, 9, 9, 8, 9, 8, 9, 9, 9, 9, 8]


def test_hidden_states_path_equals_the_score_path():
    """Per-dialogue hidden states with one shared v, m give the same lags as the precomputed scores."""
    seeds = [1000 * 4 + r for r in range(5)]
    h0, unit, mid, *_ = generator(4, 2.0, 0.0, 0.3, seeds[0])
    hs = np.stack([h0] + [h0 + 0.05 * np.random.default_rng(s).standard_normal(h0.shape) for s in seeds[1:]])
    by_h = fdslm.state_lag(
        build(fdslm.StateLagParams, hidden_states=hs, vector=3.0 * unit, midpoint=mid, onset=T0), no_progress
    )
    by_s = fdslm.state_lag(build(fdslm.StateLagParams, scores=(hs - mid) @ unit, onset=T0), no_progress)
    assert by_h.lag_frames == by_s.lag_frames and by_h.frac_perceptive == by_s.frac_perceptive


def test_censoring_when_the_transition_is_beyond_the_window():
    """L = 30 > W: every dialogue censored, KM median not reached."""
    out = fdslm.state_lag(
        build(
            fdslm.StateLagParams,
            scores=np.array(
                [(lambda h, u, m, *_: (h - m) @ u)(*generator(30, 2.0, 0.0, 0.3, 30000 + r)) for r in range(20)]
            ),
            onset=T0,
        ),
        no_progress,
    )
    assert out.censored == [True] * 20 and out.censoring_rate == 1.0
    assert out.lag_frames == [None] * 20 and out.km_median_frames is None and out.median_observed_frames is None
    assert out.censor_bound == W - K + 1


def test_kaplan_meier_fixture_and_curve():
    """Lags [2, 3, 5, 8, censored, censored]: Ŝ = 5/6, 4/6, 3/6, 2/6 → KM median 5, observed median 4, rate 1/3."""
    lags = [2, 3, 5, 8, None, None]
    scores = np.full((6, T), -1.0)
    for row, lag in enumerate(lags):
        if lag is not None:
            scores[row, T0 + lag :] = 1.0
    scores[4, T0 + 3] = 1.0  # a single perceptive frame is not a run of K = 2
    out = fdslm.state_lag(build(fdslm.StateLagParams, scores=scores, onset=[T0] * 6, frame_ms=40.0), no_progress)
    assert out.lag_frames == lags and out.censored == [False] * 4 + [True] * 2
    assert out.km_lags == [2, 3, 5, 8]
    assert out.km_survival == pytest.approx([5 / 6, 4 / 6, 3 / 6, 2 / 6], abs=1e-15)
    assert out.km_median_frames == 5 and out.km_median_ms == 200.0
    assert out.median_observed_frames == 4.0 and out.censoring_rate == pytest.approx(1 / 3)
    expected = [(np.array([2, 3, 5, 8]) <= j).sum() / 6 + (j == 3) / 6 for j in range(W + 1)]
    assert out.frac_perceptive == pytest.approx(expected, abs=1e-15)


def test_per_dialogue_onsets_and_k():
    scores = np.full((2, 40), -1.0)
    scores[0, 10:] = 1.0
    scores[1, 5:] = 1.0
    scores[1, 7] = -1.0  # breaks the K = 3 run starting at 5
    out = fdslm.state_lag(build(fdslm.StateLagParams, scores=scores, onset=[8, 4], k=3, window=20), no_progress)
    assert out.lag_frames == [2, 4] and out.censor_bound == 18


@pytest.mark.parametrize(
    ("kwargs", "loc"),
    [
        ({"scores": [[1.0] * T], "onset": 30}, ("onset",)),
        ({"scores": [[1.0] * T], "onset": [1, 2]}, ("onset",)),
        ({"scores": [[1.0] * T], "onset": 0, "k": 30}, ("k",)),
        ({"onset": 0}, ("scores",)),
        ({"scores": [[1.0] * T, [1.0]], "onset": 0}, ("scores",)),
        (
            {"hidden_states": [[[1.0, 2.0]], [[1.0]]], "onset": 0, "vector": [1.0, 0.0], "midpoint": [0.0, 0.0]},
            ("hidden_states",),
        ),
        ({"hidden_states": [[[1.0, 2.0]] * T], "onset": 0, "midpoint": [0.0, 0.0]}, ("vector",)),
        ({"hidden_states": [[[1.0, 2.0]] * T], "onset": 0, "vector": [0.0, 0.0], "midpoint": [0.0, 0.0]}, ("vector",)),
        ({"hidden_states": [[[1.0, 2.0]] * T], "onset": 0, "vector": [1.0], "midpoint": [0.0, 0.0]}, ("vector",)),
    ],
)
def test_state_lag_invalid_inputs(kwargs, loc):
    with pytest.raises(InvalidInput) as err:
        fdslm.state_lag(build(fdslm.StateLagParams, **kwargs), no_progress)
    assert err.value.loc == loc


def test_negative_onset_is_refused_by_the_schema():
    with pytest.raises(ValidationError):
        fdslm.StateLagParams(scores=[[1.0] * T], onset=-1)
    with pytest.raises(ValidationError):
        fdslm.StateLagParams(scores=[[1.0] * T], onset=[3, -1])


def test_perception_vector_recovers_the_planted_axis():
    """Generator frames labelled by state: v = μ̂_P − μ̂_G (hand means), m = midpoint, AUC = Mann-Whitney U/(n_P n_G)."""
    h, unit, *_ = generator(4, 2.0, 0.0, 0.3, 7)
    labels = np.zeros(T, dtype=np.int64)
    labels[:T0] = -1
    labels[T0 + 10 :] = 1
    hs = np.stack([h, 2.0 * h], axis=1)  # two layers
    out = fdslm.perception_vector(build(fdslm.PerceptionVectorParams, hidden_states=hs, labels=labels), no_progress)
    v = h[labels == 1].mean(axis=0) - h[labels == -1].mean(axis=0)
    m = (h[labels == 1].mean(axis=0) + h[labels == -1].mean(axis=0)) / 2
    first, second = out.layers
    assert first.vector == pytest.approx(v.tolist(), abs=1e-12) and first.midpoint == pytest.approx(
        m.tolist(), abs=1e-12
    )
    assert second.norm == pytest.approx(2 * first.norm, rel=1e-12, abs=0)
    # cos to the planted v/‖v‖: noise 0.3·√d·√(1/22 + 1/16) ≈ 1.6 against ‖v̂‖ ≈ 21.6 leaves cos ≈ 0.997
    assert np.dot(first.vector, unit) / first.norm > 0.99
    assert (out.n_perceptive, out.n_generative, out.d) == (22, 16, D)
    s = (h - m) @ (v / np.linalg.norm(v))
    u = mannwhitneyu(s[labels == 1], s[labels == -1]).statistic / (22 * 16)
    assert first.auc == pytest.approx(u, abs=1e-12) and first.auc == 1.0
    assert out.best_layer == 0


def test_auc_counts_ties_as_half_and_is_shift_invariant():
    """One dimension: perceptive [1, 2, 3], generative [0, 2]: pairs won 4, tied 1 of 6 → AUC 4.5/6."""
    h = np.array([1.0, 2.0, 3.0, 0.0, 2.0])[:, None, None]
    labels = [1, 1, 1, -1, -1]
    out = fdslm.perception_vector(build(fdslm.PerceptionVectorParams, hidden_states=h, labels=labels), no_progress)
    assert out.layers[0].auc == pytest.approx(4.5 / 6, abs=1e-15)
    assert out.layers[0].vector == [2.0 - 1.0] and out.layers[0].midpoint == [1.5]
    shifted = fdslm.perception_vector(
        build(fdslm.PerceptionVectorParams, hidden_states=h + 100.0, labels=labels), no_progress
    )
    assert shifted.layers[0].auc == out.layers[0].auc and shifted.layers[0].midpoint == [101.5]


def test_zero_vector_gives_null_auc():
    h = np.ones((4, 1, 3))
    out = fdslm.perception_vector(
        build(fdslm.PerceptionVectorParams, hidden_states=h, labels=[1, 1, -1, 0]), no_progress
    )
    assert out.layers[0].norm == 0.0 and out.layers[0].auc is None and out.best_layer is None


def test_perception_vector_ragged_or_empty_states():
    for states in ([[[1.0, 2.0]], [[1.0]]], [[[]], [[]]]):
        with pytest.raises(InvalidInput) as err:
            fdslm.perception_vector(
                build(fdslm.PerceptionVectorParams, hidden_states=states, labels=[1, -1]), no_progress
            )
        assert err.value.loc == ("hidden_states",)


@pytest.mark.parametrize(
    ("labels", "layers", "loc"),
    [([1, 1, 0, 0], None, ("labels",)), ([1, -1, 0], None, ("labels",)), ([1, -1, 0, 0], [2], ("layers",))],
)
def test_perception_vector_invalid(labels, layers, loc):
    with pytest.raises(InvalidInput) as err:
        fdslm.perception_vector(
            build(fdslm.PerceptionVectorParams, hidden_states=np.ones((4, 2, 3)), labels=labels, layers=layers),
            no_progress,
        )
    assert err.value.loc == loc


def test_costs_count_elements():
    assert (
        fdslm.perception_vector_cost(
            build(fdslm.PerceptionVectorParams, hidden_states=[[[1.0, 2.0]], [[3.0, 4.0]]], labels=[1, -1])
        )
        == 4.0
    )
    assert fdslm.state_lag_cost(build(fdslm.StateLagParams, scores=np.zeros((3, 50)), onset=0)) == 150.0


def test_plots_draw_the_result_curves():
    scores = np.full((2, T), -1.0)
    scores[0, T0 + 3 :] = 1.0
    out = fdslm.state_lag(build(fdslm.StateLagParams, scores=scores, onset=T0), no_progress)
    ax = fdslm.state_lag_plot(out).axes[0]
    assert ax.lines[0].get_ydata().tolist() == out.frac_perceptive
    assert ax.lines[1].get_ydata().tolist() == [1.0, *out.km_survival]
    pv = fdslm.perception_vector(
        build(fdslm.PerceptionVectorParams, hidden_states=np.arange(12.0).reshape(4, 1, 3), labels=[1, 1, -1, -1]),
        no_progress,
    )
    fig = fdslm.perception_plot(pv)
    assert fig.axes[0].lines[0].get_ydata().tolist() == [pv.layers[0].auc]
    assert fig.axes[1].lines[0].get_ydata().tolist() == [pv.layers[0].norm]


# ------------------------------------------------------------------ edges found by the mutation run


def test_dimension_and_returned_value_caps_are_inclusive():
    # d = 8192 and len(layers)·d = 131,072 pass; d = 8193 and 17 layers × 8192 are refused, naming the field.
    labels = [1, -1]
    ok = fdslm.perception_vector(
        build(fdslm.PerceptionVectorParams, hidden_states=np.zeros((2, 16, 8192)), labels=labels), no_progress
    )
    assert len(ok.layers) == 16 and ok.d == 8192
    for shape, loc in (((2, 1, 8193), ("hidden_states",)), ((2, 17, 8192), ("layers",))):
        with pytest.raises(InvalidInput) as err:
            fdslm.perception_vector(
                build(fdslm.PerceptionVectorParams, hidden_states=np.zeros(shape), labels=labels), no_progress
            )
        assert err.value.loc == loc
    lag = dict(onset=0, window=0, k=1, vector=np.ones(8192), midpoint=np.zeros(8192))
    assert fdslm.state_lag(
        build(fdslm.StateLagParams, hidden_states=np.ones((1, 1, 8192)), **lag), no_progress
    ).lag_frames == [0]
    lag.update(vector=np.ones(8193), midpoint=np.zeros(8193))
    with pytest.raises(InvalidInput) as err:
        fdslm.state_lag(build(fdslm.StateLagParams, hidden_states=np.ones((1, 1, 8193)), **lag), no_progress)
    assert err.value.loc == ("hidden_states",)


def test_best_layer_is_the_highest_auc_and_axes_with_zero_components_score():
    # Layer 0: P = (2, 0), (3, 0); G = (0, 0), (1, 0): v = (2, 0) has a zero component; scores ∝ x, AUC 1.
    # Layer 1: P = 1, 0; G = 0, 0.5 (second coordinate 0) → AUC (1 + 1 + ½ + 0)/4 = 0.625. Layer 2 is the same in
    # both groups (v = 0): null AUC, without a RuntimeWarning.
    h = np.array(
        [
            [[2.0, 0.0], [1.0, 0.0], [1.0, 1.0]],
            [[3.0, 0.0], [0.0, 0.0], [1.0, 1.0]],
            [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]],
            [[1.0, 0.0], [0.5, 0.0], [1.0, 1.0]],
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fdslm.perception_vector(
            build(fdslm.PerceptionVectorParams, hidden_states=h, labels=[1, 1, -1, -1]), no_progress
        )
    assert [row.auc for row in out.layers] == [1.0, 0.625, None]
    assert out.best_layer == 0
    assert out.layers[0].vector == [2.0, 0.0]


def test_missing_midpoint_or_wrong_midpoint_size_names_the_field():
    base = dict(hidden_states=np.ones((1, 3, 2)), onset=0, window=1)
    for extra, loc in (
        ({"vector": [1.0, 0.0]}, ("vector",)),
        ({"vector": [1.0, 0.0], "midpoint": [0.0, 0.0, 0.0]}, ("midpoint",)),
    ):
        with pytest.raises(InvalidInput) as err:
            fdslm.state_lag(build(fdslm.StateLagParams, **base, **extra), no_progress)
        assert err.value.loc == loc


def test_onset_window_and_k_bounds():
    # t₀ + W = T − 1 is the last frame (allowed), t₀ + W = T is refused; K = W + 1 is one run over the whole window
    # (bound 0), K = W + 2 is refused.
    scores = np.ones((1, 10))
    out = fdslm.state_lag(build(fdslm.StateLagParams, scores=scores, onset=4, window=5, k=6), no_progress)
    assert (out.lag_frames, out.censor_bound) == ([0], 0)
    for kwargs, loc in (({"onset": 5, "window": 5}, ("onset",)), ({"onset": 0, "window": 5, "k": 7}, ("k",))):
        with pytest.raises(InvalidInput) as err:
            fdslm.state_lag(build(fdslm.StateLagParams, scores=scores, **kwargs), no_progress)
        assert err.value.loc == loc


def test_lag_zero_censoring_at_the_bound_and_the_rule_text():
    # W = 5, K = 3: bound 3. Row 0 is perceptive from the onset (lag 0), row 1 from frame 3 (lag 3 = bound), row 2
    # never (censored, lag_ms null). Kaplan-Meier: at 0, 3 at risk, 1 event → 2/3; at 3, rows 1 and 2 at risk (a
    # censored lag counts as at risk up to its time, beyond the bound), 1 event → 1/3.
    scores = -np.ones((3, 8))
    scores[0] = 1.0
    scores[1, 3:] = 1.0
    out = fdslm.state_lag(build(fdslm.StateLagParams, scores=scores, onset=0, window=5, k=3), no_progress)
    assert out.lag_frames == [0, 3, None] and out.lag_ms == [0.0, 240.0, None]
    assert out.censored == [False, False, True]
    assert out.km_lags == [0, 3] and out.km_survival == pytest.approx([2 / 3, 1 / 3], abs=1e-15)
    assert out.rule == "first τ in 0..3 with s(t₀+τ+j) > 0 for j = 0..2; censored otherwise"
    assert fdslm.first_runs(np.zeros((1, 4), dtype=bool), 2).tolist() == [-1]


def test_predicted_lag_at_the_censoring_bound():
    # W = 24, K = 2: bound 23. x* = L = 22.5 at α = 0 → lag ⌊22.5⌋ + 1 = 23, still observed; L = 23.5 → 24, censored.
    scores = np.ones((1, 30))
    for delay, lag, censored in ((22.5, 23, False), (23.5, None, True)):
        law = {"delay": delay, "tau": 2.0, "alphas": [0.0]}
        out = fdslm.state_lag(build(fdslm.StateLagParams, scores=scores, onset=0, steering=law), no_progress)
        assert (out.predicted[0].lag_frames, out.predicted[0].censored) == (lag, censored)


def test_state_lag_cost_of_hidden_states_and_of_nothing():
    hidden = build(
        fdslm.StateLagParams, hidden_states=np.zeros((2, 5, 3)), onset=0, vector=[1.0] * 3, midpoint=[0.0] * 3
    )
    assert fdslm.state_lag_cost(hidden) == 30.0
    assert fdslm.state_lag_cost(fdslm.StateLagParams(onset=0)) == 0.0
    assert fdslm.state_lag_cost(fdslm.StateLagParams(scores=[[]], onset=0)) == 0.0


def test_plots_labels_styles_and_overlay_curves():
    pv = fdslm.perception_vector(
        build(
            fdslm.PerceptionVectorParams,
            hidden_states=np.arange(24.0).reshape(4, 3, 2) % 5,
            labels=[1, 1, -1, -1],
            layers=[2, 0],
        ),
        no_progress,
    )
    fig = fdslm.perception_plot(pv)
    assert tuple(fig.get_size_inches()) == (6.0, 4.0)
    ax, twin = fig.axes
    (auc,) = ax.lines
    assert (auc.get_xdata().tolist(), auc.get_marker(), auc.get_linestyle(), auc.get_label()) == (
        [2, 0],
        "o",
        "-",
        "AUC",
    )
    assert auc.get_ydata().tolist() == [row.auc for row in pv.layers]
    (norm,) = twin.lines
    assert (norm.get_xdata().tolist(), norm.get_marker(), norm.get_linestyle(), norm.get_label()) == (
        [2, 0],
        "s",
        "--",
        "‖v‖",
    )
    assert to_rgba(norm.get_color()) == to_rgba("tab:orange")
    assert (ax.get_xlabel(), ax.get_ylabel(), twin.get_ylabel()) == ("layer", "separability AUC", "‖v‖")
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["AUC", "‖v‖"]
    assert legend._loc == 4 and {t.get_fontsize() for t in legend.get_texts()} == {8.0}
    assert fdslm.perception_curves(pv) == Curves(
        "layer", "separability AUC", (Curve("AUC", [2, 0], [row.auc for row in pv.layers]),)
    )
    zero = fdslm.perception_vector(
        build(fdslm.PerceptionVectorParams, hidden_states=np.ones((2, 1, 2)), labels=[1, -1]), no_progress
    )
    ydata = fdslm.perception_plot(zero).axes[0].lines[0].get_ydata()
    assert np.isnan(ydata[0])

    scores = np.full((2, T), -1.0)
    scores[0, T0 + 3 :] = 1.0
    out = fdslm.state_lag(build(fdslm.StateLagParams, scores=scores, onset=T0), no_progress)
    fig = fdslm.state_lag_plot(out)
    assert tuple(fig.get_size_inches()) == (6.0, 4.0)
    (ax,) = fig.axes
    frac, km = ax.lines
    assert frac.get_xdata().tolist() == list(range(W + 1))
    assert (frac.get_marker(), frac.get_linestyle(), frac.get_label()) == ("o", "-", "fraction perceptive")
    assert km.get_xdata().tolist() == [0, *out.km_lags]
    assert (km.get_drawstyle(), km.get_label()) == ("steps-post", "Kaplan-Meier P(lag > τ)")
    assert ax.get_xlabel() == "frames after onset"
    assert ax.get_ylim() == (-0.02, 1.02)
    texts = ax.get_legend().get_texts()
    assert [t.get_text() for t in texts] == ["fraction perceptive", "Kaplan-Meier P(lag > τ)"]
    assert {t.get_fontsize() for t in texts} == {8.0}
