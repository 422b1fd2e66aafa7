"""The axial single-location regression check (service/reproductions/dynamics_checks.py: axial_steps, axial_judge,
_pgd, axial_plot) on hand-made results: every figure by hand, each finding both ways with its margins at their exact
boundaries, the texts, and the drawn bars (written for the mutation run's survivors, docs/testing.md)."""

import math

import pytest

from service.reproductions import dynamics_checks as dyn
from service.reproductions.base import Outcome, Step

BAYES = 0.1**2
"""The noise variance ε² with ε = 0.1 (the double 0.010000000000000002)."""
NAMES = ["axial_nonlinear", "axial_linear", "axial_const", "flattened_1d"]
SCHEDULES = ["inverse", "constant_start", "constant_end"]


def _risk(erf: float, linear: float, const: float, flat: float, bayes: float) -> dict:
    values = dict(zip(NAMES, [erf, linear, const, flat], strict=True))
    return {"variants": [{"predictor": k, "risk": v} for k, v in values.items()], "bayes_risk": bayes}


def _risks(
    erf_last: float = 0.0104, linear_last: float = 1.5, const_last: float = 1.25, reported: float = 0.01
) -> list[dict]:
    """The larger temperature first (erf 0.02), then the smaller one; the first step's semi-linear risks (0.8, 0.6)
    and reported Bayes risk (0.5) would each change the verdict if read in place of the last step's."""
    return [_risk(0.02, 0.8, 0.6, 1.7, 0.5), _risk(erf_last, linear_last, const_last, 0.9, reported)]


def _status(results: list[dict], claim: str = "bayes-optimality") -> str:
    return dyn.axial_judge(results).findings[claim].status


def test_axial_steps_are_the_two_risks_then_pgd_by_schedule_and_seed() -> None:
    base = {"m": 3, "n": 3, "d": 10, "ell": 50.0, "lr": 5e-4, "batch_size": 64, "init": "manifold"}
    schedules = [
        {"schedule": "inverse", "lambda0": 0.06, "switch": 6000, "inc": 1e-3},
        {"schedule": "constant", "lambda0": 0.06},
        {"schedule": "constant", "lambda0": 0.012},
    ]
    expected = (
        Step("axial_slr.risk", {"ell": 100.0, "lambda_r": 0.05}),
        Step("axial_slr.risk", {"ell": 1000.0, "lambda_r": 0.005}),
        *(
            Step("axial_slr.pgd", {**base, "iterations": 10000, **schedule, "seed": seed})
            for schedule in schedules
            for seed in (1, 2, 3, 4)
        ),
    )
    steps = dyn.axial_steps()
    assert steps == expected
    assert [s.params.get("seed") for s in steps] == [None, None, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4]


def test_axial_judge_on_the_risks_alone() -> None:
    out = dyn.axial_judge(_risks())
    assert out.figures == {
        "ell_lambda": [(100.0, 0.05), (1000.0, 0.005)],
        "bayes_risk": BAYES,
        "reported_bayes_risk": 0.01,
        "axial_nonlinear": [0.02, 0.0104],
        "axial_linear": [0.8, 1.5],
        "axial_const": [0.6, 1.25],
        "flattened_1d": [1.7, 0.9],
    }
    assert list(out.findings) == ["bayes-optimality"]
    f = out.findings["bayes-optimality"]
    assert (f.status, f.expected_source) == ("consistent", "independent_computation")
    assert f.expected == {"bayes_risk": BAYES, "erf_at_most": 1.05 * BAYES, "semi_linear_at_least": 100 * BAYES}
    assert f.measured == {"erf_risk": [0.02, 0.0104], "semi_linear_min": 1.25}
    assert f.tolerance == "erf within 5% of the Bayes risk; semi-linear 100 times above it"
    assert f.computation == (
        "Bayes risk = noise variance eps² (hand calculation, eps = 0.1), 20,000 Monte-Carlo draws of the model; "
        "competing hypothesis: a semi-linear simplification also reaches the Bayes risk"
    )
    assert out.reason == (
        "the erf-inner risk falls from 0.0200 to 0.0104 (Bayes 0.0100) while the linear and constant inner variants "
        "stay at 1.5 and 1.25"
    )


def test_axial_judge_reported_bayes_risk_must_be_the_noise_variance() -> None:
    assert _status(_risks(reported=BAYES)) == "consistent"
    assert _status(_risks(reported=0.01 + 1e-11)) == "contradicted"
    assert _status(_risks(reported=0.01 - 1e-11)) == "contradicted"  # the distance, not the signed difference


def test_axial_judge_erf_risk_within_five_percent_of_bayes() -> None:
    bound = 1.05 * 0.1**2
    assert _status(_risks(erf_last=bound)) == "consistent"
    assert _status(_risks(erf_last=math.nextafter(bound, 1.0))) == "contradicted"


def test_axial_judge_erf_risk_must_fall_with_the_temperature() -> None:
    results = _risks()
    results[0]["variants"][0]["risk"] = 0.0104  # the same at both temperatures
    assert _status(results) == "contradicted"
    results[0]["variants"][0]["risk"] = math.nextafter(0.0104, 1.0)
    assert _status(results) == "consistent"


def test_axial_judge_semi_linear_floor_is_the_smaller_of_the_two() -> None:
    floor = 100 * 0.1**2
    assert _status(_risks(const_last=floor)) == "consistent"
    assert _status(_risks(const_last=math.nextafter(floor, 0.0))) == "contradicted"
    assert _status(_risks(linear_last=math.nextafter(floor, 0.0), const_last=5.0)) == "contradicted"
    out = dyn.axial_judge(_risks(linear_last=1.125, const_last=5.0))
    assert out.findings["bayes-optimality"].measured["semi_linear_min"] == 1.125


def _pgd_run(kappa: float, nu: float, kappa0: float, final_risk: float) -> dict:
    return {
        "abs_kappa": kappa,
        "signed_nu": nu,
        "trajectory": [{"abs_kappa": kappa0}, {"abs_kappa": 0.5}],
        "final_risk": final_risk,
    }


def _pgd(inverse: list[tuple[float, float]], start: list[tuple[float, float]], end: list[tuple[float, float]]) -> list:
    """Twelve PGD results, schedule by schedule; run j of schedule i starts at κ0 = (i + 1)/8 + j/64 and ends at
    risk 1 + 10 i + j."""
    return [
        _pgd_run(k, n, (i + 1) / 8 + j / 64, 1.0 + 10 * i + j)
        for i, runs in enumerate([inverse, start, end])
        for j, (k, n) in enumerate(runs)
    ]


CONVERGED = [(0.99, 0.98), (0.97, 0.96), (1.0, 0.995), (0.985, 0.975)]
STUCK = [(0.5, 0.4), (0.3, 0.9), (0.96, 0.2), (0.1, 0.1)]
SETTING = (
    "axial_slr.pgd, M = N = 3, d = 10, ell = 50, B = 64, lr = 5e-4, 10,000 steps from initialisations on the "
    "invariant manifold (seeds 1, 2, 3, 4); the oracle parameters k* = e1, v* = e2 are planted by hand in the data "
    "(|kappa| = sign(kappa) nu = 1 there)"
)


def test_axial_judge_with_pgd_runs_that_converge_only_under_the_schedule() -> None:
    out = dyn.axial_judge(_risks() + _pgd(CONVERGED, STUCK, STUCK[::-1]))
    assert list(out.findings) == ["bayes-optimality", "pgd-convergence", "temperature-scheduling"]
    assert {k: f.status for k, f in out.findings.items()} == dict.fromkeys(out.findings, "consistent")
    kappa = {
        "inverse": [0.99, 0.97, 1.0, 0.985],
        "constant_start": [0.5, 0.3, 0.96, 0.1],
        "constant_end": [0.1, 0.96, 0.3, 0.5],
    }
    nu = {
        "inverse": [0.98, 0.96, 0.995, 0.975],
        "constant_start": [0.4, 0.9, 0.2, 0.1],
        "constant_end": [0.1, 0.2, 0.9, 0.4],
    }
    reached = {"inverse": 4, "constant_start": 0, "constant_end": 0}
    assert out.figures["pgd"] == {
        "seeds": [1, 2, 3, 4],
        "abs_kappa": kappa,
        "signed_nu": nu,
        "kappa0": [0.125, 0.140625, 0.15625, 0.171875],
        "final_risk": {
            "inverse": [1.0, 2.0, 3.0, 4.0],
            "constant_start": [11.0, 12.0, 13.0, 14.0],
            "constant_end": [21.0, 22.0, 23.0, 24.0],
        },
        "reached_oracle": reached,
        "inverse_failed_seeds": [],
    }
    assert out.figures["bayes_risk"] == BAYES  # the risk figures are still those of the first two steps
    conv, sched = out.findings["pgd-convergence"], out.findings["temperature-scheduling"]
    assert (conv.expected_source, conv.expected) == ("paper_text", {"abs_kappa": 1.0, "signed_nu": 1.0})
    assert conv.measured == {"abs_kappa": kappa["inverse"], "signed_nu": nu["inverse"], "reached": 4}
    assert conv.tolerance == "|kappa| and sign(kappa) nu at least 0.95 from every initialisation"
    assert conv.computation == (
        SETTING + "; the inverse schedule is the supplementary code's (the paper's own temperature scaling was not "
        "available)"
    )
    assert sched.expected_source == "paper_text"
    assert sched.expected == {"inverse_reaches_oracle": "from most initialisations", "constant_reaches_oracle": 0}
    assert sched.measured == {"reached_oracle": reached, "abs_kappa": kappa}
    assert sched.tolerance == (
        "|kappa| and sign(kappa) nu at least 0.95; the schedule from all but at most one initialisation, neither "
        "constant from any"
    )
    assert sched.computation == (
        SETTING + "; competing hypothesis: a constant inverse temperature (the schedule's first or last value) "
        "converges as well"
    )
    assert out.reason == (
        "the erf-inner risk falls from 0.0200 to 0.0104 (Bayes 0.0100) while the linear and constant inner variants "
        "stay at 1.5 and 1.25; PGD reaches the oracle parameters from 4 of 4 initialisations (inverse), 0 of 4 "
        "initialisations (constant_start), 0 of 4 initialisations (constant_end)"
    )


def test_pgd_oracle_threshold_is_inclusive_and_needs_both_overlaps() -> None:
    edge = [(0.95, 0.95), (0.95, 1.0), (1.0, 0.95), (0.99, 0.99)]
    out = dyn.axial_judge(_risks() + _pgd(edge, STUCK, STUCK))
    assert out.figures["pgd"]["reached_oracle"]["inverse"] == 4
    assert out.figures["pgd"]["inverse_failed_seeds"] == []
    assert out.findings["pgd-convergence"].status == "consistent"
    below = math.nextafter(0.95, 0.0)
    one_short = [(below, 1.0), (1.0, below), (0.99, 0.99), (0.97, 0.97)]  # each misses on one overlap
    out = dyn.axial_judge(_risks() + _pgd(one_short, [(1.0, below)] * 4, [(below, 1.0)] * 4))
    assert out.figures["pgd"]["reached_oracle"] == {"inverse": 2, "constant_start": 0, "constant_end": 0}
    assert out.figures["pgd"]["inverse_failed_seeds"] == [1, 2]
    assert out.findings["pgd-convergence"].status == "contradicted"
    assert out.findings["temperature-scheduling"].status == "contradicted"  # 2 of 4: not all but one


def test_pgd_convergence_contradicted_names_each_failed_seed() -> None:
    inverse = [(0.99, 0.98), (0.9, 0.99), (1.0, 0.995), (0.5, 0.25)]
    out = dyn.axial_judge(_risks() + _pgd(inverse, STUCK, STUCK))
    conv = out.findings["pgd-convergence"]
    assert conv.status == "contradicted"
    assert out.figures["pgd"]["inverse_failed_seeds"] == [2, 4]
    assert conv.computation == (
        SETTING + "; the inverse schedule is the supplementary code's (the paper's own temperature scaling was not "
        "available); where contradicted: seed 2 (kappa0 0.141) ends at |kappa| 0.900, sign(kappa) nu 0.990; seed 4 "
        "(kappa0 0.172) ends at |kappa| 0.500, sign(kappa) nu 0.250"
    )
    assert out.findings["temperature-scheduling"].status == "contradicted"  # 2 of 4
    assert out.reason.endswith(
        "; PGD reaches the oracle parameters from 2 of 4 initialisations (inverse), 0 of 4 initialisations "
        "(constant_start), 0 of 4 initialisations (constant_end)"
    )


def test_temperature_scheduling_allows_one_failure_and_no_constant_success() -> None:
    three = [(0.99, 0.98), (0.5, 0.99), (1.0, 0.995), (0.985, 0.975)]
    out = dyn.axial_judge(_risks() + _pgd(three, STUCK, STUCK))
    assert out.findings["temperature-scheduling"].status == "consistent"
    assert out.findings["pgd-convergence"].status == "contradicted"
    one = [(0.99, 0.99), *STUCK[1:]]
    assert _status(_risks() + _pgd(CONVERGED, one, STUCK), "temperature-scheduling") == "contradicted"
    assert _status(_risks() + _pgd(CONVERGED, STUCK, one), "temperature-scheduling") == "contradicted"
    assert _status(_risks() + _pgd(CONVERGED, one, one), "temperature-scheduling") == "contradicted"


def _bars(results: list[dict]) -> tuple:
    out = dyn.axial_judge(results)
    fig = dyn.axial_plot(results, out)
    return fig, fig.axes


def test_axial_plot_draws_each_predictors_risk_per_temperature() -> None:
    results = _risks() + _pgd(CONVERGED, STUCK, STUCK)
    fig, (ax,) = _bars(results)
    assert tuple(fig.get_size_inches()) == pytest.approx((6.5, 4))
    first, second = ax.containers
    assert [p.get_height() for p in first] == [0.02, 0.8, 0.6, 1.7]
    assert [p.get_height() for p in second] == [0.0104, 1.5, 1.25, 0.9]
    assert [p.get_x() + p.get_width() / 2 for p in first] == pytest.approx([j - 0.19 for j in range(4)])
    assert [p.get_x() + p.get_width() / 2 for p in second] == pytest.approx([j + 0.19 for j in range(4)])
    assert [p.get_width() for p in (*first, *second)] == pytest.approx([0.38] * 8)
    (line,) = ax.lines
    assert list(line.get_ydata()) == [BAYES, BAYES]
    assert (line.get_color(), line.get_linestyle(), line.get_linewidth()) == ("k", "--", 1)
    assert list(ax.get_xticks()) == [0, 1, 2, 3]
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "erf inner",
        "linear inner",
        "constant inner",
        "flattened 1-D",
    ]
    assert ax.get_yscale() == "log"
    assert ax.get_ylabel() == "oracle risk"
    texts = ax.get_legend().get_texts()
    assert [t.get_text() for t in texts] == ["Bayes risk", "l = 100, lambda = 0.05", "l = 1000, lambda = 0.005"]
    assert {t.get_fontsize() for t in texts} == {8}
    assert ax.get_position().x0 != pytest.approx(0.125)  # tight_layout moved the axes


def test_axial_plot_draws_the_bayes_line_of_the_outcome() -> None:
    results = _risks()
    outcome = Outcome({**dyn.axial_judge(results).figures, "bayes_risk": 0.03}, "", {})
    (ax,) = dyn.axial_plot(results, outcome).axes
    assert list(ax.lines[0].get_ydata()) == [0.03, 0.03]


def test_axial_plot_refuses_a_single_temperature() -> None:
    results = _risks()[:1]
    with pytest.raises(ValueError):
        dyn.axial_plot(results, Outcome({"bayes_risk": BAYES}, "", {}))


def test_axial_judge_given_one_temperature_reads_its_only_step() -> None:
    """With the smaller temperature's risks missing the erf risk cannot fall: contradicted, every figure from the
    one step given."""
    out = dyn.axial_judge(_risks()[1:])
    assert out.findings["bayes-optimality"].status == "contradicted"
    assert out.figures["reported_bayes_risk"] == 0.01
    assert out.findings["bayes-optimality"].measured == {"erf_risk": [0.0104], "semi_linear_min": 1.25}
    assert out.reason == (
        "the erf-inner risk falls from 0.0104 to 0.0104 (Bayes 0.0100) while the linear and constant inner variants "
        "stay at 1.5 and 1.25"
    )
