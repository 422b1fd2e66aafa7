"""The curse of unrolling: error of the Jacobian differentiated through gradient descent on a quadratic.

``unrolling.jacobian_error`` runs x_{t+1} = x_t − h(Hx_t − b) with the forward-mode derivative
J_{t+1} = (I − hH)J_t − h(∂H x_t − ∂b) (J_t = 0 up to a truncation point k0) and reports the relative error
‖J_t − J*‖/‖J*‖ against J* = H⁻¹(∂b − ∂H x*), its peak, the non-asymptotic bound, the predicted peak time
k0 + 1/ln(1/ρ), the memory reverse mode would need, and the implicit-differentiation baseline at x_K. Exact
per-eigencomponent form when ∂H commutes with H (ridge), the explicit recursion otherwise.
"""

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.estimators.unrolling_error import (
    Eigen,
    Problem,
    closed_form_errors,
    eigen,
    recursion_errors,
    solve,
    truth,
)
from service.estimators.unrolling_plot import jacobian_error_curves, plot_jacobian_error
from service.registry import EstimatorSpec, Progress, register
from service.types import ResultModel, StrictModel, array_param

PAPER = "Understanding the Curse of Unrolling"
CITATION = (
    "Mehmood, Knoll & Ochs, Understanding the Curse of Unrolling, arXiv 2602.19733 (NeurIPS 2026); "
    "Scieur, Gidel, Bertrand & Pedregosa, The Curse of Unrolling: Rate of Differentiating Through Optimization, "
    "NeurIPS 2022 (arXiv 2209.13271)."
)
MAX_N = 5000
MAX_P = 500
MAX_K = 20_000
MAX_ENTRY = 1e8
MAX_KAPPA = 1e12
MAX_SAMPLES = 1000
SYMMETRY_TOL = 1e-12
RECONSTRUCTED = ["curves.bound", "curves.predicted_t_peak", "curves.predicted_peak", "curse_expected"]

Entry = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_ENTRY, le=MAX_ENTRY)]
Row = Annotated[list[Entry], Field(min_length=1, max_length=MAX_P)]
Vector = array_param(Entry, "float", ge=-MAX_ENTRY, le=MAX_ENTRY, max_length=MAX_N)
PVector = array_param(Entry, "float", ge=-MAX_ENTRY, le=MAX_ENTRY, max_length=MAX_P)
Matrix = array_param(Row, "float", ndim=2, ge=-MAX_ENTRY, le=MAX_ENTRY, max_length=MAX_N)
PMatrix = array_param(Row, "float", ndim=2, ge=-MAX_ENTRY, le=MAX_ENTRY, max_length=MAX_P)
StepRule = Literal["1/L", "sqrt2/L", "2/(mu+L)"]


class RidgeProblem(StrictModel):
    """Ridge regression in θ: H = XᵀX + θI, ∂H = I, b = Xᵀy, ∂b = 0."""

    kind: Literal["ridge"]
    x: Matrix = Field(description=f"Design X (n × p, n ≤ {MAX_N}, p ≤ {MAX_P}); an uploaded npy reference if large.")  # type: ignore[valid-type]
    y: Vector = Field(description="Targets y (n).")  # type: ignore[valid-type]
    theta: float = Field(gt=0, le=MAX_ENTRY, description="Ridge parameter θ > 0.")


class QuadraticProblem(StrictModel):
    """f(x) = ½ xᵀHx − bᵀx with explicit derivatives ∂H, ∂b in the hyperparameter."""

    kind: Literal["quadratic"]
    h: PMatrix = Field(description="H, symmetric positive definite (p × p).")  # type: ignore[valid-type]
    dh: PMatrix = Field(description="∂H (p × p).")  # type: ignore[valid-type]
    b: PVector = Field(description="b (p).")  # type: ignore[valid-type]
    db: PVector = Field(description="∂b (p).")  # type: ignore[valid-type]


class JacobianErrorParams(StrictModel):
    """Parameters of ``unrolling.jacobian_error``."""

    problem: Annotated[RidgeProblem | QuadraticProblem, Field(discriminator="kind")]
    step: float | None = Field(None, gt=0, le=MAX_ENTRY, description="Step size h (< 2/L); or give step_rule.")
    step_rule: StepRule | None = Field(None, description="h = 1/L, √2/L or 2/(μ + L); or give step.")
    iterations: int = Field(ge=1, le=MAX_K, description=f"Number of GD steps K (≤ {MAX_K}).")
    k0_list: list[Annotated[int, Field(ge=0, lt=MAX_K)]] = Field(
        default_factory=lambda: [0],
        min_length=1,
        max_length=16,
        description="Truncation points k0 < K, distinct: the derivative starts at k0 with J_k0 = 0 (default [0]).",
    )
    x0: PVector | None = Field(None, description="Initial iterate x0 (p); default zeros.")  # type: ignore[valid-type]


class Curve(ResultModel):
    """The error of the derivative iterate truncated at k0, sampled at ≤ 1,000 iterations (all when K ≤ 996)."""

    k0: int
    peak_rel_error: float | None = Field(description="max over k0 < t ≤ K of ‖J_t − J*‖/‖J*‖; null if J* = 0.")
    peak_abs_error: float = Field(description="max over k0 < t ≤ K of ‖J_t − J*‖.")
    t_peak: int = Field(description="The first t in (k0, K] where the peak is reached.")
    rel_error_at_K: float | None = Field(description="‖J_K − J*‖/‖J*‖; null if J* = 0.")
    predicted_t_peak: float = Field(description="k0 + 1/ln(1/ρ), where the transient term of the bound peaks.")
    predicted_peak: float | None = Field(
        description="Peak of the bound's transient term relative to ‖J*‖: h‖∂H‖ρ^k0‖x0 − x*‖/(e·ρ·ln(1/ρ)‖J*‖); "
        "null if J* = 0 or ρ = 0."
    )
    stored_iterates: int = Field(description="Iterates reverse mode stores: K − k0.")
    stored_bytes: int = Field(description="(K − k0)·p·8 bytes of float64 iterates.")
    t: list[int] = Field(
        description="Sampled iterations: all when K ≤ 996, else log-spaced; always k0, k0 + 1, t_peak and K."
    )
    rel_error: list[float] | None = Field(description="‖J_t − J*‖/‖J*‖ at t (1 for t ≤ k0); null if J* = 0.")
    abs_error: list[float] = Field(description="‖J_t − J*‖ at t.")
    bound: list[float] | None = Field(
        description="(ρ^m‖J*‖ + m·h·ρ^(m−1)‖∂H‖ρ^k0‖x0 − x*‖)/‖J*‖ with m = t − k0 (1 for t ≤ k0); null if J* = 0."
    )


class JacobianErrorResult(ResultModel):
    """Conditioning, step, curves per k0 and the implicit baseline."""

    L: float = Field(description="Largest eigenvalue of H.")
    mu: float = Field(description="Smallest eigenvalue of H.")
    kappa: float = Field(description="L/μ.")
    rho: float = Field(description="Contraction factor max(|1 − hμ|, |1 − hL|).")
    step: float = Field(description="Step h used.")
    curse_expected: bool = Field(
        description="x0 = 0: h·L > √2 (a component grows at t = 2 iff hλ > √2); x0 ≠ 0: the predicted transient "
        "peak of the bound (k0 = 0) exceeds the initial relative error 1."
    )
    method: Literal["closed_form", "recursion"] = Field(
        description="closed_form when ∂H is diagonal in H's eigenbasis, else the explicit recursion."
    )
    j_star_norm: float = Field(description="‖J*‖₂.")
    implicit_error: float | None = Field(
        description="‖H⁻¹(∂b − ∂H x_K) − J*‖/‖J*‖, implicit differentiation at the K-th iterate; null if J* = 0."
    )
    curves: list[Curve]
    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED bound or criterion.")


def _array(value: object, shape: tuple[int, ...], loc: tuple[str, ...]) -> np.ndarray:
    """The value as a float array of the given shape, or a 422 naming the field."""
    if isinstance(value, list) and value and isinstance(value[0], list) and any(len(r) != len(value[0]) for r in value):
        raise InvalidInput(f"rows of different lengths; expected shape {list(shape)}", loc=loc)
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != shape:
        raise InvalidInput(f"expected shape {list(shape)}, got {list(arr.shape)}", loc=loc)
    return arr


def build_problem(params: JacobianErrorParams) -> Problem:
    """H, ∂H, b, ∂b from the parameters, with shapes, symmetry and finiteness checked (422 naming the field)."""
    pr = params.problem
    if isinstance(pr, RidgeProblem):
        x = _array(pr.x, (len(pr.x), len(pr.x[0])), ("problem", "x"))
        n, p = x.shape
        y = _array(pr.y, (n,), ("problem", "y"))
        h = x.T @ x + pr.theta * np.eye(p)
        problem = Problem(h=h, dh=np.eye(p), b=x.T @ y, db=np.zeros(p))
    else:
        p = len(pr.h)
        h = _array(pr.h, (p, p), ("problem", "h"))
        scale = float(np.abs(h).max())
        if float(np.abs(h - h.T).max()) > SYMMETRY_TOL * scale:
            raise InvalidInput("H must be symmetric", loc=("problem", "h"))
        problem = Problem(
            h=0.5 * (h + h.T),
            dh=_array(pr.dh, (p, p), ("problem", "dh")),
            b=_array(pr.b, (p,), ("problem", "b")),
            db=_array(pr.db, (p,), ("problem", "db")),
        )
    if not np.isfinite(problem.h).all() or not np.isfinite(problem.b).all():
        raise InvalidInput("H or b overflows float64", loc=("problem",))
    return problem


def choose_step(params: JacobianErrorParams, big_l: float, mu: float) -> float:
    if (params.step is None) == (params.step_rule is None):
        raise InvalidInput("give exactly one of step and step_rule", loc=("step",))
    if params.step is not None:
        if params.step * big_l >= 2.0:
            raise InvalidInput(f"h = {params.step:g} ≥ 2/L = {2.0 / big_l:g}: gradient descent diverges", loc=("step",))
        return params.step
    return {"1/L": 1.0 / big_l, "sqrt2/L": math.sqrt(2.0) / big_l, "2/(mu+L)": 2.0 / (mu + big_l)}[params.step_rule]


def sample_times(iterations: int, extra: list[int]) -> np.ndarray:
    """Every iteration when K ≤ 1,000 − len(extra); else about 1,000 − len(extra) distinct log-spaced ones (the
    rounded grid is refined until it has that many), always with the given ones."""
    budget = MAX_SAMPLES - len(extra)
    if iterations <= budget:
        base = np.arange(1, iterations + 1)
    else:
        n = budget
        base = np.unique(np.geomspace(1, iterations, n).round().astype(np.int64))
        while base.size < 0.98 * budget:
            n = int(n * budget / base.size) + 1
            base = np.unique(np.geomspace(1, iterations, n).round().astype(np.int64))
        base = base[np.unique(np.linspace(0, base.size - 1, min(base.size, budget)).round().astype(np.int64))]
    keep = np.unique(np.concatenate([base, np.asarray(extra, dtype=np.int64)]))
    return keep[(keep >= 1) & (keep <= iterations)]


def _check(params: JacobianErrorParams, p: int) -> None:
    if any(k0 >= params.iterations for k0 in params.k0_list):
        raise InvalidInput("every k0 must be < iterations", loc=("k0_list",))
    if len(set(params.k0_list)) != len(params.k0_list):
        raise InvalidInput("k0 values must be distinct", loc=("k0_list",))
    if params.x0 is not None:
        _array(params.x0, (p,), ("x0",))


def jacobian_error(params: JacobianErrorParams, progress: Progress) -> JacobianErrorResult:
    """Error curves of the unrolled (and truncated) forward-mode Jacobian of gradient descent on a quadratic."""
    problem = build_problem(params)
    p = problem.b.size
    _check(params, p)
    x0 = np.zeros(p) if params.x0 is None else np.asarray(params.x0, dtype=np.float64)
    eig: Eigen = eigen(problem)
    big_l, mu = float(eig.lam[-1]), float(eig.lam[0])
    if mu <= 0.0:
        raise InvalidInput(f"H is not positive definite (smallest eigenvalue {mu:.3g})", loc=("problem",))
    if big_l / mu > MAX_KAPPA:
        raise InvalidInput(f"condition number {big_l / mu:.3g} > {MAX_KAPPA:g}", loc=("problem",))
    step = choose_step(params, big_l, mu)
    rho = max(abs(1.0 - step * mu), abs(1.0 - step * big_l))
    if rho >= 1.0:
        raise InvalidInput(f"h = {step:g} is too small: 1 − hμ rounds to 1 (no contraction in float64)", loc=("step",))
    tr = truth(problem, eig)
    j_norm = float(np.linalg.norm(tr.j_star))
    dh_norm = float(np.abs(eig.delta).max()) if eig.delta is not None else float(np.linalg.norm(problem.dh, 2))
    gap0 = float(np.linalg.norm(x0 - tr.x_star))
    K = params.iterations
    if eig.delta is not None:
        n_k0 = len(params.k0_list)
        errors = np.stack(
            [
                closed_form_errors(
                    eig, eig.delta, tr, step, x0, k0, K, lambda f, i=i, k=k0: progress((i + f) / n_k0, f"k0={k}")
                )
                for i, k0 in enumerate(params.k0_list)
            ],
            axis=1,
        )
    else:
        errors = recursion_errors(problem, tr, step, x0, params.k0_list, K, lambda f: progress(f, "recursion"))
    curves = [_curve(errors[:, i], k0, K, p, step, rho, j_norm, dh_norm, gap0) for i, k0 in enumerate(params.k0_list)]
    r = 1.0 - step * eig.lam
    x_gap_k = eig.q @ (r**K * (eig.q.T @ (x0 - tr.x_star)))
    implicit_abs = float(np.linalg.norm(solve(eig, problem.dh @ x_gap_k)))
    if not np.any(x0):
        curse = step * big_l > math.sqrt(2.0)
    else:
        curse = rho > 0 and _transient_peak(step, rho, dh_norm, gap0) > j_norm
    return JacobianErrorResult(
        L=big_l,
        mu=mu,
        kappa=big_l / mu,
        rho=rho,
        step=step,
        curse_expected=bool(curse),
        method="closed_form" if eig.delta is not None else "recursion",
        j_star_norm=j_norm,
        implicit_error=implicit_abs / j_norm if j_norm > 0 else None,
        curves=curves,
        reconstructed=RECONSTRUCTED,
    )


def _transient_peak(step: float, rho: float, dh_norm: float, gap: float) -> float:
    """max over m of m·h·ρ^(m−1)·‖∂H‖·gap = h‖∂H‖·gap/(e·ρ·ln(1/ρ)) (continuous m)."""
    return step * dh_norm * gap / (math.e * rho * math.log(1.0 / rho))


def _curve(
    err: np.ndarray, k0: int, K: int, p: int, step: float, rho: float, j_norm: float, dh_norm: float, gap0: float
) -> Curve:
    after = err[k0:]
    t_peak = k0 + 1 + int(np.argmax(after))
    ts = sample_times(K, [k0, k0 + 1, t_peak, K])
    abs_err = err[ts - 1]
    m = np.maximum(ts - k0, 0).astype(np.float64)
    rho_k0 = rho**k0
    rho_m1 = rho ** np.maximum(m - 1, 0)
    bound_abs = np.where(m >= 1, rho_m1 * (rho * j_norm + m * step * dh_norm * rho_k0 * gap0), j_norm)
    predicted = k0 + (1.0 / math.log(1.0 / rho) if rho > 0 else 0.0)
    relative = j_norm > 0
    return Curve(
        k0=k0,
        peak_rel_error=float(after.max() / j_norm) if relative else None,
        peak_abs_error=float(after.max()),
        t_peak=t_peak,
        rel_error_at_K=float(err[-1] / j_norm) if relative else None,
        predicted_t_peak=predicted,
        predicted_peak=_transient_peak(step, rho, dh_norm, gap0) * rho_k0 / j_norm if relative and rho > 0 else None,
        stored_iterates=K - k0,
        stored_bytes=(K - k0) * p * 8,
        t=ts.tolist(),
        rel_error=(abs_err / j_norm).tolist() if relative else None,
        abs_error=abs_err.tolist(),
        bound=(bound_abs / j_norm).tolist() if relative else None,
    )


def _is_scalar_matrix(value: object) -> bool:
    """Whether a (possibly ragged) list of rows or an array is c·I."""
    rows = value if isinstance(value, np.ndarray) else None
    if rows is None and all(len(r) == len(value) for r in value):  # type: ignore[attr-defined, union-attr]
        rows = np.asarray(value, dtype=np.float64)
    if rows is None or rows.ndim != 2 or rows.shape[0] != rows.shape[1]:
        return False
    return bool(np.all(rows == rows[0, 0] * np.eye(rows.shape[0])))


CLOSED_FORM_PER_ENTRY = 12.0
"""Work units per (t, i) entry of the closed form (power-table products and a few multiply-adds; conservative)."""
STEP_OVERHEAD = 20_000.0
"""Fixed work units per recursion step (numpy call overhead)."""


def cost(params: JacobianErrorParams) -> float:
    """Work units (≈ 1 ns each here): eigh 2p³ (+ np² for the ridge Gram matrix); per k0 the closed form
    12·K·p, or for a ∂H that is not a multiple of I the recursion K·(p²·(2 + #k0) + 2·10⁴) plus 2p³ to test
    whether ∂H is diagonal in H's eigenbasis."""
    pr = params.problem
    if isinstance(pr, RidgeProblem):
        n, p = len(pr.x), len(pr.x[0])
        work = float(n) * p * p
        scalar_dh = True
    else:
        p = len(pr.h)
        work = 0.0
        scalar_dh = _is_scalar_matrix(pr.dh)
    work += 2.0 * p**3
    K, n_k0 = params.iterations, len(params.k0_list)
    if scalar_dh:
        work += CLOSED_FORM_PER_ENTRY * K * p * n_k0
    else:
        work += 2.0 * p**3 + K * (p * p * (2.0 + n_k0) + STEP_OVERHEAD)
    return work


COST_UNIT = "work units (≈ 1 ns each on one core): eigensolve p³, closed form K·p per k0, recursion K·p² per step"
SYNC_BUDGET = 1e9
HARD_CAP = 3e12

SPEC = register(
    EstimatorSpec(
        name="unrolling.jacobian_error",
        version="1",
        family="unrolling",
        summary="Relative error of the Jacobian unrolled through gradient descent on a quadratic (ridge or general), "
        "with truncation at k0, the non-asymptotic bound, predicted peak, memory and the implicit baseline.",
        paper=PAPER,
        citation=CITATION,
        params_model=JacobianErrorParams,
        result_model=JacobianErrorResult,
        fn=jacobian_error,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        plot=plot_jacobian_error,
        overlay=jacobian_error_curves,
    )
)
