"""SNN direct training: threshold-tail statistics and the surrogate / LocalZO gradient mismatch of a LIF network.

Estimators ``snn.threshold_tail`` (statistics of uploaded pre-reset membrane traces) and ``snn.gradient_mismatch``
(a LIF network of 1-4 layers: the hard forward pass and rate loss, the smoothed objective L_F, the surrogate
direction g_F, ∇L_F, their mismatch, LocalZO draws and a finite-difference check). The numerics live in
:mod:`service.estimators.snn_lif` and :mod:`service.estimators.snn_tail`; user documentation: docs/snn.md.
"""

import itertools
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.estimators.snn_lif import (
    WIDTH_DEFAULT,
    WIDTH_RANGE,
    Lif,
    SurrogateKind,
    Trajectory,
    adjoint,
    flatten,
    forward,
    hard_spike,
    localzo_node_grad,
    mse,
    n_params,
    surrogate_cdf,
    surrogate_grad,
    unflatten,
)
from service.estimators.snn_tail import TailStats, tail_stats
from service.plot_overlay import Curve, Curves
from service.registry import EstimatorSpec, Progress, register
from service.types import MAX_JSON_ARRAY, FiniteFloat, ResultModel, Seed, StrictModel, array_param

PAPER = (
    "Convergence of surrogate-gradient and LocalZO direct SNN training via a threshold-tail functional "
    "(descriptive title: the paper was not located)"
)
CITATION = (
    "A unified convergence analysis of SG and LocalZO direct SNN training via a threshold-tail functional "
    "(NeurIPS 2026; full text not located); LocalZO: Mukhoty et al., NeurIPS 2023; surrogates as in SpikingJelly"
)
MAX_TRACE_VALUES = 10_000_000
MAX_TRACE_LAYERS = 16
MAX_INPUTS = 1024
MAX_UNITS = 512
MAX_MACS = 5e8
"""T·B·Σ_l n_l·n_{l−1} per pass."""
MAX_NODES = 4e6
"""T·B·Σ_l n_l (about ten float64 arrays of this size are alive at once)."""
MAX_ZO_NORMALS = 2e8
"""R·M·T·B·Σ_l n_l normal draws for LocalZO."""
MAX_FD_MACS = 2e9
"""2P·T·B·Σ_l n_l·n_{l−1} for the finite-difference check."""
MAX_FD_PARAMS = 2000
FD_STEP = 1e-6
FD_CHUNK_NODES = 2_000_000
ZO_CHUNK_VALUES = 4_000_000
NODE_WEIGHT = 40.0
"""Elementwise work per node and pass, in multiply-adds (measured ratio of the time loop to the matmul)."""
NORMAL_WEIGHT = 20.0
"""One normal draw plus its indicator, in multiply-adds."""
TINY = 1e-12
DEFAULT_EPS = (0.05, 0.1, 0.2, 0.5, 1.0)

Eps = Annotated[float, Field(strict=True, ge=1e-9, le=10, allow_inf_nan=False)]
EpsGrid = Annotated[
    list[Eps],
    Field(
        min_length=1,
        max_length=32,
        description="Band half-widths ε for band_frac, each in [1e-9, 10] (default [0.05, 0.1, 0.2, 0.5, 1]).",
    ),
]
Width = Annotated[float, Field(strict=True, gt=0, le=1e3, allow_inf_nan=False)]
SURROGATE_DOC = (
    "Surrogate F (a CDF; F′ is the surrogate gradient): 'gaussian' Φ(u/δ), 'sigmoid' σ(ku), 'atan' "
    "½ + arctan(παu/2)/π, 'rect' clip(u/a + ½, 0, 1). Default 'gaussian'."
)
WIDTH_DOC = (
    "Surrogate width: δ (gaussian, default 0.5, range [1e-3, 10]), k (sigmoid, default 4, [0.1, 1e3]), "
    "α (atan, default 2, [0.1, 1e3]) or a (rect, default 1, [1e-3, 10])."
)
Row = list[FiniteFloat]
Matrix = list[Row]


def resolve_width(kind: SurrogateKind, width: float | None, loc: tuple[str | int, ...] = ("width",)) -> float:
    """The width, defaulted per kind and checked against the kind's allowed range."""
    if width is None:
        return WIDTH_DEFAULT[kind]
    lo, hi = WIDTH_RANGE[kind]
    if not lo <= width <= hi:
        raise InvalidInput(f"width {width:g} is outside [{lo:g}, {hi:g}] for surrogate {kind!r}", loc=loc)
    return width


def _as_array(value: Any, ndim: int, loc: tuple[str, ...], cap: int) -> np.ndarray:
    """A JSON nested list or a resolved array as float64 with ``ndim`` axes, at most ``cap`` elements."""
    if isinstance(value, np.ndarray):
        arr = value.astype(np.float64, copy=False)
    else:
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (ValueError, TypeError) as exc:
            raise InvalidInput(
                "not a rectangular numeric array (ragged rows, or a mix of lists and references)", loc=loc
            ) from exc
        cap = min(cap, MAX_JSON_ARRAY)
    if arr.ndim != ndim:
        raise InvalidInput(f"expected a {ndim}-dimensional array, got shape {list(arr.shape)}", loc=loc)
    if arr.size == 0:
        raise InvalidInput("the array is empty", loc=loc)
    if arr.size > cap:
        raise InvalidInput(f"{arr.size} values exceed the cap of {cap}", loc=loc)
    if not np.isfinite(arr).all():
        raise InvalidInput("the array holds NaN or infinite values", loc=loc)
    return arr


def _nested_size(value: Any) -> int:
    """Element count of a resolved array, or of a nested list judged by its first rows (for the cost)."""
    if isinstance(value, np.ndarray):
        return int(value.size)
    size = 1
    while isinstance(value, list) and value:
        size *= len(value)
        value = value[0]
    return size


# ---------------------------------------------------------------------------------------------- threshold tail


class ThresholdTailParams(StrictModel):
    """Parameters of ``snn.threshold_tail``."""

    v: list[array_param(Matrix, "float", ndim=3)] = Field(  # type: ignore[valid-type]
        min_length=1,
        max_length=MAX_TRACE_LAYERS,
        description="Pre-reset membrane potentials, one T×B×n_l array per layer (same T and B in every layer). Each "
        'a JSON nested list (at most 100,000 values) or {"array": "sha256:…"} uploaded with POST /v1/arrays; at '
        "most 10^7 values in all.",
    )
    threshold: (
        Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]
        | list[Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]]
    ) = Field(1.0, description="Firing threshold ϑ > 0: one value, or one per layer (default 1).")
    eps: EpsGrid = Field(default_factory=lambda: list(DEFAULT_EPS))
    surrogate: SurrogateKind = Field("gaussian", description=SURROGATE_DOC)
    width: Width | None = Field(None, description=WIDTH_DOC)


class ThresholdTailResult(TailStats):
    """Threshold-tail statistics of the given traces."""

    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED definition.")


TAIL_FIELDS = ["band_frac", "band_density", "kernel_tail", "per_layer", "per_time"]


def threshold_tail(params: ThresholdTailParams, progress: Progress) -> ThresholdTailResult:
    """band_frac(ε) = mean 1{|u| ≤ ε}, band_density = band_frac/(2ε), kernel_tail = mean 2|F(u) − H(u)|, u = v − ϑ."""
    width = resolve_width(params.surrogate, params.width)
    layers = [_as_array(v, 3, ("v", i), MAX_TRACE_VALUES) for i, v in enumerate(params.v)]
    total = sum(v.size for v in layers)
    if total > MAX_TRACE_VALUES:
        raise InvalidInput(f"{total} trace values exceed the cap of {MAX_TRACE_VALUES}", loc=("v",))
    for i, v in enumerate(layers[1:], start=1):
        if v.shape[:2] != layers[0].shape[:2]:
            raise InvalidInput(
                f"layer {i + 1} has T×B = {list(v.shape[:2])}; layer 1 has {list(layers[0].shape[:2])}", loc=("v", i)
            )
    thresholds = params.threshold if isinstance(params.threshold, list) else [params.threshold] * len(layers)
    if len(thresholds) != len(layers):
        raise InvalidInput(f"{len(thresholds)} thresholds for {len(layers)} layers", loc=("threshold",))
    u_layers = [v - th for v, th in zip(layers, thresholds, strict=True)]
    stats = tail_stats(u_layers, params.eps, params.surrogate, width)
    progress(1.0, "done")
    return ThresholdTailResult(**stats.model_dump(), reconstructed=TAIL_FIELDS)


def threshold_tail_cost(params: ThresholdTailParams) -> float:
    """Offsets × (|ε| + 4) elementwise operations."""
    return float(sum(_nested_size(v) for v in params.v) * (len(params.eps) + 4))


def threshold_tail_plot(result: ThresholdTailResult) -> Any:
    """band_frac(ε) per time step, one line per ε, and kernel_tail per step."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    for e, row in zip(result.eps, result.per_time.band_frac, strict=True):
        ax.plot(result.per_time.t, row, label=f"band_frac(ε={e:g})")
    ax.plot(result.per_time.t, result.per_time.kernel_tail, "k--", label=f"kernel_tail ({result.surrogate})")
    ax.set_xlabel("time step t")
    ax.set_ylabel("share of offsets u = v − ϑ")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def threshold_tail_curves(result: ThresholdTailResult) -> Curves:
    """The plot's band_frac(ε) per ε and kernel_tail against the time step, for overlaying runs."""
    t = result.per_time.t
    bands = [Curve(f"band_frac(ε={e:g})", t, row) for e, row in zip(result.eps, result.per_time.band_frac, strict=True)]
    tail = Curve(f"kernel_tail ({result.surrogate})", t, result.per_time.kernel_tail)
    return Curves("time step t", "share of offsets u = v − ϑ", (*bands, tail))


# ------------------------------------------------------------------------------------------ gradient mismatch


class LocalZoParams(StrictModel):
    """LocalZO draws: ĥ = (1/(2δM))·Σ_m 1{|u| < δ|z_m|}·|z_m| per node, z ~ N(0, 1)."""

    delta: Annotated[float, Field(strict=True, ge=1e-3, le=10, allow_inf_nan=False)] = Field(
        0.5, description="Perturbation scale δ (default 0.5); the mean direction is g_F of gaussian(δ)."
    )
    samples: int = Field(5, ge=1, le=64, description="Samples M per node and draw (default 5).")
    draws: int = Field(16, ge=1, le=256, description="Independent draws R of the LocalZO gradient (default 16).")
    zo_seed: Seed = Field(123, description="Seed of the LocalZO generator (default 123).")


class GradientMismatchParams(StrictModel):
    """Parameters of ``snn.gradient_mismatch``."""

    sizes: list[Annotated[int, Field(strict=True, ge=1, le=MAX_INPUTS)]] = Field(
        default_factory=lambda: [20, 30, 5],
        min_length=2,
        max_length=5,
        description="[n_0, n_1, …, n_L]: inputs then units of 1-4 LIF layers (n_0 ≤ 1024, n_l ≤ 512); "
        "the last layer is the output (K = n_L). Default [20, 30, 5].",
    )
    time_steps: int = Field(8, ge=1, le=64, description="Time steps T (default 8).")
    batch_size: int = Field(32, ge=1, le=256, description="Batch rows B (default 32).")
    beta: Annotated[float, Field(strict=True, gt=0, le=1, allow_inf_nan=False)] = Field(
        0.5, description="Membrane leak β ∈ (0, 1] (default 0.5)."
    )
    threshold: Annotated[float, Field(strict=True, gt=0, le=1e3, allow_inf_nan=False)] = Field(
        1.0, description="Firing threshold ϑ > 0 shared by all layers (default 1)."
    )
    reset: Literal["zero", "subtract"] = Field(
        "zero", description="'zero': m = (1 − s)⊙v (default, LocalZO's hard reset); 'subtract': m = v − ϑs."
    )
    detach_reset: bool = Field(False, description="Drop the reset path's gradient in g_F and LocalZO (default false).")
    surrogate: SurrogateKind = Field("gaussian", description=SURROGATE_DOC)
    width: Width | None = Field(None, description=WIDTH_DOC)
    theta: array_param(FiniteFloat, "float") | None = Field(  # type: ignore[valid-type]
        None,
        description="All parameters θ = (W^1, b^1, …, W^L, b^L), each W^l (n_l×n_{l−1}) flattened row-major, "
        "length P = Σ n_l(n_{l−1} + 1); default drawn: W^l = w_scale·z/√n_{l−1}, z ~ N(0, 1), b = 0.",
    )
    seed: Seed = 0
    w_scale: Annotated[float, Field(strict=True, gt=0, le=100, allow_inf_nan=False)] | None = Field(
        None, description="Weight scale; default drawn as exp(U(ln 0.2, ln 4))."
    )
    x: array_param(Matrix, "float", ndim=3, ge=0, le=1) | None = Field(  # type: ignore[valid-type]
        None, description="Input spikes X ∈ {0, 1}, shape T×B×n_0; default Bernoulli(p)."
    )
    p: Annotated[float, Field(strict=True, ge=0, le=1, allow_inf_nan=False)] | None = Field(
        None, description="Input firing probability; default drawn as U(0.1, 0.5)."
    )
    y: array_param(Row, "float", ndim=2, ge=0, le=1) | None = Field(  # type: ignore[valid-type]
        None, description="Targets Y ∈ [0, 1], shape B×K; default one-hot of labels."
    )
    labels: list[Annotated[int, Field(strict=True, ge=0, le=MAX_UNITS)]] | None = Field(
        None, max_length=256, description="Class labels c_b ∈ {0..K−1} (Y = one-hot); default drawn uniformly."
    )
    eps: EpsGrid = Field(default_factory=lambda: list(DEFAULT_EPS))
    localzo: LocalZoParams | None = Field(None, description="LocalZO draws to average (default none).")
    fd_check: bool = Field(False, description="Central differences (h = 1e-6) of L_F on every coordinate (P ≤ 2000).")


class LayerMismatch(ResultModel):
    """Mismatch and consistency gap of one layer's block (W^l, b^l)."""

    layer: int = Field(description="Layer index l (1-based).")
    n_units: int = Field(description="Units n_l.")
    spike_gap: float = Field(description="Mean over (t, b, i) of |s̃ − s| in this layer.")
    rate_gap: float = Field(description="Mean over (b, i) of |r̃ − r| with r = (1/T)Σ_t s in this layer.")
    norm_g_f: float = Field(description="‖g_F‖₂ on the block.")
    norm_grad_lf: float = Field(description="‖∇L_F‖₂ on the block.")
    mismatch_abs: float = Field(description="‖g_F − ∇L_F‖₂ on the block.")
    mismatch_rel: float | None = Field(description="mismatch_abs/‖∇L_F‖₂; null if ‖∇L_F‖₂ < 1e-12.")
    cosine: float | None = Field(description="cos(g_F, ∇L_F); null if a norm is < 1e-12.")


class LocalZoResult(ResultModel):
    """LocalZO draws ĝ_r, their mean ḡ and its mismatch to the gaussian(δ) objective."""

    delta: float = Field(description="δ used.")
    samples: int = Field(description="M samples per node.")
    draws: int = Field(description="R draws.")
    mc_rel_err: float | None = Field(
        description="‖ḡ − g_gauss(δ)‖/‖g_gauss(δ)‖: Monte Carlo error against the exact mean direction "
        "(≈ 1/√R); null if ‖g_gauss‖ < 1e-12."
    )
    spread: float | None = Field(description="sqrt(mean_r ‖ĝ_r − ḡ‖²)/‖ḡ‖; null if ‖ḡ‖ < 1e-12.")
    mismatch_abs: float = Field(description="‖ḡ − ∇L_gauss(δ)‖₂.")
    mismatch_rel: float | None = Field(description="mismatch_abs/‖∇L_gauss(δ)‖₂; null if that is < 1e-12.")
    cosine: float | None = Field(description="cos(ḡ, ∇L_gauss(δ)); null if a norm is < 1e-12.")


class FdResult(ResultModel):
    """Central differences of L_F against the adjoint ∇L_F."""

    n_coords: int = Field(description="Coordinates checked (all P).")
    rel_err: float | None = Field(description="‖fd − ∇L_F‖/‖∇L_F‖; null if ‖∇L_F‖ < 1e-12.")
    max_abs: float = Field(description="max |fd − ∇L_F|.")


class GradientMismatchResult(ResultModel):
    """Losses, gradient mismatch, consistency gaps and threshold-tail statistics of one LIF network and batch."""

    loss: float = Field(description="L = mean (r − Y)² of the hard network (piecewise constant in θ).")
    loss_smoothed: float = Field(description="L_F: the same loss with every spike replaced by F(u).")
    gap: float = Field(description="|L_F − L| (signed errors cancel inside; prefer rate_gap and spike_gap).")
    rate_gap: float = Field(description="Mean over (b, k) of |r̃ − r| at the output.")
    spike_gap: float = Field(description="Mean over (l, t, b, i) of |s̃ − s|.")
    norm_g_f: float = Field(description="‖g_F‖₂: the surrogate-gradient direction on the hard trajectory.")
    norm_grad_lf: float = Field(description="‖∇L_F‖₂: the exact gradient of the smoothed objective.")
    mismatch_abs: float = Field(description="‖g_F − ∇L_F‖₂.")
    mismatch_rel: float | None = Field(description="mismatch_abs/‖∇L_F‖₂; null if ‖∇L_F‖₂ < 1e-12.")
    cosine: float | None = Field(description="cos(g_F, ∇L_F); null if a norm is < 1e-12.")
    per_layer: list[LayerMismatch] = Field(description="Mismatch and gaps per layer block.")
    tail: TailStats = Field(description="Threshold-tail statistics of the hard trajectory's offsets.")
    n_params: int = Field(description="P = Σ n_l(n_{l−1} + 1).")
    w_scale: float | None = Field(description="Weight scale used (null when θ was given).")
    p: float | None = Field(description="Input firing probability used (null when X was given).")
    localzo: LocalZoResult | None = Field(description="LocalZO statistics, when asked.")
    fd: FdResult | None = Field(description="Finite-difference check, when asked.")
    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED definition.")


MISMATCH_FIELDS = [
    "loss_smoothed",
    "gap",
    "rate_gap",
    "spike_gap",
    "norm_grad_lf",
    "mismatch_abs",
    "mismatch_rel",
    "cosine",
    "per_layer",
    "tail",
    "localzo.mismatch_abs",
    "localzo.mismatch_rel",
    "localzo.cosine",
    "fd",
]


def _sums(sizes: list[int], t: int, b: int) -> tuple[float, float]:
    """(T·B·Σ n_l·n_{l−1}, T·B·Σ n_l)."""
    macs = sum(i * o for i, o in itertools.pairwise(sizes))
    return float(t * b * macs), float(t * b * sum(sizes[1:]))


def _check_caps(params: GradientMismatchParams) -> None:
    """Sizes and the caps on passes, nodes, LocalZO draws and the finite-difference check (422 naming the field)."""
    sizes = params.sizes
    for i, n in enumerate(sizes[1:], start=1):
        if n > MAX_UNITS:
            raise InvalidInput(f"layer {i} has {n} units; at most {MAX_UNITS}", loc=("sizes", i))
    macs, nodes = _sums(sizes, params.time_steps, params.batch_size)
    if macs > MAX_MACS:
        raise InvalidInput(f"T·B·Σ n_l·n_(l−1) = {macs:.3g} exceeds {MAX_MACS:.0e}", loc=("sizes",))
    if nodes > MAX_NODES:
        raise InvalidInput(f"T·B·Σ n_l = {nodes:.3g} exceeds {MAX_NODES:.0e}", loc=("sizes",))
    zo = params.localzo
    if zo is not None and zo.draws * zo.samples * nodes > MAX_ZO_NORMALS:
        raise InvalidInput(f"R·M·T·B·Σ n_l exceeds {MAX_ZO_NORMALS:.0e}", loc=("localzo", "draws"))
    if params.fd_check:
        n_p = n_params(sizes)
        if n_p > MAX_FD_PARAMS:
            raise InvalidInput(f"fd_check needs P ≤ {MAX_FD_PARAMS}; P = {n_p}", loc=("fd_check",))
        if 2 * n_p * macs > MAX_FD_MACS:
            raise InvalidInput(f"2P·T·B·Σ n_l·n_(l−1) exceeds {MAX_FD_MACS:.0e}", loc=("fd_check",))


def gradient_mismatch_cost(params: GradientMismatchParams) -> float:
    """Multiply-adds: 4 passes (+3 + R with LocalZO, +2P smoothed forward passes with fd_check), nodes weighted."""
    _check_caps(params)
    macs, nodes = _sums(params.sizes, params.time_steps, params.batch_size)
    per_pass = macs + NODE_WEIGHT * nodes
    cost = 4 * per_pass
    if params.localzo is not None:
        zo = params.localzo
        cost += (3 + zo.draws) * per_pass + zo.draws * zo.samples * NORMAL_WEIGHT * nodes
    if params.fd_check:
        cost += 2 * n_params(params.sizes) * per_pass
    return cost


def _instance(params: GradientMismatchParams) -> tuple[np.ndarray, np.ndarray, np.ndarray, float | None, float | None]:
    """θ, X, Y per the draw order: w_scale, p, W^1..W^L, X, labels, each skipped when the caller supplies it."""
    sizes, t, b = params.sizes, params.time_steps, params.batch_size
    k = sizes[-1]
    rng = np.random.default_rng(params.seed)
    w_scale = params.w_scale if params.w_scale is not None else float(np.exp(rng.uniform(np.log(0.2), np.log(4))))
    p = params.p if params.p is not None else float(rng.uniform(0.1, 0.5))
    n_p = n_params(sizes)
    if params.theta is not None:
        theta = _as_array(params.theta, 1, ("theta",), n_p)
        if theta.size != n_p:
            raise InvalidInput(f"theta has {theta.size} values; sizes need P = {n_p}", loc=("theta",))
    else:
        parts: list[np.ndarray] = []
        for n_in, n_out in itertools.pairwise(sizes):
            parts += [(rng.standard_normal((n_out, n_in)) * w_scale / np.sqrt(n_in)).ravel(), np.zeros(n_out)]
        theta = np.concatenate(parts)
    if params.x is not None:
        x = _as_array(params.x, 3, ("x",), t * b * sizes[0])
        if x.shape != (t, b, sizes[0]):
            raise InvalidInput(f"x has shape {list(x.shape)}; expected {[t, b, sizes[0]]}", loc=("x",))
        if not np.isin(x, (0.0, 1.0)).all():
            raise InvalidInput("input spikes must be 0 or 1", loc=("x",))
    else:
        x = (rng.random((t, b, sizes[0])) < p).astype(np.float64)
    if params.y is not None and params.labels is not None:
        raise InvalidInput("give y or labels, not both", loc=("labels",))
    if params.y is not None:
        y = _as_array(params.y, 2, ("y",), b * k)
        if y.shape != (b, k):
            raise InvalidInput(f"y has shape {list(y.shape)}; expected {[b, k]}", loc=("y",))
    else:
        if params.labels is not None:
            labels = np.asarray(params.labels, dtype=np.int64)
            if labels.size != b:
                raise InvalidInput(f"{labels.size} labels for batch_size {b}", loc=("labels",))
            if labels.max() >= k:
                raise InvalidInput(f"labels must be < K = {k}", loc=("labels",))
        else:
            labels = rng.integers(0, k, size=b)
        y = np.eye(k)[labels]
    return (
        theta,
        x,
        y,
        w_scale if params.theta is None else None,
        p if params.x is None else None,
    )


def _norm(a: np.ndarray) -> float:
    return float(np.linalg.norm(a))


def _rel(num: float, den: float) -> float | None:
    return num / den if den >= TINY else None


def _cos(a: np.ndarray, b: np.ndarray) -> float | None:
    na, nb = _norm(a), _norm(b)
    return float(a @ b) / (na * nb) if na >= TINY and nb >= TINY else None


def _smoothed_gradient(
    x: np.ndarray, y: np.ndarray, weights: list[np.ndarray], biases: list[np.ndarray], lif: Lif, kind: Any, w: float
) -> tuple[Trajectory, np.ndarray]:
    """The smoothed trajectory and the exact ∇L_F (never detached)."""
    traj = forward(x, weights, biases, lif, lambda u: surrogate_cdf(kind, w, u))
    grad = flatten(adjoint(traj, y, weights, lif, lambda _, u: surrogate_grad(kind, w, u), detach_reset=False))
    return traj, grad


def _fd_gradient(
    theta: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    params: GradientMismatchParams,
    lif: Lif,
    w: float,
    progress: Progress,
) -> np.ndarray:
    """Central differences (L_F(θ + h e_i) − L_F(θ − h e_i))/(2h), replicas batched along a leading axis."""
    n_p = theta.size
    _, nodes = _sums(params.sizes, params.time_steps, params.batch_size)
    chunk = max(1, int(FD_CHUNK_NODES // nodes))
    out = np.empty(n_p)
    for start in range(0, n_p, chunk):
        idx = np.arange(start, min(n_p, start + chunk))
        plus = np.broadcast_to(theta, (idx.size, n_p)).copy()
        minus = plus.copy()
        plus[np.arange(idx.size), idx] += FD_STEP
        minus[np.arange(idx.size), idx] -= FD_STEP
        losses = []
        for th in (plus, minus):
            ws, bs = unflatten(th, params.sizes)
            traj = forward(x, ws, bs, lif, lambda u: surrogate_cdf(params.surrogate, w, u))
            losses.append(mse(traj.rate, y))
        out[idx] = (losses[0] - losses[1]) / (2 * FD_STEP)
        progress(0.8 + 0.2 * (idx[-1] + 1) / n_p, f"finite differences {idx[-1] + 1}/{n_p}")
    return out


def _blocks(sizes: list[int]) -> list[slice]:
    """θ slice of each layer's (W^l, b^l)."""
    ends = np.cumsum([0] + [o * (i + 1) for i, o in itertools.pairwise(sizes)])
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(ends)]


def _localzo(
    zo: LocalZoParams,
    hard: Trajectory,
    x: np.ndarray,
    y: np.ndarray,
    weights: list[np.ndarray],
    biases: list[np.ndarray],
    lif: Lif,
    detach: bool,
    progress: Progress,
) -> LocalZoResult:
    """R LocalZO draws on the hard trajectory against g_gauss(δ) and ∇L_gauss(δ)."""
    g_gauss = flatten(
        adjoint(hard, y, weights, lif, lambda _, u: surrogate_grad("gaussian", zo.delta, u), detach_reset=detach)
    )
    _, grad_gauss = _smoothed_gradient(x, y, weights, biases, lif, "gaussian", zo.delta)
    rng = np.random.default_rng(zo.zo_seed)
    u_layers = [v - lif.threshold for v in hard.v]
    chunk = max(1, ZO_CHUNK_VALUES // max(u.size for u in u_layers))
    draws = np.empty((zo.draws, g_gauss.size))
    for r in range(zo.draws):
        h = localzo_node_grad(rng, u_layers, zo.delta, zo.samples, chunk)
        draws[r] = flatten(adjoint(hard, y, weights, lif, lambda layer, _, h=h: h[layer], detach_reset=detach))
        progress(0.2 + 0.6 * (r + 1) / zo.draws, f"LocalZO draw {r + 1}/{zo.draws}")
    mean = draws.mean(axis=0)
    diff = mean - grad_gauss
    mean_norm = _norm(mean)
    spread = float(np.sqrt(np.mean(np.sum((draws - mean) ** 2, axis=1))))
    return LocalZoResult(
        delta=zo.delta,
        samples=zo.samples,
        draws=zo.draws,
        mc_rel_err=_rel(_norm(mean - g_gauss), _norm(g_gauss)),
        spread=_rel(spread, mean_norm),
        mismatch_abs=_norm(diff),
        mismatch_rel=_rel(_norm(diff), _norm(grad_gauss)),
        cosine=_cos(mean, grad_gauss),
    )


def gradient_mismatch(params: GradientMismatchParams, progress: Progress) -> GradientMismatchResult:
    """g_F (surrogate BPTT on the hard trajectory) against ∇L_F (exact gradient of the smoothed objective).

    Mismatch Δ = g_F − ∇L_F; gaps |L_F − L|, mean |r̃ − r|, mean |s̃ − s|; tail statistics of u = v − ϑ (hard).
    """
    _check_caps(params)
    kind = params.surrogate
    w = resolve_width(kind, params.width)
    lif = Lif(params.beta, params.threshold, params.reset)
    theta, x, y, w_scale, p = _instance(params)
    weights, biases = unflatten(theta, params.sizes)
    hard = forward(x, weights, biases, lif, hard_spike)
    smooth, grad_lf = _smoothed_gradient(x, y, weights, biases, lif, kind, w)
    g_f = flatten(
        adjoint(hard, y, weights, lif, lambda _, u: surrogate_grad(kind, w, u), detach_reset=params.detach_reset)
    )
    progress(0.2, "analysis")
    loss, loss_f = float(mse(hard.rate, y)), float(mse(smooth.rate, y))
    delta = g_f - grad_lf
    per_layer = []
    for i, block in enumerate(_blocks(params.sizes)):
        s_h, s_s = hard.s[i], smooth.s[i]
        per_layer.append(
            LayerMismatch(
                layer=i + 1,
                n_units=params.sizes[i + 1],
                spike_gap=float(np.mean(np.abs(s_s - s_h))),
                rate_gap=float(np.mean(np.abs(s_s.mean(axis=0) - s_h.mean(axis=0)))),
                norm_g_f=_norm(g_f[block]),
                norm_grad_lf=_norm(grad_lf[block]),
                mismatch_abs=_norm(delta[block]),
                mismatch_rel=_rel(_norm(delta[block]), _norm(grad_lf[block])),
                cosine=_cos(g_f[block], grad_lf[block]),
            )
        )
    n_nodes = sum(s.size for s in hard.s)
    zo = params.localzo
    zo_result = (
        _localzo(zo, hard, x, y, weights, biases, lif, params.detach_reset, progress) if zo is not None else None
    )
    fd = None
    if params.fd_check:
        progress(0.8, "finite differences")
        err = _fd_gradient(theta, x, y, params, lif, w, progress) - grad_lf
        fd = FdResult(n_coords=theta.size, rel_err=_rel(_norm(err), _norm(grad_lf)), max_abs=float(np.abs(err).max()))
    progress(1.0, "done")
    return GradientMismatchResult(
        loss=loss,
        loss_smoothed=loss_f,
        gap=abs(loss_f - loss),
        rate_gap=float(np.mean(np.abs(smooth.rate - hard.rate))),
        spike_gap=float(sum(np.abs(s_s - s_h).sum() for s_s, s_h in zip(smooth.s, hard.s, strict=True)) / n_nodes),
        norm_g_f=_norm(g_f),
        norm_grad_lf=_norm(grad_lf),
        mismatch_abs=_norm(delta),
        mismatch_rel=_rel(_norm(delta), _norm(grad_lf)),
        cosine=_cos(g_f, grad_lf),
        per_layer=per_layer,
        tail=tail_stats([v - lif.threshold for v in hard.v], params.eps, kind, w),
        n_params=theta.size,
        w_scale=w_scale,
        p=p,
        localzo=zo_result,
        fd=fd,
        reconstructed=MISMATCH_FIELDS,
    )


def gradient_mismatch_plot(result: GradientMismatchResult) -> Any:
    """Per-layer ‖g_F‖, ‖∇L_F‖ and ‖g_F − ∇L_F‖ as grouped bars."""
    from matplotlib.figure import Figure

    layers = np.array([row.layer for row in result.per_layer], dtype=float)
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    series = [
        ("‖g_F‖", [row.norm_g_f for row in result.per_layer]),
        ("‖∇L_F‖", [row.norm_grad_lf for row in result.per_layer]),
        ("‖g_F − ∇L_F‖", [row.mismatch_abs for row in result.per_layer]),
    ]
    for j, (label, heights) in enumerate(series):
        ax.bar(layers + (j - 1) * 0.27, heights, width=0.27, label=label)
    ax.set_xticks(layers)
    ax.set_xlabel("layer l")
    ax.set_ylabel("gradient norm on (W^l, b^l)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


COST_UNIT_TAIL = "elementwise operations: offsets × (number of ε + 4)"
COST_UNIT_MISMATCH = (
    "multiply-adds: per pass T·B·Σ n_l·n_(l−1) + 40·T·B·Σ n_l; 4 passes, + (3 + R) and R·M·20·T·B·Σ n_l with "
    "LocalZO, + 2P passes with fd_check"
)

SPECS = [
    register(
        EstimatorSpec(
            name="snn.threshold_tail",
            version="1",
            family="snn",
            summary="Threshold-tail statistics (band fraction and density, surrogate kernel tail) of pre-reset "
            "membrane traces, overall, per layer and per time step.",
            paper=PAPER,
            citation=CITATION,
            params_model=ThresholdTailParams,
            result_model=ThresholdTailResult,
            fn=threshold_tail,
            cost=threshold_tail_cost,
            cost_unit=COST_UNIT_TAIL,
            sync_budget=1e8,
            hard_cap=MAX_TRACE_VALUES * 40.0,
            plot=threshold_tail_plot,
            overlay=threshold_tail_curves,
        )
    ),
    register(
        EstimatorSpec(
            name="snn.gradient_mismatch",
            version="1",
            family="snn",
            summary="LIF network: surrogate-gradient and LocalZO directions against the exact gradient of the "
            "smoothed spike objective, consistency gaps and the threshold-tail statistics.",
            paper=PAPER,
            citation=CITATION,
            params_model=GradientMismatchParams,
            result_model=GradientMismatchResult,
            fn=gradient_mismatch,
            cost=gradient_mismatch_cost,
            cost_unit=COST_UNIT_MISMATCH,
            sync_budget=1.5e9,
            hard_cap=2e11,
            plot=gradient_mismatch_plot,
        )
    ),
]
