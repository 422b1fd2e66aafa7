"""``steering.persona_vector``: per-layer difference-of-means trait vectors, their separability AUC and projections.

Persona vectors after Chen, Arditi, Sleight, Evans & Lindsey, "Persona Vectors: Monitoring and Controlling
Character Traits in Language Models" (arXiv 2507.21509), as used by Grant et al., "Shifting the Gradient:
Understanding How Defensive Training Methods Protect Language Model Integrity" (arXiv 2604.16423).
User documentation: docs/steering.md.
"""

from typing import Annotated, Any

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.estimators.steering_metrics import (
    MAX_DIM,
    MAX_LAYERS,
    as_stack,
    auc_by_column,
    check_stack,
    check_total,
    nullable,
    unit_rows,
)
from service.plot_overlay import Curve, Curves
from service.registry import EstimatorSpec, Progress, register
from service.types import FiniteFloat, ResultModel, StrictModel, array_param

PAPER = "Shifting the Gradient: Understanding How Defensive Training Methods Protect Language Model Integrity"
CITATION = (
    "Grant et al., Shifting the Gradient: Understanding How Defensive Training Methods Protect Language Model "
    "Integrity, arXiv 2604.16423 (2026); Chen, Arditi, Sleight, Evans & Lindsey, Persona Vectors: Monitoring and "
    "Controlling Character Traits in Language Models, arXiv 2507.21509 (2025)."
)
Row = Annotated[list[FiniteFloat], Field(min_length=1, max_length=MAX_DIM)]
LayerRows = Annotated[list[Row], Field(min_length=1, max_length=MAX_LAYERS)]
JSON_MAX_EXAMPLES = 256
"""Outer length of a stack sent as a JSON list (a request body holds at most 8 MB anyway); uploads allow 4096."""
STACK_DOC = (
    "Array (n, L, d): n examples × L layers × d (n ≤ 4096, L ≤ 128, d ≤ 16384; n·L·d over all arrays ≤ 2·10⁷). "
    'An uploaded {"array": "sha256:…"} (float16/32/64, read as float64) or a nested JSON list (n ≤ 256).'
)


def stack_param() -> Any:
    return array_param(LayerRows, "float", ndim=3, max_length=JSON_MAX_EXAMPLES)


class PersonaVectorParams(StrictModel):
    """Parameters of ``steering.persona_vector``."""

    pos: stack_param() = Field(description="Trait-positive examples. " + STACK_DOC)  # type: ignore[valid-type]
    neg: stack_param() = Field(description="Trait-negative examples, same L and d. " + STACK_DOC)  # type: ignore[valid-type]
    query: stack_param() | None = Field(  # type: ignore[valid-type]
        None, description="Optional activations to project on v̂_ℓ, same L and d. " + STACK_DOC
    )
    return_vectors: bool = Field(True, description="Include v (raw) and v̂ (unit) per layer in the result.")


class LayerSeparation(ResultModel):
    """The trait vector of one layer and how well it separates pos from neg."""

    layer: int = Field(description="0-based layer index ℓ.")
    norm: float = Field(description="‖v_ℓ‖ (hidden-state scales differ by orders of magnitude across layers).")
    auc: float | None = Field(description="P(pos·v̂ > neg·v̂) + ½P(tie), in sample; null if v_ℓ = 0.")
    pos_mean_projection: float | None = Field(description="mean over pos of a·v̂_ℓ; null if v_ℓ = 0.")
    neg_mean_projection: float | None = Field(description="mean over neg of a·v̂_ℓ; null if v_ℓ = 0.")
    separation: float | None = Field(
        description="(pos mean − neg mean projection) / pooled sd (Cohen's d); null if v_ℓ = 0 or the sd is 0."
    )


class PersonaVectorResult(ResultModel):
    """Per-layer persona vectors v_ℓ = mean(pos) − mean(neg)."""

    n_pos: int = Field(description="Trait-positive examples.")
    n_neg: int = Field(description="Trait-negative examples.")
    num_layers: int = Field(description="L.")
    dim: int = Field(description="d.")
    layers: list[LayerSeparation] = Field(description="One entry per layer.")
    best_layer: int | None = Field(description="Layer of highest AUC (lowest index on ties); null if all v_ℓ = 0.")
    vectors: list[list[float]] | None = Field(description="Raw v_ℓ (L × d), the one to add for steering.")
    unit_vectors: list[list[float] | None] | None = Field(
        description="v̂_ℓ = v_ℓ/‖v_ℓ‖ (L × d), the one to project on; null rows where v_ℓ = 0."
    )
    query_projections: list[list[float | None]] | None = Field(
        description="a·v̂_ℓ for each query example (n_query × L); null where v_ℓ = 0."
    )
    reconstructed: list[str] = Field(description="Fields resting on a reconstructed definition (none).")


def persona_vector(params: PersonaVectorParams, progress: Progress) -> PersonaVectorResult:
    """v_ℓ = mean_pos h_ℓ − mean_neg h_ℓ (Chen et al. 2025), projections a·v̂_ℓ and their Mann–Whitney AUC."""
    pos = as_stack(params.pos, ("pos",))
    neg = as_stack(params.neg, ("neg",))
    check_stack(pos, ("pos",))
    check_stack(neg, ("neg",))
    query = None if params.query is None else as_stack(params.query, ("query",))
    if neg.shape[1:] != pos.shape[1:]:
        raise InvalidInput(f"neg has (L, d) = {neg.shape[1:]}, pos {pos.shape[1:]}", loc=("neg",))
    if query is not None:
        check_stack(query, ("query",))
        if query.shape[1:] != pos.shape[1:]:
            raise InvalidInput(f"query has (L, d) = {query.shape[1:]}, pos {pos.shape[1:]}", loc=("query",))
    check_total(pos.size + neg.size + (0 if query is None else query.size), ("pos",))
    v = pos.mean(axis=0) - neg.mean(axis=0)
    unit, norms = unit_rows(v)
    zero = norms == 0
    proj_pos = np.einsum("nld,ld->nl", pos, unit)
    proj_neg = np.einsum("nld,ld->nl", neg, unit)
    progress(0.7, "projections")
    auc = np.where(zero, np.nan, auc_by_column(proj_pos, proj_neg))
    mean_pos, mean_neg = proj_pos.mean(axis=0), proj_neg.mean(axis=0)
    dof = pos.shape[0] + neg.shape[0] - 2
    ss = ((proj_pos - mean_pos) ** 2).sum(axis=0) + ((proj_neg - mean_neg) ** 2).sum(axis=0)
    sd = np.sqrt(ss / dof) if dof > 0 else np.zeros_like(ss)
    with np.errstate(invalid="ignore", divide="ignore"):
        separation = np.where(zero | (sd <= 0), np.nan, (mean_pos - mean_neg) / np.where(sd > 0, sd, 1.0))
    layers = [
        LayerSeparation(
            layer=ell,
            norm=float(norms[ell]),
            auc=nullable(auc[ell]),
            pos_mean_projection=None if zero[ell] else float(mean_pos[ell]),
            neg_mean_projection=None if zero[ell] else float(mean_neg[ell]),
            separation=nullable(separation[ell]),
        )
        for ell in range(v.shape[0])
    ]
    queries = None
    if query is not None:
        queries = nullable(np.where(zero, np.nan, np.einsum("nld,ld->nl", query, unit)))
    return PersonaVectorResult(
        n_pos=pos.shape[0],
        n_neg=neg.shape[0],
        num_layers=v.shape[0],
        dim=v.shape[1],
        layers=layers,
        best_layer=None if zero.all() else int(np.nanargmax(auc)),
        vectors=v.tolist() if params.return_vectors else None,
        unit_vectors=[None if z else row for z, row in zip(zero, unit.tolist(), strict=True)]
        if params.return_vectors
        else None,
        query_projections=queries,
        reconstructed=[],
    )


def stack_elements(value: Any) -> int:
    """Element count of a nested list or array without copying it."""
    if isinstance(value, np.ndarray):
        return int(value.size)
    if value is None:
        return 0
    if not value or not value[0]:
        return len(value)
    return len(value) * len(value[0]) * len(value[0][0])


def persona_cost(params: PersonaVectorParams) -> float:
    """Array elements read (pos + neg + query), each touched a few times."""
    return float(stack_elements(params.pos) + stack_elements(params.neg) + stack_elements(params.query))


def plot_persona(result: PersonaVectorResult) -> Any:
    """AUC and ‖v_ℓ‖ against the layer."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 5))
    ax_auc, ax_norm = fig.subplots(2, 1, sharex=True)
    layers = [s.layer for s in result.layers]
    ax_auc.plot(layers, [np.nan if s.auc is None else s.auc for s in result.layers], "o-")
    ax_auc.axhline(0.5, color="grey", linewidth=0.8)
    ax_auc.set_ylabel("separability AUC")
    ax_auc.set_title("Persona vector per layer")
    ax_norm.plot(layers, [s.norm for s in result.layers], "s-")
    ax_norm.set_ylabel("‖v_ℓ‖")
    ax_norm.set_xlabel("layer ℓ")
    return fig


def persona_curves(result: PersonaVectorResult) -> Curves:
    """The plot's upper panel, AUC against the layer, for overlaying runs."""
    auc = Curve("AUC", [s.layer for s in result.layers], [s.auc for s in result.layers])
    return Curves("layer ℓ", "separability AUC", (auc,))


SPEC = register(
    EstimatorSpec(
        name="steering.persona_vector",
        version="1",
        family="steering",
        summary="Per-layer persona vectors (difference of trait-positive and trait-negative mean activations) "
        "with norms, separability AUC and projections of query activations.",
        paper=PAPER,
        citation=CITATION,
        params_model=PersonaVectorParams,
        result_model=PersonaVectorResult,
        fn=persona_vector,
        cost=persona_cost,
        cost_unit="array elements (n·L·d summed over pos, neg and query; 10⁷ take about 0.1 s)",
        sync_budget=2e7,
        hard_cap=2e7,
        plot=plot_persona,
        overlay=persona_curves,
    )
)
