"""Double descent through universal compression: the three-term decomposition of the test cross-entropy.

L(MLE) = L(p_θ*) + [L(q_B) − L(p_θ*)] + [L(MLE) − L(q_B)]: approximation error, batch regret of the Bayes
predictive (bounded by the minimax batch regret, reported as the pNML regret) and the MLE-vs-Bayes gap. The
decomposition is RECONSTRUCTED from the paper's abstract. Two uniform-random-label experiments:

* ``rf_regression``: ReLU random features φ(x) = max(0, W^Tx), x ~ N(0, I_d), W_ij ~ N(0, 1/d), labels ±1,
  Gaussian likelihood σ² = 1 (so L(p_θ*) = ½log 2π + ½). MLE = min-norm least squares (SVD pseudo-inverse), Bayes with
  β ~ N(0, I/p) (scaled prior, reported as ``bayes_ce``) and β ~ N(0, I) (fixed prior, ``bayes_fixed_ce``),
  pNML N(φ^Tβ̂, (1+h)²) for full-rank p < n. Monte Carlo over reps and n_test test points.
* ``cell_model``: m equiprobable cells, K classes, per-cell counts; near-MLE (n_j+ε)/(n_c+Kε), Bayes = KT
  (n_j+½)/(n_c+K/2), pNML = Laplace (n_j+1)/(n_c+K) with regret log((n_c+K)/(n_c+1)); L(p_θ*) = log K.
  Exact expectations over n_c ~ Bin(n, 1/m) and the test label's count n_cy ~ Bin(n_c, 1/K).
"""

import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field
from scipy.linalg import cho_solve, cholesky, solve_triangular
from scipy.special import gammaln

from service.errors import Degenerate, InvalidInput
from service.estimators.compression_nml import PAPER
from service.plot_overlay import Curve, Curves
from service.registry import EstimatorSpec, Progress, register
from service.types import ResultModel, Seed, StrictModel

MAX_RF_WIDTH = 5000
_TEST_CHUNK = 1024
_CELL_CHUNK = 256
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)

Width = Annotated[int, Field(strict=True, ge=1, le=1_000_000)]


class DoubleDescentParams(StrictModel):
    """Parameters of ``compression.double_descent``."""

    experiment: Literal["rf_regression", "cell_model"] = Field(
        default="rf_regression",
        description="'rf_regression': random-ReLU-features regression on ±1 random labels (Monte Carlo); "
        "'cell_model': histogram classifier on uniform random labels (exact expectations).",
    )
    n: int = Field(default=100, ge=1, le=2000, description="Training set size n (default 100).")
    widths: list[Width] = Field(
        min_length=1,
        max_length=40,
        description="Model sizes: number of random features p (rf_regression, ≤ 5000) or of cells m "
        "(cell_model, ≤ 10^6).",
    )
    reps: int = Field(
        default=5, ge=1, le=10, description="rf_regression: independent repetitions averaged (default 5)."
    )
    seed: Seed = 0
    n_test: int = Field(
        default=2000, ge=1, le=10_000, description="rf_regression: test points per repetition (default 2000)."
    )
    input_dim: int = Field(
        default=20, ge=1, le=200, description="rf_regression: input dimension d of x ~ N(0, I_d) (default 20)."
    )
    num_classes: int = Field(default=10, ge=2, le=1000, description="cell_model: number of classes K (default 10).")
    eps: float = Field(
        default=1e-3,
        gt=0,
        le=1.0,
        description="cell_model: additive smoothing ε of the near-MLE (n_j+ε)/(n_c+Kε) (default 1e-3; the "
        "exact MLE has infinite test cross-entropy).",
    )


class WidthRow(ResultModel):
    """Test cross-entropies (nats per test point) and the decomposition at one model size."""

    width: int = Field(description="Number of random features p or of cells m.")
    width_over_n: float = Field(description="width / n (p/n; m/n for the cell model).")
    mle_ce: float = Field(
        description="Test cross-entropy of the MLE (min-norm least squares; ε-smoothed counts for cell_model). "
        "Astronomically large but finite at the interpolation threshold p = n."
    )
    bayes_ce: float = Field(
        description="Test cross-entropy of the Bayes predictive: prior β ~ N(0, I/p) (rf_regression) or "
        "KT Dirichlet(½) (cell_model)."
    )
    bayes_fixed_ce: float | None = Field(
        description="rf_regression: Bayes with the fixed prior β ~ N(0, I) (second ascent); null for cell_model."
    )
    pnml_ce: float | None = Field(
        description="Test cross-entropy of the one-step pNML (Laplace rule for cell_model; N(φ^Tβ̂, (1+h)²) for "
        "rf_regression, null unless the features have full column rank p < n)."
    )
    pnml_regret: float | None = Field(
        description="Mean pNML regret (nats): E log((n_c+K)/(n_c+1)) or mean log(1+h); null where pnml_ce is."
    )
    approx_error: float = Field(
        description="L(p_θ*): ½log 2π + ½ (rf_regression, σ² = 1, labels ±1) or log K (cell_model)."
    )
    bayes_regret: float = Field(description="bayes_ce − approx_error: batch regret of the Bayes predictive.")
    mle_bayes_gap: float = Field(description="mle_ce − bayes_ce: the MLE-vs-Bayes gap.")


class DoubleDescentResult(ResultModel):
    """Per-width cross-entropies and three-term decomposition, with the location and height of the MLE peak."""

    experiment: str = Field(description="The experiment run.")
    n: int = Field(description="Training set size.")
    rows: list[WidthRow] = Field(description="One row per entry of widths, in the given order.")
    peak_width: int = Field(description="Width with the largest mle_ce (first one on ties).")
    peak_ratio: float = Field(description="mle_ce / bayes_ce at peak_width.")
    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED definition.")


RECONSTRUCTED = ["rows.approx_error", "rows.bayes_regret", "rows.mle_bayes_gap"]


def gaussian_nll(y: np.ndarray, mean: np.ndarray, var: np.ndarray | float) -> np.ndarray:
    """−log N(y; mean, var) per point."""
    return _HALF_LOG_2PI + 0.5 * np.log(var) + (y - mean) ** 2 / (2 * var)


@dataclass(frozen=True)
class BayesLinear:
    """Bayes posterior for y = φ^Tβ + N(0,1), β ~ N(0, prior_var·I), factored once, predicted in chunks.

    Weight space (p ≤ n): LL^T = Φ^TΦ + I/prior_var, mean φ_*^T L^{-T}L^{-1}Φ^Ty, variance 1 + ||L^{-1}φ_*||².
    Function space (p > n): LL^T = prior_var·ΦΦ^T + I, k_* = prior_var·Φφ_*, mean k_*^T L^{-T}L^{-1}y,
    variance 1 + prior_var·||φ_*||² − ||L^{-1}k_*||². Cholesky and triangular solves only.
    """

    phi: np.ndarray
    prior_var: float
    chol: np.ndarray
    coef: np.ndarray

    @classmethod
    def fit(cls, phi: np.ndarray, y: np.ndarray, prior_var: float) -> "BayesLinear":
        """Factor the posterior (weight or function space, whichever is smaller)."""
        n, p = phi.shape
        if p <= n:
            chol = cholesky(phi.T @ phi + np.eye(p) / prior_var, lower=True)
            return cls(phi, prior_var, chol, cho_solve((chol, True), phi.T @ y))
        chol = cholesky(prior_var * (phi @ phi.T) + np.eye(n), lower=True)
        return cls(phi, prior_var, chol, prior_var * (phi.T @ cho_solve((chol, True), y)))

    def nll(self, ft: np.ndarray, y_test: np.ndarray) -> np.ndarray:
        """Test NLL −log N(y_*; mean, variance) of the predictive at the rows of ft."""
        n, p = self.phi.shape
        if p <= n:
            var = 1.0 + (solve_triangular(self.chol, ft.T, lower=True) ** 2).sum(axis=0)
        else:
            half = solve_triangular(self.chol, self.prior_var * (self.phi @ ft.T), lower=True)
            var = 1.0 + self.prior_var * np.einsum("ij,ij->i", ft, ft) - (half**2).sum(axis=0)
        return gaussian_nll(y_test, ft @ self.coef, var)


def _rf_data(seed: int, rep: int, n: int, n_test: int, d: int) -> tuple[np.ndarray, ...]:
    """Inputs and ±1 labels of one repetition; its own stream so a width's result ignores the other widths."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0, rep]))
    x = rng.standard_normal((n, d))
    x_test = rng.standard_normal((n_test, d))
    y = rng.choice(np.array([-1.0, 1.0]), size=n)
    y_test = rng.choice(np.array([-1.0, 1.0]), size=n_test)
    return x, y, x_test, y_test


def rf_width(params: DoubleDescentParams, p: int) -> WidthRow:
    """One width of the random-features experiment, averaged over reps.

    Accumulates the summed test NLL of MLE, Bayes (I/p), Bayes (I), pNML and the summed pNML regret over test
    chunks and reps; the pNML entries are kept only if the features have full column rank p < n in every rep.
    """
    n, d = params.n, params.input_dim
    sums = np.zeros(5)
    pnml_ok = p < n
    for rep in range(params.reps):
        x, y, x_test, y_test = _rf_data(params.seed, rep, n, params.n_test, d)
        w_rng = np.random.default_rng(np.random.SeedSequence([params.seed, 1, rep, p]))
        w = w_rng.standard_normal((d, p)) / math.sqrt(d)
        phi = np.maximum(x @ w, 0.0)
        u, sv, vt = np.linalg.svd(phi, full_matrices=False)
        rank = int((sv > sv[0] * max(n, p) * np.finfo(np.float64).eps).sum()) if sv[0] > 0 else 0
        beta = vt[:rank].T @ ((u[:, :rank].T @ y) / sv[:rank])
        scaled, fixed = BayesLinear.fit(phi, y, 1.0 / p), BayesLinear.fit(phi, y, 1.0)
        pnml_ok = pnml_ok and rank == p
        for lo in range(0, params.n_test, _TEST_CHUNK):
            ft = np.maximum(x_test[lo : lo + _TEST_CHUNK] @ w, 0.0)
            yt = y_test[lo : lo + _TEST_CHUNK]
            pred = ft @ beta
            sums[0] += gaussian_nll(yt, pred, 1.0).sum()
            sums[1] += scaled.nll(ft, yt).sum()
            sums[2] += fixed.nll(ft, yt).sum()
            if pnml_ok:
                log1p_h = np.log1p((((ft @ vt.T) / sv) ** 2).sum(axis=1))
                sums[3] += (_HALF_LOG_2PI + log1p_h + (yt - pred) ** 2 / (2 * np.exp(2 * log1p_h))).sum()
                sums[4] += log1p_h.sum()
    mean = sums / (params.reps * params.n_test)
    if not np.all(np.isfinite(mean)):
        raise Degenerate(f"non-finite test cross-entropy at width {p}", loc=("widths",))
    approx = _HALF_LOG_2PI + 0.5
    return WidthRow(
        width=p,
        width_over_n=p / n,
        mle_ce=mean[0],
        bayes_ce=mean[1],
        bayes_fixed_ce=mean[2],
        pnml_ce=mean[3] if pnml_ok else None,
        pnml_regret=mean[4] if pnml_ok else None,
        approx_error=approx,
        bayes_regret=mean[1] - approx,
        mle_bayes_gap=mean[0] - mean[1],
    )


def _binom_logpmf(k: np.ndarray, m: np.ndarray, prob: float) -> np.ndarray:
    """log Bin(k; m, prob) for k ≤ m (broadcast), via log-gamma."""
    return gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1) + k * math.log(prob) + (m - k) * math.log1p(-prob)


def cell_conditional_losses(n: int, num_classes: int, eps: float) -> np.ndarray:
    """Rows (near-MLE, KT, Laplace, pNML regret) × columns n_c = 0..n: E[−log q_y | n_c] for q = (k+a)/(n_c+Ka),
    k = n_cy ~ Bin(n_c, 1/K), and the Laplace regret log((n_c+K)/(n_c+1)). Chunked over n_c (O(n²) once)."""
    k_cls = num_classes
    out = np.empty((4, n + 1))
    k = np.arange(n + 1, dtype=np.float64)
    for lo in range(0, n + 1, _CELL_CHUNK):
        nc = np.arange(lo, min(n + 1, lo + _CELL_CHUNK), dtype=np.float64)[:, None]
        valid = k[None, :] <= nc
        logp = np.where(valid, _binom_logpmf(np.minimum(k[None, :], nc), nc, 1.0 / k_cls), -np.inf)
        prob = np.exp(logp)
        for row, a in enumerate((eps, 0.5, 1.0)):
            loss = np.log(nc + k_cls * a) - np.log(k[None, :] + a)
            out[row, lo : lo + nc.shape[0]] = (prob * loss).sum(axis=1)
        out[3, lo : lo + nc.shape[0]] = np.log((nc[:, 0] + k_cls) / (nc[:, 0] + 1))
    return out


def cell_width(params: DoubleDescentParams, m: int, losses: np.ndarray) -> WidthRow:
    """One width (m cells) of the cell model: expectations over n_c ~ Bin(n, 1/m)."""
    n = params.n
    nc = np.arange(n + 1, dtype=np.float64)
    weights = np.exp(_binom_logpmf(nc, np.float64(n), 1.0 / m)) if m > 1 else (nc == n).astype(np.float64)
    mle, bayes, pnml, regret = losses @ weights
    approx = math.log(params.num_classes)
    return WidthRow(
        width=m,
        width_over_n=m / n,
        mle_ce=mle,
        bayes_ce=bayes,
        bayes_fixed_ce=None,
        pnml_ce=pnml,
        pnml_regret=regret,
        approx_error=approx,
        bayes_regret=bayes - approx,
        mle_bayes_gap=mle - bayes,
    )


def double_descent(params: DoubleDescentParams, progress: Progress) -> DoubleDescentResult:
    """Per-width MLE, Bayes and pNML test cross-entropy with the three-term decomposition."""
    if params.experiment == "rf_regression" and max(params.widths) > MAX_RF_WIDTH:
        raise InvalidInput(f"rf_regression widths must be ≤ {MAX_RF_WIDTH}", loc=("widths",))
    losses = (
        cell_conditional_losses(params.n, params.num_classes, params.eps) if params.experiment == "cell_model" else None
    )
    rows = []
    for i, w in enumerate(params.widths):
        progress(i / len(params.widths), f"width {w}")
        rows.append(rf_width(params, w) if losses is None else cell_width(params, w, losses))
    peak = max(range(len(rows)), key=lambda j: rows[j].mle_ce)
    return DoubleDescentResult(
        experiment=params.experiment,
        n=params.n,
        rows=rows,
        peak_width=rows[peak].width,
        peak_ratio=rows[peak].mle_ce / rows[peak].bayes_ce,
        reconstructed=RECONSTRUCTED,
    )


def double_descent_cost(params: DoubleDescentParams) -> float:
    """Approximate flops. rf_regression: reps·Σ_p [n·max(p,n)² + n_test·p·(min(p,n) + d)], the SVD guard
    reps·|widths|·n·max(p,n)² plus the test-point predictions; cell_model: ~30·(n+1)² for the conditional losses
    plus (n+1) per width."""
    n = params.n
    if params.experiment == "cell_model":
        return float(30 * (n + 1) ** 2 + len(params.widths) * (n + 1))
    per_rep = sum(n * max(p, n) ** 2 + params.n_test * p * (min(p, n) + params.input_dim) for p in params.widths)
    return float(params.reps * per_rep)


def double_descent_plot(result: DoubleDescentResult) -> Any:
    """Test cross-entropy of the MLE, Bayes and pNML predictors against width / n, with the interpolation line."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    x = [row.width_over_n for row in result.rows]
    for key, label in (("mle_ce", "MLE"), ("bayes_ce", "Bayes"), ("pnml_ce", "pNML")):
        pts = [(xi, getattr(row, key)) for xi, row in zip(x, result.rows, strict=True)]
        pts = [pt for pt in pts if pt[1] is not None]
        ax.plot([pt[0] for pt in pts], [pt[1] for pt in pts], "o-", label=label)
    ax.axvline(1.0, color="k", lw=0.5)
    ax.set_yscale("log")
    ax.set_xlabel("width / n")
    ax.set_ylabel("test cross-entropy (nats)")
    ax.set_title(f"{result.experiment}, n = {result.n}")
    ax.legend()
    fig.tight_layout()
    return fig


def double_descent_curves(result: DoubleDescentResult) -> Curves:
    """The plot's three test cross-entropies against width / n (log y), for overlaying runs."""
    x = [row.width_over_n for row in result.rows]
    curves = tuple(
        Curve(label, x, [getattr(row, key) for row in result.rows])
        for key, label in (("mle_ce", "MLE"), ("bayes_ce", "Bayes"), ("pnml_ce", "pNML"))
    )
    return Curves("width / n", "test cross-entropy (nats)", curves, y_log=True)


DOUBLE_DESCENT_SPEC = register(
    EstimatorSpec(
        name="compression.double_descent",
        version="1",
        family="compression",
        summary="Double-descent curves on uniform random labels (random-features regression or a cell "
        "classifier): MLE, Bayes and pNML test cross-entropy with the approximation / regret / "
        "MLE-vs-Bayes decomposition.",
        paper=PAPER,
        citation="Double descent through universal compression (NeurIPS 2026); Bibas & Feder, arXiv:2102.07181 (2021)",
        params_model=DoubleDescentParams,
        result_model=DoubleDescentResult,
        fn=double_descent,
        cost=double_descent_cost,
        cost_unit="flops (approximate)",
        sync_budget=3e7,
        hard_cap=2e12,
        plot=double_descent_plot,
        overlay=double_descent_curves,
    )
)
