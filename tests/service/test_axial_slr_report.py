"""axial_slr: what the two estimators report around their numerics — exact 1-D risks by hand, alignment at κ = 0,
renormalisation notes, the PGD trajectory's points against a hand evaluation on the documented evaluation draws
(seeded [seed, 1]), the logging and progress schedules, the cost formulas, and both figures and the overlay curves
on hand-made results."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from scipy.special import erf

from service.errors import InvalidInput
from service.estimators.axial_slr import (
    CHUNK_COORDS,
    PgdParams,
    RiskParams,
    axial_pgd,
    axial_risk,
    pgd_cost,
    pgd_curves,
    pgd_plot,
    risk_plot,
)
from service.registry import no_progress
from tests.service.test_axial_slr import zeta


def risk(**kw: object):
    return axial_risk(RiskParams(**kw), no_progress)


def test_exact_one_dimensional_risks_at_k_v_and_at_the_oracle_by_hand() -> None:
    """M = 1, N = 4, γ = 0, ε = 0.3, ℓ = 50, λ_r = 0.2 (λ_c = 0.7 must not enter: one row has no column attention
    in the 1-D predictor). k = (e₁ + e₂)/√2, v = (e₁ − e₂)/√2: on a noise token a = xᵀk and b = xᵀv are independent
    standard normals (k ⊥ v), each contributing ζ(λ); the planted token ℓe₁ gives erf(λℓ/√2)·ℓ/√2 with y = εξ, so
    R = (erf(λℓ/√2)·ℓ/√2)² + 3ζ(λ) + ε². At the oracle the planted term is erf(λℓ)·(ℓe₁)ᵀe₂ = 0: R = 3ζ(λ) + ε²."""
    s = 1 / math.sqrt(2)
    res = risk(m=1, n=4, d=3, ell=50.0, gamma=0.0, eps=0.3, lambda_r=0.2, lambda_c=0.7, k=[s, s, 0.0],
               v=[s, -s, 0.0], n_mc=100)  # fmt: skip
    planted = erf(0.2 * 50 * s) * 50 * s
    assert res.exact_risk_1d == pytest.approx(planted**2 + 3 * zeta(0.2) + 0.09, rel=1e-9)
    assert res.exact_oracle_risk_1d == pytest.approx(3 * zeta(0.2) + 0.09, rel=1e-9)
    two_rows = risk(m=2, n=1, d=2, n_mc=100)
    assert two_rows.exact_risk_1d is None and two_rows.exact_oracle_risk_1d is None


def test_alignment_when_k_is_orthogonal_to_k_star() -> None:
    """k = e₃ (κ = 0: sign(κ) counts as +1), v = 0.6e₂ + 0.8e₃: ν = 0.6, ρ = 0.8, distance ρ² + 0 + 0."""
    res = risk(m=2, n=2, d=3, k=[0.0, 0.0, 1.0], v=[0.0, 0.6, 0.8], n_mc=100)
    assert res.kappa == 0.0 and res.abs_kappa == 0.0
    assert res.nu == pytest.approx(0.6, rel=1e-15) and res.signed_nu == pytest.approx(0.6, rel=1e-15)
    assert res.rho == pytest.approx(0.8, rel=1e-15)
    assert res.manifold_distance == pytest.approx(0.64, rel=1e-14)
    assert res.warnings == []  # both have norm 1 (within 1e-9)
    negative = risk(m=2, n=2, d=3, k=[-0.6, 0.0, 0.8], v=[0.0, 0.6, 0.8], n_mc=100)
    assert negative.kappa == pytest.approx(-0.6, rel=1e-15)
    assert negative.abs_kappa == pytest.approx(0.6, rel=1e-15)
    assert negative.signed_nu == pytest.approx(-0.6, rel=1e-15)


def test_directions_are_renormalised_with_a_note_beyond_1e_9() -> None:
    res = risk(m=2, n=2, d=3, k=[2.0, 0.0, 0.0], v=[0.0, 1.0 + 1e-10, 0.0], n_mc=100)
    assert res.warnings == ["k had norm 2; renormalised to 1."]
    assert res.kappa == 1.0 and res.nu == 1.0
    res = risk(m=2, n=2, d=3, v=[0.0, 1.0 + 1e-8, 0.0], n_mc=100)
    assert res.warnings == ["v had norm 1; renormalised to 1."]
    assert res.nu == 1.0


def test_standard_error_of_a_risk_with_small_spread() -> None:
    """Softmax attention with M = N = 1 (d = 3): every weight is 1, so at the oracle T − y = −εξ and the squared
    errors are ε²ξ² on the documented draws (the tokens, then ξ): mean and standard error by hand. Their variance
    (2ε⁴ = 2e−4) is far below 1, where a floor on the variance would show."""
    res = risk(m=1, n=1, d=3, attention="softmax", n_mc=500, seed=6)
    rng = np.random.default_rng(6)
    rng.standard_normal((500, 1, 1, 3))
    sq = (0.1 * rng.standard_normal(500)) ** 2
    assert res.oracle_risk == pytest.approx(sq.mean(), rel=1e-12)
    assert res.oracle_risk_se == pytest.approx(sq.std(ddof=1) / math.sqrt(500), rel=1e-9)


def test_draws_are_made_chunk_by_chunk_and_each_is_used_once() -> None:
    """M = 2, N = 10, d = 101: a chunk holds CHUNK_COORDS // (M·N·d) = 990 draws, so 1000 draws come as 990 then 10,
    each chunk drawn in the documented order (its tokens, then its ξ), progress reported after each. The oracle risk
    of the erf predictor (λ = 0.3, ℓ = 4) by hand on those draws."""
    m, n, d, ell, n_mc = 2, 10, 101, 4.0, 1000
    assert CHUNK_COORDS // (m * n * d) == 990
    seen: list[tuple[float, str]] = []
    params = RiskParams(m=m, n=n, d=d, ell=ell, lambda_r=0.3, n_mc=n_mc, seed=2)
    res = axial_risk(params, lambda f, msg="": seen.append((f, msg)))
    assert seen == [(0.99, "990/1000 draws"), (1.0, "1000/1000 draws")]  # progress after each chunk
    rng = np.random.default_rng(2)
    sq = []
    for size in (990, 10):
        x = rng.standard_normal((size, m, n, d))
        x[:, 0, 0, 0] += ell  # γ = 1
        y = x[:, 0, 0, 1] + 0.1 * rng.standard_normal(size)
        h = np.einsum("bij,bijd->bid", erf(0.3 * x[..., 0]), x)
        t = np.sum(erf(0.3 * h[..., 0]) * h[..., 1], axis=1)
        sq.append((t - y) ** 2)
    assert res.oracle_risk == pytest.approx(np.concatenate(sq).mean(), rel=1e-10)


def test_oracle_risk_uses_the_requested_inner_weights_and_the_flattened_variant_uses_erf() -> None:
    """inner = 'const' (sum pooling): the oracle risk is the constant-inner oracle's, equal to the axial_const variant
    on the same draws and not the erf-inner one; its excess is oracle − ε². The flattened variant with erf attention
    is Σ_l erf(λ x_lᵀk*)·x_lᵀv* over all M·N tokens, by hand on the documented draws."""
    m, n, d, n_mc = 2, 3, 4, 200
    res = risk(m=m, n=n, d=d, ell=5.0, eps=0.3, lambda_r=0.4, inner="const", n_mc=n_mc, seed=3)
    variants = {v.predictor: v for v in res.variants}
    const, erf_inner = variants["axial_const"], variants["axial_nonlinear"]
    assert (res.oracle_risk, res.oracle_risk_se) == (const.risk, const.se)
    assert abs(res.oracle_risk - erf_inner.risk) > 10 * erf_inner.se
    assert res.oracle_risk_se != erf_inner.se
    assert res.oracle_excess_risk == pytest.approx(res.oracle_risk - 0.09, rel=1e-14)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n_mc, m, n, d))
    x[:, 0, 0, 0] += 5.0  # γ = 1
    y = x[:, 0, 0, 1] + 0.3 * rng.standard_normal(n_mc)
    flat = x.reshape(n_mc, m * n, d)
    t = np.sum(erf(0.4 * flat[:, :, 0]) * flat[:, :, 1], axis=1)
    assert variants["flattened_1d"].risk == pytest.approx(np.mean((t - y) ** 2), rel=1e-10)


def eval_risks(params: PgdParams, k: np.ndarray, v: np.ndarray, lam: float) -> tuple[float, float]:
    """The model and oracle risks on the evaluation draws: seeded [seed, 1], all tokens as standard normals (the
    planted cell's draw is g), then ξ; T = Σ_i erf(λ h_iᵀk)·h_iᵀv, h_i = Σ_j erf(λ x_ijᵀk)·x_ij."""
    rng = np.random.default_rng([params.seed, 1])
    x = rng.standard_normal((params.eval_samples, params.m, params.n, params.d))
    x[:, 0, 0, :] = params.gamma * x[:, 0, 0, :] + params.ell * np.eye(params.d)[0]
    y = x[:, 0, 0, 1] + params.eps * rng.standard_normal(params.eval_samples)

    def mean_sq(kk: np.ndarray, vv: np.ndarray) -> float:
        w = erf(lam * np.einsum("bijd,d->bij", x, kk))
        h = np.einsum("bij,bijd->bid", w, x)
        t = np.sum(erf(lam * (h @ kk)) * (h @ vv), axis=1)
        return float(np.mean((t - y) ** 2))

    return mean_sq(k, v), mean_sq(np.eye(params.d)[0], np.eye(params.d)[1])


PGD = {"m": 2, "n": 2, "d": 3, "ell": 3.0, "lr": 0.02, "batch_size": 4, "eval_samples": 100, "seed": 4}


def test_pgd_trajectory_points_are_the_state_after_each_step() -> None:
    """10 steps, log_every by default max(1, 10 // 200) = 1: eleven points; the last is the final (k, v) with its
    alignment by hand and its risks on the evaluation draws at λ0 (constant schedule)."""
    params = PgdParams(**PGD, iterations=10, lambda0=0.3)
    res = axial_pgd(params, no_progress)
    assert [p.t for p in res.trajectory] == list(range(11))
    assert all(p.lam == 0.3 for p in res.trajectory) and res.final_lambda == 0.3
    k, v = np.array(res.k), np.array(res.v)
    last = res.trajectory[-1]
    assert last.abs_kappa == pytest.approx(abs(k[0]), rel=1e-14) and res.abs_kappa == last.abs_kappa
    assert last.signed_nu == pytest.approx(np.sign(k[0]) * v[1], rel=1e-14) and res.signed_nu == last.signed_nu
    assert last.rho == pytest.approx(k @ v, rel=1e-12, abs=1e-15)
    assert last.manifold_distance == pytest.approx((k @ v) ** 2 + k[1] ** 2 + v[0] ** 2, rel=1e-12, abs=1e-30)
    model, oracle = eval_risks(params, k, v, 0.3)
    assert last.risk == pytest.approx(model, rel=1e-10) and last.oracle_risk == pytest.approx(oracle, rel=1e-10)
    assert res.final_risk == last.risk and res.final_oracle_risk == last.oracle_risk
    assert len({p.risk for p in res.trajectory}) > 1  # each point evaluates its own state


def test_inverse_schedule_logs_lambda0_first_and_the_last_step_off_the_logging_grid() -> None:
    """switch = 0, inc = 0.5: step t uses λ0/(1 + 0.5t), so steps 0..4 use 0.3, 0.2, 0.15, 0.12, 0.1; the t = 0 point
    shows λ0 and each later point the λ of the step before it; log_every = 2 over 5 steps logs t = 0, 2, 4 and the
    last step 5."""
    res = axial_pgd(PgdParams(**PGD, iterations=5, log_every=2, lambda0=0.3, schedule="inverse", inc=0.5), no_progress)
    assert [p.t for p in res.trajectory] == [0, 2, 4, 5]
    assert [p.lam for p in res.trajectory] == pytest.approx([0.3, 0.2, 0.12, 0.1], rel=1e-14)
    assert res.final_lambda == pytest.approx(0.1, rel=1e-14)


def test_pgd_starts_on_the_manifold_or_anywhere_on_the_sphere() -> None:
    manifold = axial_pgd(PgdParams(**PGD, iterations=1), no_progress).trajectory[0]
    sphere = axial_pgd(PgdParams(**PGD, iterations=1, init="sphere"), no_progress).trajectory[0]
    assert manifold.manifold_distance < 1e-28 and manifold.rho == pytest.approx(0.0, abs=1e-15)
    assert sphere.manifold_distance > 1e-3


def test_pgd_progress_every_hundredth_of_the_run_or_every_step_when_shorter() -> None:
    seen: list[float] = []
    messages: list[str] = []
    axial_pgd(PgdParams(**PGD, iterations=10), lambda f, m="": (seen.append(f), messages.append(m)))
    assert seen == pytest.approx([(t + 1) / 10 for t in range(10)], abs=1e-15)
    assert messages == [f"step {t + 1}/10" for t in range(10)]
    seen.clear()
    axial_pgd(PgdParams(**PGD, iterations=250, log_every=250), lambda f, m="": seen.append(f))
    assert seen == pytest.approx([(t + 1) / 125 for t in range(125)], abs=1e-15)  # every 250 // 100 = 2 steps


def test_pgd_cost_formula_and_the_trajectory_cap() -> None:
    """12·B·M·N·d per step plus 2·eval_samples·M·N·d per logged point, iterations // every + 2 points counted;
    default every = max(1, iterations // 200); at most 999 logged points (iterations // every + 2 ≤ 1000)."""
    grid = 2 * 2 * 3
    p = PgdParams(**PGD, iterations=50, log_every=10)
    assert pgd_cost(p) == 50 * 4 * grid * 12 + 2 * (5 + 2) * 100 * grid
    assert pgd_cost(PgdParams(**PGD, iterations=1000)) == 1000 * 4 * grid * 12 + 2 * (200 + 2) * 100 * grid
    assert pgd_cost(PgdParams(**PGD, iterations=100)) == 100 * 4 * grid * 12 + 2 * (100 + 2) * 100 * grid
    assert pgd_cost(PgdParams(**PGD, iterations=55, log_every=10)) == 55 * 4 * grid * 12 + 2 * (5 + 2) * 100 * grid
    assert pgd_cost(PgdParams(**PGD, iterations=1100)) == 1100 * 4 * grid * 12 + 2 * (220 + 2) * 100 * grid
    assert pgd_cost(PgdParams(**PGD, iterations=998, log_every=1)) > 0
    assert pgd_cost(PgdParams(**PGD, iterations=1997, log_every=2)) > 0  # 998 + 2 points counted: allowed
    with pytest.raises(InvalidInput) as err:
        pgd_cost(PgdParams(**PGD, iterations=999, log_every=1))
    assert err.value.loc == ("log_every",)


def risk_result(bayes: float) -> SimpleNamespace:
    variants = [
        SimpleNamespace(predictor="a", risk=0.5, se=0.1),
        SimpleNamespace(predictor="b", risk=2.0, se=0.25),
    ]
    return SimpleNamespace(variants=variants, bayes_risk=bayes)


def test_risk_plot_bars_error_bars_and_the_bayes_line() -> None:
    fig = risk_plot(risk_result(0.04))
    assert tuple(fig.get_size_inches()) == pytest.approx((6.0, 4.0))
    (ax,) = fig.axes
    errorbar, bars = ax.containers
    assert [p.get_height() for p in bars] == [0.5, 2.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
    _, caps, (stems,) = errorbar.lines
    ends = [y for seg in stems.get_segments() for y in sorted(seg[:, 1].tolist())]
    assert ends == pytest.approx([0.5 - 0.196, 0.5 + 0.196, 2.0 - 0.49, 2.0 + 0.49], abs=1e-12)  # ± 1.96 SE
    assert {c.get_markersize() for c in caps} == {6.0}  # capsize 3 draws caps 2·3 points wide
    bayes = ax.lines[-1]
    assert list(bayes.get_ydata()) == [0.04, 0.04] and to_rgba(bayes.get_color()) == to_rgba("k")
    assert bayes.get_linestyle() == ":" and bayes.get_label() == "Bayes risk ε²"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["Bayes risk ε²"]
    assert legend.get_texts()[0].get_fontsize() == 8.0
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "oracle risk E(T − y)²"
    assert ax.get_position().y1 > 0.9  # tightened: matplotlib's default top is 0.88


def test_risk_plot_without_label_noise_has_no_bayes_line() -> None:
    (ax,) = risk_plot(risk_result(0.0)).axes
    assert ax.get_legend() is None
    assert all(list(line.get_ydata()) != [0.0, 0.0] for line in ax.lines)


def pgd_result() -> SimpleNamespace:
    points = [
        SimpleNamespace(t=0, abs_kappa=0.1, signed_nu=-0.2, lam=0.06),
        SimpleNamespace(t=5, abs_kappa=0.4, signed_nu=0.3, lam=0.05),
        SimpleNamespace(t=9, abs_kappa=0.7, signed_nu=0.9, lam=0.04),
    ]
    return SimpleNamespace(trajectory=points)


def test_pgd_plot_lines_axes_and_legend() -> None:
    fig = pgd_plot(pgd_result())
    assert tuple(fig.get_size_inches()) == pytest.approx((6.0, 4.0))
    ax, twin = fig.axes
    kappa, nu = ax.lines
    assert list(kappa.get_xdata()) == [0, 5, 9] == list(nu.get_xdata())
    assert list(kappa.get_ydata()) == [0.1, 0.4, 0.7] and list(nu.get_ydata()) == [-0.2, 0.3, 0.9]
    assert (kappa.get_label(), nu.get_label()) == ("|κ| = |kᵀk*|", "sign(κ)·ν")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("PGD step t", "alignment")
    assert ax.get_ylim() == (-1.05, 1.05)
    (lam,) = twin.lines
    assert list(lam.get_xdata()) == [0, 5, 9] and list(lam.get_ydata()) == [0.06, 0.05, 0.04]
    assert to_rgba(lam.get_color()) == to_rgba("k") and lam.get_linestyle() == ":"
    assert lam.get_label() == "λ_t" and twin.get_ylabel() == "λ_t"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["|κ| = |kᵀk*|", "sign(κ)·ν"]
    assert legend.get_texts()[0].get_fontsize() == 8.0 and legend._loc == 4  # "lower right"
    assert ax.get_position().y1 > 0.9  # tightened: matplotlib's default top is 0.88


def test_pgd_curves_are_the_plots_alignment_lines() -> None:
    curves = pgd_curves(pgd_result())
    assert (curves.x_label, curves.y_label) == ("PGD step t", "alignment")
    assert not curves.x_log and not curves.y_log
    kappa, nu = curves.curves
    assert (kappa.label, list(kappa.x), list(kappa.y)) == ("|κ|", [0, 5, 9], [0.1, 0.4, 0.7])
    assert (nu.label, list(nu.x), list(nu.y)) == ("sign(κ)·ν", [0, 5, 9], [-0.2, 0.3, 0.9])
