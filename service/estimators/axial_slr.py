"""Axial single-location regression: Monte Carlo and oracle risks of the axial predictor, and its PGD training.

Estimators ``axial_slr.risk`` (risk of the axial erf/softmax predictor at given or oracle directions, the
semi-linear variants and the flattened 1-D predictor on the same draws, and the exact 1-D risk when M = 1) and
``axial_slr.pgd`` (projected gradient descent on the sphere with a constant or inverse-decay inverse temperature).
Numerics: :mod:`service.estimators.axial_slr_model`; user documentation: docs/axial_slr.md.
"""

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.estimators.axial_slr_model import (
    Attention,
    Inner,
    Task,
    axial_predict,
    exact_risk_1d,
    flattened_predict,
    init_directions,
    manifold_distance,
    pgd_step,
    risk_gradient,
    sample,
)
from service.plot_overlay import Curve, Curves
from service.registry import EstimatorSpec, Progress, register
from service.types import FiniteFloat, ResultModel, Seed, StrictModel

PAPER = (
    "Single location regression with axial attention on 2-D structured data "
    "(descriptive title: the paper was not located)"
)
CITATION = (
    "Axial single location regression (NeurIPS 2026; full text not located; supplementary code "
    "anditp/Single-Location-Regression); Marion, Berthier, Biau & Boyer, 'Attention layers provably solve single-"
    "location regression', ICLR 2025"
)
MAX_GRID = 32
MAX_D = 256
MAX_TOKEN_COORDS = 2e8
"""n_mc·M·N·d for one risk call."""
CHUNK_COORDS = 2_000_000
MAX_TRAJECTORY = 1000
RENORM_TOL = 1e-9
RISK_PASSES = 6
"""Predictor evaluations per draw in ``axial_slr.risk``: model, oracle, three inner variants, flattened."""
INNER_VARIANTS: tuple[Inner, ...] = ("nonlinear", "linear", "const")
PGD_GRADIENT_WEIGHT = 12.0
"""One gradient evaluation per token-coordinate, relative to one predictor evaluation (measured)."""

Positive = Annotated[float, Field(strict=True, gt=0, le=1e6, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(strict=True, ge=0, le=1e6, allow_inf_nan=False)]


class TaskParams(StrictModel):
    """Grid and data distribution shared by both estimators (k* = e_1, v* = e_2)."""

    m: int = Field(5, ge=1, le=MAX_GRID, description="Rows M of the token grid (default 5).")
    n: int = Field(5, ge=1, le=MAX_GRID, description="Tokens N per row (default 5).")
    d: int = Field(20, ge=2, le=MAX_D, description="Token dimension d ≥ 2 (default 20).")
    ell: Positive = Field(100.0, description="Signal strength ℓ: the planted token is ℓk* + γg (default 100).")
    gamma: NonNegative = Field(1.0, description="Planted-token noise γ ≥ 0 (default 1).")
    eps: NonNegative = Field(0.1, description="Label noise sd ε ≥ 0: y = x_plantedᵀv* + εξ (default 0.1).")
    seed: Seed = 0

    def task(self) -> Task:
        return Task(self.m, self.n, self.d, self.ell, self.gamma, self.eps)


class RiskParams(TaskParams):
    """Parameters of ``axial_slr.risk``."""

    lambda_r: Positive = Field(0.05, description="Row (inner) inverse temperature λ_r (default 0.05).")
    lambda_c: Positive | None = Field(None, description="Column (outer) inverse temperature λ_c; default λ_r.")
    k: list[FiniteFloat] | None = Field(
        None, max_length=MAX_D, description="Key direction k (length d; renormalised to unit norm); default k*."
    )
    v: list[FiniteFloat] | None = Field(
        None, max_length=MAX_D, description="Value direction v (length d; renormalised); default v*."
    )
    inner: Inner = Field(
        "nonlinear",
        description="Row weights: 'nonlinear' (erf, or softmax with attention='softmax'; default), 'linear' "
        "(2/√π)λ_r x_ijᵀk (erf to first order) or 'const' (1: sum pooling).",
    )
    attention: Attention = Field("erf", description="'erf' (TErf, default) or 'softmax' over each attended axis.")
    n_mc: int = Field(20000, ge=100, le=100_000, description="Monte Carlo draws (default 20000).")


class VariantRisk(ResultModel):
    """Risk of one predictor at the oracle directions, on the same draws."""

    predictor: str = Field(description="'axial_nonlinear', 'axial_linear', 'axial_const' or 'flattened_1d'.")
    risk: float = Field(description="Monte Carlo mean of (T − y)².")
    se: float = Field(description="Standard error of the mean.")


class RiskResult(ResultModel):
    """Risks of the axial predictor at (k, v) and at the oracle (k*, v*)."""

    risk: float = Field(description="Monte Carlo risk E(T − y)² at (k, v).")
    risk_se: float = Field(description="Its standard error.")
    oracle_risk: float = Field(description="Monte Carlo risk at (k*, v*) on the same draws (same variant).")
    oracle_risk_se: float = Field(description="Its standard error.")
    bayes_risk: float = Field(description="ε²: the risk of E[y | X] in the identifiable limit.")
    excess_risk: float = Field(description="risk − ε².")
    oracle_excess_risk: float = Field(description="oracle_risk − ε² (→ 0 as λ → 0 with λℓ → ∞ for erf inner).")
    kappa: float = Field(description="κ = kᵀk*.")
    nu: float = Field(description="ν = vᵀv*.")
    abs_kappa: float = Field(description="|κ| (the model is invariant under (k, v) → (−k, −v)).")
    signed_nu: float = Field(description="sign(κ)·ν.")
    rho: float = Field(description="ρ = kᵀv.")
    manifold_distance: float = Field(description="(kᵀv)² + (kᵀv*)² + (vᵀk*)²: 0 on the invariant manifold.")
    variants: list[VariantRisk] = Field(
        description="Oracle risks of the erf-, linear- and constant-inner axial predictors and of the flattened "
        "1-D predictor Σ erf(λ_r x_lᵀk)·x_lᵀv over all M·N tokens, on the same draws."
    )
    exact_risk_1d: float | None = Field(
        description="M = 1 only: exact risk of the 1-D predictor Σ_j erf(λ_r x_jᵀk)·x_jᵀv at (k, v) (1-D Gaussian "
        "integrals by adaptive quadrature); null otherwise."
    )
    exact_oracle_risk_1d: float | None = Field(description="M = 1 only: the same at (k*, v*); null otherwise.")
    warnings: list[str] = Field(description="Notes (renormalised directions).")
    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED definition.")


def _direction(value: list[float] | None, d: int, default: np.ndarray, name: str, notes: list[str]) -> np.ndarray:
    if value is None:
        return default
    if len(value) != d:
        raise InvalidInput(f"{name} has {len(value)} entries; d = {d}", loc=(name,))
    vec = np.asarray(value, dtype=np.float64)
    size = float(np.linalg.norm(vec))
    if size == 0.0:
        raise InvalidInput(f"{name} must be non-zero", loc=(name,))
    if abs(size - 1.0) > RENORM_TOL:
        notes.append(f"{name} had norm {size:.6g}; renormalised to 1.")
    return vec / size


def _mean_se(sum_: float, sum_sq: float, count: int) -> tuple[float, float]:
    mean = sum_ / count
    var = max(sum_sq / count - mean * mean, 0.0) * count / (count - 1)
    return mean, float(np.sqrt(var / count))


def axial_risk(params: RiskParams, progress: Progress) -> RiskResult:
    """Monte Carlo E(T − y)² of T = Σ_i σ(λ_c h_iᵀk)·h_iᵀv, h_i = Σ_j σ(λ_r x_ijᵀk)·x_ij, and its variants."""
    task = params.task()
    notes: list[str] = []
    k = _direction(params.k, task.d, task.k_star, "k", notes)
    v = _direction(params.v, task.d, task.v_star, "v", notes)
    lam_r = params.lambda_r
    lam_c = params.lambda_c if params.lambda_c is not None else lam_r
    ks, vs = task.k_star, task.v_star
    rng = np.random.default_rng(params.seed)
    per_draw = task.m * task.n * task.d
    chunk = max(1, CHUNK_COORDS // per_draw)
    names = ["model", "oracle", "axial_nonlinear", "axial_linear", "axial_const", "flattened_1d"]
    sums = np.zeros((len(names), 2))
    done = 0
    while done < params.n_mc:
        size = min(chunk, params.n_mc - done)
        x, y = sample(task, rng, size)
        preds = [
            axial_predict(x, k, v, lam_r, lam_c, params.inner, params.attention),
            axial_predict(x, ks, vs, lam_r, lam_c, params.inner, params.attention),
            *(axial_predict(x, ks, vs, lam_r, lam_c, inner, params.attention) for inner in INNER_VARIANTS),
            flattened_predict(x, ks, vs, lam_r, params.attention),
        ]
        for i, pred in enumerate(preds):
            sq = (pred - y) ** 2
            sums[i] += (sq.sum(), (sq * sq).sum())
        done += size
        progress(done / params.n_mc, f"{done}/{params.n_mc} draws")
    stats = [_mean_se(s, s2, params.n_mc) for s, s2 in sums]
    kappa, nu = float(k @ ks), float(v @ vs)
    bayes = task.eps**2
    one_d = task.m == 1
    return RiskResult(
        risk=stats[0][0],
        risk_se=stats[0][1],
        oracle_risk=stats[1][0],
        oracle_risk_se=stats[1][1],
        bayes_risk=bayes,
        excess_risk=stats[0][0] - bayes,
        oracle_excess_risk=stats[1][0] - bayes,
        kappa=kappa,
        nu=nu,
        abs_kappa=abs(kappa),
        signed_nu=float(np.sign(kappa) or 1.0) * nu,
        rho=float(k @ v),
        manifold_distance=manifold_distance(task, k, v),
        variants=[VariantRisk(predictor=n, risk=m, se=s) for n, (m, s) in zip(names[2:], stats[2:], strict=True)],
        exact_risk_1d=exact_risk_1d(task, k, v, lam_r) if one_d else None,
        exact_oracle_risk_1d=exact_risk_1d(task, ks, vs, lam_r) if one_d else None,
        warnings=notes,
        reconstructed=["bayes_risk", "excess_risk", "oracle_excess_risk", "variants"],
    )


def risk_plot(result: RiskResult) -> Any:
    """Oracle risks of the four predictors (± 1.96 SE, log scale) against the Bayes risk ε²."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    names = [v.predictor for v in result.variants]
    ax.bar(names, [v.risk for v in result.variants], yerr=[1.96 * v.se for v in result.variants], capsize=3)
    if result.bayes_risk > 0:
        ax.axhline(result.bayes_risk, color="k", linestyle=":", label="Bayes risk ε²")
        ax.legend(fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("oracle risk E(T − y)²")
    fig.tight_layout()
    return fig


def risk_cost(params: RiskParams) -> float:
    """Token-coordinates processed: n_mc·M·N·d per predictor, six predictors."""
    return float(RISK_PASSES * params.n_mc * params.m * params.n * params.d)


class PgdParams(TaskParams):
    """Parameters of ``axial_slr.pgd`` (erf attention, λ_r = λ_c = λ_t)."""

    m: int = Field(3, ge=1, le=MAX_GRID, description="Rows M (default 3).")
    n: int = Field(3, ge=1, le=MAX_GRID, description="Tokens N per row (default 3).")
    d: int = Field(10, ge=2, le=MAX_D, description="Token dimension d (default 10).")
    ell: Positive = Field(50.0, description="Signal strength ℓ (default 50).")
    lr: Positive = Field(5e-4, description="Step size α (keep α·ℓ² of order 1; default 5e-4).")
    batch_size: int = Field(64, ge=1, le=1024, description="Fresh draws per step B (default 64).")
    iterations: int = Field(2000, ge=1, le=20_000, description="PGD steps (default 2000).")
    lambda0: Positive = Field(0.06, description="Initial inverse temperature λ0 (default 0.06).")
    schedule: Literal["constant", "inverse"] = Field(
        "constant",
        description="'constant': λ_t = λ0 (default); 'inverse': λ_t = max(floor, λ0/(1 + inc·max(0, t − switch))).",
    )
    switch: int = Field(0, ge=0, le=20_000, description="Step at which the inverse decay starts (default 0).")
    inc: Annotated[float, Field(strict=True, gt=0, le=1, allow_inf_nan=False)] = Field(
        1e-4, description="Decay rate of the inverse schedule (default 1e-4)."
    )
    floor: NonNegative = Field(0.0, description="Lower bound of λ_t (default 0; about c/ℓ keeps λℓ ≳ c).")
    init: Literal["manifold", "sphere"] = Field(
        "manifold",
        description="'manifold' (default): k ⊥ v*, v ⊥ k*, v ⊥ k; 'sphere': k and v uniform on the sphere.",
    )
    log_every: int | None = Field(
        None, ge=1, le=20_000, description="Steps between trajectory points (default: iterations/200, at least 1)."
    )
    eval_samples: int = Field(
        1000, ge=100, le=10_000, description="Fixed draws on which the logged risks are evaluated (default 1000)."
    )


class TrajectoryPoint(ResultModel):
    """State after ``t`` steps."""

    t: int = Field(description="Steps done.")
    lam: float = Field(description="λ_t used by the last step (λ0 at t = 0).")
    abs_kappa: float = Field(description="|kᵀk*|.")
    signed_nu: float = Field(description="sign(κ)·vᵀv*.")
    rho: float = Field(description="kᵀv.")
    risk: float = Field(description="Mean (T − y)² on the evaluation draws at (k, v) and λ_t.")
    oracle_risk: float = Field(description="The same at (k*, v*).")
    manifold_distance: float = Field(description="(kᵀv)² + (kᵀv*)² + (vᵀk*)².")


class PgdResult(ResultModel):
    """PGD trajectory and final state."""

    trajectory: list[TrajectoryPoint] = Field(description="Logged states (at most 1,000, first and last included).")
    k: list[float] = Field(description="Final k.")
    v: list[float] = Field(description="Final v.")
    abs_kappa: float = Field(description="Final |κ|.")
    signed_nu: float = Field(description="Final sign(κ)·ν.")
    final_risk: float = Field(description="Final risk on the evaluation draws.")
    final_oracle_risk: float = Field(description="Final oracle risk on the evaluation draws (same λ).")
    final_lambda: float = Field(description="λ of the last step.")
    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED definition.")


def _lambda(params: PgdParams, t: int) -> float:
    if params.schedule == "constant":
        return params.lambda0
    return max(params.floor, params.lambda0 / (1.0 + params.inc * max(0, t - params.switch)))


def _log_every(params: PgdParams) -> int:
    every = params.log_every or max(1, params.iterations // 200)
    if params.iterations // every + 2 > MAX_TRAJECTORY:
        raise InvalidInput(
            f"log_every={every} logs {params.iterations // every + 1} points; at most {MAX_TRAJECTORY - 1}",
            loc=("log_every",),
        )
    return every


def axial_pgd(params: PgdParams, progress: Progress) -> PgdResult:
    """PGD on (k, v) ∈ S^{d−1}×S^{d−1} for the erf axial predictor with fresh batches and a λ schedule."""
    task = params.task()
    every = _log_every(params)
    rng = np.random.default_rng(params.seed)
    k, v = init_directions(task, rng, params.init == "manifold")
    eval_x, eval_y = sample(task, np.random.default_rng([params.seed, 1]), params.eval_samples)
    ks, vs = task.k_star, task.v_star
    points: list[TrajectoryPoint] = []

    def log(t: int, lam: float) -> None:
        risk = float(np.mean((axial_predict(eval_x, k, v, lam, lam, "nonlinear", "erf") - eval_y) ** 2))
        oracle = float(np.mean((axial_predict(eval_x, ks, vs, lam, lam, "nonlinear", "erf") - eval_y) ** 2))
        kappa = float(k @ ks)
        points.append(
            TrajectoryPoint(
                t=t,
                lam=lam,
                abs_kappa=abs(kappa),
                signed_nu=float(np.sign(kappa) or 1.0) * float(v @ vs),
                rho=float(k @ v),
                risk=risk,
                oracle_risk=oracle,
                manifold_distance=manifold_distance(task, k, v),
            )
        )

    lam = _lambda(params, 0)
    log(0, lam)
    tick = max(1, params.iterations // 100)
    for t in range(params.iterations):
        lam = _lambda(params, t)
        x, y = sample(task, rng, params.batch_size)
        _, grad_k, grad_v = risk_gradient(x, y, k, v, lam, lam)
        k, v = pgd_step(k, v, grad_k, grad_v, params.lr)
        if (t + 1) % every == 0 or t + 1 == params.iterations:
            log(t + 1, lam)
        if (t + 1) % tick == 0:
            progress((t + 1) / params.iterations, f"step {t + 1}/{params.iterations}")
    last = points[-1]
    return PgdResult(
        trajectory=points,
        k=k.tolist(),
        v=v.tolist(),
        abs_kappa=last.abs_kappa,
        signed_nu=last.signed_nu,
        final_risk=last.risk,
        final_oracle_risk=last.oracle_risk,
        final_lambda=lam,
        reconstructed=["trajectory"],
    )


def pgd_cost(params: PgdParams) -> float:
    """Token-coordinates: 12·B·M·N·d per step (gradient) plus 2·eval_samples·M·N·d per logged point."""
    every = _log_every(params)
    grid = params.m * params.n * params.d
    logs = params.iterations // every + 2
    return float(
        params.iterations * params.batch_size * grid * PGD_GRADIENT_WEIGHT + 2 * logs * params.eval_samples * grid
    )


def pgd_plot(result: PgdResult) -> Any:
    """|κ|, sign(κ)·ν and λ_t against the step."""
    from matplotlib.figure import Figure

    t = [p.t for p in result.trajectory]
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.plot(t, [p.abs_kappa for p in result.trajectory], label="|κ| = |kᵀk*|")
    ax.plot(t, [p.signed_nu for p in result.trajectory], label="sign(κ)·ν")
    ax.set_xlabel("PGD step t")
    ax.set_ylabel("alignment")
    ax.set_ylim(-1.05, 1.05)
    twin = ax.twinx()
    twin.plot(t, [p.lam for p in result.trajectory], "k:", label="λ_t")
    twin.set_ylabel("λ_t")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def pgd_curves(result: PgdResult) -> Curves:
    """The plot's |κ| and sign(κ)·ν against the step (λ_t, on the plot's second axis, left out), for overlaying
    runs."""
    t = [p.t for p in result.trajectory]
    curves = (
        Curve("|κ|", t, [p.abs_kappa for p in result.trajectory]),
        Curve("sign(κ)·ν", t, [p.signed_nu for p in result.trajectory]),
    )
    return Curves("PGD step t", "alignment", curves)


COST_UNIT = "token-coordinates processed (draws × M·N·d per predictor evaluation; a gradient counts 12)"

SPECS = [
    register(
        EstimatorSpec(
            name="axial_slr.risk",
            version="1",
            family="axial_slr",
            summary="Monte Carlo and oracle risks of the axial attention predictor for single-location regression "
            "on an M×N token grid, its semi-linear variants and the flattened 1-D predictor (exact when M = 1).",
            paper=PAPER,
            citation=CITATION,
            params_model=RiskParams,
            result_model=RiskResult,
            fn=axial_risk,
            cost=risk_cost,
            cost_unit=COST_UNIT,
            sync_budget=1.5e8,
            hard_cap=RISK_PASSES * MAX_TOKEN_COORDS,
            plot=risk_plot,
        )
    ),
    register(
        EstimatorSpec(
            name="axial_slr.pgd",
            version="1",
            family="axial_slr",
            summary="Projected gradient descent of the axial erf predictor on the sphere with a constant or "
            "inverse-decay inverse temperature; trajectory of |κ|, ν, risks and distance to the invariant manifold.",
            paper=PAPER,
            citation=CITATION,
            params_model=PgdParams,
            result_model=PgdResult,
            fn=axial_pgd,
            cost=pgd_cost,
            cost_unit=COST_UNIT,
            sync_budget=1.5e8,
            hard_cap=5e10,
            plot=pgd_plot,
            overlay=pgd_curves,
        )
    ),
]
