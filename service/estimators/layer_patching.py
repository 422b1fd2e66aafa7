"""``layer_patching.plan``: which student layers to patch with their teacher blocks for each target model size.

After "Understanding Layer Patching in Model Size Interpolation" (KLPatch; ICML 2026 AdaptFM workshop) on top of
Kangaslahti et al., "Boomerang Distillation Enables Zero-Shot Model Size Interpolation" (ICLR 2026). The
optimisation problem, the layered and lattice graphs and KLPatch are reconstructions from the abstract; the search
itself lives in :mod:`service.estimators.layer_patching_search`. User documentation: docs/layer_patching.md.
"""

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.estimators.layer_patching_search import (
    Chain,
    CostModel,
    greedy_chain,
    lattice_path,
    layered_dp,
    sequential_chain,
    table_dp,
)
from service.plot_overlay import Curve, Curves
from service.registry import EstimatorSpec, Progress, register
from service.types import ResultModel, StrictModel, array_param

PAPER = "Understanding Layer Patching in Model Size Interpolation"
CITATION = (
    "Understanding Layer Patching in Model Size Interpolation, ICML 2026 AdaptFM workshop (arXiv 2607.08170); "
    "Kangaslahti et al., Boomerang Distillation Enables Zero-Shot Model Size Interpolation, ICLR 2026 "
    "(arXiv 2510.05064)."
)
MAX_LAYERS = 128
MAX_TEACHER_LAYERS = 1024
MAX_TABLE_LAYERS = 16
MAX_TARGETS = 1000
STRICTLY_WORSE = 1e-9
"""A method is worse than the DP when its cost exceeds the DP's by more than this."""
METHODS = ("dp", "first_to_last", "last_to_first", "klpatch")

Cost = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-1e12, le=1e12)]
BlockSize = Annotated[int, Field(strict=True, ge=1, le=MAX_TEACHER_LAYERS)]


class UnaryCostModel(StrictModel):
    """cost(S) = Σ_{i∈S} delta_i."""

    kind: Literal["unary"]
    delta: list[Cost] = Field(
        min_length=1,
        max_length=MAX_LAYERS,
        description="delta_i = loss change from patching layer i alone, 𝓛({i}) − 𝓛(∅) (M values).",
    )


class PairwiseCostModel(StrictModel):
    """cost(S) = Σ_{i∈S} delta_i + Σ_j interaction_j·[j ∈ S and j+1 ∈ S]."""

    kind: Literal["pairwise"]
    delta: list[Cost] = Field(min_length=1, max_length=MAX_LAYERS, description="delta_i (M values).")
    interaction: list[Cost] = Field(
        max_length=MAX_LAYERS - 1,
        description="interaction[j] couples layers j and j+1 (M − 1 values): 𝓛({j, j+1}) − 𝓛({j}) − 𝓛({j+1}) + 𝓛(∅).",
    )


class TableCostModel(StrictModel):
    """cost(S) = loss[Σ_{i∈S} 2^i] for an arbitrary loss table (M ≤ 16)."""

    kind: Literal["table"]
    loss: array_param(Cost, "float", ge=-1e12, le=1e12, min_length=2, max_length=1 << MAX_TABLE_LAYERS) = Field(  # type: ignore[valid-type]
        description="Loss of every patch set, 2^M values; bit i of the index set means layer i is patched "
        '(index 0 = the student). A JSON list or {"array": "sha256:…"}.'
    )


CostModelParam = Annotated[UnaryCostModel | PairwiseCostModel | TableCostModel, Field(discriminator="kind")]


class PlanParams(StrictModel):
    """Parameters of ``layer_patching.plan``."""

    block_sizes: list[BlockSize] | None = Field(
        None,
        min_length=1,
        max_length=MAX_LAYERS,
        description="n_i, the teacher layers behind student layer i (M ≤ 128 values ≥ 1, sum ≤ 1024). "
        "Give this or copied_teacher_layers.",
    )
    copied_teacher_layers: list[Annotated[int, Field(strict=True, ge=0, le=MAX_TEACHER_LAYERS - 1)]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_LAYERS,
        description="ℓ_i, the teacher layer each student layer was initialised from (strictly increasing, "
        "starting at 0); with n_teacher_layers gives n_i = ℓ_{i+1} − ℓ_i.",
    )
    n_teacher_layers: int | None = Field(
        None, ge=1, le=MAX_TEACHER_LAYERS, description="N, teacher depth (with copied_teacher_layers)."
    )
    cost_model: CostModelParam = Field(description="unary, pairwise or table cost of a patch set (minimised).")
    added_depths: list[Annotated[int, Field(strict=True, ge=0, le=MAX_TEACHER_LAYERS)]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_TARGETS,
        description="Targets as added depth r = Σ_{i patched}(n_i − 1); each must be reachable by some patch set. "
        "Default (with param_budgets absent): every reachable r in 0..R (≤ 1000, evenly thinned beyond).",
    )
    param_budgets: list[Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0, le=1e15)]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_TARGETS,
        description="Targets as total parameter budgets (needs params_per_layer): each becomes the largest "
        "reachable r with base_params + params_per_layer·(M + r) ≤ budget.",
    )
    params_per_layer: float | None = Field(
        None, gt=0, le=1e12, allow_inf_nan=False, description="Parameters of one transformer layer, p_layer."
    )
    base_params: float = Field(
        0.0, ge=0, le=1e15, allow_inf_nan=False, description="Parameters outside the layers (embeddings, head)."
    )
    greedy_variant: Literal["iterative", "one_shot"] = Field(
        "iterative",
        description="KLPatch: 'iterative' adds argmin_i cost(S ∪ {i}) at each step; 'one_shot' ranks layers "
        "once by cost({i}). Ties go to the lowest index.",
    )


class MethodPlan(ResultModel):
    """One method's patch set at one target."""

    reachable: bool = Field(description="False when the method never visits this added depth.")
    patched: list[int] | None = Field(description="Patched student layers, sorted, 0-based; null if unreachable.")
    cost: float | None = Field(description="cost(patched); null if unreachable.")
    gap_to_dp: float | None = Field(description="cost − dp cost (≥ 0); null if unreachable.")


class TargetPlan(ResultModel):
    """Every method at one added depth."""

    added_depth: int = Field(description="r = Σ_{i patched}(n_i − 1).")
    param_budget: float | None = Field(description="The budget this target came from, or null.")
    params: float | None = Field(description="base_params + params_per_layer·(M + r); null without params_per_layer.")
    dp: MethodPlan = Field(description="Exact optimum at this depth.")
    first_to_last: MethodPlan = Field(description="Patchable layers patched in order.")
    last_to_first: MethodPlan = Field(description="Patchable layers patched in reverse order.")
    klpatch: MethodPlan = Field(description="The greedy chain (greedy_variant).")
    greedy_is_optimal: bool | None = Field(description="klpatch within 1e-9 of dp; null if unreachable.")


class ChainCosts(ResultModel):
    """Σ_{k≥1} cost(S_k) along each nested chain from the student to the full teacher (table mode)."""

    lattice: float = Field(description="The lattice shortest path (the minimum over all nested chains).")
    klpatch: float = Field(description="The greedy chain.")
    first_to_last: float = Field(description="Sequential, first to last.")
    last_to_first: float = Field(description="Sequential, last to first.")


class PlanResult(ResultModel):
    """Patch sets per target and method."""

    num_layers: int = Field(description="M, student layers.")
    teacher_layers: int = Field(description="Σ n_i.")
    max_added_depth: int = Field(description="R = Σ (n_i − 1).")
    non_patchable: list[int] = Field(description="0-based layers with n_i = 1 (never patched).")
    cost_model: str = Field(description="unary, pairwise or table.")
    greedy_variant: str = Field(description="iterative or one_shot.")
    klpatch_order: list[int] = Field(description="Layers in the order the greedy chain patches them.")
    plans: list[TargetPlan] = Field(description="One entry per target, in request order (default: increasing r).")
    lattice_chain_cost: float | None = Field(description="Table mode: Σ_k loss[S_k] on the lattice shortest path.")
    lattice_path: list[int] | None = Field(description="Table mode: layers in the order the lattice path adds them.")
    chain_costs: ChainCosts | None = Field(description="Table mode: the chain cost of every nested strategy.")
    reconstructed: list[str] = Field(description="Fields resting on the reconstructed problem and KLPatch.")


def block_sizes_of(params: PlanParams) -> np.ndarray:
    """n_i from block_sizes or from copied_teacher_layers + n_teacher_layers (422 when inconsistent)."""
    if (params.block_sizes is None) == (params.copied_teacher_layers is None):
        raise InvalidInput("give exactly one of block_sizes and copied_teacher_layers", loc=("block_sizes",))
    if params.block_sizes is not None:
        sizes = np.asarray(params.block_sizes, dtype=np.int64)
        if params.n_teacher_layers is not None:
            raise InvalidInput("n_teacher_layers goes with copied_teacher_layers", loc=("n_teacher_layers",))
    else:
        copied = np.asarray(params.copied_teacher_layers, dtype=np.int64)
        if copied[0] != 0 or np.any(np.diff(copied) <= 0):
            raise InvalidInput("must be strictly increasing and start at 0", loc=("copied_teacher_layers",))
        if params.n_teacher_layers is None or params.n_teacher_layers <= copied[-1]:
            raise InvalidInput("n_teacher_layers must exceed the last copied layer", loc=("n_teacher_layers",))
        sizes = np.diff(np.append(copied, params.n_teacher_layers))
    if sizes.sum() > MAX_TEACHER_LAYERS:
        raise InvalidInput(
            f"the blocks hold {sizes.sum()} teacher layers; at most {MAX_TEACHER_LAYERS}", ("block_sizes",)
        )
    return sizes


def cost_model_of(params: PlanParams, widths: np.ndarray) -> CostModel:
    """The checked cost model (lengths against M)."""
    m = widths.size
    cm = params.cost_model
    if isinstance(cm, TableCostModel):
        loss = np.asarray(cm.loss, dtype=np.float64)
        if m > MAX_TABLE_LAYERS:
            raise InvalidInput(f"table mode allows M ≤ {MAX_TABLE_LAYERS}, got M = {m}", loc=("cost_model", "loss"))
        if loss.ndim != 1 or loss.size != 1 << m:
            raise InvalidInput(f"loss needs 2^M = {1 << m} values, got {loss.size}", loc=("cost_model", "loss"))
        return CostModel("table", widths, loss=loss)
    delta = np.asarray(cm.delta, dtype=np.float64)
    if delta.size != m:
        raise InvalidInput(f"delta needs M = {m} values, got {delta.size}", loc=("cost_model", "delta"))
    if isinstance(cm, PairwiseCostModel):
        inter = np.asarray(cm.interaction, dtype=np.float64)
        if inter.size != m - 1:
            raise InvalidInput(f"interaction needs M − 1 = {m - 1} values", loc=("cost_model", "interaction"))
        return CostModel("pairwise", widths, delta=delta, interaction=inter)
    return CostModel("unary", widths, delta=delta)


def targets_of(params: PlanParams, m: int, reachable: np.ndarray) -> list[tuple[int, float | None]]:
    """(added depth, budget or None) per target; 422 for unreachable depths or budgets below the student."""
    depths_ok = np.flatnonzero(reachable)
    if params.added_depths is not None and params.param_budgets is not None:
        raise InvalidInput("give added_depths or param_budgets, not both", loc=("param_budgets",))
    if params.param_budgets is not None:
        if params.params_per_layer is None:
            raise InvalidInput("param_budgets needs params_per_layer", loc=("params_per_layer",))
        out: list[tuple[int, float | None]] = []
        for k, budget in enumerate(params.param_budgets):
            room = (budget - params.base_params) / params.params_per_layer - m
            r_max = math.floor(room + 1e-9 * max(1.0, abs(room)))
            if r_max < 0:
                raise InvalidInput(
                    f"budget {budget:g} is below the student's {params.base_params + params.params_per_layer * m:g}",
                    loc=("param_budgets", k),
                )
            out.append((int(depths_ok[depths_ok <= r_max][-1]), budget))
        return out
    if params.added_depths is not None:
        for k, r in enumerate(params.added_depths):
            if r >= reachable.size or not reachable[r]:
                raise InvalidInput(f"no patch set adds exactly {r} layers", loc=("added_depths", k))
        return [(r, None) for r in params.added_depths]
    if depths_ok.size > MAX_TARGETS:
        depths_ok = depths_ok[np.unique(np.round(np.linspace(0, depths_ok.size - 1, MAX_TARGETS)).astype(np.int64))]
    return [(int(r), None) for r in depths_ok]


def method_plan(found: tuple[list[int], float] | None, dp_cost: float) -> MethodPlan:
    if found is None:
        return MethodPlan(reachable=False, patched=None, cost=None, gap_to_dp=None)
    patched, cost = found
    return MethodPlan(reachable=True, patched=patched, cost=cost, gap_to_dp=cost - dp_cost)


def plan(params: PlanParams, progress: Progress) -> PlanResult:
    """Exact DP (layered graph, or the subset table) beside KLPatch and the two sequential orders, per target."""
    sizes = block_sizes_of(params)
    widths = sizes - 1
    model = cost_model_of(params, widths)
    m = model.m
    best, patched = table_dp(model) if model.kind == "table" else layered_dp(model)
    targets = targets_of(params, m, np.isfinite(best))
    progress(0.3, "chains")
    chains: dict[str, Chain] = {
        "first_to_last": sequential_chain(model, reverse=False),
        "last_to_first": sequential_chain(model, reverse=True),
        "klpatch": greedy_chain(model, params.greedy_variant),
    }
    plans: list[TargetPlan] = []
    for r, budget in targets:
        dp_cost = float(best[r])
        methods = {name: method_plan(chain.at_depth(r), dp_cost) for name, chain in chains.items()}
        dp = MethodPlan(reachable=True, patched=np.flatnonzero(patched[r]).tolist(), cost=dp_cost, gap_to_dp=0.0)
        kl = methods["klpatch"]
        plans.append(
            TargetPlan(
                added_depth=r,
                param_budget=budget,
                params=None
                if params.params_per_layer is None
                else params.base_params + params.params_per_layer * (m + r),
                dp=dp,
                greedy_is_optimal=None if kl.gap_to_dp is None else kl.gap_to_dp <= STRICTLY_WORSE,
                **methods,
            )
        )
    lattice: Chain | None = None
    if model.kind == "table":
        progress(0.6, "lattice")
        lattice = lattice_path(model)
    reconstructed = ["plans", "klpatch_order"]
    if lattice is not None:
        reconstructed += ["lattice_chain_cost", "lattice_path", "chain_costs"]
    return PlanResult(
        num_layers=m,
        teacher_layers=int(sizes.sum()),
        max_added_depth=int(widths.sum()),
        non_patchable=np.flatnonzero(widths == 0).tolist(),
        cost_model=model.kind,
        greedy_variant=params.greedy_variant,
        klpatch_order=chains["klpatch"].order,
        plans=plans,
        lattice_chain_cost=None if lattice is None else lattice.area,
        lattice_path=None if lattice is None else lattice.order,
        chain_costs=None
        if lattice is None
        else ChainCosts(lattice=lattice.area, **{name: chain.area for name, chain in chains.items()}),
        reconstructed=reconstructed,
    )


def plan_cost(params: PlanParams) -> float:
    """DP cells M·(R + 1) (table: 2^M·M for the subset DP and the lattice) plus M² for the greedy chain."""
    m = len(params.block_sizes or params.copied_teacher_layers or [])
    if isinstance(params.cost_model, TableCostModel):
        return float((1 << min(m, MAX_TABLE_LAYERS)) * m + m * m)
    teacher = sum(params.block_sizes) if params.block_sizes else (params.n_teacher_layers or MAX_TEACHER_LAYERS)
    return float(m * max(1, teacher - m + 1) + m * m)


def plot_plan(result: PlanResult) -> Any:
    """Cost against added depth for the DP and the three chains (markers where a chain visits the depth)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    depths = [p.added_depth for p in result.plans]
    ax.plot(depths, [p.dp.cost for p in result.plans], "-", color="black", label="dp (exact)")
    for name, marker in (("klpatch", "o"), ("first_to_last", "^"), ("last_to_first", "v")):
        pts = [(p.added_depth, getattr(p, name).cost) for p in result.plans if getattr(p, name).reachable]
        if pts:
            x, y = zip(*pts, strict=True)
            ax.plot(x, y, marker=marker, linestyle="--", label=name)
    ax.set_xlabel("added depth r (teacher layers added)")
    ax.set_ylabel(f"cost ({result.cost_model})")
    ax.set_title("Layer patching: cost of the patch set per added depth")
    ax.legend()
    return fig


def plan_curves(result: PlanResult) -> Curves:
    """The plot's cost against added depth of the DP and of each chain where it reaches the depth, for overlaying
    runs."""
    depths = [p.added_depth for p in result.plans]
    curves = [Curve("dp (exact)", depths, [p.dp.cost for p in result.plans])]
    for name in ("klpatch", "first_to_last", "last_to_first"):
        costs = [getattr(p, name).cost if getattr(p, name).reachable else None for p in result.plans]
        curves.append(Curve(name, depths, costs))
    return Curves("added depth r (teacher layers added)", f"cost ({result.cost_model})", tuple(curves))


SPEC = register(
    EstimatorSpec(
        name="layer_patching.plan",
        version="1",
        family="layer_patching",
        summary="Patch sets for every target size: exact DP (layered graph or subset table), KLPatch greedy and "
        "sequential orders, with the lattice shortest path for arbitrary loss tables.",
        paper=PAPER,
        citation=CITATION,
        params_model=PlanParams,
        result_model=PlanResult,
        fn=plan,
        cost=plan_cost,
        cost_unit="DP cells: M·(R + 1), or 2^M·M in table mode, plus M² greedy candidates (all allowed inputs "
        "take well under 1 s)",
        sync_budget=5e6,
        hard_cap=5e6,
        plot=plot_plan,
        overlay=plan_curves,
    )
)
