"""One-step (batch) pNML regret: the minimax batch regret term of the decomposition.

Multinomial: q(j) ∝ p_{θ̂(D∪j)}(j) = (n_j+1)/(n+1), i.e. the Laplace rule, regret log((n+K)/(n+1)).
Gaussian linear regression, X of full column rank p < n (Bibas, Fogel & Feder 2019, Sherman–Morrison):
q(y|x) = N(x^Tθ̂, σ²(1+h)²), h = x^T(X^TX)^{-1}x, regret log(1+h).
Otherwise (p ≥ n or rank-deficient X) the unconstrained normaliser is infinite; we compute the pNML of the
norm-constrained class ||θ|| ≤ ||θ_MN||, θ_MN = X⁺y (Bibas & Feder 2021), RECONSTRUCTED as follows. For a
candidate test label y_t the genie is the constrained least-squares fit on D ∪ (x, y_t), i.e. ridge regression
θ(λ) = (A^TA + λI)^{-1}A^Tb, A = [X; x^T], b = [y; y_t], with λ ≥ 0 the root of ||θ(λ)|| = ||θ_MN|| (λ = 0 when
the min-norm least-squares fit already satisfies the constraint). The regret is log ∫ N(y_t; x^Tθ(λ(y_t)), σ²) dy_t,
integrated numerically. In the basis [row space of X, x_⊥] A^TA is diagonal plus rank one, so each genie fit
is O(rank) by Sherman–Morrison (see ``_genie``); no per-test-point factorisation.
"""

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field
from scipy.special import ndtr

from service.errors import Degenerate, InvalidInput
from service.estimators.compression_nml import MAX_TOTAL_COUNT, PAPER
from service.registry import EstimatorSpec, Progress, register
from service.types import MAX_JSON_ARRAY, ResultModel, StrictModel

MAX_ROWS = 5000
MAX_COLS = 500
_POINTS_PER_EFOLD = 30
"""Density of the log grid of the label integral (trapezoid in log t, exponentially convergent: 3e-8 nats at
30 points per e-fold against 400)."""
_T_MIN = 1e-4
"""Innermost grid point, in units of σ: the integrand varies on scales ≥ σ since the genie's residual ≤ |t|."""
_NEWTON_ITERS = 200

Count = Annotated[int, Field(strict=True, ge=0, le=MAX_TOTAL_COUNT)]
Entry = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-1e6, le=1e6)]
Row = Annotated[list[Entry], Field(min_length=1, max_length=MAX_COLS)]


class BatchRegretParams(StrictModel):
    """Parameters of ``compression.batch_regret``; ``model`` selects which other fields are used."""

    model: Literal["multinomial", "gaussian_linear"] = Field(
        description="'multinomial': needs counts. 'gaussian_linear': needs X and X_test (and y when X does "
        "not have full column rank p < n)."
    )
    counts: list[Count] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_JSON_ARRAY,
        description="multinomial: training counts n_1..n_K (K = len(counts), sum ≤ 10^9).",
    )
    X: list[Row] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ROWS,
        description="gaussian_linear: training design matrix as n rows of p features (n ≤ 5000, p ≤ 500, "
        "n·p ≤ 100,000 elements, |entry| ≤ 10^6).",
    )
    X_test: list[Row] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ROWS,
        description="gaussian_linear: test points, m rows of the same p features (m·p ≤ 100,000).",
    )
    y: list[Entry] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ROWS,
        description="gaussian_linear: training targets (length n). Required for the norm-constrained form "
        "(p ≥ n or rank-deficient X), which constrains ||θ|| ≤ ||X⁺y||; unused by the closed form.",
    )
    sigma: float = Field(
        default=1.0,
        gt=0,
        le=1e6,
        description="gaussian_linear: noise standard deviation σ of the Gaussian likelihood (default 1). "
        "The closed-form regret log(1+h) does not depend on it; the norm-constrained one does.",
    )


class BatchRegretResult(ResultModel):
    """pNML regret per test point (nats) and its mean."""

    model: str = Field(description="The model used.")
    form: Literal["laplace_closed_form", "leverage_closed_form", "norm_constrained"] = Field(
        description="'laplace_closed_form': multinomial log((n+K)/(n+1)); 'leverage_closed_form': log(1+h), "
        "h = x^T(X^TX)^{-1}x (X of full column rank p < n); 'norm_constrained': numerical pNML normaliser "
        "with ||θ|| ≤ ||θ_MN|| (p ≥ n or rank-deficient X; RECONSTRUCTED)."
    )
    regret_nats: list[float] = Field(
        description="pNML regret log(normaliser) per test point, in nats. For the multinomial the regret is the "
        "same for every test symbol and is given once."
    )
    mean_regret_nats: float = Field(description="Mean of regret_nats.")
    leverages: list[float] | None = Field(description="leverage_closed_form: h per test point; null otherwise.")
    pnml_probs: list[float] | None = Field(
        description="multinomial: the pNML predictive (n_j+1)/(n+K) (the Laplace rule); null otherwise."
    )
    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED definition.")


def _matrix(rows: list[list[float]], field: str) -> np.ndarray:
    """Rows → float array; rows must share a length and the array holds ≤ MAX_JSON_ARRAY elements."""
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise InvalidInput(f"all rows of {field} must have the same length", loc=(field,))
    if len(rows) * width > MAX_JSON_ARRAY:
        raise InvalidInput(f"{field} has {len(rows) * width} elements (> {MAX_JSON_ARRAY})", loc=(field,))
    return np.asarray(rows, dtype=np.float64)


def _check_fields(params: BatchRegretParams) -> None:
    """Fields of the other model must be absent; those of the chosen model present."""
    own = {"multinomial": ("counts",), "gaussian_linear": ("X", "X_test")}[params.model]
    other = {"multinomial": ("X", "X_test", "y"), "gaussian_linear": ("counts",)}[params.model]
    for name in own:
        if getattr(params, name) is None:
            raise InvalidInput(f"model={params.model!r} requires {name}", loc=(name,))
    for name in other:
        if getattr(params, name) is not None:
            raise InvalidInput(f"{name} is not used by model={params.model!r}", loc=(name,))


def multinomial_pnml(counts: np.ndarray) -> tuple[float, np.ndarray]:
    """pNML regret log((n+K)/(n+1)) and predictive (n_j+1)/(n+K) (derived: one-step pNML = Laplace)."""
    n, k = counts.sum(), counts.size
    return math.log((n + k) / (n + 1)), (counts + 1) / (n + k)


def thin_svd(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SVD truncated to the numerical rank (singular values > max(n,p)·eps·s_max)."""
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    rank = int((s > s[0] * max(x.shape) * np.finfo(np.float64).eps).sum()) if s.size and s[0] > 0 else 0
    return u[:, :rank], s[:rank], vt[:rank]


def leverages(s: np.ndarray, vt: np.ndarray, x_test: np.ndarray) -> np.ndarray:
    """h = x^T(X^TX)^{-1}x = ||S^{-1}V^T x||² from the SVD of X (no explicit inverse)."""
    return (((x_test @ vt.T) / s) ** 2).sum(axis=1)


def _genie(
    lam: np.ndarray, y_t: np.ndarray, d: np.ndarray, g: np.ndarray, a: np.ndarray, x_perp: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ridge genie on D ∪ (x, y_t) in the basis [V (row space of X), x_⊥/||x_⊥||], per grid row.

    There A^TA = diag(d, 0) + ã ã^T with d = s², ã = (V^Tx, ||x_⊥||), and A^Tb = (g, 0) + ã y_t, g = S U^T y.
    Sherman–Morrison with E = diag(d, 0) + λI, multiplied through by λ so that λ → 0 stays finite:
    α = Σ a²/(d+λ), β = Σ a g/(d+λ), Λ = λ(1+α) + ||x_⊥||², residual y_t − x^Tθ = λ(y_t−β)/Λ,
    θ_i = (g_i + a_i·residual)/(d_i+λ), θ_⊥ = ||x_⊥||(y_t−β)/Λ (x_⊥ = 0: residual = (y_t−β)/(1+α), θ_⊥ = 0).
    Returns the residual, ||θ||² and d||θ||²/dλ = −2 θ^T(A^TA+λI)^{-1}θ (same Sherman–Morrison form).
    """
    e = d + lam[:, None]
    alpha = (a**2 / e).sum(axis=1)
    delta = y_t - (a * g / e).sum(axis=1)
    big = lam * (1 + alpha) + x_perp**2 if x_perp > 0 else 1 + alpha
    resid = (lam if x_perp > 0 else 1.0) * delta / big
    theta = (g + a * resid[:, None]) / e
    theta_perp = x_perp * delta / big
    s = (a * theta / e).sum(axis=1)
    kappa = (lam * s + x_perp * theta_perp) / big if x_perp > 0 else s / big
    z_perp = (theta_perp * (1 + alpha) - x_perp * s) / big
    z = (theta - a * kappa[:, None]) / e
    norm2 = (theta**2).sum(axis=1) + theta_perp**2
    dnorm2 = -2.0 * ((theta * z).sum(axis=1) + theta_perp * z_perp)
    return resid, norm2, dnorm2


def _genie_residuals(
    y_t: np.ndarray, d: np.ndarray, g: np.ndarray, a: np.ndarray, x_perp: float, radius: float
) -> np.ndarray:
    """Residual of the norm-constrained genie per grid row: λ = 0 where ||θ(0)|| ≤ radius, else the root of
    ||θ(λ)|| = radius by Newton on φ(λ) = 1/radius − 1/||θ(λ)|| (concave and nearly linear, Moré & Sorensen
    1983): from λ = 0 the first step lands right of the root and the iterates then decrease to it."""
    lam = np.zeros(y_t.size)
    resid, norm2, dnorm2 = _genie(lam, y_t, d, g, a, x_perp)
    active = norm2 > radius**2 * (1 + 1e-12)
    for _ in range(_NEWTON_ITERS):
        if not np.any(active):
            return resid
        step = (1.0 / radius - norm2**-0.5) / (0.5 * norm2**-1.5 * dnorm2)
        lam = np.where(active, np.maximum(lam - step, 0.0), lam)
        resid, norm2, dnorm2 = _genie(lam, y_t, d, g, a, x_perp)
        active &= np.abs(np.sqrt(norm2) - radius) > 1e-11 * radius
    raise Degenerate("the norm-constrained genie fit did not converge", loc=("X",))


def norm_constrained_regret(
    u0: np.ndarray, s0: np.ndarray, vt0: np.ndarray, y: np.ndarray, x: np.ndarray, sigma: float
) -> float:
    """log ∫ N(y_t; x^Tθ(y_t), σ²) dy_t for the genie ||θ|| ≤ ||θ_MN|| (module docstring; RECONSTRUCTED).

    With t = y_t − x^Tθ_MN the constraint is inactive only at t = 0 when x_⊥ ≠ 0. When x lies in the row
    space of X, the λ = 0 genie is θ_MN + t·(X^TX)⁺x/(1+h) (Sherman–Morrison), inactive for t between 0 and
    t* = −2(1+h)·θ_MN^T(X^TX)⁺x / ||(X^TX)⁺x||², where the residual is t/(1+h) and the integral is exact;
    the active parts start at 0 and at t* (the integrand has kinks there) and run over log grids of
    [10^-4σ, t_max] away from them. Beyond t_max = |x^Tθ_MN| + ||x||·||θ_MN|| + 12σ the residual exceeds
    12σ since |x^Tθ| ≤ ||x||·||θ_MN||, so the integrand is < e^-72 there.
    """
    uty = u0.T @ y
    coef = uty / s0
    radius = float(np.linalg.norm(coef))
    if radius == 0.0:
        return 0.0
    a = vt0 @ x
    d = s0**2
    x_norm = float(np.linalg.norm(x))
    x_perp = float(np.linalg.norm(x - vt0.T @ a)) if s0.size < x.size else 0.0
    t_star, inner = 0.0, 0.0
    if x_perp <= 1e-10 * x_norm:
        x_perp = 0.0
        h = float((a**2 / d).sum())
        curv = float((a**2 / d**2).sum())
        if curv > 0:
            t_star = -2.0 * (1 + h) * float((coef * a / d).sum()) / curv
            inner = (1 + h) * (ndtr(abs(t_star) / (sigma * (1 + h))) - 0.5)
    y_mn = float(a @ coef)
    t_max = abs(y_mn) + x_norm * radius + 12.0 * sigma
    t_min = _T_MIN * sigma
    grid = math.ceil(_POINTS_PER_EFOLD * math.log(t_max / t_min))
    log_t = np.linspace(math.log(t_min), math.log(t_max), grid)
    t = np.concatenate([[0.0], np.exp(log_t)])
    side = 1.0 if t_star >= 0 else -1.0
    y_t = y_mn + np.concatenate([t_star + side * t, -side * t])
    resid = _genie_residuals(y_t, d, s0 * uty, a, x_perp, radius)
    dens = np.exp(-(resid**2) / (2 * sigma**2)) / math.sqrt(2 * math.pi * sigma**2)
    total = inner
    for half in (dens[: grid + 1], dens[grid + 1 :]):
        total += half[0] * t_min + np.trapezoid(half[1:] * t[1:], log_t)
    return math.log(total)


def batch_regret(params: BatchRegretParams, progress: Progress) -> BatchRegretResult:
    """pNML regret for the multinomial or for Gaussian linear regression."""
    _check_fields(params)
    if params.model == "multinomial":
        counts = np.asarray(params.counts, dtype=np.float64)
        if counts.sum() > MAX_TOTAL_COUNT:
            raise InvalidInput(f"sum(counts) exceeds {MAX_TOTAL_COUNT}", loc=("counts",))
        regret, probs = multinomial_pnml(counts)
        return BatchRegretResult(
            model=params.model,
            form="laplace_closed_form",
            regret_nats=[regret],
            mean_regret_nats=regret,
            leverages=None,
            pnml_probs=probs.tolist(),
            reconstructed=[],
        )
    x = _matrix(params.X, "X")
    x_test = _matrix(params.X_test, "X_test")
    n, p = x.shape
    if x_test.shape[1] != p:
        raise InvalidInput(f"X_test rows have {x_test.shape[1]} features, X rows have {p}", loc=("X_test",))
    u0, s0, vt0 = thin_svd(x)
    if s0.size == p < n:
        h = leverages(s0, vt0, x_test)
        regret = np.log1p(h)
        return BatchRegretResult(
            model=params.model,
            form="leverage_closed_form",
            regret_nats=regret.tolist(),
            mean_regret_nats=float(regret.mean()),
            leverages=h.tolist(),
            pnml_probs=None,
            reconstructed=[],
        )
    if params.y is None:
        raise InvalidInput(
            "X has p ≥ n or is rank-deficient: the norm-constrained pNML needs the training targets y",
            loc=("y",),
        )
    if len(params.y) != n:
        raise InvalidInput(f"y has length {len(params.y)}, X has {n} rows", loc=("y",))
    y = np.asarray(params.y, dtype=np.float64)
    regrets = np.empty(x_test.shape[0])
    for i, row in enumerate(x_test):
        if i % 64 == 0:
            progress(i / x_test.shape[0], f"test point {i}")
        regrets[i] = norm_constrained_regret(u0, s0, vt0, y, row, params.sigma)
    if not np.all(np.isfinite(regrets)):
        raise Degenerate("non-finite norm-constrained pNML regret", loc=("X_test",))
    return BatchRegretResult(
        model=params.model,
        form="norm_constrained",
        regret_nats=regrets.tolist(),
        mean_regret_nats=float(regrets.mean()),
        leverages=None,
        pnml_probs=None,
        reconstructed=["regret_nats", "mean_regret_nats"],
    )


def batch_regret_cost(params: BatchRegretParams) -> float:
    """Approximate flops: K (multinomial); 4·n·p·min(n,p) for the SVD plus 2·p·min(n,p) per test point
    (closed form) or 1.2e5·(min(n,p)+1) per test point (norm-constrained: ~800 label-grid rows × ~10 Newton
    steps × ~15 flops per row and component)."""
    if params.model == "multinomial":
        return float(len(params.counts or ()))
    n = len(params.X or ())
    p = len(params.X[0]) if params.X else 0
    m = len(params.X_test or ())
    r = min(n, p)
    svd = 4.0 * n * p * r
    if p < n:
        return svd + 2.0 * m * p * r
    return svd + m * 1.2e5 * (r + 1)


BATCH_REGRET_SPEC = register(
    EstimatorSpec(
        name="compression.batch_regret",
        version="1",
        family="compression",
        summary="Minimax (pNML) batch regret: Laplace-rule closed form for the multinomial; leverage log(1+h) "
        "or the norm-constrained pNML for Gaussian linear regression.",
        paper=PAPER,
        citation="Double descent through universal compression (NeurIPS 2026); Fogel & Feder, ISIT 2018; "
        "Bibas, Fogel & Feder, ISIT 2019; Bibas & Feder, arXiv:2102.07181 (2021)",
        params_model=BatchRegretParams,
        result_model=BatchRegretResult,
        fn=batch_regret,
        cost=batch_regret_cost,
        cost_unit="flops (approximate)",
        sync_budget=2e9,
        hard_cap=1e11,
    )
)
