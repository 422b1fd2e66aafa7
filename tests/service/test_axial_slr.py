"""Axial single-location regression: oracle-risk table, exact 1-D risk, gradient, PGD regimes, validation."""

import math

import numpy as np
import pytest

from service.errors import Cancelled, InvalidInput
from service.estimators.axial_slr import (
    SPECS,
    PgdParams,
    RiskParams,
    axial_pgd,
    axial_risk,
    pgd_cost,
    risk_cost,
)
from service.estimators.axial_slr_model import (
    Task,
    axial_predict,
    exact_risk_1d,
    flattened_predict,
    risk_gradient,
    sample,
)
from service.registry import no_progress


def zeta(lam: float) -> float:
    """E erf(λz)², z ~ N(0, 1) = (2/π)·arcsin(2λ²/(1 + 2λ²))."""
    return 2 / math.pi * math.asin(2 * lam**2 / (1 + 2 * lam**2))


def const_inner_oracle_risk(m: int, n: int, lam: float, eps: float) -> float:
    """Hand computation for sum pooling at (k*, v*) when λℓ ≫ 1 (γ = 1): the planted row's outer weight is 1, so its
    error is the n − 1 noise tokens' v*-coordinates (variance n − 1) plus ε²; every other row contributes
    E erf(λ h_iᵀk)²·E(h_iᵀv)² = ζ(λ√n)·n with h_i ~ N(0, n·I)."""
    return (n - 1) + eps**2 + (m - 1) * n * zeta(lam * math.sqrt(n))


def risk(**kw: object):
    return axial_risk(RiskParams(**kw), no_progress)


@pytest.fixture(scope="module")
def table() -> dict[tuple[float, float], object]:
    """M = N = 5, d = 20, γ = 1, ε = 0.1, oracle parameters, 20000 draws (about 1 s each)."""
    return {(ell, lam): risk(ell=ell, lambda_r=lam) for ell, lam in ((100.0, 0.05), (1000.0, 0.005))}


# Independently measured oracle risks (20000 draws): (ℓ, λ) → erf-inner, linear-inner, const-inner, flattened 1-D.
TABLE = {(100.0, 0.05): (0.0225, 21.7, 4.34, 0.0857), (1000.0, 0.005): (0.0101, 21.5, 4.00, 0.0107)}


@pytest.mark.slow
def test_oracle_risk_table_within_sampling_error(table: dict) -> None:
    for key, expected in TABLE.items():
        variants = table[key].variants
        assert [v.predictor for v in variants] == ["axial_nonlinear", "axial_linear", "axial_const", "flattened_1d"]
        for v, ref in zip(variants, expected, strict=True):
            # both figures are 20000-draw means: 4 standard errors of their difference, plus the reference's rounding
            assert abs(v.risk - ref) <= 4 * math.sqrt(2) * v.se + 0.05 * 10 ** math.floor(math.log10(ref)), (key, v)


def test_sum_pooling_matches_the_hand_computation(table: dict) -> None:
    # The reference's 4.34 (ℓ = 100) is 0.5 standard errors from the hand value 4.322; ours must be within 4 SE.
    for (_, lam), res in table.items():
        const = res.variants[2]
        assert const.risk == pytest.approx(const_inner_oracle_risk(5, 5, lam, 0.1), abs=4 * const.se)


def test_erf_inner_tends_to_the_bayes_risk_and_simplifications_do_not(table: dict) -> None:
    a, b = table[(100.0, 0.05)], table[(1000.0, 0.005)]
    assert a.bayes_risk == pytest.approx(0.01, rel=1e-12)
    assert a.oracle_excess_risk > 10 * a.oracle_risk_se  # λℓ = 5: clearly above ε²
    assert b.oracle_excess_risk < a.oracle_excess_risk / 10  # λ → 0 with λℓ = 5 → ∞ ... ε²
    assert b.oracle_risk == pytest.approx(0.01, abs=4 * b.oracle_risk_se + 1e-4)
    assert min(v.risk for v in b.variants[1:3]) > 300 * b.oracle_risk  # linear and constant inner weights stay O(1)
    assert a.risk == a.oracle_risk == a.variants[0].risk  # default (k, v) is the oracle, same draws


def test_exact_one_dimensional_risk_hand_values() -> None:
    # ℓ = 0, v ⊥ k, k*, v*: T has mean zero and is independent of y, so R = N·ζ(λ) + γ² + ε².
    task = Task(1, 7, 5, 0.0, 1.0, 0.3)
    e = np.eye(5)
    assert exact_risk_1d(task, e[2], e[3], 0.1) == pytest.approx(7 * zeta(0.1) + 1 + 0.09, rel=1e-10)
    assert zeta(0.1) == pytest.approx(0.012484, abs=5e-7)
    # γ = 0, ε = 0 at the oracle: the planted token is 50k*, so its term erf(10)·(50k*)ᵀv* and y are both 0; the noise
    # tokens carry a = xᵀk* and b = xᵀv* independent, so R = (N − 1)·ζ(λ).
    task = Task(1, 4, 3, 50.0, 0.0, 0.0)
    assert exact_risk_1d(task, e[0, :3], e[1, :3], 0.2) == pytest.approx(3 * zeta(0.2), rel=1e-10)


@pytest.mark.slow
def test_exact_one_dimensional_risk_matches_monte_carlo() -> None:
    rng = np.random.default_rng(1)
    k, v = rng.standard_normal(8), rng.standard_normal(8)
    k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
    res = risk(m=1, n=6, d=8, ell=3.0, gamma=0.7, eps=0.2, lambda_r=0.8, k=k.tolist(), v=v.tolist(), n_mc=100_000)
    task = Task(1, 6, 8, 3.0, 0.7, 0.2)
    x, y = sample(task, np.random.default_rng(0), 100_000)
    sq = (flattened_predict(x, k, v, 0.8, "erf") - y) ** 2
    assert res.exact_risk_1d == pytest.approx(sq.mean(), abs=4 * sq.std() / math.sqrt(sq.size))
    oracle = res.variants[3]
    assert res.exact_oracle_risk_1d == pytest.approx(oracle.risk, abs=4 * oracle.se)
    assert risk(m=2, n=2, d=4, n_mc=100).exact_risk_1d is None


def test_predictor_is_sign_symmetric_and_reports_alignment() -> None:
    rng = np.random.default_rng(3)
    k, v = rng.standard_normal(6), rng.standard_normal(6)
    a = risk(m=3, n=4, d=6, ell=5.0, lambda_r=0.3, k=k.tolist(), v=v.tolist(), n_mc=2000)
    b = risk(m=3, n=4, d=6, ell=5.0, lambda_r=0.3, k=(-k).tolist(), v=(-v).tolist(), n_mc=2000)
    assert a.risk == pytest.approx(b.risk, rel=1e-12)  # erf is odd: T(−k, −v) = T(k, v) on the same draws
    ku, vu = k / np.linalg.norm(k), v / np.linalg.norm(v)
    assert a.kappa == pytest.approx(ku[0], rel=1e-12) and b.kappa == pytest.approx(-ku[0], rel=1e-12)
    assert a.abs_kappa == b.abs_kappa and a.signed_nu == pytest.approx(b.signed_nu, rel=1e-12)
    assert a.rho == pytest.approx(ku @ vu, rel=1e-12)
    assert a.manifold_distance == pytest.approx((ku @ vu) ** 2 + ku[1] ** 2 + vu[0] ** 2, rel=1e-12)
    assert len(a.warnings) == 2  # both directions were renormalised


def test_softmax_attention_with_one_token_per_axis_is_the_value() -> None:
    # M = N = 1: softmax weights are 1, so T = xᵀv and at the oracle T − y = (ℓk* + γg)ᵀv* − y = −εξ.
    res = risk(m=1, n=1, d=3, attention="softmax", n_mc=5000)
    assert res.oracle_risk == pytest.approx(0.01, abs=4 * res.oracle_risk_se)


def test_gradient_matches_finite_differences() -> None:
    task = Task(3, 4, 6, 5.0, 1.0, 0.1)
    rng = np.random.default_rng(0)
    x, y = sample(task, rng, 7)
    k, v = rng.standard_normal(6), rng.standard_normal(6)

    def f(kk: np.ndarray, vv: np.ndarray) -> float:
        return float(np.mean((axial_predict(x, kk, vv, 0.3, 0.2, "nonlinear", "erf") - y) ** 2))

    value, grad_k, grad_v = risk_gradient(x, y, k, v, 0.3, 0.2)
    assert value == pytest.approx(f(k, v), rel=1e-12)
    h, eye = 1e-6, np.eye(6)
    fd_k = np.array([(f(k + h * e, v) - f(k - h * e, v)) / (2 * h) for e in eye])
    fd_v = np.array([(f(k, v + h * e) - f(k, v - h * e)) / (2 * h) for e in eye])
    np.testing.assert_allclose(grad_k, fd_k, rtol=1e-6, atol=1e-8 * np.abs(grad_k).max())
    np.testing.assert_allclose(grad_v, fd_v, rtol=1e-6, atol=1e-8 * np.abs(grad_v).max())


@pytest.mark.slow
def test_saturated_erf_freezes_kappa_while_nu_learns() -> None:
    # λ0 = 0.2, ℓ = 50: λℓ|κ0| = 4.5 saturates erf on the planted token, so ∂T/∂k vanishes there and |κ| stays put;
    # lr = 2e-4 keeps 2·lr·ℓ² = 1 below the stability limit 2 of v's k* component.
    res = axial_pgd(PgdParams(seed=3, lambda0=0.2, lr=2e-4, iterations=2000), no_progress)
    kappa0 = res.trajectory[0].abs_kappa
    assert kappa0 == pytest.approx(0.447, abs=1e-3)
    assert max(abs(p.abs_kappa - kappa0) for p in res.trajectory) < 5e-3
    assert res.signed_nu - res.trajectory[0].signed_nu > 0.5
    assert max(p.manifold_distance for p in res.trajectory) < 1e-3  # the manifold is (nearly) invariant


@pytest.mark.slow
def test_constant_temperature_stalls_and_the_schedule_aligns() -> None:
    # 10k steps, M = N = 3, d = 10, ℓ = 50, B = 64, lr = 5e-4, λ0 = 0.06, manifold init (about 6 s each).
    const = axial_pgd(PgdParams(seed=1, iterations=10_000), no_progress)
    assert const.signed_nu > 0.999
    assert const.abs_kappa == pytest.approx(0.464, abs=0.01)  # erf saturated: λ0·ℓ·|κ| ≈ 1.4
    sched = axial_pgd(PgdParams(seed=1, iterations=10_000, schedule="inverse", switch=6000, inc=1e-3), no_progress)
    assert sched.abs_kappa == pytest.approx(0.980, abs=0.01)
    assert sched.signed_nu > 0.999
    assert sched.final_lambda == pytest.approx(0.06 / (1 + 1e-3 * 3999), rel=1e-12)


def test_schedule_floor_and_trajectory_bookkeeping() -> None:
    p = PgdParams(iterations=300, schedule="inverse", switch=100, inc=0.05, floor=0.01, log_every=50)
    res = axial_pgd(p, no_progress)
    assert [pt.t for pt in res.trajectory] == [0, 50, 100, 150, 200, 250, 300]
    assert [pt.lam for pt in res.trajectory[:3]] == [0.06, 0.06, 0.06]
    assert res.trajectory[3].lam == pytest.approx(0.06 / (1 + 0.05 * 49), rel=1e-12)
    assert res.final_lambda == 0.01  # 0.06/(1 + 0.05·199) < floor
    assert np.linalg.norm(res.k) == pytest.approx(1.0, rel=1e-12)
    assert axial_pgd(p, no_progress) == res  # reproducible bit for bit


def test_pgd_reports_progress_and_can_be_cancelled() -> None:
    seen: list[float] = []

    def progress(fraction: float, message: str = "") -> None:
        seen.append(fraction)
        if fraction >= 0.5:
            raise Cancelled

    with pytest.raises(Cancelled):
        axial_pgd(PgdParams(iterations=400), progress)
    assert seen[0] == pytest.approx(0.01) and seen[-1] == pytest.approx(0.5)


def test_validation_names_the_field() -> None:
    with pytest.raises(InvalidInput) as err:
        risk(d=4, k=[1.0, 0.0, 0.0], n_mc=100)
    assert err.value.loc == ("k",)
    with pytest.raises(InvalidInput) as err:
        risk(d=3, v=[0.0, 0.0, 0.0], n_mc=100)
    assert err.value.loc == ("v",)
    with pytest.raises(InvalidInput) as err:
        pgd_cost(PgdParams(iterations=5000, log_every=1))
    assert err.value.loc == ("log_every",)


def test_costs_and_budgets() -> None:
    specs = {s.name: s for s in SPECS}
    assert risk_cost(RiskParams()) == 6 * 20000 * 5 * 5 * 20
    assert risk_cost(RiskParams()) < specs["axial_slr.risk"].sync_budget
    assert risk_cost(RiskParams(m=32, n=32, d=256, n_mc=100_000)) > specs["axial_slr.risk"].hard_cap
    long_run = PgdParams(iterations=10_000)
    assert specs["axial_slr.pgd"].sync_budget < pgd_cost(long_run) < specs["axial_slr.pgd"].hard_cap


def test_pgd_plot_draws_the_trajectory() -> None:
    res = axial_pgd(PgdParams(iterations=100, log_every=10), no_progress)
    fig = {s.name: s for s in SPECS}["axial_slr.pgd"].plot(res)
    ax, twin = fig.axes
    assert list(ax.lines[0].get_ydata()) == [p.abs_kappa for p in res.trajectory]
    assert list(ax.lines[1].get_ydata()) == [p.signed_nu for p in res.trajectory]
    assert list(twin.lines[0].get_ydata()) == [p.lam for p in res.trajectory]


def test_risk_plot_draws_the_variants(table: dict) -> None:
    res = table[(100.0, 0.05)]
    ax = {s.name: s for s in SPECS}["axial_slr.risk"].plot(res).axes[0]
    assert [p.get_height() for p in ax.patches] == [v.risk for v in res.variants]
    assert list(ax.lines[-1].get_ydata()) == [res.bayes_risk, res.bayes_risk]
    assert ax.get_yscale() == "log"


def test_excess_risk_nu_and_the_standard_error_across_seeds() -> None:
    """excess_risk = risk − ε², ν = v̂·e₂ (v* = e₂), and risk_se is the spread of risk over independent seeds
    (40 seeds: the sample sd is within ±35 % of the true sd with probability > 0.99)."""
    rng = np.random.default_rng(8)
    k, v = rng.standard_normal(4), rng.standard_normal(4)
    runs = [
        risk(m=2, n=3, d=4, ell=3.0, eps=0.3, lambda_r=0.4, k=k.tolist(), v=v.tolist(), n_mc=400, seed=s)
        for s in range(40)
    ]
    for r in runs:
        assert r.excess_risk == pytest.approx(r.risk - 0.09, rel=1e-12, abs=1e-15)
        assert r.nu == pytest.approx(v[1] / np.linalg.norm(v), rel=1e-12)
    spread = np.std([r.risk for r in runs], ddof=1)
    assert 0.65 < np.mean([r.risk_se for r in runs]) / spread < 1.35


def test_pgd_final_risks_are_those_of_the_final_state() -> None:
    """The final risks are the last trajectory point's, at t = iterations; an independent Monte Carlo of the final
    (k, v, λ) on fresh draws agrees within 4 standard errors (the reported risks are on eval_samples = 1000 draws)."""
    res = axial_pgd(PgdParams(m=2, n=2, d=4, ell=3.0, lr=0.02, iterations=200, log_every=50, seed=2), no_progress)
    last = res.trajectory[-1]
    assert last.t == 200 and (res.final_risk, res.final_oracle_risk) == (last.risk, last.oracle_risk)
    assert res.final_risk != res.trajectory[0].risk
    check = risk(m=2, n=2, d=4, ell=3.0, lambda_r=res.final_lambda, k=res.k, v=res.v, n_mc=20000, seed=9)
    widen = math.sqrt(1 + 20000 / 1000)  # the sd of the difference, in standard errors of the 20000-draw check
    assert res.final_risk == pytest.approx(check.risk, abs=4 * widen * check.risk_se)
    assert res.final_oracle_risk == pytest.approx(check.oracle_risk, abs=4 * widen * check.oracle_risk_se)
