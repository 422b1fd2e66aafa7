"""Tests of the universal-compression estimators (spec estimators-minhash-compression-moead.md §b.3)."""

import itertools
import math

import numpy as np
import pytest
from pydantic import ValidationError
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import gammaln
from scipy.stats import binom

from service.errors import Cancelled, InvalidInput
from service.estimators.compression import SPECS, batch_regret, codelength, double_descent, nml_regret
from service.estimators.compression_dd import DoubleDescentParams, cell_conditional_losses, double_descent_cost
from service.estimators.compression_nml import CodelengthParams, NmlRegretParams
from service.estimators.compression_pnml import BatchRegretParams, batch_regret_cost
from service.registry import ESTIMATORS, no_progress

LOG_2PI_HALF = 0.5 * math.log(2 * math.pi)


def log_c(k: int, n: int) -> float:
    return nml_regret(NmlRegretParams(num_symbols=k, n=n), no_progress).log_c_nats


def compositions(n: int, k: int):
    """All (n_1..n_k) ≥ 0 with sum n."""
    for cut in itertools.combinations(range(n + k - 1), k - 1):
        bounds = (-1, *cut, n + k - 1)
        yield tuple(bounds[i + 1] - bounds[i] - 1 for i in range(k))


def log_multinomial(c: tuple[int, ...]) -> float:
    return float(gammaln(sum(c) + 1) - sum(gammaln(x + 1) for x in c))


def brute_shtarkov(k: int, n: int) -> float:
    """C(K, n) = Σ_{x^n} max_θ P(x^n|θ) by enumerating every sequence."""
    total = 0.0
    for seq in itertools.product(range(k), repeat=n):
        counts = np.bincount(seq, minlength=k)
        total += float(np.prod([(c / n) ** c for c in counts if c]))
    return total


# ---------------------------------------------------------------- nml_regret


@pytest.mark.parametrize(
    ("k", "n", "expected"),
    [(2, 1, 2.0), (2, 2, 2.5), (3, 1, 3.0), (3, 4, 7.21875), (4, 5, 17.2864), (5, 4, 23.28125)],
)
def test_nml_exact_values_spec_b3_item1(k: int, n: int, expected: float) -> None:
    # Spec §b.3 item 1 (exact rationals): relative tolerance 1e-12 (log-space rounding only).
    assert math.exp(log_c(k, n)) == pytest.approx(expected, rel=1e-12)
    # Enumeration of all K^n sequences agrees too.
    assert brute_shtarkov(k, n) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("k", "n"), [(2, 7), (3, 6), (4, 6), (6, 5), (7, 3), (9, 4)])
def test_nml_recursion_matches_composition_sum(k: int, n: int) -> None:
    # Σ over count vectors of multinomial(n; c)·Π (c_j/n)^{c_j}; relative tolerance 1e-12.
    terms = [log_multinomial(c) + sum(x * math.log(x / n) for x in c if x) for c in compositions(n, k)]
    brute = math.log(sum(math.exp(t) for t in terms))
    assert log_c(k, n) == pytest.approx(brute, rel=1e-12)


@pytest.mark.parametrize(
    ("k", "n", "log_c_spec", "asym_spec"),
    [(2, 1000, 3.6964, 3.6797), (10, 1000, 25.667, 25.360), (10, 100_000, 46.114, 46.083)],
)
def test_nml_large_n_spec_b3_item2(k: int, n: int, log_c_spec: float, asym_spec: float) -> None:
    # Spec values are rounded to the printed digits: tolerance half a unit of the last digit.
    res = nml_regret(NmlRegretParams(num_symbols=k, n=n), no_progress)
    digits = 4 if log_c_spec < 10 else 3
    assert res.log_c_nats == pytest.approx(log_c_spec, abs=0.5 * 10**-digits + 1e-12)
    assert res.asymptotic_nats == pytest.approx(asym_spec, abs=0.5 * 10**-digits + 1e-12)
    assert res.log_c_bits == pytest.approx(res.log_c_nats / math.log(2), rel=1e-15)
    assert res.reconstructed == []


def test_nml_c2_chunked_sum_matches_szpankowski_expansion() -> None:
    # n = 10^7 spans 10 chunks. Szpankowski: C(2,n) = sqrt(πn/2) + 2/3 + sqrt(2π)/(24 sqrt n) − 4/(135 n) + O(n^-3/2);
    # the lgamma terms (~1.5e8) carry ~2e-8 absolute error, hence rel=1e-7.
    n = 10_000_000
    expansion = math.sqrt(math.pi * n / 2) + 2 / 3 + math.sqrt(2 * math.pi) / (24 * math.sqrt(n)) - 4 / (135 * n)
    assert math.exp(log_c(2, n)) == pytest.approx(expansion, rel=1e-7)


def test_nml_large_alphabet_small_n_closed_forms() -> None:
    # n = 1: every one of the K sequences has ML probability 1; n = 2: K + K(K−1)/4. 10^5 recursion steps.
    k = 100_000
    assert log_c(k, 1) == pytest.approx(math.log(k), rel=1e-12)
    assert log_c(k, 2) == pytest.approx(math.log(k + k * (k - 1) / 4), rel=1e-12)


def test_nml_trivial_cases() -> None:
    res = nml_regret(NmlRegretParams(num_symbols=7, n=0), no_progress)
    assert res.log_c_nats == 0.0
    assert res.asymptotic_nats is None
    assert log_c(1, 12345) == 0.0
    assert nml_regret(NmlRegretParams(num_symbols=1, n=5), no_progress).asymptotic_nats == pytest.approx(0.0, abs=1e-15)


def test_nml_monotone_in_k_and_n() -> None:
    values_k = [log_c(k, 50) for k in range(1, 12)]
    values_n = [log_c(4, n) for n in range(0, 40)]
    assert all(b > a for a, b in itertools.pairwise(values_k))
    assert all(b > a for a, b in itertools.pairwise(values_n))


@pytest.mark.parametrize(
    "bad",
    [
        {"num_symbols": 0, "n": 5},
        {"num_symbols": 100_001, "n": 5},
        {"num_symbols": 3, "n": -1},
        {"num_symbols": 3, "n": 10_000_001},
        {"num_symbols": "3", "n": 5},
        {"num_symbols": 3.5, "n": 5},
        {"num_symbols": 3, "n": 5, "extra": 1},
    ],
)
def test_nml_params_validation(bad: dict) -> None:
    with pytest.raises(ValidationError):
        NmlRegretParams.model_validate(bad)


# ---------------------------------------------------------------- codelength


def code(counts: list[int], method: str, alpha: float = 0.5) -> float:
    return codelength(CodelengthParams(counts=counts, method=method, alpha=alpha), no_progress)


def test_codelength_spec_b3_item3() -> None:
    # K = 10, n = 100: NML regret 15.963, KT regret 18.217 (one symbol) and 15.139 (balanced); ±5e-4 (rounding).
    one = [100] + [0] * 9
    balanced = [10] * 10
    nml = code(one, "nml")
    assert nml.regret_vs_ml_nats == pytest.approx(15.963, abs=5e-4)
    assert code(balanced, "nml").regret_vs_ml_nats == pytest.approx(nml.regret_vs_ml_nats, rel=1e-12)
    kt_one = code(one, "bayes")
    assert kt_one.regret_vs_ml_nats == pytest.approx(18.217, abs=5e-4)
    assert kt_one.regret_vs_ml_nats > nml.regret_vs_ml_nats
    assert code(balanced, "bayes").regret_vs_ml_nats == pytest.approx(15.139, abs=5e-4)
    assert code(balanced, "ml").codelength_nats == pytest.approx(100 * math.log(10), rel=1e-13)


def test_codelength_hand_values() -> None:
    # KT: P(aa) = ½·¾ = 3/8; P(a) = ½. Laplace (α=1): P(aab) = ½·⅔·¼ = 1/12. ML of [2,1]: 3·log 3 − 2·log 2.
    assert code([2, 0], "bayes").codelength_nats == pytest.approx(math.log(8 / 3), rel=1e-13)
    assert code([1, 0], "bayes").codelength_nats == pytest.approx(math.log(2), rel=1e-13)
    assert code([2, 1], "bayes", alpha=1.0).codelength_nats == pytest.approx(math.log(12), rel=1e-13)
    res = code([2, 1], "ml")
    assert res.codelength_nats == pytest.approx(3 * math.log(3) - 2 * math.log(2), rel=1e-13)
    assert res.regret_vs_ml_nats == 0.0
    assert res.codelength_bits == pytest.approx(res.codelength_nats / math.log(2), rel=1e-15)
    assert code([0, 0, 0], "nml").codelength_nats == 0.0


@pytest.mark.parametrize(("method", "alpha"), [("nml", 0.5), ("bayes", 0.5), ("bayes", 0.7), ("bayes", 3.0)])
def test_codelength_kraft_equality(method: str, alpha: float) -> None:
    # NML and Bayes mixtures are probability distributions on sequences: Σ_{x^n} exp(−L(x^n)) = 1 (±1e-12).
    k, n = 3, 6
    total = sum(math.exp(log_multinomial(c) - code(list(c), method, alpha).codelength_nats) for c in compositions(n, k))
    assert total == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "bad",
    [
        {"counts": []},
        {"counts": [1, -1]},
        {"counts": [1, "2"]},
        {"counts": [1, True]},
        {"counts": [1.5, 2]},
        {"counts": [1, 2], "method": "mdl"},
        {"counts": [1, 2], "alpha": 0},
        {"counts": [1, 2], "alpha": float("nan")},
        {"counts": [0] * 100_001},
    ],
)
def test_codelength_params_validation(bad: dict) -> None:
    with pytest.raises(ValidationError):
        CodelengthParams.model_validate(bad)


def test_codelength_domain_errors() -> None:
    with pytest.raises(InvalidInput) as err:
        codelength(CodelengthParams(counts=[6_000_000, 6_000_000], method="nml"), no_progress)
    assert err.value.loc == ("counts",)
    with pytest.raises(InvalidInput):
        codelength(CodelengthParams(counts=[600_000_000, 600_000_000], method="ml"), no_progress)
    # Within the ml/bayes limit (n = 9e8) KT's regret for an interior sequence is the Jeffreys asymptotic
    # ½log(n/2π) + log π up to O(1/n); lgamma of ~1.8e10 carries ~4e-6 absolute error, hence abs=1e-4.
    assert code([600_000_000, 300_000_000], "bayes").regret_vs_ml_nats == pytest.approx(
        0.5 * math.log(9e8 / (2 * math.pi)) + math.log(math.pi), abs=1e-4
    )


# ---------------------------------------------------------------- batch_regret


def test_batch_regret_multinomial_closed_form() -> None:
    # pNML over K = 3 symbols with counts (3, 0, 1): normaliser Σ_j (n_j+1)/(n+1) = 7/5, predictive (4,1,2)/7.
    res = batch_regret(BatchRegretParams(model="multinomial", counts=[3, 0, 1]), no_progress)
    assert res.form == "laplace_closed_form"
    assert res.regret_nats == [pytest.approx(math.log(7 / 5), rel=1e-14)]
    assert res.pnml_probs == pytest.approx([4 / 7, 1 / 7, 2 / 7], rel=1e-14)
    assert res.mean_regret_nats == res.regret_nats[0]
    empty = batch_regret(BatchRegretParams(model="multinomial", counts=[0] * 10), no_progress)
    assert empty.mean_regret_nats == pytest.approx(math.log(10), rel=1e-14)


def pnml_normaliser_brute(x_train: np.ndarray, y: np.ndarray, x: np.ndarray, sigma: float, constrained: bool) -> float:
    """log ∫ N(y_t; x^Tθ̂(y_t), σ²) dy_t with θ̂ the (norm-constrained) least-squares fit on D ∪ (x, y_t)."""
    a = np.vstack([x_train, x])
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    s = s[s > s[0] * 1e-12]
    u, vt = u[:, : s.size], vt[: s.size]
    theta_mn = np.linalg.lstsq(x_train, y, rcond=None)[0]
    r2 = float(theta_mn @ theta_mn)

    def prediction(y_t: float) -> float:
        c = u.T @ np.append(y, y_t)
        if not constrained or np.sum(c**2 / s**2) <= r2:
            return float(x @ (vt.T @ (c / s)))
        lam = brentq(lambda v: np.sum(s**2 * c**2 / (s**2 + v) ** 2) - r2, 1e-300, 1e12, xtol=1e-300, rtol=1e-15)
        return float(x @ (vt.T @ (s * c / (s**2 + lam))))

    def density(t: float) -> float:
        y_t = float(x @ theta_mn) + t
        return math.exp(-((y_t - prediction(y_t)) ** 2) / (2 * sigma**2)) / math.sqrt(2 * math.pi * sigma**2)

    total = quad(density, -np.inf, 0, limit=400, epsabs=1e-13)[0] + quad(density, 0, np.inf, limit=400, epsabs=1e-13)[0]
    return math.log(total)


def test_batch_regret_gaussian_leverage_matches_integral() -> None:
    # p < n: log(1+h) with h = x^T(X^TX)^{-1}x (solve, test only) and = the pNML normaliser by quadrature (1e-7).
    rng = np.random.default_rng(0)
    x_train, x_test = rng.standard_normal((12, 4)), rng.standard_normal((3, 4))
    y = rng.standard_normal(12)
    res = batch_regret(
        BatchRegretParams(model="gaussian_linear", X=x_train.tolist(), X_test=x_test.tolist()), no_progress
    )
    assert res.form == "leverage_closed_form"
    h = np.einsum("ij,ji->i", x_test, np.linalg.solve(x_train.T @ x_train, x_test.T))
    assert res.leverages == pytest.approx(h.tolist(), rel=1e-10)
    assert res.regret_nats == pytest.approx(np.log1p(h).tolist(), rel=1e-10)
    assert res.mean_regret_nats == pytest.approx(float(np.log1p(h).mean()), rel=1e-12)
    assert res.reconstructed == []
    for row, regret in zip(x_test, res.regret_nats, strict=True):
        assert pnml_normaliser_brute(x_train, y, row, 0.7, constrained=False) == pytest.approx(regret, abs=1e-7)


@pytest.mark.parametrize(
    ("n", "p", "rank", "sigma"),
    [(6, 15, 6, 1.0), (6, 15, 6, 0.05), (8, 8, 8, 0.3), (10, 6, 4, 0.5), (3, 40, 3, 2.0)],
)
def test_batch_regret_norm_constrained_matches_brute_force(n: int, p: int, rank: int, sigma: float) -> None:
    # Over-parameterised, square and rank-deficient designs: the Sherman–Morrison genie and log-grid integral
    # agree with constrained least squares by root finding + adaptive quadrature to 1e-6 nats.
    rng = np.random.default_rng(n * 100 + p)
    x_train = rng.standard_normal((n, rank)) @ rng.standard_normal((rank, p))
    x_test = rng.standard_normal((2, p))
    y = rng.standard_normal(n)
    res = batch_regret(
        BatchRegretParams(
            model="gaussian_linear", X=x_train.tolist(), X_test=x_test.tolist(), y=y.tolist(), sigma=sigma
        ),
        no_progress,
    )
    assert res.form == "norm_constrained"
    assert res.reconstructed == ["regret_nats", "mean_regret_nats"]
    brute = [pnml_normaliser_brute(x_train, y, row, sigma, constrained=True) for row in x_test]
    assert res.regret_nats == pytest.approx(brute, abs=1e-6)
    assert all(r > 0 for r in res.regret_nats)


def test_batch_regret_norm_constrained_grows_as_sigma_shrinks() -> None:
    rng = np.random.default_rng(7)
    x_train, x_test, y = rng.standard_normal((10, 30)), rng.standard_normal((4, 30)), rng.standard_normal(10)
    means = [
        batch_regret(
            BatchRegretParams(
                model="gaussian_linear", X=x_train.tolist(), X_test=x_test.tolist(), y=y.tolist(), sigma=s
            ),
            no_progress,
        ).mean_regret_nats
        for s in (3.0, 1.0, 0.3, 0.1)
    ]
    assert all(b > a for a, b in itertools.pairwise(means))


def test_batch_regret_domain_errors() -> None:
    ok = [[1.0, 2.0], [3.0, 4.5], [0.0, 1.0]]
    cases = [
        ({"model": "multinomial"}, "counts"),
        ({"model": "multinomial", "counts": [1], "X": ok}, "X"),
        ({"model": "gaussian_linear", "X": ok}, "X_test"),
        ({"model": "gaussian_linear", "X": ok, "X_test": ok, "counts": [1]}, "counts"),
        ({"model": "gaussian_linear", "X": [[1.0, 2.0], [1.0]], "X_test": ok}, "X"),
        ({"model": "gaussian_linear", "X": ok, "X_test": [[1.0, 2.0, 3.0]]}, "X_test"),
        ({"model": "gaussian_linear", "X": [[1.0, 2.0, 3.0]], "X_test": [[1.0, 2.0, 3.0]]}, "y"),
        ({"model": "gaussian_linear", "X": [[1.0, 2.0, 3.0]], "X_test": [[1.0, 2.0, 3.0]], "y": [1.0, 2.0]}, "y"),
        ({"model": "gaussian_linear", "X": [[0.5] * 500] * 201, "X_test": [[0.5] * 500]}, "X"),
    ]
    for body, loc in cases:
        with pytest.raises(InvalidInput) as err:
            batch_regret(BatchRegretParams.model_validate(body), no_progress)
        assert err.value.loc == (loc,)


@pytest.mark.parametrize(
    "bad",
    [
        {"model": "poisson", "counts": [1]},
        {"model": "multinomial", "counts": [-1]},
        {"model": "gaussian_linear", "X": [[1.0] * 501], "X_test": [[1.0]]},
        {"model": "gaussian_linear", "X": [[float("nan")]], "X_test": [[1.0]]},
        {"model": "gaussian_linear", "X": [[2e6]], "X_test": [[1.0]]},
        {"model": "gaussian_linear", "X": [[]], "X_test": [[1.0]]},
        {"model": "gaussian_linear", "X": [[1.0]], "X_test": [[1.0]], "sigma": 0},
        {"model": "gaussian_linear", "X": [["1"]], "X_test": [[1.0]]},
    ],
)
def test_batch_regret_params_validation(bad: dict) -> None:
    with pytest.raises(ValidationError):
        BatchRegretParams.model_validate(bad)


def test_batch_regret_cost_orders_forms() -> None:
    small = BatchRegretParams(model="gaussian_linear", X=[[1.0, 0.0]] * 50, X_test=[[1.0, 2.0]] * 10)
    big = BatchRegretParams(model="gaussian_linear", X=[[1.0] * 300] * 300, X_test=[[1.0] * 300] * 300, y=[1.0] * 300)
    spec = ESTIMATORS["compression.batch_regret"]
    assert batch_regret_cost(small) < spec.sync_budget < batch_regret_cost(big) < spec.hard_cap


# ---------------------------------------------------------------- double_descent: random features

RF_RATIOS = [0.1, 0.5, 0.75, 0.9, 1.0, 1.1, 1.3, 2, 4, 10]
SPEC_MLE = {0.1: 1.48, 0.5: 1.95, 2: 2.50, 4: 2.04, 10: 1.86}
SPEC_FIXED = [1.47, 1.66, 1.78, 1.84, 1.87, 1.89, 1.96, 2.16, 2.54, 3.04]
SPEC_PNML = [1.48, 1.88, 2.49, 3.43]


@pytest.fixture(scope="module")
def rf_result():
    # Spec §b.3 item 4 at its reduced size: n = 100, d = 20, 2 reps, 1000 test points, p/n = 30 dropped.
    params = DoubleDescentParams(
        experiment="rf_regression", n=100, widths=[round(r * 100) for r in RF_RATIOS], reps=2, n_test=1000
    )
    return double_descent(params, no_progress)


def test_rf_double_descent_peak_spec_b3_item4(rf_result) -> None:
    # Spec tolerances: peak location p/n ∈ [0.8, 1.25], peak ratio MLE/Bayes ≥ 3.
    assert 0.8 <= rf_result.peak_width / 100 <= 1.25
    assert rf_result.peak_ratio >= 3
    peak = next(r for r in rf_result.rows if r.width == rf_result.peak_width)
    assert math.isfinite(peak.mle_ce) and peak.mle_ce > 20


def test_rf_bayes_flat_and_fixed_prior_second_ascent(rf_result) -> None:
    scaled = [r.bayes_ce for r in rf_result.rows]
    fixed = [r.bayes_fixed_ce for r in rf_result.rows]
    # Spec: Bayes with β ~ N(0, I/p) flat at 1.45, range ≤ 0.05 nats; we also require |· − 1.45| ≤ 0.03.
    assert max(scaled) - min(scaled) <= 0.05
    assert all(abs(v - 1.45) <= 0.03 for v in scaled)
    # Fixed prior β ~ N(0, I): monotone second ascent; Monte Carlo (2 reps) within 0.06 of the spec row.
    assert all(b > a for a, b in itertools.pairwise(fixed))
    assert fixed == pytest.approx(SPEC_FIXED, abs=0.06)


def test_rf_mle_and_pnml_against_spec_table(rf_result) -> None:
    rows = {r.width: r for r in rf_result.rows}
    # Away from the peak the MLE NLL is stable across seeds: within 7 % of the spec row (Monte Carlo, 2 reps).
    for ratio, expected in SPEC_MLE.items():
        assert rows[round(ratio * 100)].mle_ce == pytest.approx(expected, rel=0.07)
    pnml = [rows[w].pnml_ce for w in (10, 50, 75, 90)]
    assert pnml == pytest.approx(SPEC_PNML, rel=0.07)
    assert all(rows[w].pnml_ce is None and rows[w].pnml_regret is None for w in (100, 110, 1000))
    # pNML regret (mean log(1+h)) grows with p below the threshold; pNML beats the MLE at p/n = 0.9.
    regrets = [rows[w].pnml_regret for w in (10, 50, 75, 90)]
    assert all(b > a for a, b in itertools.pairwise(regrets))
    assert rows[90].pnml_ce < rows[90].mle_ce


def test_rf_decomposition_identity(rf_result) -> None:
    # L(MLE) = approximation error + Bayes regret + MLE-vs-Bayes gap, with L(p_θ*) = ½log 2π + ½ = 1.4189.
    assert rf_result.reconstructed == ["rows.approx_error", "rows.bayes_regret", "rows.mle_bayes_gap"]
    for r in rf_result.rows:
        assert r.approx_error == pytest.approx(LOG_2PI_HALF + 0.5, rel=1e-15)
        assert r.approx_error + r.bayes_regret + r.mle_bayes_gap == pytest.approx(r.mle_ce, rel=1e-12)
        assert r.width_over_n == r.width / 100


def test_rf_reproducible_and_width_independent() -> None:
    params = DoubleDescentParams(n=40, widths=[20, 60], reps=2, n_test=200, input_dim=5, seed=3)
    first = double_descent(params, no_progress)
    assert double_descent(params, no_progress) == first
    alone = double_descent(params.model_copy(update={"widths": [60]}), no_progress)
    assert alone.rows[0] == first.rows[1]
    other_seed = double_descent(params.model_copy(update={"seed": 4}), no_progress)
    assert other_seed.rows[0].mle_ce != first.rows[0].mle_ce


def test_rf_progress_and_cancel() -> None:
    calls: list[tuple[float, str]] = []
    params = DoubleDescentParams(n=20, widths=[5, 10, 40], reps=1, n_test=50)
    double_descent(params, lambda f, m="": calls.append((f, m)))
    assert calls == [(0.0, "width 5"), (1 / 3, "width 10"), (2 / 3, "width 40")]

    def cancel(fraction: float, message: str = "") -> None:
        if fraction > 0:
            raise Cancelled

    with pytest.raises(Cancelled):
        double_descent(params, cancel)


# ---------------------------------------------------------------- double_descent: cell model

CELL_M = [2, 10, 50, 100, 200, 400, 1000, 10_000]
SPEC_CELL_MLE = [2.35, 3.30, 5.76, 5.63, 4.78, 3.85, 3.02, 2.38]


@pytest.fixture(scope="module")
def cell_result():
    params = DoubleDescentParams(experiment="cell_model", n=200, widths=CELL_M, num_classes=10, eps=1e-3)
    return double_descent(params, no_progress)


def test_cell_model_exact_expectations_spec_b3_item5(cell_result) -> None:
    # Exact expectations; the spec prints 2 decimals, so each must lie within 0.005 of our value.
    mle = [r.mle_ce for r in cell_result.rows]
    assert mle == pytest.approx(SPEC_CELL_MLE, abs=0.005 + 1e-12)
    # Peak at n/m ≈ 2–4 (m = 50 here); KT-Bayes 2.30–2.48, Laplace (= pNML) 2.30–2.41 (±0.005 rounding).
    assert 2 <= 200 / cell_result.peak_width <= 4
    kt = [r.bayes_ce for r in cell_result.rows]
    laplace = [r.pnml_ce for r in cell_result.rows]
    assert min(kt) >= 2.30 - 0.005 and max(kt) <= 2.48 + 0.005
    assert min(laplace) >= 2.30 - 0.005 and max(laplace) <= 2.41 + 0.005
    assert all(r.bayes_fixed_ce is None for r in cell_result.rows)


def test_cell_model_pnml_regret_rises_to_log_k(cell_result) -> None:
    # Spec: mean pNML regret rises monotonically 0.09 → 2.29 → log K (±0.005 rounding).
    regrets = [r.pnml_regret for r in cell_result.rows]
    assert all(b > a for a, b in itertools.pairwise(regrets))
    assert regrets[0] == pytest.approx(0.09, abs=0.005)
    assert regrets[-1] == pytest.approx(2.29, abs=0.005)
    assert all(r < math.log(10) for r in regrets)
    huge = double_descent(DoubleDescentParams(experiment="cell_model", n=200, widths=[1_000_000]), no_progress)
    assert huge.rows[0].pnml_regret == pytest.approx(math.log(10), abs=2e-3)
    for r in cell_result.rows:
        assert r.approx_error == pytest.approx(math.log(10), rel=1e-15)
        assert r.approx_error + r.bayes_regret + r.mle_bayes_gap == pytest.approx(r.mle_ce, rel=1e-12)


def test_cell_conditional_losses_match_scipy_double_sum() -> None:
    # Independent evaluation with scipy.stats.binom of E[−log((k+a)/(n_c+Ka))], k ~ Bin(n_c, 1/K); 1e-12.
    n, k_cls, eps = 30, 4, 0.01
    losses = cell_conditional_losses(n, k_cls, eps)
    for nc in (0, 1, 7, 30):
        k = np.arange(nc + 1)
        pmf = binom.pmf(k, nc, 1 / k_cls)
        for row, a in enumerate((eps, 0.5, 1.0)):
            expected = float(pmf @ -np.log((k + a) / (nc + k_cls * a)))
            assert losses[row, nc] == pytest.approx(expected, rel=1e-12, abs=1e-14)
        assert losses[3, nc] == pytest.approx(math.log((nc + k_cls) / (nc + 1)), rel=1e-14)


def test_cell_model_matches_simulation() -> None:
    # Monte Carlo of the actual experiment (random cells and labels for n = 200 points plus one test point,
    # 20,000 datasets) for m = 50, K = 10: means within 4 standard errors of the exact expectations.
    rng = np.random.default_rng(11)
    n, m, k_cls, sims = 200, 50, 10, 20_000
    cells = rng.integers(0, m, size=(sims, n), dtype=np.int16)
    labels = rng.integers(0, k_cls, size=(sims, n), dtype=np.int16)
    test_cell = rng.integers(0, m, size=(sims, 1), dtype=np.int16)
    test_label = rng.integers(0, k_cls, size=(sims, 1), dtype=np.int16)
    in_cell = cells == test_cell
    n_c = in_cell.sum(axis=1)
    n_cy = (in_cell & (labels == test_label)).sum(axis=1)
    exact = double_descent(DoubleDescentParams(experiment="cell_model", n=n, widths=[m]), no_progress).rows[0]
    for a, value in ((1e-3, exact.mle_ce), (0.5, exact.bayes_ce), (1.0, exact.pnml_ce)):
        loss = -np.log((n_cy + a) / (n_c + k_cls * a))
        assert abs(loss.mean() - value) <= 4 * loss.std() / math.sqrt(sims)


def test_cell_model_single_cell() -> None:
    # m = 1: n_c = n; ε-smoothed ML loss ≈ log K + (K−1)/(2n) (second-order expansion, ±2e-3).
    res = double_descent(DoubleDescentParams(experiment="cell_model", n=200, widths=[1]), no_progress)
    assert res.rows[0].mle_ce == pytest.approx(math.log(10) + 9 / 400, abs=2e-3)


# ---------------------------------------------------------------- double_descent: validation and cost


@pytest.mark.parametrize(
    "bad",
    [
        {"widths": []},
        {"widths": list(range(1, 42))},
        {"widths": [0]},
        {"widths": [10], "n": 0},
        {"widths": [10], "n": 2001},
        {"widths": [10], "reps": 11},
        {"widths": [10], "eps": 0},
        {"widths": [10], "experiment": "mnist"},
        {"widths": [10], "seed": -1},
        {"widths": ["10"]},
        {"widths": [10], "unknown": 1},
    ],
)
def test_double_descent_params_validation(bad: dict) -> None:
    with pytest.raises(ValidationError):
        DoubleDescentParams.model_validate(bad)


def test_double_descent_domain_error_rf_width_cap() -> None:
    with pytest.raises(InvalidInput) as err:
        double_descent(DoubleDescentParams(widths=[10, 5001]), no_progress)
    assert err.value.loc == ("widths",)


def test_double_descent_cost_contains_spec_guard() -> None:
    spec = ESTIMATORS["compression.double_descent"]
    table = DoubleDescentParams(n=100, widths=[round(r * 100) for r in [*RF_RATIOS, 30]], reps=5)
    guard = 5 * sum(100 * max(p, 100) ** 2 for p in table.widths)
    assert double_descent_cost(table) >= guard
    assert double_descent_cost(table) < spec.hard_cap
    biggest = DoubleDescentParams(n=2000, widths=[5000] * 40, reps=10, n_test=10_000, input_dim=200)
    assert double_descent_cost(biggest) > spec.hard_cap


def test_registry_entries() -> None:
    names = {s.name for s in SPECS}
    assert names == {
        "compression.nml_regret",
        "compression.codelength",
        "compression.batch_regret",
        "compression.double_descent",
    }
    for spec in SPECS:
        assert ESTIMATORS[spec.name] is spec
        assert spec.family == "compression" and spec.version == "1"
        assert 0 < spec.sync_budget <= spec.hard_cap
