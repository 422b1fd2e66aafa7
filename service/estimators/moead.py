"""MOEA/D runtime on OneMinMax with neighbourhood exchange radius r (docs/moead.md).

Two estimators over the exact count-level simulator of ``moead_sim``:

* ``moead.omm_runtime``: the runtime distribution (evaluations until the archive holds the whole Pareto
  front of OneMinMax) at one n, over ``reps`` independent replicates;
* ``moead.omm_scaling``: the same over a grid of n, with the fitted log-log slope of the mean runtime
  (bootstrap CI), so Θ(n²) for r ≥ 1 can be told from Θ(n² log n) for r = 0.

Unfinished replicates (archive incomplete after ``max_evals`` evaluations) are reported as −1 and
counted in ``unfinished``; mean, sd, se and median are over the finished replicates only (a lower
bound of the true mean when some did not finish); ``Degenerate`` if none finished.
"""

import math
from itertools import pairwise
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import Degenerate, InvalidInput
from service.estimators.moead_sim import omm_runtimes
from service.plot_overlay import Curve, Curves
from service.registry import EstimatorSpec, Progress, register
from service.types import ResultModel, Seed, StrictModel

PAPER = "How the MOEA/D profits from exchanging solutions: runtime on OneMinMax"
CITATION = (
    "MOEA/D on OneMinMax with solution exchange radius r: Θ(n²) for r ≥ 1 vs Θ(n² log n) for r = 0 "
    "(NeurIPS 2026); model after Doerr, Krejca & Weeks, IJCAI 2024 (arXiv 2405.01014)."
)
MAX_N = 512
MAX_EVALS = 10**9
DEFAULT_EVALS_FACTOR = 50.0
"""Spec c.2: default max_evals = 50·n²·ln n per replicate (≈ 25× the mean runtime for r = 0)."""
STEP_OVERHEAD = 100.0
"""Cost of one vectorised subproblem step, in replicate-evaluations (per-call numpy overhead)."""
HOOD_SCALE = 40.0
"""Neighbourhood replacement cost: each extra neighbour costs 1/40 of a replicate-evaluation."""
POWER_LAW_FACTOR = 12.0
"""Power-law mutation draws one hypergeometric variate per offspring: measured 4-9.4x the CPU time of standard bit
mutation per cost unit (n = 20-100, reps 1-200; the most at reps = 1), so its work counts 12x."""
UNIFORM_PARENT_FACTOR = 2.0
"""Uniform parent selection gathers a parent per offspring: measured 1.3-1.9x per cost unit, counted 2x."""
BOOTSTRAP = 2000
CI_LEVEL = 0.95
RUNTIME_FIELDS = ["evals", "mean", "sd", "se", "median", "evals_over_n2", "evals_over_n2_log_n"]

Radius = Annotated[
    int,
    Field(
        ge=0,
        le=2 * MAX_N,
        description="Exchange radius r: subproblem i's offspring may replace x_j for every j with "
        "|i − j| ≤ r (r = 0: no exchange); must not exceed N = num_subproblems − 1. Default 1.",
    ),
]


class OmmVariant(StrictModel):
    """Algorithm variant and sampling parameters shared by both estimators."""

    r: Radius = 1
    reps: int = Field(30, ge=1, le=1000, description="Independent replicates R (default 30).")
    seed: Seed = 0
    parent_selection: Literal["own", "uniform"] = Field(
        "own",
        description="Parent of subproblem i: its own solution x_i ('own', default) or x_j with j uniform "
        "in the neighbourhood B(i) = {j : |i − j| ≤ r} ('uniform').",
    )
    tie_rule: Literal["<=", "<"] = Field(
        "<=",
        description="Replacement test g_j(y) <= g_j(x_j) ('<=', default: ties go to the offspring) or "
        "strict improvement ('<', as in pymoo).",
    )
    scalarization: Literal["tchebycheff", "weighted_sum"] = Field(
        "tchebycheff",
        description="Subproblem function with weights w_i = i/N and ideal point z* = (n, n): "
        "'tchebycheff' max{(i/N)|x|₁, (1 − i/N)(n − |x|₁)} (default) or 'weighted_sum' "
        "(i/N)|x|₁ + (1 − i/N)(n − |x|₁); both minimised.",
    )
    mutation: Literal["standard_bit", "power_law"] = Field(
        "standard_bit",
        description="'standard_bit' (default): each bit flips independently with probability 1/n; "
        "'power_law': flip exactly ℓ distinct uniform bits, P(ℓ) ∝ ℓ^(−beta) on 1..n.",
    )
    beta: float = Field(
        1.5, gt=1.0, le=4.0, description="Power-law exponent beta (used only with mutation='power_law')."
    )


class OmmRuntimeParams(OmmVariant):
    """Parameters of ``moead.omm_runtime``."""

    n: int = Field(ge=2, le=MAX_N, description="Problem size n (bits); the Pareto front has n + 1 points.")
    num_subproblems: int | None = Field(
        None,
        ge=2,
        le=2 * MAX_N + 1,
        description="Number of subproblems N + 1 (weights i/N, i = 0..N); default n + 1.",
    )
    max_evals: int | None = Field(
        None,
        ge=1,
        le=MAX_EVALS,
        description="Evaluation cap per replicate (initialisation included); default ceil(50·n²·ln n). "
        "A replicate whose archive is incomplete at the cap reports −1.",
    )


class OmmRuntimeResult(ResultModel):
    """Runtime distribution of one configuration."""

    n: int = Field(description="Problem size.")
    num_subproblems: int = Field(description="N + 1 used.")
    r: int = Field(description="Exchange radius used.")
    max_evals: int = Field(description="Evaluation cap per replicate used.")
    evals: list[int] = Field(
        description="Evaluations (initialisation included) until the archive first covered all n + 1 "
        "values of |x|₁, per replicate; −1 if the cap was hit."
    )
    finished: int = Field(description="Replicates that covered the front within max_evals.")
    unfinished: int = Field(description="Replicates that hit max_evals (reported as −1).")
    mean: float = Field(description="Mean runtime over finished replicates (evaluations).")
    sd: float | None = Field(description="Sample sd (ddof = 1) over finished replicates; null if < 2.")
    se: float | None = Field(description="Standard error of the mean, sd/√finished; null if < 2.")
    median: float = Field(description="Median runtime over finished replicates.")
    evals_over_n2: float = Field(description="mean / n² (flat in n for r ≥ 1: Θ(n²)).")
    evals_over_n2_log_n: float = Field(description="mean / (n² ln n) (flat in n for r = 0: Θ(n² log n)).")
    mean_generations: float = Field(
        description="Mean over finished replicates of (evals − (N + 1)) / (N + 1): generations after "
        "initialisation, the last one possibly partial."
    )
    simulated_evals: int = Field(description="Replicate-evaluations simulated (work done).")
    warnings: list[str] = Field(description="Notes on the configuration or on unfinished replicates.")
    reconstructed: list[str] = Field(
        description="Fields resting on the RECONSTRUCTED algorithm (docs/moead.md: the paper's exact "
        "pseudocode was not available)."
    )


class OmmScalingParams(OmmVariant):
    """Parameters of ``moead.omm_scaling`` (N + 1 = n + 1 subproblems at every n)."""

    ns: list[Annotated[int, Field(ge=2, le=MAX_N)]] = Field(
        default_factory=lambda: [16, 32, 64, 128],
        min_length=2,
        max_length=16,
        description="Strictly increasing grid of problem sizes n (default [16, 32, 64, 128]).",
    )
    reps: int = Field(30, ge=2, le=1000, description="Independent replicates R per n (default 30).")
    max_evals_factor: float = Field(
        DEFAULT_EVALS_FACTOR,
        gt=0.0,
        le=1000.0,
        description="Evaluation cap per replicate at each n: ceil(factor·n²·ln n) (default 50).",
    )


class OmmScalingPoint(ResultModel):
    """Runtime summary at one n (identical to ``moead.omm_runtime`` with the same n, r, reps, seed)."""

    n: int = Field(description="Problem size (N + 1 = n + 1 subproblems).")
    max_evals: int = Field(description="Evaluation cap per replicate used at this n.")
    finished: int = Field(description="Replicates that covered the front within max_evals.")
    unfinished: int = Field(description="Replicates that hit max_evals.")
    mean: float = Field(description="Mean runtime over finished replicates (evaluations).")
    sd: float | None = Field(description="Sample sd (ddof = 1) over finished replicates; null if < 2.")
    se: float | None = Field(description="Standard error of the mean; null if < 2 finished.")
    median: float = Field(description="Median runtime over finished replicates.")
    evals_over_n2: float = Field(description="mean / n².")
    evals_over_n2_log_n: float = Field(description="mean / (n² ln n).")


class OmmScalingResult(ResultModel):
    """Per-n summaries and fitted growth exponents."""

    points: list[OmmScalingPoint] = Field(description="One summary per n, in grid order.")
    slope: float = Field(description="OLS slope of ln(mean) on ln n: runtime ≈ n^slope (2 for Θ(n²)).")
    slope_ci_low: float = Field(description="Lower end of the bootstrap percentile CI of slope.")
    slope_ci_high: float = Field(description="Upper end of the bootstrap percentile CI of slope.")
    slope_log_adjusted: float = Field(
        description="OLS slope of ln(mean / ln n) on ln n: 2 for Θ(n² log n), below 2 for Θ(n²) grids."
    )
    slope_log_adjusted_ci_low: float = Field(description="Lower bootstrap CI end of slope_log_adjusted.")
    slope_log_adjusted_ci_high: float = Field(description="Upper bootstrap CI end of slope_log_adjusted.")
    ci_level: float = Field(description="Confidence level of the CIs (0.95).")
    bootstrap: int = Field(description="Bootstrap resamples (replicates resampled within each n).")
    warnings: list[str] = Field(description="Notes on the configuration or on unfinished replicates.")
    reconstructed: list[str] = Field(description="Fields resting on the RECONSTRUCTED algorithm.")


def default_max_evals(n: int, factor: float = DEFAULT_EVALS_FACTOR) -> int:
    """ceil(factor·n²·ln n), clipped to [1, 10⁹]."""
    return int(min(MAX_EVALS, max(1, math.ceil(factor * n * n * math.log(n)))))


def mean_hood_size(num_sub: int, r: int) -> float:
    """Mean |B(i)| over i = 0..N."""
    i = np.arange(num_sub)
    return float(np.mean(np.minimum(num_sub - 1, i + r) - np.maximum(0, i - r) + 1))


def _work(max_evals: int, reps: int, num_sub: int, r: int, variant: OmmVariant) -> float:
    """Worst-case work of one configuration in replicate-evaluation equivalents (see ``cost_unit``), times the
    variant's factor (``POWER_LAW_FACTOR``, ``UNIFORM_PARENT_FACTOR``)."""
    factor = (POWER_LAW_FACTOR if variant.mutation == "power_law" else 1.0) * (
        UNIFORM_PARENT_FACTOR if variant.parent_selection == "uniform" else 1.0
    )
    hood = mean_hood_size(num_sub, min(r, num_sub - 1)) / HOOD_SCALE
    return factor * max_evals * (reps * (1.0 + hood) + STEP_OVERHEAD)


def _variant_kwargs(p: OmmVariant) -> dict[str, object]:
    return {
        "parent": p.parent_selection,
        "tie_rule": p.tie_rule,
        "scalarization": p.scalarization,
        "mutation": p.mutation,
        "beta": p.beta,
    }


def _config_warnings(p: OmmVariant, n: int, num_sub: int) -> list[str]:
    notes: list[str] = []
    if p.scalarization == "tchebycheff" and num_sub > n + 1:
        notes.append(f"N + 1 = {num_sub} > n + 1: several subproblems share a g-optimum.")
    if p.mutation == "standard_bit" and num_sub < n + 1:
        notes.append(
            "N < n: some Pareto points are no g-optimum and must be hit by mutation; once the "
            "population sits on the g-optima, standard bit mutation needs ~n^(n/(2N)) evaluations "
            "per gap (Doerr, Krejca & Weeks 2024)."
        )
    if p.scalarization == "weighted_sum":
        notes.append("weighted_sum: the g-optima are only |x|₁ ∈ {0, n} (every |x|₁ for i = N/2).")
    return notes


def _summary(evals: np.ndarray, n: int, loc: tuple[str, ...]) -> dict[str, float | int | None]:
    """Statistics over finished replicates; Degenerate when none finished."""
    done = evals[evals >= 0].astype(np.float64)
    if done.size == 0:
        raise Degenerate(f"no replicate covered the Pareto front within max_evals at n={n}; raise the cap", loc=loc)
    mean = float(done.mean())
    sd = float(done.std(ddof=1)) if done.size > 1 else None
    return {
        "finished": int(done.size),
        "unfinished": int(evals.size - done.size),
        "mean": mean,
        "sd": sd,
        "se": sd / math.sqrt(done.size) if sd is not None else None,
        "median": float(np.median(done)),
        "evals_over_n2": mean / n**2,
        "evals_over_n2_log_n": mean / (n**2 * math.log(n)),
    }


def _check_radius(r: int, num_sub: int) -> None:
    if r > num_sub - 1:
        raise InvalidInput(
            f"r={r} exceeds N = num_subproblems − 1 = {num_sub - 1} (r = N already exchanges with all)",
            loc=("r",),
        )


def omm_runtime(params: OmmRuntimeParams, progress: Progress) -> OmmRuntimeResult:
    """Runtime of the MOEA/D on OneMinMax to cover the Pareto front, R replicates."""
    n = params.n
    num_sub = params.num_subproblems or n + 1
    _check_radius(params.r, num_sub)
    max_evals = params.max_evals or default_max_evals(n)
    rng = np.random.default_rng(params.seed)
    evals, work = omm_runtimes(
        n,
        num_sub,
        params.r,
        params.reps,
        rng,
        max_evals=max_evals,
        progress=lambda f: progress(f, f"n={n}"),
        **_variant_kwargs(params),
    )
    summary = _summary(evals, n, ("max_evals",))
    notes = _config_warnings(params, n, num_sub)
    if summary["unfinished"]:
        notes.append(
            f"{summary['unfinished']} of {params.reps} replicates hit max_evals={max_evals}; "
            "mean/sd/median are over finished replicates and underestimate the true mean."
        )
    finished = evals[evals >= 0]
    return OmmRuntimeResult(
        n=n,
        num_subproblems=num_sub,
        r=params.r,
        max_evals=max_evals,
        evals=evals.tolist(),
        mean_generations=float(np.mean(np.maximum(finished - num_sub, 0) / num_sub)),
        simulated_evals=work,
        warnings=notes,
        reconstructed=[*RUNTIME_FIELDS, "mean_generations"],
        **summary,
    )


def _slope(log_n: np.ndarray, log_y: np.ndarray) -> np.ndarray:
    """OLS slopes of the rows of ``log_y`` (… × len(n)) on ``log_n``."""
    x = log_n - log_n.mean()
    return (log_y - log_y.mean(axis=-1, keepdims=True)) @ x / (x @ x)


def omm_scaling(params: OmmScalingParams, progress: Progress) -> OmmScalingResult:
    """Mean runtime over a grid of n and its log-log slope with a seeded bootstrap CI."""
    ns = params.ns
    if any(b <= a for a, b in pairwise(ns)):
        raise InvalidInput("ns must be strictly increasing", loc=("ns",))
    _check_radius(params.r, ns[0] + 1)
    points: list[OmmScalingPoint] = []
    samples: list[np.ndarray] = []
    notes: list[str] = []
    for idx, n in enumerate(ns):
        progress(idx / len(ns), f"n={n}")
        max_evals = default_max_evals(n, params.max_evals_factor)
        evals, _ = omm_runtimes(
            n,
            n + 1,
            params.r,
            params.reps,
            np.random.default_rng(params.seed),
            max_evals=max_evals,
            progress=lambda f, i=idx, m=n: progress((i + f) / len(ns), f"n={m}"),
            **_variant_kwargs(params),
        )
        summary = _summary(evals, n, ("max_evals_factor",))
        if summary["unfinished"]:
            notes.append(f"n={n}: {summary['unfinished']} replicates hit max_evals={max_evals}.")
        points.append(OmmScalingPoint(n=n, max_evals=max_evals, **summary))
        samples.append(evals[evals >= 0].astype(np.float64))
    progress(1.0, "fit")
    log_n = np.log(np.asarray(ns, dtype=np.float64))
    log_ln = np.log(log_n)
    means = np.array([p.mean for p in points])
    boot_rng = np.random.default_rng([params.seed, 1])
    boot = np.stack([s[boot_rng.integers(0, s.size, size=(BOOTSTRAP, s.size))].mean(axis=1) for s in samples], axis=1)
    q = [(1 - CI_LEVEL) / 2, (1 + CI_LEVEL) / 2]
    slope_b = _slope(log_n, np.log(boot))
    adj_b = _slope(log_n, np.log(boot) - log_ln)
    lo, hi = np.quantile(slope_b, q)
    alo, ahi = np.quantile(adj_b, q)
    return OmmScalingResult(
        points=points,
        slope=float(_slope(log_n, np.log(means))),
        slope_ci_low=float(lo),
        slope_ci_high=float(hi),
        slope_log_adjusted=float(_slope(log_n, np.log(means) - log_ln)),
        slope_log_adjusted_ci_low=float(alo),
        slope_log_adjusted_ci_high=float(ahi),
        ci_level=CI_LEVEL,
        bootstrap=BOOTSTRAP,
        warnings=_config_warnings(params, ns[0], ns[0] + 1) + notes,
        reconstructed=["points", "slope", "slope_log_adjusted"],
    )


def runtime_cost(params: OmmRuntimeParams) -> float:
    """Worst-case work: max_evals × (reps·(1 + mean|B(i)|/40) + 100) replicate-evaluation equivalents."""
    num_sub = params.num_subproblems or params.n + 1
    return _work(params.max_evals or default_max_evals(params.n), params.reps, num_sub, params.r, params)


def scaling_cost(params: OmmScalingParams) -> float:
    """Sum over the grid of the worst-case work of each n (see ``runtime_cost``)."""
    return sum(
        _work(default_max_evals(n, params.max_evals_factor), params.reps, n + 1, params.r, params) for n in params.ns
    )


COST_UNIT = (
    "replicate-evaluation equivalents, worst case (every replicate runs to max_evals): "
    "max_evals × (reps·(1 + mean|B(i)|/40) + 100), × 12 with power-law mutation and × 2 with uniform parent "
    "selection; ≈ 0.04 µs each on one core. Typical runs finish 10-40× below this bound."
)
SYNC_BUDGET = 5e7
HARD_CAP = 1.2e10


def scaling_plot(result: OmmScalingResult) -> Any:
    """Mean evaluations (± 1.96 SE) against n on log-log axes with the fitted power law."""
    from matplotlib.figure import Figure

    pts = result.points
    ns = np.array([pt.n for pt in pts], dtype=float)
    means = np.array([pt.mean for pt in pts], dtype=float)
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.errorbar(ns, means, yerr=[1.96 * (pt.se or 0.0) for pt in pts], fmt="o", label="mean runtime")
    if len(ns) >= 2:
        fit = np.exp(np.polyval(np.polyfit(np.log(ns), np.log(means), 1), np.log(ns)))
        ci = f"[{result.slope_ci_low:.2f}, {result.slope_ci_high:.2f}]"
        ax.plot(ns, fit, "-", label=f"OLS slope {result.slope:.2f} {ci}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("evaluations to cover the Pareto front")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def scaling_curves(result: OmmScalingResult) -> Curves:
    """The plot's mean runtime against n (log-log), for overlaying runs."""
    pts = result.points
    mean = Curve("mean runtime", [pt.n for pt in pts], [pt.mean for pt in pts])
    return Curves("n", "evaluations to cover the Pareto front", (mean,), x_log=True, y_log=True)


SPECS = [
    register(
        EstimatorSpec(
            name="moead.omm_runtime",
            version="1",
            family="moead",
            summary="Evaluations the MOEA/D with exchange radius r needs to cover the OneMinMax Pareto front "
            "(exact count-level simulation, R replicates).",
            paper=PAPER,
            citation=CITATION,
            params_model=OmmRuntimeParams,
            result_model=OmmRuntimeResult,
            fn=omm_runtime,
            cost=runtime_cost,
            cost_unit=COST_UNIT,
            sync_budget=SYNC_BUDGET,
            hard_cap=HARD_CAP,
        )
    ),
    register(
        EstimatorSpec(
            name="moead.omm_scaling",
            version="1",
            family="moead",
            summary="Mean MOEA/D runtime on OneMinMax over a grid of n with the fitted log-log slope: "
            "Θ(n²) for r ≥ 1 vs Θ(n² log n) for r = 0.",
            paper=PAPER,
            citation=CITATION,
            params_model=OmmScalingParams,
            result_model=OmmScalingResult,
            fn=omm_scaling,
            cost=scaling_cost,
            cost_unit=COST_UNIT,
            sync_budget=SYNC_BUDGET,
            hard_cap=HARD_CAP,
            plot=scaling_plot,
            overlay=scaling_curves,
        )
    ),
]
