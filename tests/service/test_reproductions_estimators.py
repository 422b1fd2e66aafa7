"""The estimator papers' checks (service/reproductions/estimator_checks.py) on hand-made results: MOEA/D's scaling
check against slopes fitted here with NumPy's polyfit, each finding both ways, and its drawn curves (written for
the mutation run's survivors, docs/testing.md)."""

import math

import numpy as np
import pytest

from service.reproductions import estimator_checks as est
from service.reproductions.base import Step
from service.reproductions.reference import minhash as ref_minhash
from tests.service.colors import rgba

NS = [16, 32, 64, 128]


def _run(means: list[float], rel_se: float, finished: int, slope: float) -> dict:
    return {
        "points": [{"n": n, "mean": m, "se": rel_se * m, "finished": finished} for n, m in zip(NS, means, strict=True)],
        "slope": slope,
    }


def _ols(y: list[float]) -> float:
    return float(np.polyfit(np.log(NS), np.log(y), 1)[0])


N2LOGN = _ols([n * n * math.log(n) for n in NS])
"""The log-log slope of n² ln n over the grid, fitted by NumPy (about 2.27 here)."""
SE = 0.01 / (math.sqrt(5) * math.log(2))
"""Delta-method standard error of the slope with 1 % standard errors: x = ln n = (4, 5, 6, 7) ln 2, so
S_xx = 5 (ln 2)² and se = 0.01 / √S_xx."""


def test_moead_steps() -> None:
    assert est.moead_steps() == (
        Step("moead.omm_scaling", {"r": 0, "reps": 20, "ns": [32, 64, 128, 256], "seed": 0}),
        Step("moead.omm_scaling", {"r": 1, "reps": 120, "ns": [32, 64, 128, 256], "seed": 0}),
    )
    assert est.moead_steps([8, 16], {0: 3, 1: 4}) == (
        Step("moead.omm_scaling", {"r": 0, "reps": 3, "ns": [8, 16], "seed": 0}),
        Step("moead.omm_scaling", {"r": 1, "reps": 4, "ns": [8, 16], "seed": 0}),
    )


def test_moead_judge_on_exact_power_laws() -> None:
    """r = 0 runtimes exactly 2n² ln n, r = 1 exactly 3n², 1 % standard errors: slopes N2LOGN and 2."""
    r0 = _run([2 * n * n * math.log(n) for n in NS], 0.01, 20, 2.3)
    r1 = _run([3 * n * n for n in NS], 0.01, 120, 2.0)
    out = est.moead_judge([r0, r1])
    f = out.figures
    assert f["ns"] == NS and f["reps"] == [20, 120]
    assert f["slope_r0"] == pytest.approx(N2LOGN, abs=1e-12) and f["slope_r1"] == pytest.approx(2.0, abs=1e-12)
    assert f["slope_r0_se"] == pytest.approx(SE, abs=1e-12) and f["slope_r1_se"] == pytest.approx(SE, abs=1e-12)
    assert f["slope_n2_log_n"] == pytest.approx(N2LOGN, abs=1e-12)
    gaps = [
        (a - b) / math.hypot(0.01 * a, 0.01 * b)
        for a, b in zip([2 * n * n * math.log(n) for n in NS], [3 * n * n for n in NS], strict=True)
    ]
    assert f["r0_minus_r1_in_se"] == pytest.approx(gaps, abs=1e-9)
    assert {k: v.status for k, v in out.findings.items()} == {
        "theta-n2": "consistent",
        "n2-log-n-r0": "consistent",
        "exchange-profits": "consistent",
    }
    t = out.findings["theta-n2"]
    assert (t.expected_source, t.expected) == (
        "independent_computation",
        {"slope_n2_log_n": pytest.approx(N2LOGN), "slope_n2": 2.0},
    )
    assert t.measured == {"slope_r1": pytest.approx(2.0), "se": pytest.approx(SE)}
    assert t.tolerance == "r = 1 slope at least 3 SE below n² ln n's"
    computation = (
        "reference.slopes: OLS slope of ln(mean runtime) on ln n with its delta-method standard error from the "
        "per-n standard errors; the slope of n² ln n over n = 16-128 computed the same way"
    )
    assert t.computation == computation + "; competing hypothesis: Θ(n² log n) at r = 1"
    r = out.findings["n2-log-n-r0"]
    assert (r.expected_source, r.expected) == (
        "independent_computation",
        {"slope_n2": 2.0, "slope_n2_log_n": pytest.approx(N2LOGN)},
    )
    assert r.measured == {"slope_r0": pytest.approx(N2LOGN), "se": pytest.approx(SE)}
    assert r.tolerance == "r = 0 slope at least 3 SE above 2"
    assert r.computation == computation + "; competing hypothesis: Θ(n²) at r = 0"
    e = out.findings["exchange-profits"]
    assert (e.expected_source, e.expected) == ("paper_text", "r = 1 faster than r = 0 at every n")
    assert e.measured == {"r0_minus_r1_in_se": pytest.approx(gaps)}
    assert e.tolerance == "3 SE of the difference of means at every n"
    assert e.computation.startswith("difference of the mean runtimes over its standard error; competing hypothesis")
    assert out.reason == (
        f"over n = 16-128 the r = 1 slope is 2.000 +- {SE:.3f} against n² ln n's {N2LOGN:.3f}, the r = 0 slope "
        f"{N2LOGN:.3f} +- {SE:.3f} against n²'s 2; r = 1 is faster by {min(gaps):.1f} SE or more at every n"
    )


def _statuses(r0_means: list[float], r1_means: list[float], rel_se: float = 0.01) -> dict[str, str]:
    out = est.moead_judge([_run(r0_means, rel_se, 5, 0.0), _run(r1_means, rel_se, 5, 0.0)])
    return {k: v.status for k, v in out.findings.items()}


def test_moead_judge_each_finding_both_ways() -> None:
    n2 = [3 * n * n for n in NS]
    n2logn = [2 * n * n * math.log(n) for n in NS]
    # r = 1 growing like n² ln n: contradicted (not below); r = 0 like n^1.9: contradicted (not above 2)
    swapped = _statuses([n**1.9 for n in NS], n2logn)
    assert swapped["theta-n2"] == "contradicted" and swapped["n2-log-n-r0"] == "contradicted"
    assert swapped["exchange-profits"] == "contradicted"  # r = 1 slower at every n
    # slopes on the claimed side but within 3 standard errors (20 % errors): not checked
    loose = _statuses(n2logn, n2, rel_se=0.2)
    assert loose["theta-n2"] == "not_checked" and loose["n2-log-n-r0"] == "not_checked"
    # equal means at one n: no gap there, the direction does not hold
    tie = _statuses(n2[:1] + [2 * m for m in n2[1:]], n2)
    assert tie["exchange-profits"] == "contradicted"
    # a gap of 1 SE at every n: the direction holds, the margin does not
    close = [m * 1.0142 for m in n2]  # (a − b)/(0.01·√(a² + b²)) ≈ 0.0142/(0.01·√2) ≈ 1
    assert _statuses(close, n2)["exchange-profits"] == "not_checked"


def test_moead_judge_margins_are_inclusive() -> None:
    """A slope exactly 3 SE from the competing one still counts: r = 1 means n² · n^(3se) with se from 1 %, and
    a gap of exactly 3 SE at every n."""
    n2 = [3 * n * n for n in NS]
    n2logn = [2 * n * n * math.log(n) for n in NS]
    below = [m * n ** (N2LOGN - 2 - 3 * SE) for m, n in zip(n2, NS, strict=True)]
    out = est.moead_judge([_run(n2logn, 0.01, 5, 0.0), _run(below, 0.01, 5, 0.0)])
    assert out.figures["slope_r1"] + 3 * out.figures["slope_r1_se"] == pytest.approx(N2LOGN, abs=1e-12)
    above = [m * n ** (3 * SE) for m, n in zip(n2, NS, strict=True)]
    out = est.moead_judge([_run(above, 0.01, 5, 0.0), _run(n2, 0.01, 5, 0.0)])
    assert out.figures["slope_r0"] - 3 * out.figures["slope_r0_se"] == pytest.approx(2.0, abs=1e-12)


def test_moead_plot() -> None:
    r0 = _run([2 * n * n * math.log(n) for n in NS], 0.01, 20, 2.26)
    r1 = _run([3 * n * n for n in NS], 0.01, 120, 2.004)
    out = est.moead_judge([r0, r1])
    fig = est.moead_plot([r0, r1], out)
    (ax,) = fig.axes
    assert tuple(fig.get_size_inches()) == pytest.approx((6, 4))
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == [
        "r = 0 (no exchange), slope 2.26",
        "r = 1, slope 2.00",
        "3n²",
        "2n² ln n",
    ]
    for line, res in zip(lines[:2], (r0, r1), strict=True):
        assert list(line.get_xdata()) == NS and list(line.get_ydata()) == [p["mean"] for p in res["points"]]
        assert line.get_marker() == "o" and line.get_linestyle() == "-"
    assert list(lines[2].get_ydata()) == [3 * n * n for n in NS]
    assert list(lines[3].get_ydata()) == pytest.approx([2 * n * n * math.log(n) for n in NS])
    assert [(line.get_color(), line.get_linestyle()) for line in lines[2:]] == [("k", ":"), ("k", "--")]
    assert list(lines[2].get_xdata()) == NS == list(lines[3].get_xdata())
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("n", "mean evaluations to cover the front")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [line.get_label() for line in lines]
    assert {t.get_fontsize() for t in ax.get_legend().get_texts()} == {8}
    assert ax.get_position().x0 != pytest.approx(0.125)  # tight_layout moved the axes


def test_moead_judge_reports_the_first_points_replicates_and_an_exact_3_se_gap() -> None:
    """Replicates finished at the smallest n (20 and 120 here, fewer later); means 15 apart with standard errors 3
    and 4 at every n: a gap of 15/hypot(3, 4) = 3 SE exactly, which is enough."""
    r0 = {"points": [{"n": n, "mean": 100.0 * n + 15, "se": 3.0, "finished": 20 - i} for i, n in enumerate(NS)]}
    r1 = {"points": [{"n": n, "mean": 100.0 * n, "se": 4.0, "finished": 120 - i} for i, n in enumerate(NS)]}
    out = est.moead_judge([r0, r1])
    assert out.figures["reps"] == [20, 120]
    assert out.figures["r0_minus_r1_in_se"] == [3.0] * 4
    found = out.findings["exchange-profits"]
    assert found.status == "consistent"
    assert found.computation == (
        "difference of the mean runtimes over its standard error; competing hypothesis: exchange does not help "
        "(only r = 0 and 1 are run, so 'already very small radii suffice' is not tested beyond r = 1)"
    )


TRIALS = 40


def _cminhash(approx_over_mse: float, competing_over_mse: float, ratio: float, mc_over_exact: float):
    """Results whose figures sit where asked against the reference simulations of the documented cases
    (v = 30, n_x = n_y = 60, K = 64, D = 127, seed 1; J = 50/100, K = 64, D = 127, seed 2)."""
    direct = ref_minhash.minner_mse_circulant(30, 60, 60, 127, 64, TRIALS, 1)
    jaccard = ref_minhash.cminhash_jaccard_variance(50, 100, 127, 64, TRIALS, 2)
    results = [
        {"minner_mse_intersection_approx": approx_over_mse * direct["mse"]},
        {"minner_mse_intersection_approx": competing_over_mse * direct["mse"]},
        {"ratio": ratio, "var_cminhash_exact": jaccard["variance"] / mc_over_exact},
    ]
    return results, direct, jaccard


def test_cminhash_judge_against_the_reference_simulations() -> None:
    results, direct, jaccard = _cminhash(1.1, 1.6, 0.9, 1.05)
    out = est.cminhash_judge(results, trials=TRIALS)
    exact = results[2]["var_cminhash_exact"]
    assert out.figures == {
        "minner_mse_approx": results[0]["minner_mse_intersection_approx"],
        "minner_mse_simulated": direct["mse"],
        "minner_mse_simulated_se": direct["mse_se"],
        "minner_mse_independent_expression": results[1]["minner_mse_intersection_approx"],
        "ratio_exact": 0.9,
        "var_cminhash_exact": exact,
        "var_cminhash_mc": jaccard["variance"],
        "mc_over_exact": pytest.approx(1.05),
        "trials": TRIALS,
    }
    minner, li = out.findings["minner-variance-matches"], out.findings["circulant-other-estimators"]
    assert (minner.status, minner.expected_source, minner.tolerance) == (
        "consistent",
        "independent_computation",
        "relative 0.15",
    )
    assert minner.expected == {"mse_simulated": direct["mse"], "mse_se": direct["mse_se"]}
    assert minner.measured == {
        "mse_approx": results[0]["minner_mse_intersection_approx"],
        "relative_error": pytest.approx(0.1),
        "independent_expression_relative_error": pytest.approx(0.6),
    }
    assert minner.computation == (
        f"reference.minhash.minner_mse_circulant: {TRIALS} trials of C-MinHash-(sigma, pi) with Minner's T_v at "
        "v = 30, n_x = n_y = 60, K = 64, D = 127; competing hypothesis: the independent-hashing expression"
    )
    assert (li.status, li.expected_source, li.tolerance) == (
        "implementation_verified",
        "independent_computation",
        "relative 0.1",
    )
    assert li.expected == {"var_mc": jaccard["variance"]}
    assert li.measured == {"var_exact": exact, "ratio_to_classical": 0.9}
    assert li.computation == (
        f"reference.minhash.cminhash_jaccard_variance: Li & Li's exact C-MinHash variance against {TRIALS} direct "
        "trials of circulant hashing (J = 0.5, K = 64, D = 127)"
    )
    approx = results[0]["minner_mse_intersection_approx"]
    assert out.reason == (
        f"Minner's approximate MSE under circulant hashing is {approx:.3f} against {direct['mse']:.3f} +- "
        f"{direct['mse_se']:.3f} over {TRIALS} direct trials (+10.0%; the independent-hashing expression is "
        f"+60.0%); Li & Li's exact C-MinHash variance is 0.900 of J(1-J)/K and the simulation gives 1.050 of it"
    )


@pytest.mark.parametrize(
    ("args", "minner", "li"),
    [
        ((0.9, 1.2, 0.9, 0.95), "consistent", "implementation_verified"),
        ((1.2, 1.6, 0.9, 1.05), "contradicted", "implementation_verified"),  # the approximation 20 % off
        ((0.8, 1.6, 0.9, 1.05), "contradicted", "implementation_verified"),
        ((1.0, 1.1, 0.9, 1.05), "contradicted", "implementation_verified"),  # the competing expression fits too
        ((1.0, 0.9, 0.9, 1.05), "contradicted", "implementation_verified"),
        ((1.0, 1.6, 1.0, 1.05), "consistent", "contradicted"),  # not below the classical variance
        ((1.0, 1.6, 0.9, 1.15), "consistent", "contradicted"),  # the simulation 15 % off
        ((1.0, 1.6, 0.9, 0.85), "consistent", "contradicted"),
    ],
)
def test_cminhash_judge_both_ways(args: tuple, minner: str, li: str) -> None:
    results, _, _ = _cminhash(*args)
    out = est.cminhash_judge(results, trials=TRIALS)
    assert out.findings["minner-variance-matches"].status == minner
    assert out.findings["circulant-other-estimators"].status == li


def test_cminhash_plot() -> None:
    results, _, _ = _cminhash(1.1, 1.6, 0.9, 1.05)
    out = est.cminhash_judge(results, trials=TRIALS)
    f = out.figures
    fig = est.cminhash_plot(results, out)
    left, right = fig.axes
    assert tuple(fig.get_size_inches()) == pytest.approx((8, 3.5))
    assert [p.get_height() for p in left.patches] == [
        f["minner_mse_approx"],
        f["minner_mse_simulated"],
        f["minner_mse_independent_expression"],
    ]
    assert [t.get_text() for t in left.get_xticklabels()] == [
        "approx.\n(circulant)",
        "simulated",
        "independent\nexpression",
    ]
    assert [rgba(p.get_facecolor()) for p in left.patches] == [rgba("#1f77b4"), rgba("#888"), rgba("#d62728")]
    assert left.get_ylabel() == "MSE of Minner's |X ∩ Y| estimate"
    assert [p.get_height() for p in right.patches] == [f["var_cminhash_exact"], f["var_cminhash_mc"]]
    assert [t.get_text() for t in right.get_xticklabels()] == ["C-MinHash exact", "C-MinHash (MC)"]
    assert right.get_ylabel() == "variance of the Jaccard estimate"
    assert left.get_position().y0 == pytest.approx(right.get_position().y0) and right.get_position().x0 > 0.5
    assert left.get_position().x0 != pytest.approx(0.125)  # tight_layout moved the axes
