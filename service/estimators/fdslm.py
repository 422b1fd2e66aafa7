"""Full-duplex state inertia: the perception vector and the lag of the generative → perceptive state switch.

Chang, Chang, Liu & Glass, "Overcoming State Inertia in Full-Duplex Spoken Language Models via Activation
Steering". ``fdslm.perception_vector`` takes per-frame hidden states labelled perceptive (user speaks, model
listens), generative (model speaks, user silent) or other and returns, per layer ℓ, v_ℓ = μ_P − μ_G, the midpoint
m_ℓ = (μ_P + μ_G)/2 and the separability AUC of the state score s(t) = ⟨h_ℓ(t) − m_ℓ, v̂_ℓ⟩. ``fdslm.state_lag``
takes those scores (or hidden states with a vector and midpoint) around a user onset t₀ and returns the
state-inertia lag, right-censoring, the Kaplan-Meier median, the fraction-perceptive curve and the logistic steering
law. Every definition is reconstructed from the abstract; the lag rule is the strict one, s > 0. User
documentation: docs/fdslm.md.
"""

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field
from scipy.stats import rankdata

from service.errors import InvalidInput
from service.estimators.steering_metrics import as_stack
from service.plot_overlay import Curve, Curves
from service.registry import EstimatorSpec, Progress, register
from service.types import ResultModel, StrictModel, array_param

PAPER = "Overcoming State Inertia in Full-Duplex Spoken Language Models via Activation Steering"
CITATION = (
    "Cheng-Kuang Chang, Kai-Wei Chang, Alexander H. Liu, James Glass. Overcoming State Inertia in Full-Duplex "
    "Spoken Language Models via Activation Steering. arXiv:2606.11386, 2026."
)
MAX_ELEMENTS = 20_000_000
MAX_DIM = 8192
MAX_RETURNED = 131_072
"""Largest number of floats in each returned per-layer array (vectors, midpoints): e.g. 32 layers × 4096."""
MAX_WINDOW = 999
PERCEPTIVE, GENERATIVE = 1, -1

Float = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-1e12, le=1e12)]
Frame = Annotated[int, Field(strict=True, ge=0, le=10**9)]


class PerceptionVectorParams(StrictModel):
    """Parameters of ``fdslm.perception_vector``."""

    hidden_states: array_param(list[list[Float]], "float", ndim=3, ge=-1e12, le=1e12) = Field(  # type: ignore[valid-type]
        description="Hidden states h_ℓ(t), shape (T, L, d): T frames (dialogues concatenated), L layers (1 for a "
        'single layer), d ≤ 8192; T·L·d ≤ 2e7. A JSON list or {"array": "sha256:…"}.'
    )
    labels: array_param(Annotated[int, Field(strict=True, ge=-1, le=1)], "int", ge=-1, le=1) = Field(  # type: ignore[valid-type]
        description="State of each frame (T values): 1 perceptive (user speaks, model listens), −1 generative "
        "(model speaks, user silent), 0 other (ignored)."
    )
    layers: list[Annotated[int, Field(strict=True, ge=0, le=4095)]] | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="0-based layers to report (default all); len(layers)·d ≤ 131,072.",
    )


class LayerVector(ResultModel):
    """Perception vector of one layer."""

    layer: int = Field(description="0-based layer index into hidden_states.")
    vector: list[float] = Field(description="v_ℓ = μ_P − μ_G (raw, for steering h ← h + α·v).")
    norm: float = Field(description="‖v_ℓ‖.")
    midpoint: list[float] = Field(description="m_ℓ = (μ_P + μ_G)/2.")
    auc: float | None = Field(
        description="P(s_P > s_G) + ½P(s_P = s_G) of the state score s = ⟨h − m, v̂⟩ over perceptive vs generative "
        "frames (in-sample, so optimistic); null when ‖v_ℓ‖ = 0."
    )


class PerceptionVectorResult(ResultModel):
    """Per-layer perception vectors."""

    n_perceptive: int = Field(description="Perceptive frames used.")
    n_generative: int = Field(description="Generative frames used.")
    d: int = Field(description="Hidden size.")
    layers: list[LayerVector] = Field(description="One entry per requested layer, in request order.")
    best_layer: int | None = Field(description="Layer with the highest AUC (lowest index on ties); null if none.")
    reconstructed: list[str] = Field(description="Fields resting on the reconstructed definitions.")


class SteeringLaw(StrictModel):
    """Logistic transition s_α(t) = ‖v‖(σ((t − t₀ − L)/τ) − ½ + α), α in units of ‖v‖."""

    delay: float = Field(ge=0.0, le=1e4, allow_inf_nan=False, description="L, frames from onset to s = 0 (α = 0).")
    tau: float = Field(gt=0.0, le=1e4, allow_inf_nan=False, description="τ, transition time scale in frames.")
    alphas: list[Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-1e3, le=1e3)]] = Field(
        min_length=1, max_length=1000, description="Steering strengths α (units of ‖v‖)."
    )


class StateLagParams(StrictModel):
    """Parameters of ``fdslm.state_lag`` (give ``scores``, or ``hidden_states`` with ``vector`` and ``midpoint``)."""

    scores: array_param(list[Float], "float", ndim=2, ge=-1e12, le=1e12) | None = Field(  # type: ignore[valid-type]
        None, description="Precomputed state scores s(t), shape (n dialogues, T frames); s > 0 means perceptive."
    )
    hidden_states: array_param(list[list[Float]], "float", ndim=3, ge=-1e12, le=1e12) | None = Field(  # type: ignore[valid-type]
        None, description="Hidden states of one layer, shape (n, T, d), d ≤ 8192, n·T·d ≤ 2e7."
    )
    vector: array_param(Float, "float", ge=-1e12, le=1e12, max_length=MAX_DIM) | None = Field(  # type: ignore[valid-type]
        None, description="Perception vector v (d values; only its direction is used): s(t) = ⟨h(t) − m, v/‖v‖⟩."
    )
    midpoint: array_param(Float, "float", ge=-1e12, le=1e12, max_length=MAX_DIM) | None = Field(  # type: ignore[valid-type]
        None, description="Midpoint m = (μ_P + μ_G)/2 (d values)."
    )
    onset: Frame | list[Frame] = Field(
        description="User onset frame t₀: one for every dialogue, or one per dialogue (n values)."
    )
    k: int = Field(2, ge=1, le=64, description="K, consecutive perceptive frames that end the lag (default 2).")
    window: int = Field(
        24, ge=0, le=MAX_WINDOW, description="W: frames t₀ .. t₀ + W are examined (default 24); t₀ + W < T."
    )
    frame_ms: float = Field(80.0, gt=0.0, le=1e4, allow_inf_nan=False, description="Frame length (default 80 ms).")
    steering: SteeringLaw | None = Field(None, description="Optional logistic steering law to evaluate.")


class PredictedLag(ResultModel):
    """The steering law at one α."""

    alpha: float = Field(description="Steering strength α (units of ‖v‖).")
    crossing: float | None = Field(
        description="x* = L + τ·ln((½ − α)/(½ + α)), frames after onset where s_α = 0; null for |α| ≥ ½."
    )
    lag_frames: int | None = Field(description="max(0, ⌊x*⌋ + 1) (0 for α ≥ ½); null when censored.")
    censored: bool = Field(description="No crossing (α ≤ −½) or a lag beyond the window's last start W − K + 1.")


class StateLagResult(ResultModel):
    """Per-dialogue lags and their summaries."""

    lag_frames: list[int | None] = Field(description="Lag τ per dialogue in frames; null when censored.")
    lag_ms: list[float | None] = Field(description="Lag per dialogue in ms (τ·frame_ms); null when censored.")
    censored: list[bool] = Field(description="True when no τ ≤ W − K + 1 starts K frames with s > 0.")
    censor_bound: int = Field(description="W − K + 1: a censored lag exceeds this many frames.")
    n_dialogues: int = Field(description="Dialogues scored.")
    censoring_rate: float = Field(description="Share of censored dialogues.")
    median_observed_frames: float | None = Field(description="Median of the uncensored lags; null if none.")
    km_median_frames: int | None = Field(
        description="Kaplan-Meier median: smallest τ with Ŝ(τ) ≤ ½; null when not reached."
    )
    km_median_ms: float | None = Field(description="km_median_frames·frame_ms; null when not reached.")
    km_lags: list[int] = Field(description="Distinct observed lags (frames), ascending.")
    km_survival: list[float] = Field(description="Kaplan-Meier Ŝ(τ) = P(lag > τ) at each of km_lags.")
    frac_perceptive: list[float] = Field(
        description="Share of dialogues with s(t₀ + j) > 0, j = 0..W (W + 1 values, ≤ 1000)."
    )
    predicted: list[PredictedLag] | None = Field(description="The steering law at each α; null without steering.")
    rule: str = Field(description="The lag rule applied.")
    reconstructed: list[str] = Field(description="Fields resting on the reconstructed definitions.")


def _labels(params: PerceptionVectorParams, n_frames: int) -> np.ndarray:
    labels = np.asarray(params.labels, dtype=np.int64)
    if labels.shape != (n_frames,):
        raise InvalidInput(f"labels has {labels.size} values, hidden_states has T = {n_frames} frames", ("labels",))
    for code, name in ((PERCEPTIVE, "perceptive"), (GENERATIVE, "generative")):
        if not np.any(labels == code):
            raise InvalidInput(f"no {name} frame (label {code}): the perception vector is undefined", ("labels",))
    return labels


def separability_auc(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Mann-Whitney AUC P(pos > neg) + ½P(tie) per column of ``pos`` (n_P × L) against ``neg`` (n_G × L)."""
    ranks = rankdata(np.concatenate([pos, neg]), axis=0)
    n_pos, n_neg = pos.shape[0], neg.shape[0]
    return (ranks[:n_pos].sum(axis=0) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def perception_vector(params: PerceptionVectorParams, progress: Progress) -> PerceptionVectorResult:
    """v_ℓ = mean_{t∈P} h_ℓ(t) − mean_{t∈G} h_ℓ(t), its midpoint and the AUC of s = ⟨h − m, v̂⟩ per layer."""
    h = as_stack(params.hidden_states, ("hidden_states",))
    n_frames, n_layers, d = h.shape
    if d > MAX_DIM:
        raise InvalidInput(f"d = {d} exceeds {MAX_DIM}", ("hidden_states",))
    labels = _labels(params, n_frames)
    layers = list(range(n_layers)) if params.layers is None else params.layers
    if max(layers) >= n_layers:
        raise InvalidInput(f"layer {max(layers)} is out of range for L = {n_layers}", ("layers",))
    if len(layers) * d > MAX_RETURNED:
        raise InvalidInput(
            f"{len(layers)} layers × d = {d} exceeds {MAX_RETURNED} returned values; select fewer layers", ("layers",)
        )
    hs = h if params.layers is None else h[:, np.asarray(layers)]
    is_p, is_g = labels == PERCEPTIVE, labels == GENERATIVE
    flat = hs.reshape(n_frames, -1)
    mu_p = (is_p @ flat / is_p.sum()).reshape(len(layers), d)
    mu_g = (is_g @ flat / is_g.sum()).reshape(len(layers), d)
    v, mid = mu_p - mu_g, (mu_p + mu_g) / 2.0
    norms = np.linalg.norm(v, axis=1)
    unit = np.divide(v, norms[:, None], out=np.zeros_like(v), where=norms[:, None] > 0)
    score = np.einsum("tld,ld->tl", hs, unit) - np.sum(mid * unit, axis=1)
    auc = separability_auc(score[is_p], score[is_g]).astype(object)
    auc[norms == 0] = None
    rows = [
        LayerVector(layer=layer, vector=v[i].tolist(), norm=float(norms[i]), midpoint=mid[i].tolist(), auc=auc[i])
        for i, layer in enumerate(layers)
    ]
    scored = [(-row.auc, row.layer) for row in rows if row.auc is not None]
    return PerceptionVectorResult(
        n_perceptive=int(is_p.sum()),
        n_generative=int(is_g.sum()),
        d=d,
        layers=rows,
        best_layer=min(scored)[1] if scored else None,
        reconstructed=["layers", "best_layer"],
    )


def _scores(params: StateLagParams) -> np.ndarray:
    """s(t) per dialogue and frame, (n, T): given, or ⟨h(t) − m, v̂⟩."""
    if (params.scores is None) == (params.hidden_states is None):
        raise InvalidInput("give exactly one of scores and hidden_states", ("scores",))
    if params.scores is not None:
        return as_stack(params.scores, ("scores",), ndim=2)
    if params.vector is None or params.midpoint is None:
        raise InvalidInput("hidden_states needs vector and midpoint", ("vector",))
    h = as_stack(params.hidden_states, ("hidden_states",))
    if h.shape[2] > MAX_DIM:
        raise InvalidInput(f"d = {h.shape[2]} exceeds {MAX_DIM}", ("hidden_states",))
    v = np.asarray(params.vector, dtype=np.float64)
    m = np.asarray(params.midpoint, dtype=np.float64)
    d = h.shape[2]
    for name, arr in (("vector", v), ("midpoint", m)):
        if arr.shape != (d,):
            raise InvalidInput(f"{name} has {arr.size} values, hidden_states has d = {d}", (name,))
    norm = np.linalg.norm(v)
    if norm == 0:
        raise InvalidInput("vector is zero: the state axis is undefined", ("vector",))
    unit = v / norm
    return h @ unit - m @ unit


def _onsets(params: StateLagParams, n: int, n_frames: int) -> np.ndarray:
    onsets = np.full(n, params.onset) if isinstance(params.onset, int) else np.asarray(params.onset, dtype=np.int64)
    if onsets.shape != (n,):
        raise InvalidInput(f"onset has {onsets.size} values for {n} dialogues", ("onset",))
    if onsets.max() + params.window >= n_frames:
        raise InvalidInput(
            f"onset + window = {int(onsets.max()) + params.window} must be < T = {n_frames} frames", ("onset",)
        )
    return onsets


def first_runs(perceptive: np.ndarray, k: int) -> np.ndarray:
    """Per row, the first τ starting K consecutive True values in ``perceptive`` (n × (W+1)); −1 when none."""
    counts = np.concatenate([np.zeros((perceptive.shape[0], 1), np.int64), np.cumsum(perceptive, axis=1)], axis=1)
    runs = counts[:, k:] - counts[:, :-k] == k
    return np.where(runs.any(axis=1), runs.argmax(axis=1), -1)


def kaplan_meier(times: np.ndarray, observed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Product-limit Ŝ(τ) = Π_{τ_i ≤ τ}(1 − d_i/n_i) at the distinct observed times; censored times count as
    at risk up to and including their own time."""
    event_times, deaths = np.unique(times[observed], return_counts=True)
    at_risk = (times[None, :] >= event_times[:, None]).sum(axis=1)
    return event_times, np.cumprod(1.0 - deaths / at_risk)


def predicted_lag(alpha: float, delay: float, tau: float) -> tuple[float | None, int | None]:
    """(x*, lag) of the steering law under the strict rule: lag = max(0, ⌊x*⌋ + 1); (None, 0) for α ≥ ½ and
    (None, None) for α ≤ −½."""
    if alpha >= 0.5:
        return None, 0
    if alpha <= -0.5:
        return None, None
    crossing = delay + tau * math.log((0.5 - alpha) / (0.5 + alpha))
    return crossing, max(0, math.floor(crossing) + 1)


def state_lag(params: StateLagParams, progress: Progress) -> StateLagResult:
    """lag = min{τ ∈ 0..W−K+1 : s(t₀+τ+j) > 0 for j = 0..K−1}, right-censored when no τ qualifies."""
    if params.k > params.window + 1:
        raise InvalidInput(f"k = {params.k} exceeds the window's W + 1 = {params.window + 1} frames", ("k",))
    s = _scores(params)
    n, n_frames = s.shape
    onsets = _onsets(params, n, n_frames)
    window = s[np.arange(n)[:, None], onsets[:, None] + np.arange(params.window + 1)] > 0
    lags = first_runs(window, params.k)
    observed = lags >= 0
    bound = params.window - params.k + 1
    km_lags, km_survival = kaplan_meier(np.where(observed, lags, bound + 1), observed)
    reached = np.flatnonzero(km_survival <= 0.5)
    km_median = int(km_lags[reached[0]]) if reached.size else None
    predicted = None
    if params.steering is not None:
        law = params.steering
        predicted = []
        for alpha in law.alphas:
            crossing, lag = predicted_lag(alpha, law.delay, law.tau)
            censored = lag is None or lag > bound
            predicted.append(
                PredictedLag(alpha=alpha, crossing=crossing, lag_frames=None if censored else lag, censored=censored)
            )
    return StateLagResult(
        lag_frames=[int(x) if x >= 0 else None for x in lags],
        lag_ms=[float(x * params.frame_ms) if x >= 0 else None for x in lags],
        censored=(~observed).tolist(),
        censor_bound=bound,
        n_dialogues=n,
        censoring_rate=float(1.0 - observed.mean()),
        median_observed_frames=float(np.median(lags[observed])) if observed.any() else None,
        km_median_frames=km_median,
        km_median_ms=None if km_median is None else km_median * params.frame_ms,
        km_lags=km_lags.tolist(),
        km_survival=km_survival.tolist(),
        frac_perceptive=window.mean(axis=0).tolist(),
        predicted=predicted,
        rule=f"first τ in 0..{bound} with s(t₀+τ+j) > 0 for j = 0..{params.k - 1}; censored otherwise",
        reconstructed=["lag_frames", "lag_ms", "km_median_frames", "frac_perceptive", "predicted"],
    )


def _size(arr: Any) -> float:
    """Elements of an array or of a rectangular nested list (first row per level)."""
    if not isinstance(arr, list):
        return float(np.asarray(arr).size)
    size = 1.0
    while isinstance(arr, list):
        size *= len(arr)
        arr = arr[0] if arr else None
    return size


def perception_vector_cost(params: PerceptionVectorParams) -> float:
    """Hidden-state elements read, T·L·d."""
    return _size(params.hidden_states)


def state_lag_cost(params: StateLagParams) -> float:
    """Score or hidden-state elements read (n·T or n·T·d)."""
    arr = params.hidden_states if params.hidden_states is not None else params.scores
    return 0.0 if arr is None else _size(arr)


def perception_plot(result: PerceptionVectorResult) -> Any:
    """AUC and ‖v_ℓ‖ against the layer index."""
    from matplotlib.figure import Figure

    layers = [row.layer for row in result.layers]
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.plot(layers, [np.nan if row.auc is None else row.auc for row in result.layers], "o-", label="AUC")
    ax.set_xlabel("layer")
    ax.set_ylabel("separability AUC")
    twin = ax.twinx()
    twin.plot(layers, [row.norm for row in result.layers], "s--", color="tab:orange", label="‖v‖")
    twin.set_ylabel("‖v‖")
    fig.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def perception_curves(result: PerceptionVectorResult) -> Curves:
    """The plot's AUC against the layer (‖v_ℓ‖, on its second axis, left out), for overlaying runs."""
    auc = Curve("AUC", [row.layer for row in result.layers], [row.auc for row in result.layers])
    return Curves("layer", "separability AUC", (auc,))


def state_lag_plot(result: StateLagResult) -> Any:
    """Fraction of dialogues perceptive at t₀ + j and the Kaplan-Meier survival of the lag."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.plot(np.arange(len(result.frac_perceptive)), result.frac_perceptive, "o-", label="fraction perceptive")
    ax.step([0, *result.km_lags], [1.0, *result.km_survival], where="post", label="Kaplan-Meier P(lag > τ)")
    ax.set_xlabel("frames after onset")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


COST_UNIT = "hidden-state or score elements read"
HARD_CAP = float(MAX_ELEMENTS)

SPECS = [
    register(
        EstimatorSpec(
            name="fdslm.perception_vector",
            version="1",
            family="fdslm",
            summary="Perception vector v_ℓ = μ_perceptive − μ_generative per layer of a full-duplex spoken model, "
            "with its midpoint, norm and separability AUC.",
            paper=PAPER,
            citation=CITATION,
            params_model=PerceptionVectorParams,
            result_model=PerceptionVectorResult,
            fn=perception_vector,
            cost=perception_vector_cost,
            cost_unit=COST_UNIT,
            sync_budget=HARD_CAP,
            hard_cap=HARD_CAP,
            plot=perception_plot,
            overlay=perception_curves,
        )
    ),
    register(
        EstimatorSpec(
            name="fdslm.state_lag",
            version="1",
            family="fdslm",
            summary="State-inertia lag after a user onset (frames and ms, censoring, Kaplan-Meier median), the "
            "fraction-perceptive curve and the logistic steering law.",
            paper=PAPER,
            citation=CITATION,
            params_model=StateLagParams,
            result_model=StateLagResult,
            fn=state_lag,
            cost=state_lag_cost,
            cost_unit=COST_UNIT,
            sync_budget=HARD_CAP,
            hard_cap=HARD_CAP,
            plot=state_lag_plot,
        )
    ),
]
