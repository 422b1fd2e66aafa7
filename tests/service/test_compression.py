"""Tests of the universal-compression estimators (docs/compression.md)."""

import itertools
import math
from collections.abc import Iterable

import numpy as np
import pytest
from pydantic import ValidationError
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import gammaln
from scipy.stats import binom, norm

from service.errors import Cancelled, InvalidInput
from service.estimators.compression import SPECS, batch_regret, codelength, double_descent, nml_regret
from service.estimators.compression_dd import (
    DoubleDescentParams,
    DoubleDescentResult,
    WidthRow,
    cell_conditional_losses,
    double_descent_cost,
)
from service.estimators.compression_nml import (
    MAX_NML_N,
    CodelengthParams,
    NmlRegretParams,
    codelength_cost,
    nml_regret_cost,
)
from service.estimators.compression_pnml import BatchRegretParams, _genie, batch_regret_cost
from service.registry import ESTIMATORS, no_progress
from tests.service.colors import rgba

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
    # Exact rationals (docs/compression.md, `compression.nml_regret`): relative tolerance 1e-12 (log-space rounding).
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
    # The reference values are rounded to their printed digits: tolerance half a unit of the last digit.
    res = nml_regret(NmlRegretParams(num_symbols=k, n=n), no_progress)
    digits = 4 if log_c_spec < 10 else 3
    assert res.log_c_nats == pytest.approx(log_c_spec, abs=0.5 * 10**-digits + 1e-12)
    assert res.asymptotic_nats == pytest.approx(asym_spec, abs=0.5 * 10**-digits + 1e-12)
    assert res.log_c_bits == pytest.approx(res.log_c_nats / math.log(2), rel=1e-15)
    assert res.reconstructed == []


@pytest.mark.slow
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


def test_nml_asymptotic_from_n_one() -> None:
    # Rissanen at K = 2, n = 1 (defined for every n ≥ 1): ½log(1/2π) + 2·log Γ(½) − log Γ(1) = ½log(1/2π) + log π.
    res = nml_regret(NmlRegretParams(num_symbols=2, n=1), no_progress)
    assert res.asymptotic_nats == pytest.approx(0.5 * math.log(1 / (2 * math.pi)) + math.log(math.pi), rel=1e-14)


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


def test_codelength_nml_cap_is_inclusive() -> None:
    # sum(counts) = 10^7 is allowed for NML (one symbol: ML codelength 0 and log C(1, n) = 0); 10^7 + 1 is not.
    at_cap = codelength(CodelengthParams(counts=[MAX_NML_N], method="nml"), no_progress)
    assert (at_cap.n, at_cap.codelength_nats) == (MAX_NML_N, 0.0)
    with pytest.raises(InvalidInput):
        codelength(CodelengthParams(counts=[MAX_NML_N, 1], method="nml"), no_progress)


def test_nml_and_codelength_costs_count_log_space_terms() -> None:
    # nml_regret: n + K terms; codelength: K, plus n + K for method='nml' (counts (3, 4, 0): K = 3, n = 7).
    assert nml_regret_cost(NmlRegretParams(num_symbols=4, n=10)) == 14.0
    assert codelength_cost(CodelengthParams(counts=[3, 4, 0], method="nml")) == 3.0 + 7.0 + 3.0
    assert codelength_cost(CodelengthParams(counts=[3, 4, 0], method="ml")) == 3.0
    assert codelength_cost(CodelengthParams(counts=[3, 4, 0], method="bayes")) == 3.0


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


def norm_constrained(x_train: np.ndarray, x_test: np.ndarray, y: np.ndarray, sigma: float) -> list[float]:
    params = BatchRegretParams(
        model="gaussian_linear", X=x_train.tolist(), X_test=x_test.tolist(), y=y.tolist(), sigma=sigma
    )
    res = batch_regret(params, no_progress)
    assert res.form == "norm_constrained"
    return res.regret_nats


def symmetry_case(kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    if kind == "square":  # full rank p = n: the test point lies in the row space
        return rng.standard_normal((8, 8)), rng.standard_normal((2, 8)), rng.standard_normal(8)
    if kind == "wide":  # p > n: the test point has a component outside the row space
        return rng.standard_normal((6, 15)), rng.standard_normal((2, 15)), rng.standard_normal(6)
    x_train = rng.standard_normal((10, 4)) @ rng.standard_normal((4, 6))  # rank 4 < p = 6 < n
    return x_train, rng.standard_normal((2, 10)) @ x_train, rng.standard_normal(10)  # test points in the row space


@pytest.mark.parametrize("kind", ["square", "wide", "rank_deficient_row_space"])
def test_batch_regret_norm_constrained_symmetries(kind: str) -> None:
    # The normaliser ∫ N(y_t; x^Tθ(y_t), σ²) dy_t is invariant under y → −y (y_t → −y_t), under (y, σ) → (cy, cσ)
    # (θ, y_t and the residual scale by c) and under (X, x) → (cX, cx) (θ scales by 1/c, x^Tθ does not). Scales
    # from 10^-3 to 10^4 move the radius, the kink t* and the leverage curvature across orders of magnitude;
    # the computation is scale-free, so abs=1e-10 (rounding only).
    x_train, x_test, y = symmetry_case(kind)
    base = norm_constrained(x_train, x_test, y, 0.5)
    assert norm_constrained(x_train, x_test, -y, 0.5) == pytest.approx(base, abs=1e-10)
    for c in (1e-2, 1e4):
        assert norm_constrained(x_train, x_test, c * y, c * 0.5) == pytest.approx(base, abs=1e-10)
    for c in (1e-3, 1e2, 1e4):
        assert norm_constrained(c * x_train, c * x_test, y, 0.5) == pytest.approx(base, abs=1e-10)


def test_batch_regret_norm_constrained_zero_cases() -> None:
    # y = 0 or X = 0: ||θ|| ≤ ||X⁺y|| = 0 pins θ = 0, the genie predicts 0 and the normaliser is exactly 1.
    # A zero test point predicts x^Tθ = 0 whatever θ: regret 0 up to the 12σ truncation and quadrature (1e-7).
    rng = np.random.default_rng(4)
    x_train, x_test = rng.standard_normal((4, 9)), rng.standard_normal((2, 9))
    assert norm_constrained(x_train, x_test, np.zeros(4), 0.7) == [0.0, 0.0]
    assert norm_constrained(np.zeros((3, 2)), x_test[:, :2], rng.standard_normal(3), 0.7) == [0.0, 0.0]
    zero_point = norm_constrained(x_train, np.zeros((1, 9)), rng.standard_normal(4), 0.7)
    assert zero_point == [pytest.approx(0.0, abs=1e-7)]


@pytest.mark.parametrize("x_perp", [0.0, 0.4, 2.5])
def test_genie_matches_dense_ridge_and_its_derivative(x_perp: float) -> None:
    # Sherman–Morrison genie in the basis [V, x_⊥]: residual y_t − ã^Tθ and ||θ||² equal the dense ridge solve
    # θ = (diag(d, 0) + ããᵀ + λI)^{-1}((g, 0) + ã·y_t), ã = (a, ||x_⊥||) (rel 1e-10), and the returned
    # d||θ||²/dλ equals the central difference of ||θ(λ)||² (step 1e-6·λ, rel 1e-6).
    rng = np.random.default_rng(5)
    d, g, a = rng.uniform(0.5, 3.0, 4), rng.standard_normal(4), rng.standard_normal(4)
    lam, y_t = np.array([0.3, 2.0, 0.05]), np.array([-1.5, 0.7, 4.0])
    resid, norm2, dnorm2 = _genie(lam, y_t, d, g, a, x_perp)
    a_full = np.append(a, x_perp) if x_perp > 0 else a
    d_full, g_full = (np.append(d, 0.0), np.append(g, 0.0)) if x_perp > 0 else (d, g)

    def dense(lam_i: float, y_i: float) -> np.ndarray:
        gram = np.diag(d_full) + np.outer(a_full, a_full) + lam_i * np.eye(a_full.size)
        return np.linalg.solve(gram, g_full + a_full * y_i)

    for i in range(3):
        theta = dense(lam[i], y_t[i])
        assert resid[i] == pytest.approx(y_t[i] - a_full @ theta, rel=1e-10)
        assert norm2[i] == pytest.approx(theta @ theta, rel=1e-10)
        step = 1e-6 * lam[i]
        upper, lower = dense(lam[i] + step, y_t[i]), dense(lam[i] - step, y_t[i])
        assert dnorm2[i] == pytest.approx((upper @ upper - lower @ lower) / (2 * step), rel=1e-6)


def test_batch_regret_progress_every_64_test_points() -> None:
    calls: list[tuple[float, str]] = []
    params = BatchRegretParams(model="gaussian_linear", X=[[1.0, 2.0]], X_test=[[0.5, -1.0]] * 130, y=[1.0])
    batch_regret(params, lambda f, m="": calls.append((f, m)))
    assert calls == [(0.0, "test point 0"), (64 / 130, "test point 64"), (128 / 130, "test point 128")]


def test_batch_regret_size_caps_are_inclusive() -> None:
    # sum(counts) = 10^9 (one more is refused) and an X_test of exactly 100,000 elements are accepted.
    res = batch_regret(BatchRegretParams(model="multinomial", counts=[10**9, 0]), no_progress)
    assert res.regret_nats == [pytest.approx(math.log((10**9 + 2) / (10**9 + 1)), rel=1e-12)]
    with pytest.raises(InvalidInput) as err:
        batch_regret(BatchRegretParams(model="multinomial", counts=[10**9, 1]), no_progress)
    assert err.value.loc == ("counts",)
    x_train = np.eye(21, 20) + 0.1
    full = BatchRegretParams(model="gaussian_linear", X=x_train.tolist(), X_test=[[0.5] * 20] * 5000)
    assert len(batch_regret(full, no_progress).regret_nats) == 5000


def test_batch_regret_domain_errors() -> None:
    ok = [[1.0, 2.0], [3.0, 4.5], [0.0, 1.0]]
    cases = [
        ({"model": "multinomial"}, "counts"),
        ({"model": "multinomial", "counts": [1], "X": ok}, "X"),
        ({"model": "gaussian_linear", "X": ok}, "X_test"),
        ({"model": "gaussian_linear", "X": ok, "X_test": ok, "counts": [1]}, "counts"),
        ({"model": "gaussian_linear", "X": [[1.0, 2.0], [1.0]], "X_test": ok}, "X"),
        ({"model": "gaussian_linear", "X": ok, "X_test": [[1.0, 2.0], [1.0]]}, "X_test"),
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


def test_batch_regret_cost_formula() -> None:
    # K for the multinomial; svd = 4·n·p·r (r = min(n, p)) plus 2·m·p·r (p < n) or 1.2e5·m·(r + 1) (p ≥ n).
    assert batch_regret_cost(BatchRegretParams(model="multinomial", counts=[1, 2, 3, 4])) == 4.0
    # X missing (refused later by batch_regret): n = p = 0, so only 1.2e5·m.
    assert batch_regret_cost(BatchRegretParams(model="gaussian_linear", X_test=[[1.0]] * 2)) == 1.2e5 * 2
    tall = BatchRegretParams(model="gaussian_linear", X=[[1.0, 2.0]] * 5, X_test=[[1.0, 0.0]] * 3)
    assert batch_regret_cost(tall) == 4 * 5 * 2 * 2 + 2 * 3 * 2 * 2
    square = BatchRegretParams(model="gaussian_linear", X=[[1.0, 2.0, 3.0]] * 3, X_test=[[1.0, 0.0, 0.0]], y=[1.0] * 3)
    assert batch_regret_cost(square) == 4 * 3 * 3 * 3 + 1.2e5 * 1 * 4
    wide = BatchRegretParams(
        model="gaussian_linear", X=[[1.0, 2.0, 3.0]] * 2, X_test=[[1.0, 0.0, 0.0]] * 4, y=[1.0] * 2
    )
    assert batch_regret_cost(wide) == 4 * 2 * 3 * 2 + 1.2e5 * 4 * 3


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
    # docs/compression.md, `compression.double_descent` (the random-features table) at a reduced size: n = 100,
    # d = 20, 2 reps, 1000 test points, p/n = 30 dropped.
    params = DoubleDescentParams(
        experiment="rf_regression", n=100, widths=[round(r * 100) for r in RF_RATIOS], reps=2, n_test=1000
    )
    return double_descent(params, no_progress)


@pytest.mark.slow
def test_rf_double_descent_peak_spec_b3_item4(rf_result) -> None:
    # Tolerances (docs/compression.md: the peak location and the ≥ 3× ratio to Bayes are stable): p/n ∈ [0.8, 1.25].
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
    # Fixed prior β ~ N(0, I): monotone second ascent; Monte Carlo (2 reps) within 0.06 of the table's row.
    assert all(b > a for a, b in itertools.pairwise(fixed))
    assert fixed == pytest.approx(SPEC_FIXED, abs=0.06)


def test_rf_mle_and_pnml_against_spec_table(rf_result) -> None:
    rows = {r.width: r for r in rf_result.rows}
    # Away from the peak the MLE NLL is stable across seeds: within 7 % of the table's row (Monte Carlo, 2 reps).
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


def rf_reference(params: DoubleDescentParams, p: int) -> dict:
    """The random-features experiment written out densely: the documented streams (data SeedSequence([seed, 0,
    rep]), features [seed, 1, rep, p]), MLE by np.linalg.pinv, Bayes by the explicit posterior covariance
    (Φ^TΦ + I/v)^{-1}, pNML N(φ^Tβ̂, (1+h)²) with h = φ^T(Φ^TΦ)^{-1}φ, no chunking, no Cholesky."""
    n, d, m = params.n, params.input_dim, params.n_test
    totals = {"mle": 0.0, "bayes": 0.0, "fixed": 0.0, "pnml": 0.0, "regret": 0.0}
    pnml_ok = p < n
    for rep in range(params.reps):
        rng = np.random.default_rng(np.random.SeedSequence([params.seed, 0, rep]))
        x, x_test = rng.standard_normal((n, d)), rng.standard_normal((m, d))
        y, y_test = rng.choice([-1.0, 1.0], size=n), rng.choice([-1.0, 1.0], size=m)
        w = np.random.default_rng(np.random.SeedSequence([params.seed, 1, rep, p])).standard_normal((d, p))
        phi, ft = np.maximum(x @ w / math.sqrt(d), 0.0), np.maximum(x_test @ w / math.sqrt(d), 0.0)
        pred = ft @ np.linalg.pinv(phi, rcond=max(n, p) * np.finfo(np.float64).eps) @ y  # matrix_rank's cut
        totals["mle"] -= norm.logpdf(y_test, pred, 1.0).sum()
        for key, prior_var in (("bayes", 1.0 / p), ("fixed", 1.0)):
            cov = np.linalg.inv(phi.T @ phi + np.eye(p) / prior_var)
            var = 1.0 + np.einsum("ij,jk,ik->i", ft, cov, ft)
            totals[key] -= norm.logpdf(y_test, ft @ cov @ phi.T @ y, np.sqrt(var)).sum()
        pnml_ok = pnml_ok and np.linalg.matrix_rank(phi) == p
        if pnml_ok:
            h = np.einsum("ij,jk,ik->i", ft, np.linalg.inv(phi.T @ phi), ft)
            totals["pnml"] -= norm.logpdf(y_test, pred, 1.0 + h).sum()
            totals["regret"] += np.log1p(h).sum()
    mean = {key: value / (params.reps * m) for key, value in totals.items()}
    if not pnml_ok:
        mean["pnml"] = mean["regret"] = None
    return mean


@pytest.mark.parametrize(
    ("n", "input_dim", "widths", "reps", "n_test"),
    [
        (8, 3, [3, 8, 14], 2, 1030),  # p < n, p = n, p > n; 1030 test points span two prediction chunks
        (5, 1, [2], 3, 4),  # d = 1: ReLU features of rank < p in some repetition, so no pNML although p < n
        (4, 1, [3], 3, 4),  # d = 1, rep 2: rank 2 < p, the null direction has a rounding-level singular value
        (1, 1, [1], 10, 3),  # one point, one feature: φ = 0 (rank 0) and 0 < φ < 1 both occur over 10 reps
    ],
)
def test_rf_widths_match_dense_reference(n: int, input_dim: int, widths: list[int], reps: int, n_test: int) -> None:
    # Every per-width field against the dense reference; rel=1e-8 (pinv and inv vs SVD and Cholesky rounding).
    params = DoubleDescentParams(n=n, widths=widths, reps=reps, n_test=n_test, input_dim=input_dim, seed=5)
    res = double_descent(params, no_progress)
    approx = LOG_2PI_HALF + 0.5
    for row, p in zip(res.rows, widths, strict=True):
        ref = rf_reference(params, p)
        assert (row.width, row.width_over_n) == (p, p / n)
        assert row.mle_ce == pytest.approx(ref["mle"], rel=1e-8)
        assert row.bayes_ce == pytest.approx(ref["bayes"], rel=1e-8)
        assert row.bayes_fixed_ce == pytest.approx(ref["fixed"], rel=1e-8)
        if ref["pnml"] is None:
            assert row.pnml_ce is None and row.pnml_regret is None
        else:
            assert row.pnml_ce == pytest.approx(ref["pnml"], rel=1e-8)
            assert row.pnml_regret == pytest.approx(ref["regret"], rel=1e-8)
        assert row.approx_error == pytest.approx(approx, rel=1e-15)
        assert row.bayes_regret == pytest.approx(ref["bayes"] - approx, rel=1e-8, abs=1e-12)
        assert row.mle_bayes_gap == pytest.approx(ref["mle"] - ref["bayes"], rel=1e-8, abs=1e-12)
    peak = max(res.rows, key=lambda r: r.mle_ce)
    assert res.peak_width == peak.width
    assert res.peak_ratio == pytest.approx(peak.mle_ce / peak.bayes_ce, rel=1e-15)
    assert (res.experiment, res.n) == ("rf_regression", n)


def test_rf_reference_cases_cover_rank_deficient_and_zero_features() -> None:
    # The dense-reference cases above are only meaningful if they reach these branches: d = 1 features of rank
    # < p < n (one with a rounding-level singular value), and a single feature that is 0 in one repetition and in
    # (0, 1) in another.
    def phi(params: DoubleDescentParams, p: int, rep: int) -> np.ndarray:
        rng = np.random.default_rng(np.random.SeedSequence([params.seed, 0, rep]))
        x = rng.standard_normal((params.n, params.input_dim))
        w_rng = np.random.default_rng(np.random.SeedSequence([params.seed, 1, rep, p]))
        w = w_rng.standard_normal((params.input_dim, p))
        return np.maximum(x @ w / math.sqrt(params.input_dim), 0.0)

    deficient = DoubleDescentParams(n=5, widths=[2], reps=3, n_test=4, input_dim=1, seed=5)
    assert min(np.linalg.matrix_rank(phi(deficient, 2, rep)) for rep in range(3)) < 2
    # (n, p) = (4, 3), rep 2: the third singular value is not 0 but below the rank cut max(n, p)·eps·s_max.
    sv = np.linalg.svd(phi(DoubleDescentParams(n=4, widths=[3], input_dim=1, seed=5), 3, 2), compute_uv=False)
    assert 0 < sv[2] <= 4 * np.finfo(np.float64).eps * sv[0]
    single = DoubleDescentParams(n=1, widths=[1], reps=10, n_test=3, input_dim=1, seed=5)
    values = [float(phi(single, 1, rep)[0, 0]) for rep in range(10)]
    assert 0.0 in values and any(0 < v < 1 for v in values)


def test_rf_width_cap_is_inclusive() -> None:
    # widths ≤ 5000 are accepted: one 5000-feature row (function-space Bayes, n = 2) runs; 5001 is refused.
    res = double_descent(DoubleDescentParams(n=2, widths=[5000], reps=1, n_test=1, input_dim=1), no_progress)
    assert res.rows[0].width == 5000 and res.rows[0].pnml_ce is None


@pytest.mark.slow
def test_double_descent_plot_draws_the_three_curves_against_width_over_n() -> None:
    # A hand-made result: each curve is exactly its column against width / n, the missing pNML points are
    # skipped, the interpolation threshold is a thin black line at 1 and the y axis is logarithmic.
    approx = LOG_2PI_HALF + 0.5

    def row(width: int, mle: float, bayes: float, pnml: float | None) -> WidthRow:
        return WidthRow(
            width=width,
            width_over_n=width / 40,
            mle_ce=mle,
            bayes_ce=bayes,
            bayes_fixed_ce=bayes + 0.1,
            pnml_ce=pnml,
            pnml_regret=None if pnml is None else 0.2,
            approx_error=approx,
            bayes_regret=bayes - approx,
            mle_bayes_gap=mle - bayes,
        )

    rows = [row(10, 1.6, 1.45, 1.55), row(40, 30.0, 1.46, None), row(80, 2.2, 1.47, None)]
    result = DoubleDescentResult(
        experiment="rf_regression", n=40, rows=rows, peak_width=40, peak_ratio=30.0 / 1.46, reconstructed=[]
    )
    fig = ESTIMATORS["compression.double_descent"].plot(result)
    assert list(fig.get_size_inches()) == [6.0, 4.0]
    ax = fig.axes[0]
    mle, bayes, pnml, threshold = ax.lines
    assert [line.get_label() for line in (mle, bayes, pnml)] == ["MLE", "Bayes", "pNML"]
    assert list(mle.get_xdata()) == list(bayes.get_xdata()) == [0.25, 1.0, 2.0]
    assert list(mle.get_ydata()) == [1.6, 30.0, 2.2]
    assert list(bayes.get_ydata()) == [1.45, 1.46, 1.47]
    assert (list(pnml.get_xdata()), list(pnml.get_ydata())) == ([0.25], [1.55])
    assert all(line.get_marker() == "o" and line.get_linestyle() == "-" for line in (mle, bayes, pnml))
    assert list(threshold.get_xdata()) == [1.0, 1.0]
    assert rgba(threshold.get_color()) == rgba("k") and threshold.get_linewidth() == 0.5
    assert ax.get_yscale() == "log"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("width / n", "test cross-entropy (nats)")
    assert ax.get_title() == "rf_regression, n = 40"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["MLE", "Bayes", "pNML"]


# ---------------------------------------------------------------- double_descent: cell model

CELL_M = [2, 10, 50, 100, 200, 400, 1000, 10_000]
SPEC_CELL_MLE = [2.35, 3.30, 5.76, 5.63, 4.78, 3.85, 3.02, 2.38]


@pytest.fixture(scope="module")
def cell_result():
    params = DoubleDescentParams(experiment="cell_model", n=200, widths=CELL_M, num_classes=10, eps=1e-3)
    return double_descent(params, no_progress)


def test_cell_model_exact_expectations_spec_b3_item5(cell_result) -> None:
    # Exact expectations; the reference prints 2 decimals, so each must lie within 0.005 of our value.
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
        assert r.width_over_n == r.width / 200
        assert r.approx_error + r.bayes_regret + r.mle_bayes_gap == pytest.approx(r.mle_ce, rel=1e-12)


def _assert_cell_losses(losses: np.ndarray, k_cls: int, eps: float, ncs: Iterable[int]) -> None:
    """Columns ``ncs`` equal the scipy double sum E_k[-log((k + a)/(n_c + K a))], k ~ Bin(n_c, 1/K), for
    a = eps, 1/2, 1 (rel 1e-12), and row 3 equals log((n_c + K)/(n_c + 1)) (rel 1e-14)."""
    for nc in ncs:
        k = np.arange(nc + 1)
        pmf = binom.pmf(k, nc, 1 / k_cls)
        for row, a in enumerate((eps, 0.5, 1.0)):
            expected = float(pmf @ -np.log((k + a) / (nc + k_cls * a)))
            assert losses[row, nc] == pytest.approx(expected, rel=1e-12, abs=1e-14)
        assert losses[3, nc] == pytest.approx(math.log((nc + k_cls) / (nc + 1)), rel=1e-14)


def test_cell_conditional_losses_match_scipy_double_sum() -> None:
    # Independent evaluation with scipy.stats.binom of E[−log((k+a)/(n_c+Ka))], k ~ Bin(n_c, 1/K); 1e-12.
    n, k_cls, eps = 30, 4, 0.01
    losses = cell_conditional_losses(n, k_cls, eps)
    _assert_cell_losses(losses, k_cls, eps, (0, 1, 7, 30))


@pytest.mark.parametrize("n", [1, 600])
def test_cell_conditional_losses_fill_every_chunk(n: int) -> None:
    # n_c = 0..n is processed in chunks of 256: every column, including those of the last chunk (n = 600 spans
    # three), equals the scipy double sum; n = 1 is a single partial chunk. rel=1e-12.
    k_cls, eps = 3, 0.1
    losses = cell_conditional_losses(n, k_cls, eps)
    _assert_cell_losses(losses, k_cls, eps, sorted({0, 1, n // 2, 255, 256, 257, 511, 512, n} & set(range(n + 1))))


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


def test_double_descent_cost_formula() -> None:
    # cell_model: 30·(n+1)² + |widths|·(n+1); rf_regression: reps·Σ_p [n·max(p,n)² + n_test·p·(min(p,n) + d)].
    cell = DoubleDescentParams(experiment="cell_model", n=9, widths=[2, 5, 50])
    assert double_descent_cost(cell) == 30 * 10**2 + 3 * 10
    rf = DoubleDescentParams(n=10, widths=[5, 20], reps=2, n_test=7, input_dim=3)
    assert double_descent_cost(rf) == 2 * (10 * 10**2 + 7 * 5 * (5 + 3) + 10 * 20**2 + 7 * 20 * (10 + 3))


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


def test_codelength_reports_the_ml_codelength_and_alphabet_by_hand() -> None:
    """counts [3, 1, 0, 2] (n = 6, K = 4): −Σ n_j log(n_j/n) = 3 log 2 + log 6 + 2 log 3, whatever the method;
    regret = codelength − that."""
    ml = 3 * math.log(2) + math.log(6) + 2 * math.log(3)
    for method in ("nml", "bayes", "ml"):
        res = code([3, 1, 0, 2], method)
        assert res.num_symbols == 4 and res.n == 6
        assert res.ml_codelength_nats == pytest.approx(ml, rel=1e-13)
        assert res.regret_vs_ml_nats == pytest.approx(res.codelength_nats - ml, rel=1e-12, abs=1e-13)
