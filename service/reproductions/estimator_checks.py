"""Reproduction checks of the estimator papers built so far: C-MinHash variance, MOEA/D scaling, double descent."""

import math
from collections.abc import Mapping, Sequence
from typing import Any

from service.reproductions.base import Outcome, Step, finding
from service.reproductions.claims import Finding
from service.reproductions.reference import minhash as ref_minhash
from service.reproductions.reference import slopes

Results = Sequence[Mapping[str, Any]]

MINNER_CASE = {"intersection": 30, "union": 90, "num_perm": 64, "query_size": 60, "stored_size": 60}
MINNER_UNIVERSE = 127
MINNER_CASE_SIM = {k: MINNER_CASE[k] for k in ("intersection", "query_size", "stored_size", "num_perm")}
CMINHASH_CASE = {"intersection": 50, "union": 100, "universe": 127, "num_perm": 64}
CMINHASH_TRIALS = 4000


CMINHASH_STEPS = (
    Step("minhash.variance", {**MINNER_CASE, "universe": MINNER_UNIVERSE}),
    Step("minhash.variance", {**MINNER_CASE, "universe": None}),
    Step("minhash.variance", CMINHASH_CASE),
)
"""Minner's approximate MSE under circulant hashing (D = 127) and under independent hashing (the competing
expression), then Li & Li's exact C-MinHash variance (J = 0.5, K = 64, D = 127); the simulations that judge them
run in ``reference.minhash``."""


MINNER_TOLERANCE = 0.15
"""Relative agreement asked of the approximate Minner MSE with the simulated one: the delta-method and Clark
approximation sits about 9 % above 4000 direct trials here (± 2.4 % Monte-Carlo error); the independent-hashing
expression is 63 % above, so it fails."""
MC_TOLERANCE = 0.10
"""Relative agreement asked of the Monte-Carlo variance: 4.5 standard errors of a variance from 4000 trials."""


def cminhash_judge(results: Results, trials: int = CMINHASH_TRIALS) -> Outcome:
    """The paper's own claim: its approximate Minner MSE under C-MinHash-(σ, π) matches the empirical MSE of a direct
    simulation (``reference.minhash``), and the independent-hashing expression does not; then Li & Li's exact
    C-MinHash variance against its simulation (the circulant construction applied to the Jaccard estimator)."""
    circulant, independent, exact = results
    direct = ref_minhash.minner_mse_circulant(**MINNER_CASE_SIM, universe=MINNER_UNIVERSE, trials=trials, seed=1)
    jaccard = ref_minhash.cminhash_jaccard_variance(**CMINHASH_CASE, trials=trials, seed=2)
    approx, competing = circulant["minner_mse_intersection_approx"], independent["minner_mse_intersection_approx"]
    rel, rel_competing = approx / direct["mse"] - 1, competing / direct["mse"] - 1
    mc_c = jaccard["variance"]
    figures = {
        "minner_mse_approx": approx,
        "minner_mse_simulated": direct["mse"],
        "minner_mse_simulated_se": direct["mse_se"],
        "minner_mse_independent_expression": competing,
        "ratio_exact": exact["ratio"],
        "var_cminhash_exact": exact["var_cminhash_exact"],
        "var_cminhash_mc": mc_c,
        "mc_over_exact": mc_c / exact["var_cminhash_exact"],
        "trials": trials,
    }
    minner_ok = abs(rel) <= MINNER_TOLERANCE and abs(rel_competing) > MINNER_TOLERANCE
    li_ok = exact["ratio"] < 1 and abs(mc_c / exact["var_cminhash_exact"] - 1) <= MC_TOLERANCE
    findings = {
        "minner-variance-matches": finding(
            minner_ok,
            "consistent",
            "independent_computation",
            {"mse_simulated": direct["mse"], "mse_se": direct["mse_se"]},
            {"mse_approx": approx, "relative_error": rel, "independent_expression_relative_error": rel_competing},
            f"relative {MINNER_TOLERANCE}",
            f"reference.minhash.minner_mse_circulant: {trials} trials of C-MinHash-(sigma, pi) with Minner's T_v at "
            f"v = 30, n_x = n_y = 60, K = 64, D = {MINNER_UNIVERSE}; competing hypothesis: the independent-hashing "
            "expression",
        ),
        "circulant-other-estimators": finding(
            li_ok,
            "implementation_verified",
            "independent_computation",
            {"var_mc": mc_c},
            {"var_exact": exact["var_cminhash_exact"], "ratio_to_classical": exact["ratio"]},
            f"relative {MC_TOLERANCE}",
            f"reference.minhash.cminhash_jaccard_variance: Li & Li's exact C-MinHash variance against {trials} direct "
            "trials of circulant hashing (J = 0.5, K = 64, D = 127)",
        ),
    }
    reason = (
        f"Minner's approximate MSE under circulant hashing is {approx:.3f} against {direct['mse']:.3f} +- "
        f"{direct['mse_se']:.3f} over {trials} direct trials ({rel:+.1%}; the independent-hashing expression is "
        f"{rel_competing:+.1%}); Li & Li's exact C-MinHash variance is {exact['ratio']:.3f} of J(1-J)/K and the "
        f"simulation gives {mc_c / exact['var_cminhash_exact']:.3f} of it"
    )
    return Outcome(figures, reason, findings)


def cminhash_plot(results: Results, outcome: Outcome) -> Any:
    """Bars: Minner MSE (approximation, simulation, independent-hashing expression); C-MinHash variance."""
    from matplotlib.figure import Figure

    f = outcome.figures
    fig = Figure(figsize=(8, 3.5))
    left, right = fig.subplots(1, 2)
    left.bar(
        ["approx.\n(circulant)", "simulated", "independent\nexpression"],
        [f["minner_mse_approx"], f["minner_mse_simulated"], f["minner_mse_independent_expression"]],
        color=["#1f77b4", "#888", "#d62728"],
    )
    left.set_ylabel("MSE of Minner's |X ∩ Y| estimate")
    right.bar(["C-MinHash exact", "C-MinHash (MC)"], [f["var_cminhash_exact"], f["var_cminhash_mc"]])
    right.set_ylabel("variance of the Jaccard estimate")
    fig.tight_layout()
    return fig


MOEAD_NS = [32, 64, 128, 256]
MOEAD_REPS = {0: 20, 1: 120}
"""n from 32 to 256. At r = 1, 80 replicates gave slope 2.131 +- 0.035, 2.75 standard errors below n² ln n's local
slope 2.226 over this grid; 120 bring the standard error near 0.028. r = 0 needs fewer to exclude n² (slope 2)."""
MOEAD_SE = 3.0


def moead_steps(ns: Sequence[int] = MOEAD_NS, reps: Mapping[int, int] = MOEAD_REPS) -> tuple[Step, ...]:
    """Runtimes of MOEA/D on OneMinMax without (r = 0) and with (r = 1) exchange over the grid of n."""
    return tuple(Step("moead.omm_scaling", {"r": r, "reps": reps[r], "ns": list(ns), "seed": 0}) for r in (0, 1))


def moead_judge(results: Results) -> Outcome:
    """Θ(n²) for r = 1: the fitted log-log slope lies 3 standard errors below n² ln n's slope over the grid; Θ(n² log n)
    for r = 0: 3 standard errors above n²'s slope 2; and exchange is faster at every n by 3 standard errors."""
    r0, r1 = results
    ns = [p["n"] for p in r0["points"]]
    s0, se0 = slopes.fitted_slope(ns, [p["mean"] for p in r0["points"]], [p["se"] for p in r0["points"]])
    s1, se1 = slopes.fitted_slope(ns, [p["mean"] for p in r1["points"]], [p["se"] for p in r1["points"]])
    n2logn = slopes.curve_slope(ns, 2.0, 1.0)
    gaps = [
        (a["mean"] - b["mean"]) / math.hypot(a["se"], b["se"]) for a, b in zip(r0["points"], r1["points"], strict=True)
    ]
    figures = {
        "ns": ns,
        "reps": [r0["points"][0]["finished"], r1["points"][0]["finished"]],
        "slope_r0": s0,
        "slope_r0_se": se0,
        "slope_r1": s1,
        "slope_r1_se": se1,
        "slope_n2_log_n": n2logn,
        "r0_minus_r1_in_se": gaps,
    }
    computation = (
        "reference.slopes: OLS slope of ln(mean runtime) on ln n with its delta-method standard error from the "
        f"per-n standard errors; the slope of n² ln n over n = {ns[0]}-{ns[-1]} computed the same way"
    )
    findings = {
        "theta-n2": finding(
            s1 + MOEAD_SE * se1 <= n2logn,
            "consistent",
            "independent_computation",
            {"slope_n2_log_n": n2logn, "slope_n2": 2.0},
            {"slope_r1": s1, "se": se1},
            f"r = 1 slope at least {MOEAD_SE:g} SE below n² ln n's",
            computation + "; competing hypothesis: Θ(n² log n) at r = 1",
            direction_holds=s1 < n2logn,
        ),
        "n2-log-n-r0": finding(
            s0 - MOEAD_SE * se0 >= 2.0,
            "consistent",
            "independent_computation",
            {"slope_n2": 2.0, "slope_n2_log_n": n2logn},
            {"slope_r0": s0, "se": se0},
            f"r = 0 slope at least {MOEAD_SE:g} SE above 2",
            computation + "; competing hypothesis: Θ(n²) at r = 0",
            direction_holds=s0 > 2.0,
        ),
        "exchange-profits": finding(
            min(gaps) >= MOEAD_SE,
            "consistent",
            "paper_text",
            "r = 1 faster than r = 0 at every n",
            {"r0_minus_r1_in_se": gaps},
            f"{MOEAD_SE:g} SE of the difference of means at every n",
            "difference of the mean runtimes over its standard error; competing hypothesis: exchange does not help "
            "(only r = 0 and 1 are run, so 'already very small radii suffice' is not tested beyond r = 1)",
            direction_holds=min(gaps) > 0,
        ),
    }
    reason = (
        f"over n = {ns[0]}-{ns[-1]} the r = 1 slope is {s1:.3f} +- {se1:.3f} against n² ln n's {n2logn:.3f}, the r = 0 "
        f"slope {s0:.3f} +- {se0:.3f} against n²'s 2; r = 1 is faster by {min(gaps):.1f} SE or more at every n"
    )
    return Outcome(figures, reason, findings)


def moead_plot(results: Results, outcome: Outcome) -> Any:
    """Mean evaluations against n on log-log axes for r = 0 and r = 1."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    for res, label in zip(results, ("r = 0 (no exchange)", "r = 1"), strict=True):
        ns = [p["n"] for p in res["points"]]
        ax.loglog(ns, [p["mean"] for p in res["points"]], "o-", label=f"{label}, slope {res['slope']:.2f}")
    ns = outcome.figures["ns"]
    ax.loglog(ns, [3 * n * n for n in ns], "k:", label="3n²")
    ax.loglog(ns, [2 * n * n * math.log(n) for n in ns], "k--", label="2n² ln n")
    ax.set_xlabel("n")
    ax.set_ylabel("mean evaluations to cover the front")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


DD_N = 40
DD_WIDTHS = [10, 20, 30, 36, 40, 44, 50, 60, 80, 120, 200]
DD_CELL = {"experiment": "cell_model", "n": 100, "widths": [10, 25, 50, 75, 100, 150, 200, 400, 1000, 5000, 20000]}
DD_STEPS = (
    Step(
        "compression.double_descent",
        {"experiment": "rf_regression", "n": DD_N, "widths": DD_WIDTHS, "reps": 3, "n_test": 500, "seed": 0},
    ),
    Step("compression.double_descent", DD_CELL),
    Step(
        "compression.double_descent",
        {"experiment": "rf_regression", "n": DD_N, "widths": [400, 1200, 4000], "reps": 3, "n_test": 500, "seed": 0},
    ),
)
"""Random features at n = 40 over p = 10-200 and the cell model at n = 100 (the peak), then random features at
p/n = 10, 30 and 100 (very large models)."""
ASCENT_SLOPE = 0.5
ASCENT_SLOPE_TOLERANCE = 0.05
"""By hand: under β ~ N(0, I) the prior variance of φ(x)ᵀβ is Σ_j φ_j(x)² ≈ p/2, so once p ≫ n the predictive
variance grows like p·r(x) (r the kernel regression's residual variance at x) and the Gaussian cross-entropy
½ log(2π v) + (y − μ)²/(2v) grows like ½ ln p: slope ½ per unit of ln p."""
PEAK_RATIO = 3.0
BAYES_FLATNESS = 1.1
"""The Bayes predictor's loss may vary by at most 10 % over the widths for the curve to count as flat."""
PAPER_PEAK_FACTOR = 5.0
"""'the MLE cross-entropy grows to be roughly five times larger at the double-descent peak' (the abstract)."""


def double_descent_judge(results: Results) -> Outcome:
    """Random-features regression on ±1 random labels: the MLE's loss peaks at p = n (≥ 3 times its minimum) while the
    Bayes mixture's stays flat (max/min ≤ 1.1); the cell model on uniform random labels: the MLE's peak over the
    Bayes loss there, set beside the paper's factor of about five (a different setting: its networks)."""
    rf, cell, large = results
    bayes = [row["bayes_ce"] for row in rf["rows"]]
    flatness = max(bayes) / min(bayes)
    mle = [row["mle_ce"] for row in rf["rows"]]
    mle_peak_over_min = max(mle) / min(mle)
    cell_bayes = [row["bayes_ce"] for row in cell["rows"]]
    cell_flatness = max(cell_bayes) / min(cell_bayes)
    peak_row = next(row for row in cell["rows"] if row["width"] == cell["peak_width"])
    cell_factor = peak_row["mle_ce"] / peak_row["bayes_ce"]
    rf_peak_row = next(row for row in rf["rows"] if row["width"] == rf["peak_width"])
    rf_factor = rf_peak_row["mle_ce"] / rf_peak_row["bayes_ce"]
    figures = {
        "n": rf["n"],
        "peak_width": rf["peak_width"],
        "mle_peak_over_min": mle_peak_over_min,
        "bayes_max_over_min": flatness,
        "rf_mle_over_bayes_at_peak": rf_factor,
        "cell_peak_width_over_n": cell["peak_width"] / cell["n"],
        "cell_mle_over_bayes_at_peak": cell_factor,
        "cell_bayes_max_over_min": cell_flatness,
    }
    ok = (
        rf["peak_width"] == rf["n"]
        and mle_peak_over_min >= PEAK_RATIO
        and flatness <= BAYES_FLATNESS
        and cell_flatness <= BAYES_FLATNESS
    )
    findings = {
        "bayes-no-peak": finding(
            ok,
            "consistent",
            "paper_text",
            {"mle_peak_at_p_over_n": 1.0, "mle_peak_over_min_at_least": PEAK_RATIO, "bayes_max_over_min_at_most": 1.1},
            {
                "rf_peak_width_over_n": rf["peak_width"] / rf["n"],
                "rf_mle_peak_over_min": mle_peak_over_min,
                "rf_bayes_max_over_min": flatness,
                "cell_bayes_max_over_min": cell_flatness,
            },
            "Bayes max/min <= 1.1; MLE peak >= 3x its minimum",
            "random-features regression (n = 40, 3 repetitions) and the cell model (n = 100, exact expectations); "
            "competing hypothesis: the Bayes mixture peaks with the MLE",
        ),
        "five-times-peak": finding(
            True,
            "needs_models",
            "paper_text",
            {"mle_over_bayes_at_peak": PAPER_PEAK_FACTOR},
            {"rf_regression": rf_factor, "cell_model": cell_factor},
            "roughly (a factor 2 either way)",
            f"the factor depends on the setting: {rf_factor:.0f} in random-features regression (Gaussian likelihood) "
            f"and {cell_factor:.2f} in the cell model (peak at m/n = {cell['peak_width'] / cell['n']:g}); neither is "
            "the paper's network setting",
        ),
    }
    ascent, ascent_figures = _second_ascent(large)
    findings["second-ascent"] = ascent
    figures["large_widths"] = ascent_figures
    reason = (
        f"MLE loss peaks at width {rf['peak_width']} (n = {rf['n']}), {mle_peak_over_min:.0f}x its minimum, while the "
        f"Bayes loss varies by a factor {flatness:.3f}; at the peak the MLE is {rf_factor:.0f}x the Bayes loss "
        f"(cell model: {cell_factor:.2f}x; the paper's networks: about {PAPER_PEAK_FACTOR:g}x); at p/n = 10-100 the "
        f"fixed-prior Bayes loss rises by {ascent_figures['fixed_prior_slope'][-1]:.3f} per unit of ln p (by hand 1/2)"
    )
    return Outcome(figures, reason, findings)


def _second_ascent(res: Mapping[str, Any]) -> tuple[Finding, dict[str, Any]]:
    """At very large widths the Bayes mixture with a fixed prior N(0, I) has a test loss that rises again (its
    regret over the best predictor grows like ½ ln p), while the MLE and the width-scaled prior's mixture do not."""
    rows = res["rows"]
    widths = [row["width"] for row in rows]
    fixed = [row["bayes_fixed_ce"] for row in rows]
    slopes = [(b - a) / math.log(q / p) for a, b, p, q in zip(fixed, fixed[1:], widths, widths[1:], strict=False)]
    mle = [row["mle_ce"] for row in rows]
    scaled = [row["bayes_ce"] for row in rows]
    figures = {
        "width_over_n": [row["width_over_n"] for row in rows],
        "bayes_fixed_prior_ce": fixed,
        "fixed_prior_regret": [row["bayes_fixed_ce"] - row["approx_error"] for row in rows],
        "fixed_prior_slope": slopes,
        "mle_ce": mle,
        "bayes_scaled_prior_ce": scaled,
    }
    ok = (
        all(s > 0 for s in slopes)
        and abs(slopes[-1] - ASCENT_SLOPE) <= ASCENT_SLOPE_TOLERANCE
        and max(scaled) / min(scaled) <= BAYES_FLATNESS
    )
    return finding(
        ok,
        "consistent",
        "independent_computation",
        {"slope_per_ln_p": ASCENT_SLOPE},
        {k: figures[k] for k in ("width_over_n", "bayes_fixed_prior_ce", "fixed_prior_slope", "mle_ce")},
        f"slope {ASCENT_SLOPE} ± {ASCENT_SLOPE_TOLERANCE} between the two largest widths, rising at every width",
        "by hand: under a fixed N(0, I) prior the predictive variance grows like p once p >> n, so the Gaussian "
        "cross-entropy (and the regret term over the best predictor) grows like ½ ln p; random-features regression "
        "on ±1 random labels, n = 40, p/n = 10, 30, 100, 3 repetitions; competing hypothesis: the loss levels off at "
        "very large sizes, which the width-scaled prior N(0, I/p) does (flat within 10 %) and the min-norm MLE too "
        "(it still falls there): the second ascent is a possibility that depends on the prior's scale",
    ), figures


def double_descent_plot(results: Results, outcome: Outcome) -> Any:
    """Test cross-entropy of the MLE, Bayes and pNML predictors against p/n (log scale)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3.8))
    for ax, res in zip(fig.subplots(1, 2), results[:2], strict=True):
        x = [row["width_over_n"] for row in res["rows"]]
        for key, label in (("mle_ce", "MLE"), ("bayes_ce", "Bayes"), ("pnml_ce", "pNML")):
            pts = [(xi, row[key]) for xi, row in zip(x, res["rows"], strict=True) if row[key] is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.axvline(1.0, color="k", lw=0.5)
        ax.set_xlabel("width / n")
        ax.set_title(res["experiment"])
    fig.axes[0].set_ylabel("test cross-entropy (nats)")
    fig.axes[0].legend()
    fig.tight_layout()
    return fig
