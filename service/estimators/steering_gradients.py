"""``steering.gradient_signature``: how training methods change the activation gradient relative to a trait axis.

After Grant et al., "Shifting the Gradient: Understanding How Defensive Training Methods Protect Language Model
Integrity" (arXiv 2604.16423), comparing preventative persona steering (PPS) with inoculation prompting (IP).
The paper's exact measures are not public; the axis pressure, cosines and diffuseness measures here are
reconstructions from its abstract. User documentation: docs/steering.md.
"""

import re
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.estimators.steering_metrics import (
    MAX_DIM,
    MAX_EXAMPLES,
    MAX_LAYERS,
    as_stack,
    check_stack,
    check_total,
    cosine,
    entropy_rank,
    gram_singular_values,
    nullable,
    participation_ratio,
    unit_rows,
)
from service.estimators.steering_persona import CITATION, PAPER, STACK_DOC, stack_param
from service.registry import EstimatorSpec, Progress, register
from service.types import FiniteFloat, ResultModel, StrictModel, array_param

MAX_METHODS = 8
METHOD_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
AxisRow = Annotated[list[FiniteFloat], Field(min_length=1, max_length=MAX_DIM)]
Losses = array_param(FiniteFloat, "float", max_length=MAX_EXAMPLES)
ELEMENT_WEIGHT = 200.0
"""Cost of one gradient element (casts, projections, norms, cosines), in multiply-add equivalents (measured)."""
EIG_WEIGHT = 1.25
"""Cost of the symmetric eigensolver per k³ of a k × k Gram matrix, in multiply-add equivalents (measured)."""
LAYER_WEIGHT = 1e6
"""Cost of one method × layer result entry (Python objects), in multiply-add equivalents (measured)."""
RECONSTRUCTED = [
    "pressure",
    "frac_attenuating",
    "rho",
    "rho_mean_gradient",
    "cos_change_axis",
    "spectral_pr",
    "effective_rank",
    "coordinate_pr",
    "coordinate_entropy_rank",
    "layer_energy_pr",
    "delta_ce",
    "cosines",
]


class GradientSignatureParams(StrictModel):
    """Parameters of ``steering.gradient_signature``."""

    grads: dict[str, stack_param()] = Field(  # type: ignore[valid-type]
        min_length=1,
        max_length=MAX_METHODS,
        description="Per method (name → array), per-example activation gradients g = ∂L/∂h (token-averaged) "
        "at every layer, e.g. {'base': …, 'pps': …, 'ip': …}; same L and d for all. " + STACK_DOC,
    )
    axis: array_param(AxisRow, "float", ndim=2, max_length=MAX_LAYERS) = Field(  # type: ignore[valid-type]
        description="Trait axis per layer, (L, d), or one row (1, d) shared by every layer; normalised here. "
        "Orient it so that trait-positive activations project positively (v = mean_pos − mean_neg, as "
        "steering.persona_vector returns)."
    )
    baseline: str = Field(max_length=64, description="The method the others are compared with (a key of grads).")
    losses: dict[str, Losses] | None = Field(  # type: ignore[valid-type]
        None,
        max_length=MAX_METHODS,
        description="Optional per-example cross-entropy per method (keys of grads) for ΔCE = mean CE(method) − "
        "mean CE(baseline).",
    )
    gradient_convention: Literal["loss_gradient", "descent_direction"] = Field(
        "loss_gradient",
        description="'loss_gradient' (default): grads are ∂L/∂h and the update moves along −g; "
        "'descent_direction': grads are already −∂L/∂h.",
    )


class LayerSignature(ResultModel):
    """One method at one layer."""

    layer: int = Field(description="0-based layer index ℓ.")
    pressure: float = Field(
        description="π_ℓ = −mean_i⟨g_i, v̂_ℓ⟩: the descent direction's component along the trait axis "
        "(> 0 amplifies the trait, < 0 attenuates it)."
    )
    frac_attenuating: float = Field(description="Share of examples with π_{ℓ,i} < 0.")
    rho: float | None = Field(
        description="mean_i ⟨g_i, v̂⟩²/‖g_i‖², energy fraction on the axis (1/d if isotropic); null if every g_i = 0."
    )
    rho_mean_gradient: float | None = Field(description="⟨ḡ, v̂⟩²/‖ḡ‖² of the mean gradient; null if ḡ = 0.")
    mean_gradient_norm: float = Field(description="‖ḡ_ℓ‖, ḡ the example-averaged gradient.")
    cos_change_axis: float | None = Field(
        description="cos(ḡ − ḡ_baseline, v̂): does the change lie along the axis? Null for the baseline or a "
        "zero change."
    )
    spectral_pr: float | None = Field(
        description="(Σσ²)²/Σσ⁴ of the n × d per-example gradient matrix, in [1, min(n, d)] (basis-free); "
        "null if G = 0."
    )
    spectral_pr_normalized: float | None = Field(description="spectral_pr / min(n, d).")
    effective_rank: float | None = Field(description="Roy–Vetterli exp H(σ/Σσ); null if G = 0.")
    coordinate_pr: float | None = Field(
        description="(Σ ḡ_i²)²/Σ ḡ_i⁴ over coordinates of ḡ (basis-dependent; d/3 for Gaussian); null if ḡ = 0."
    )
    coordinate_entropy_rank: float | None = Field(
        description="exp(entropy of ḡ_i²/‖ḡ‖²) (basis-dependent; ≈ 0.482·d for Gaussian); null if ḡ = 0."
    )


class MethodSignature(ResultModel):
    """One method across layers."""

    method: str = Field(description="Key of grads.")
    n: int = Field(description="Examples.")
    layers: list[LayerSignature] = Field(description="One entry per layer.")
    layer_energy_pr: float | None = Field(
        description="(Σ e_ℓ)²/Σ e_ℓ² with e_ℓ = ‖ḡ_ℓ‖², in [1, L]; null if every ḡ_ℓ = 0."
    )
    mean_ce: float | None = Field(description="Mean of losses[method]; null if not given.")
    delta_ce: float | None = Field(
        description="mean_ce − baseline mean_ce (< 0: the method explains the trait data away); null if either "
        "is missing."
    )


class LayerCosines(ResultModel):
    """Method × method gradient cosines at one layer (rows and columns in ``methods`` order)."""

    layer: int = Field(description="0-based layer index.")
    mean_gradient: list[list[float | None]] = Field(
        description="cos(ḡ^A, ḡ^B) of the example-averaged gradients; null where a mean gradient is 0."
    )
    per_example: list[list[float | None]] = Field(
        description="mean_i cos(g^A_i, g^B_i) over examples where both are non-zero (needs equal n, examples "
        "in the same order); null otherwise."
    )


class GradientSignatureResult(ResultModel):
    """Gradient signatures per method and layer."""

    methods: list[str] = Field(description="Method order of every list and matrix.")
    baseline: str = Field(description="The baseline method.")
    num_layers: int = Field(description="L.")
    dim: int = Field(description="d.")
    pressure_convention: str = Field(description="How π's sign reads.")
    signatures: list[MethodSignature] = Field(description="One entry per method.")
    cosines: list[LayerCosines] = Field(description="One entry per layer.")
    reconstructed: list[str] = Field(description="Fields resting on reconstructed definitions.")


def axis_units(params: GradientSignatureParams, layers: int, dim: int) -> np.ndarray:
    """v̂_ℓ, (L, d): the axis rows normalised (one row broadcast to every layer); 422 on shape or zero rows."""
    axis = as_stack(params.axis, ("axis",), ndim=2)
    if axis.shape[1] != dim or axis.shape[0] not in (1, layers):
        raise InvalidInput(f"axis has shape {list(axis.shape)}; expected ({layers}, {dim}) or (1, {dim})", ("axis",))
    unit, norms = unit_rows(np.broadcast_to(axis, (layers, dim)))
    if (norms == 0).any():
        raise InvalidInput("the axis is zero at this layer", loc=("axis", int(np.flatnonzero(norms == 0)[0])))
    return unit


def method_losses(params: GradientSignatureParams, sizes: dict[str, int]) -> dict[str, float]:
    """Mean CE per method that has losses (length n each)."""
    out: dict[str, float] = {}
    for name, value in (params.losses or {}).items():
        if name not in sizes:
            raise InvalidInput(f"{name!r} is not a key of grads", loc=("losses", name))
        ce = as_stack(value, ("losses", name), ndim=1)
        if ce.size != sizes[name]:
            raise InvalidInput(f"{ce.size} losses for {sizes[name]} examples", loc=("losses", name))
        out[name] = float(ce.mean())
    return out


def layer_signatures(g: np.ndarray, unit: np.ndarray, sign: float) -> dict[str, np.ndarray]:
    """Per-layer measures of one method's (n, L, d) gradients against the unit axes (L, d)."""
    n, _, dim = g.shape
    proj = np.einsum("nld,ld->nl", g, unit)
    norms2 = np.einsum("nld,nld->nl", g, g)
    mean = g.mean(axis=0)
    mean_norm2 = (mean**2).sum(axis=1)
    mean_proj = (mean * unit).sum(axis=1)
    nonzero = norms2 > 0
    count = nonzero.sum(axis=0)
    rho_sum = np.where(nonzero, proj**2 / np.where(nonzero, norms2, 1.0), 0.0).sum(axis=0)
    rho = np.where(count > 0, rho_sum / np.maximum(count, 1), np.nan)
    sigma = gram_singular_values(np.swapaxes(g, 0, 1))
    pr = participation_ratio(sigma**2)
    return {
        "pressure": -sign * proj.mean(axis=0),
        "frac_attenuating": (-sign * proj < 0).mean(axis=0),
        "rho": rho,
        "rho_mean_gradient": np.where(mean_norm2 > 0, mean_proj**2 / np.where(mean_norm2 > 0, mean_norm2, 1.0), np.nan),
        "mean_gradient_norm": np.sqrt(mean_norm2),
        "spectral_pr": pr,
        "spectral_pr_normalized": pr / min(n, dim),
        "effective_rank": entropy_rank(sigma),
        "coordinate_pr": participation_ratio(mean**2),
        "coordinate_entropy_rank": entropy_rank(mean**2),
    }


def per_example_cosines(stacks: list[np.ndarray]) -> np.ndarray:
    """(M, M, L): mean over examples of cos(g^A_i, g^B_i), over the examples where both are non-zero; NaN where
    the methods' n differ or no example qualifies. One pass per method for the norms and per pair for the dots."""
    count, layers = len(stacks), stacks[0].shape[1]
    norms = [np.sqrt(np.einsum("nld,nld->nl", g, g)) for g in stacks]
    out = np.full((count, count, layers), np.nan)
    for a in range(count):
        for b in range(a, count):
            if stacks[a].shape[0] != stacks[b].shape[0]:
                continue
            ok = (norms[a] > 0) & (norms[b] > 0)
            dots = norms[a] ** 2 if a == b else np.einsum("nld,nld->nl", stacks[a], stacks[b])
            per = np.clip(np.where(ok, dots / np.where(ok, norms[a] * norms[b], 1.0), 0.0), -1.0, 1.0)
            used = ok.sum(axis=0)
            out[a, b] = out[b, a] = np.where(used > 0, per.sum(axis=0) / np.maximum(used, 1), np.nan)
    return out


def gradient_signature(params: GradientSignatureParams, progress: Progress) -> GradientSignatureResult:
    """Axis pressure, energy fractions, cosines and spectral / coordinate / layer diffuseness per method × layer."""
    names = list(params.grads)
    for name in names:
        if not METHOD_NAME.match(name):
            raise InvalidInput("method names are 1-64 characters of A-Z a-z 0-9 _ . -", loc=("grads", name))
    if params.baseline not in params.grads:
        raise InvalidInput(f"baseline {params.baseline!r} is not a key of grads", loc=("baseline",))
    grads = {name: as_stack(params.grads[name], ("grads", name)) for name in names}
    for name, g in grads.items():
        check_stack(g, ("grads", name))
    shape = grads[params.baseline].shape[1:]
    for name, g in grads.items():
        if g.shape[1:] != shape:
            raise InvalidInput(f"(L, d) = {g.shape[1:]} differs from the baseline's {shape}", loc=("grads", name))
    check_total(sum(g.size for g in grads.values()), ("grads",))
    layers, dim = shape
    unit = axis_units(params, layers, dim)
    ce = method_losses(params, {name: g.shape[0] for name, g in grads.items()})
    sign = 1.0 if params.gradient_convention == "loss_gradient" else -1.0
    means = {name: g.mean(axis=0) for name, g in grads.items()}
    signatures: list[MethodSignature] = []
    for k, name in enumerate(names):
        progress(k / (len(names) + 1), f"method {name}")
        stats = layer_signatures(grads[name], unit, sign)
        change = means[name] - means[params.baseline]
        stats["cos_change_axis"] = np.full(layers, np.nan) if name == params.baseline else cosine(change, unit)
        rows = {key: nullable(value) for key, value in stats.items()}
        signatures.append(
            MethodSignature(
                method=name,
                n=grads[name].shape[0],
                layers=[LayerSignature(layer=ell, **{key: rows[key][ell] for key in rows}) for ell in range(layers)],
                layer_energy_pr=nullable(participation_ratio((means[name] ** 2).sum(axis=1))),
                mean_ce=ce.get(name),
                delta_ce=ce[name] - ce[params.baseline] if name in ce and params.baseline in ce else None,
            )
        )
    progress(len(names) / (len(names) + 1), "cosines")
    mean_stack = np.stack([means[name] for name in names])
    cos_mean = cosine(mean_stack[:, None], mean_stack[None, :])
    cos_example = per_example_cosines([grads[name] for name in names])
    cosines = [
        LayerCosines(
            layer=ell, mean_gradient=nullable(cos_mean[:, :, ell]), per_example=nullable(cos_example[:, :, ell])
        )
        for ell in range(layers)
    ]
    return GradientSignatureResult(
        methods=names,
        baseline=params.baseline,
        num_layers=layers,
        dim=dim,
        pressure_convention="π = −mean⟨∂L/∂h, v̂⟩ (descent direction along the axis): > 0 amplifies the trait, "
        "< 0 attenuates it",
        signatures=signatures,
        cosines=cosines,
        reconstructed=RECONSTRUCTED,
    )


def stack_shape(value: Any) -> tuple[int, int, int]:
    """(n, L, d) of a nested list or array without copying it ((0, 0, 0) when empty)."""
    if isinstance(value, np.ndarray):
        return tuple(value.shape) if value.ndim == 3 else (0, 0, 0)
    if not value or not value[0]:
        return (0, 0, 0)
    return (len(value), len(value[0]), len(value[0][0]))


def signature_cost(params: GradientSignatureParams) -> float:
    """Multiply-add equivalents per method: 200·n·L·d (element passes) + n·L·d·k/2 (Gram, k = min(n, d)) +
    1.25·L·k³ (eigenvalues) + 10⁶·L (per-layer results); about 5·10⁹ per second on one core."""
    total = 0.0
    for value in params.grads.values():
        n, layers, dim = stack_shape(value)
        k = min(n, dim)
        total += ELEMENT_WEIGHT * n * layers * dim + n * layers * dim * k / 2 + EIG_WEIGHT * layers * k**3
        total += LAYER_WEIGHT * layers
    return total


def plot_signature(result: GradientSignatureResult) -> Any:
    """Axis pressure π_ℓ and spectral participation ratio against the layer, one line per method."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 6))
    ax_p, ax_pr = fig.subplots(2, 1, sharex=True)
    for sig in result.signatures:
        x = [s.layer for s in sig.layers]
        ax_p.plot(x, [s.pressure for s in sig.layers], "o-", label=sig.method)
        ax_pr.plot(x, [np.nan if s.spectral_pr is None else s.spectral_pr for s in sig.layers], "o-", label=sig.method)
    ax_p.axhline(0.0, color="grey", linewidth=0.8)
    ax_p.set_ylabel("axis pressure π (> 0 amplifies)")
    ax_p.set_title("Gradient signature per layer")
    ax_p.legend()
    ax_pr.set_ylabel("spectral participation ratio")
    ax_pr.set_xlabel("layer ℓ")
    return fig


SPEC = register(
    EstimatorSpec(
        name="steering.gradient_signature",
        version="1",
        family="steering",
        summary="Trait-axis pressure, energy fraction, gradient cosines between methods and spectral, coordinate "
        "and layer diffuseness of per-example activation gradients (e.g. base vs PPS vs inoculation prompting).",
        paper=PAPER,
        citation=CITATION,
        params_model=GradientSignatureParams,
        result_model=GradientSignatureResult,
        fn=gradient_signature,
        cost=signature_cost,
        cost_unit="multiply-add equivalents: per method 200·n·L·d + n·L·d·min(n, d)/2 + 1.25·L·min(n, d)³ + 10⁶·L "
        "(≈ 5·10⁹ per second with single-threaded BLAS)",
        sync_budget=2.5e9,
        hard_cap=1e12,
        plot=plot_signature,
    )
)
