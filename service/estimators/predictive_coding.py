"""Target alignment of backpropagation and predictive coding updates in deep linear networks.

Estimator ``predictive_coding.target_alignment``: for a deep linear network a_l = W_l a_{l−1} and one batch, the
cosine between the output change of one weight update and the output error e = y − a_L, for BP and for PC (exact
or iterative inference equilibrium), at a finite learning rate and to first order, averaged over independent draws
of weights and data. All draws of a chunk are processed together as batched matrix products. User documentation:
docs/predictive_coding.md.
"""

import itertools
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import Degenerate, InvalidInput
from service.registry import EstimatorSpec, Progress, register
from service.types import FiniteFloat, ResultModel, Seed, StrictModel, array_param

PAPER = "Understanding Sample Efficiency in Predictive Coding"
CITATION = (
    "Oliviers, Lominadze & Bogacz, 'Understanding Sample Efficiency in Predictive Coding', arXiv:2605.11911 "
    "(NeurIPS 2026)"
)
MAX_LAYERS = 16
MAX_WIDTH = 1024
MAX_PARAMS = 5_000_000
MAX_DRAWS = 10_000
CHUNK_VALUES = 2_000_000
"""Draws per chunk: weights plus activations of a chunk stay below this many float64 values."""
TINY = 1e-300
SOLVE_WEIGHT = 4.0
"""An (exact) equilibrium solve of a d_out×d_out system per draw, in multiply-adds per d_out³."""
NORMAL_WEIGHT = 60.0
"""One normal draw, in multiply-adds (measured)."""
LAYER_OVERHEAD = 30_000.0
"""Per layer and draw: the batched products of small matrices, in multiply-adds (measured)."""

Update = tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]
"""(η per layer and draw, left factors, right factors): ΔW_l = η_l·left_l·right_lᵀ/B."""
Width = Annotated[int, Field(strict=True, ge=1, le=MAX_WIDTH)]
Row = Annotated[list[FiniteFloat], Field(min_length=1, max_length=MAX_WIDTH)]


class IterativeInference(StrictModel):
    """Gradient descent on the energy: x_l ← x_l − γ(ε_l − W_{l+1}ᵀε_{l+1}), from the feedforward values."""

    steps: int = Field(ge=1, le=5000, description="Inference steps T (at most 5000).")
    gamma: Annotated[float, Field(strict=True, gt=0, le=1, allow_inf_nan=False)] = Field(
        description="Inference rate γ ∈ (0, 1]."
    )


class TargetAlignmentParams(StrictModel):
    """Parameters of ``predictive_coding.target_alignment``."""

    dims: list[Width] | None = Field(
        None,
        min_length=2,
        max_length=MAX_LAYERS + 1,
        description="[d_in, widths…, d_out] (2..17 entries: 1..16 layers); weights drawn per draw. Give dims or "
        "weights.",
    )
    weights: list[array_param(Row, "float", ndim=2, max_length=MAX_WIDTH)] | None = Field(  # type: ignore[valid-type]
        None,
        min_length=1,
        max_length=MAX_LAYERS,
        description="Explicit W_1..W_L (W_l is n_l×n_{l−1}: rows as JSON lists, or an uploaded npy reference); the "
        "same weights in every draw, only the data are redrawn.",
    )
    init_scale: Annotated[float, Field(strict=True, gt=0, le=100, allow_inf_nan=False)] = Field(
        1.0, description="W_l ~ N(0, init_scale²/fan_in) (default 1)."
    )
    batch: int = Field(1, ge=1, le=1024, description="Batch size B; x and y ~ N(0, 1) per draw (default 1).")
    lr: Annotated[float, Field(strict=True, gt=0, le=1e3, allow_inf_nan=False)] = Field(
        1e-3, description="Learning rate η for every layer, or the numerator of the optimal-rate rule (default 1e-3)."
    )
    pc_inference: Literal["exact"] | IterativeInference = Field(
        "exact", description="'exact' equilibrium (default) or {steps, gamma} iterative inference."
    )
    optimal_pc_lr: bool = Field(
        False,
        description="PC: η_l = lr/(x_{l−1}ᵀa_{l−1}) per draw (batch: mean over rows), which gives first-order "
        "TA_PC = 1 for B = 1; BP then uses the same normalisation η_l = lr/(a_{l−1}ᵀa_{l−1}). Default false: η_l = lr.",
    )
    seed: Seed = 0
    n_draws: int = Field(1, ge=1, le=MAX_DRAWS, description="Independent draws of weights and data (default 1).")


class DrawAlignment(ResultModel):
    """Target alignments of one draw (null when e = 0 or the optimal-rate rule is undefined)."""

    ta_bp: float | None = Field(description="Finite-lr TA of the BP update.")
    ta_pc: float | None = Field(description="Finite-lr TA of the PC update.")
    ta_bp_first_order: float | None = Field(description="First-order TA of BP.")
    ta_pc_first_order: float | None = Field(description="First-order TA of PC.")


class TargetAlignmentResult(ResultModel):
    """Target alignment TA = cos(vec Δŷ, vec e) of BP and PC, means over the included draws."""

    ta_bp: float = Field(description="Mean finite-lr TA of BP.")
    ta_pc: float = Field(description="Mean finite-lr TA of PC.")
    ta_bp_first_order: float = Field(description="Mean first-order TA of BP: Δŷ = Σ_l U_l ΔW_l a_{l−1}.")
    ta_pc_first_order: float = Field(description="Mean first-order TA of PC.")
    pc_minus_bp: float = Field(description="ta_pc − ta_bp (finite lr).")
    pc_minus_bp_se: float | None = Field(description="Standard error of the mean paired difference; null if < 2 draws.")
    per_draw: list[DrawAlignment] = Field(description="The four values per draw (first 1,000 draws).")
    n_draws: int = Field(description="Draws made.")
    n_excluded: int = Field(description="Draws left out of the means (e = 0, or x_{l−1}ᵀa_{l−1} ≤ 0 with the rule).")
    equilibrium_residual: float = Field(
        description="Largest ‖∂F/∂x‖ (Frobenius over hidden units and batch) at the PC equilibrium used, over draws."
    )
    loss_before: float = Field(description="Mean over the included draws of ‖Y − f(X)‖²/(2B).")
    loss_after_bp: float = Field(description="The same after the BP update.")
    loss_after_pc: float = Field(description="The same after the PC update.")
    lr_rule: str = Field(description="Learning-rate rule used for each algorithm.")
    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED definition.")


def _dims(params: TargetAlignmentParams) -> list[int]:
    if (params.dims is None) == (params.weights is None):
        raise InvalidInput("give exactly one of dims and weights", loc=("dims",))
    if params.dims is not None:
        return list(params.dims)
    dims: list[int] = []
    for i, w in enumerate(params.weights):
        loc = ("weights", i)
        if isinstance(w, np.ndarray):
            rows, cols = w.shape
        else:
            rows, widths = len(w), {len(r) for r in w}
            if len(widths) != 1:
                raise InvalidInput(f"W_{i + 1} is ragged: every row needs the same length", loc=loc)
            cols = widths.pop()
        if dims and cols != dims[-1]:
            raise InvalidInput(f"W_{i + 1} must have {dims[-1]} columns (the previous layer's width)", loc=loc)
        if rows > MAX_WIDTH or cols > MAX_WIDTH:
            raise InvalidInput(f"W_{i + 1} is {rows}×{cols}; widths are at most {MAX_WIDTH}", loc=loc)
        dims = dims or [cols]
        dims.append(rows)
    return dims


def _n_weights(dims: list[int]) -> int:
    """Σ_l n_l·n_{l−1}."""
    return sum(a * b for a, b in itertools.pairwise(dims))


def _check(params: TargetAlignmentParams) -> list[int]:
    dims = _dims(params)
    n_params = _n_weights(dims)
    if n_params > MAX_PARAMS:
        raise InvalidInput(f"{n_params} weights exceed {MAX_PARAMS}", loc=("dims",))
    return dims


def target_alignment_cost(params: TargetAlignmentParams) -> float:
    """Per draw: 60 per drawn weight, B·Σ n_l n_{l−1}·(6 + 2T) multiply-adds, 3e4 per layer (batched small-matrix
    overhead) and 4·d_out³ for the exact solve; summed over draws."""
    dims = _check(params)
    macs = _n_weights(dims)
    steps = 0 if params.pc_inference == "exact" else params.pc_inference.steps
    drawn = macs if params.weights is None else 0
    per_draw = (
        NORMAL_WEIGHT * (drawn + params.batch * (dims[0] + dims[-1]))
        + params.batch * macs * (6 + 2 * steps)
        + LAYER_OVERHEAD * (len(dims) - 1)
        + SOLVE_WEIGHT * dims[-1] ** 3
    )
    return float(params.n_draws * per_draw)


def _forward(weights: list[np.ndarray], x: np.ndarray) -> list[np.ndarray]:
    acts = [x]
    for w in weights:
        acts.append(w @ acts[-1])
    return acts


def _inner(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-draw Frobenius inner product over the last two axes."""
    return np.einsum("cij,cij->c", a, b)


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    den = np.sqrt(_inner(a, a) * _inner(b, b))
    return _inner(a, b) / np.maximum(den, TINY)


def _equilibrium(
    weights: list[np.ndarray], acts: list[np.ndarray], y: np.ndarray, inference: Any
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """PC equilibrium activities x_0..x_L, errors ε_1..ε_L and the residual ‖∂F/∂x‖ per draw.

    Exact: ε_L = S⁻¹e, ε_l = U_lᵀε_L with U_l = W_L⋯W_{l+1}, S = Σ_l U_lU_lᵀ; x_l = W_l x_{l−1} + ε_l.
    Iterative: x_l ← x_l − γ(ε_l − W_{l+1}ᵀε_{l+1}) for l < L, T times from x_l = a_l, with x_L = y clamped.
    """
    n_layers = len(weights)
    if inference == "exact":
        d_out = y.shape[1]
        us = [np.broadcast_to(np.eye(d_out), (y.shape[0], d_out, d_out))]
        for w in weights[:0:-1]:
            us.append(us[-1] @ w)
        us = us[::-1]
        s = sum(u @ np.swapaxes(u, 1, 2) for u in us)
        eps_top = np.linalg.solve(s, y - acts[-1])
        errors = [np.swapaxes(u, 1, 2) @ eps_top for u in us]
        xs = [acts[0]]
        for w, err in zip(weights[:-1], errors[:-1], strict=True):
            xs.append(w @ xs[-1] + err)
        xs.append(y)
    else:
        xs = [*acts[:-1], y]
        for _ in range(inference.steps):
            errors = [xs[i + 1] - weights[i] @ xs[i] for i in range(n_layers)]
            for i in range(1, n_layers):
                xs[i] = xs[i] - inference.gamma * (errors[i - 1] - np.swapaxes(weights[i], 1, 2) @ errors[i])
    errors = [xs[i + 1] - weights[i] @ xs[i] for i in range(n_layers)]
    grads = [errors[i - 1] - np.swapaxes(weights[i], 1, 2) @ errors[i] for i in range(1, n_layers)]
    residual = np.sqrt(sum(_inner(g, g) for g in grads)) if grads else np.zeros(y.shape[0])
    return xs, errors, residual


def _chunk(params: TargetAlignmentParams, dims: list[int], rng: np.random.Generator, count: int) -> dict[str, Any]:
    """TA, losses and residuals for ``count`` draws: W_1..W_L (unless given), then X, then Y, each for the chunk."""
    b, n_layers = params.batch, len(dims) - 1
    if params.weights is not None:
        given = [np.asarray(w, dtype=np.float64) for w in params.weights]
        weights = [np.broadcast_to(w, (count, *w.shape)) for w in given]
    else:
        weights = [
            rng.standard_normal((count, o, i)) * (params.init_scale / np.sqrt(i)) for i, o in itertools.pairwise(dims)
        ]
    x = rng.standard_normal((count, dims[0], b))
    y = rng.standard_normal((count, dims[-1], b))
    acts = _forward(weights, x)
    err = y - acts[-1]
    xs, pc_err, residual = _equilibrium(weights, acts, y, params.pc_inference)
    deltas = [err]
    for w in weights[:0:-1]:
        deltas.append(np.swapaxes(w, 1, 2) @ deltas[-1])
    deltas = deltas[::-1]
    if params.optimal_pc_lr:
        pc_norm = np.stack([_inner(xs[i], acts[i]) / b for i in range(n_layers)])
        bp_norm = np.stack([_inner(acts[i], acts[i]) / b for i in range(n_layers)])
        valid = (pc_norm > 0).all(axis=0)
        pc_lr = params.lr / np.where(pc_norm > 0, pc_norm, 1.0)
        bp_lr = params.lr / np.maximum(bp_norm, TINY)
    else:
        valid = np.ones(count, dtype=bool)
        pc_lr = bp_lr = np.full((n_layers, count), params.lr)
    bp_update = (bp_lr, deltas, acts)
    pc_update = (pc_lr, pc_err, xs)
    us: list[np.ndarray | None] = [None] * n_layers
    top: np.ndarray | None = None
    for i in range(n_layers - 1, -1, -1):
        us[i] = top
        top = weights[i] if top is None else top @ weights[i]

    def step(update: Update, i: int, z: np.ndarray) -> np.ndarray:
        """ΔW_l z with ΔW_l = η_l·left_l·right_lᵀ/B in the cheaper order: left·(rightᵀz) costs B²(n_l + n_{l−1})
        multiply-adds, (left·rightᵀ)·z costs 2B·n_l·n_{l−1} (the rank-B update is not formed unless B is larger)."""
        lr, left, right = update
        n_out, n_in = left[i].shape[1], right[i].shape[1]
        if 2 * n_out * n_in < b * (n_out + n_in):
            change = (left[i] @ np.swapaxes(right[i], 1, 2)) @ z
        else:
            change = left[i] @ (np.swapaxes(right[i], 1, 2) @ z)
        return lr[i][:, None, None] / b * change

    def first_order(update: Update) -> np.ndarray:
        total = np.zeros_like(err)
        for i in range(n_layers):
            change = step(update, i, acts[i])
            total += change if us[i] is None else us[i] @ change
        return total

    def after(update: Update) -> np.ndarray:
        z = x
        for i, w in enumerate(weights):
            z = w @ z + step(update, i, z)
        return z

    out_bp, out_pc = after(bp_update), after(pc_update)
    valid &= _inner(err, err) > 0
    return {
        "ta": np.stack(
            [
                _cosine(out_bp - acts[-1], err),
                _cosine(out_pc - acts[-1], err),
                _cosine(first_order(bp_update), err),
                _cosine(first_order(pc_update), err),
            ]
        ),
        "valid": valid,
        "residual": residual,
        "loss": np.stack([_inner(err, err), _inner(y - out_bp, y - out_bp), _inner(y - out_pc, y - out_pc)]) / (2 * b),
    }


def target_alignment(params: TargetAlignmentParams, progress: Progress) -> TargetAlignmentResult:
    """TA = cos(vec Δŷ, vec e) for ΔW_l^BP = η_l δ_l a_{l−1}ᵀ/B and ΔW_l^PC = η_l ε_l x_{l−1}ᵀ/B (PC equilibrium)."""
    dims = _check(params)
    rng = np.random.default_rng(params.seed)
    per_draw_values = _n_weights(dims) + 4 * params.batch * sum(dims)
    chunk = max(1, CHUNK_VALUES // per_draw_values)
    parts: list[dict[str, Any]] = []
    done = 0
    while done < params.n_draws:
        count = min(chunk, params.n_draws - done)
        parts.append(_chunk(params, dims, rng, count))
        done += count
        progress(done / params.n_draws, f"{done}/{params.n_draws} draws")
    ta = np.concatenate([p["ta"] for p in parts], axis=1)
    valid = np.concatenate([p["valid"] for p in parts])
    loss = np.concatenate([p["loss"] for p in parts], axis=1)
    residual = np.concatenate([p["residual"] for p in parts])
    if not valid.any():
        raise Degenerate("target alignment is undefined for every draw (zero error or x·a ≤ 0)", loc=("n_draws",))
    kept = ta[:, valid]
    means = kept.mean(axis=1)
    losses = loss[:, valid].mean(axis=1)
    diff = kept[1] - kept[0]
    per_draw = [
        DrawAlignment(**dict(zip(DrawAlignment.model_fields, map(float, ta[:, i]), strict=True)))
        if valid[i]
        else DrawAlignment(ta_bp=None, ta_pc=None, ta_bp_first_order=None, ta_pc_first_order=None)
        for i in range(min(1000, params.n_draws))
    ]
    rule = (
        "PC: η_l = lr/(x_{l−1}ᵀa_{l−1}); BP: η_l = lr/(a_{l−1}ᵀa_{l−1}) (means over the batch)"
        if params.optimal_pc_lr
        else "η_l = lr for every layer, BP and PC"
    )
    return TargetAlignmentResult(
        ta_bp=float(means[0]),
        ta_pc=float(means[1]),
        ta_bp_first_order=float(means[2]),
        ta_pc_first_order=float(means[3]),
        pc_minus_bp=float(diff.mean()),
        pc_minus_bp_se=float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else None,
        per_draw=per_draw,
        n_draws=params.n_draws,
        n_excluded=int((~valid).sum()),
        equilibrium_residual=float(residual.max()),
        loss_before=float(losses[0]),
        loss_after_bp=float(losses[1]),
        loss_after_pc=float(losses[2]),
        lr_rule=rule,
        reconstructed=[
            "ta_pc",
            "ta_pc_first_order",
            "pc_minus_bp",
            "pc_minus_bp_se",
            "per_draw",
            "equilibrium_residual",
            "loss_after_pc",
        ],
    )


def target_alignment_plot(result: TargetAlignmentResult) -> Any:
    """Per-draw first-order TA of PC against BP, with the diagonal."""
    from matplotlib.figure import Figure

    kept = [d for d in result.per_draw if d.ta_bp is not None]
    fig = Figure(figsize=(5, 5))
    ax = fig.add_subplot()
    ax.plot([d.ta_bp_first_order for d in kept], [d.ta_pc_first_order for d in kept], "o", ms=3, label="draws")
    ax.plot([-1, 1], [-1, 1], "k:", label="TA_PC = TA_BP")
    ax.set_xlabel("TA_BP (first order)")
    ax.set_ylabel("TA_PC (first order)")
    ax.set_title(f"means: BP {result.ta_bp_first_order:.3f}, PC {result.ta_pc_first_order:.3f}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


SPEC = register(
    EstimatorSpec(
        name="predictive_coding.target_alignment",
        version="1",
        family="predictive_coding",
        summary="Target alignment (cosine of the output change of one update with the output error) of "
        "backpropagation and predictive coding in deep linear networks, finite-lr and first order, over draws.",
        paper=PAPER,
        citation=CITATION,
        params_model=TargetAlignmentParams,
        result_model=TargetAlignmentResult,
        fn=target_alignment,
        cost=target_alignment_cost,
        cost_unit="multiply-adds (normal draws weighted 60, small-matrix overhead 3e4 per layer), summed over draws",
        sync_budget=1e9,
        hard_cap=1e12,
        plot=target_alignment_plot,
    )
)
SPECS = [SPEC]
