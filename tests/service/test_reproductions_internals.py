"""The LLM-internals checks (service/reproductions/internals_checks.py) on hand-made results: layer patching's judge
against optima computed here (subsets enumerated by itertools; for two-layer blocks the sum of the r smallest Δ),
the steering judge on gradients whose projections and standard errors are exact, each finding both ways, margins at
their exact boundaries, the steps' parameters and the plots' data (written for the mutation run, docs/testing.md)."""

import itertools
import math
from typing import Any

import numpy as np
import pytest
from matplotlib import rcParams

from service.reproductions import internals_checks as llm
from service.reproductions.base import Step
from tests.service.colors import rgba

KNAP_SIZES = [2, 3, 2, 3, 3, 3]
KNAP_DELTA = [-1.243, -0.216, -1.344, -1.606, 0.426, 0.065]
MONO_SIZES = [2, 2, 2, 3]
MONO_DELTA = [-1.0, -2.0, -3.0, -4.0]


def _seeded_instances(count: int) -> list[list[float]]:
    """The documented draw: seed 0, per instance M = integers(3, 20), then Δ = standard_normal(M)."""
    rng = np.random.default_rng(0)
    return [rng.standard_normal(int(rng.integers(3, 20))).tolist() for _ in range(count)]


def _subset_minima(sizes: list[int], delta: list[float]) -> dict[int, float]:
    """min Σ_{i∈S} Δ_i per added depth Σ_{i∈S}(n_i − 1), every subset enumerated."""
    best: dict[int, float] = {}
    for r in range(len(sizes) + 1):
        for subset in itertools.combinations(range(len(sizes)), r):
            depth = sum(sizes[i] - 1 for i in subset)
            cost = sum(delta[i] for i in subset)
            best[depth] = min(best.get(depth, math.inf), cost)
    return best


def _chain(cost: float | None, reachable: bool = True, patched: list[int] | None = None) -> dict[str, Any]:
    return {"reachable": reachable, "patched": patched, "cost": cost}


def _additive(delta: list[float]) -> dict[str, Any]:
    """Plans at every depth of an instance with two-layer blocks: the DP at the optimum (the r smallest Δ), the
    sequential chains at the first and the last r layers, KLPatch at the optimum."""
    m, ordered = len(delta), sorted(delta)
    plans = []
    for r in range(m + 1):
        best = sum(ordered[:r])
        plans.append(
            {
                "added_depth": r,
                "dp": _chain(best),
                "first_to_last": _chain(sum(delta[:r])),
                "last_to_first": _chain(sum(delta[m - r :])),
                "klpatch": _chain(best),
            }
        )
    return {"plans": plans}


def _knapsack() -> dict[str, Any]:
    plan = {
        "added_depth": 2,
        "dp": _chain(-2.587, patched=[0, 2]),
        "first_to_last": _chain(-50.0, reachable=False),  # never reachable: its cost must not count
        "last_to_first": _chain(0.065, patched=[5]),
        "klpatch": _chain(-1.606, patched=[3]),
    }
    return {"plans": [plan]}


def _monotone() -> dict[str, Any]:
    plan = {
        "added_depth": 2,
        "dp": _chain(-5.0, patched=[1, 2]),
        "first_to_last": _chain(-3.0, patched=[0, 1]),
        "last_to_first": _chain(-4.0, patched=[3]),
        "klpatch": _chain(-4.0, patched=[3]),
    }
    return {"plans": [plan]}


def _lp_results(count: int = 3) -> list[dict[str, Any]]:
    return [_knapsack(), _monotone(), *(_additive(d) for d in _seeded_instances(count))]


def test_layer_patching_steps() -> None:
    knap = Step(
        "layer_patching.plan",
        {"block_sizes": KNAP_SIZES, "cost_model": {"kind": "unary", "delta": KNAP_DELTA}, "added_depths": [2]},
    )
    mono = Step(
        "layer_patching.plan",
        {"block_sizes": MONO_SIZES, "cost_model": {"kind": "unary", "delta": MONO_DELTA}, "added_depths": [2]},
    )
    additive = [
        Step("layer_patching.plan", {"block_sizes": [2] * len(d), "cost_model": {"kind": "unary", "delta": d}})
        for d in _seeded_instances(300)
    ]
    assert llm.layer_patching_steps() == (knap, mono, *additive)
    assert llm.layer_patching_steps(4) == (knap, mono, *additive[:4])
    assert llm.layer_patching_steps(0) == (knap, mono)


def test_layer_patching_judge_all_optimal() -> None:
    assert _subset_minima(KNAP_SIZES, KNAP_DELTA)[2] == pytest.approx(-2.587)  # the fixture's DP: blocks 0 and 2
    assert _subset_minima(MONO_SIZES, MONO_DELTA)[2] == -5.0  # blocks 1 and 2, not the three-layer block 3
    instances = _seeded_instances(3)
    assert [len(d) for d in instances] == [17, 13, 14]  # the first above the brute-force cap of 14 layers
    results = _lp_results()
    out = llm.layer_patching_judge(results)
    gaps = [min(sum(d[:r]), sum(d[len(d) - r :])) - sum(sorted(d)[:r]) for d in instances for r in range(len(d) + 1)]
    f = out.figures
    assert f == {
        "knapsack_dp": [[0, 2], -2.587],
        "knapsack_greedy": [[3], -1.606],
        "monotone_dp": -5.0,
        "monotone_last_to_first": -4.0,
        "instances": 3,
        "depths_checked": 2 + 14 + 15,  # the 17-layer instance is not enumerated
        "dp_off_brute_force": 0,
        "max_abs_gap_to_brute_force": pytest.approx(0.0, abs=1e-12),
        "dp_above_a_chain": 0,
        "mean_gap_sequential_minus_dp": pytest.approx(float(np.mean(gaps)), abs=1e-12),
    }
    assert f["mean_gap_sequential_minus_dp"] > 0.5  # the sequential orders are far from optimal here
    found = out.findings["shortest-path"]
    assert found.status == "implementation_verified"
    assert found.expected_source == "independent_computation"
    assert found.expected == "the minimum over every patch set at each added depth"
    assert found.measured == {"depths_checked": 31, "off_optimum": 0, "max_abs_gap": f["max_abs_gap_to_brute_force"]}
    assert found.tolerance == 1e-9
    assert found.computation == (
        "reference.layer_patching.brute_force: all 2^M subsets of the knapsack example, the unequal-block example "
        "and the 2 of 3 random additive instances with at most 14 layers"
    )
    assert out.reason == (
        f"over 31 (instance, added depth) pairs the DP equals the brute-force minimum 31 times (largest gap "
        f"{f['max_abs_gap_to_brute_force']:.2g}); knapsack example at depth 2: DP [0, 2] at -2.587 against greedy [3] "
        "at -1.606; DP above a chain 0 times"
    )
    assert out.passed


def test_layer_patching_judge_reads_the_seeded_instances() -> None:
    """Plans optimal for other Δ (the 13-layer instance's negated) are off: the judge draws the instances itself."""
    results = _lp_results()
    results[3] = _additive([-x for x in _seeded_instances(2)[1]])
    assert llm.layer_patching_judge(results).figures["dp_off_brute_force"] > 0


def test_layer_patching_judge_without_additive_instances() -> None:
    out = llm.layer_patching_judge([_knapsack(), _monotone()])
    assert out.figures["instances"] == 0 and out.figures["depths_checked"] == 2
    assert out.figures["mean_gap_sequential_minus_dp"] is None
    assert out.findings["shortest-path"].computation.endswith(
        "the 0 of 0 random additive instances with at most 14 layers"
    )


@pytest.mark.parametrize(("shift", "off"), [(1e-9, 0), (2e-9, 1), (-2e-9, 1), (0.5, 1)])
def test_layer_patching_dp_off_the_optimum_at_the_tie(shift: float, off: int) -> None:
    """The DP's cost at depth 0 (the empty set, cost 0 exactly) moved by `shift`: off only beyond 1e-9."""
    results = _lp_results()
    plan = results[4]["plans"][0]
    plan["dp"]["cost"] = shift
    plan["klpatch"]["cost"] = plan["first_to_last"]["cost"] = plan["last_to_first"]["cost"] = max(shift, 0.0)
    out = llm.layer_patching_judge(results)
    assert out.figures["dp_off_brute_force"] == off
    assert out.figures["max_abs_gap_to_brute_force"] == abs(shift)
    assert out.figures["dp_above_a_chain"] == 0
    found = out.findings["shortest-path"]
    assert found.status == ("contradicted" if off else "implementation_verified")
    assert found.measured == {"depths_checked": 31, "off_optimum": off, "max_abs_gap": abs(shift)}
    assert out.reason.startswith(
        f"over 31 (instance, added depth) pairs the DP equals the brute-force minimum {31 - off} times (largest gap "
        f"{abs(shift):.2g});"
    )


def test_layer_patching_dp_off_on_the_knapsack_and_monotone_examples() -> None:
    for index in (0, 1):
        results = _lp_results()
        results[index]["plans"][0]["dp"]["cost"] += 0.25
        out = llm.layer_patching_judge(results)
        assert out.figures["dp_off_brute_force"] == 1
        assert out.figures["max_abs_gap_to_brute_force"] == pytest.approx(0.25)
        assert out.findings["shortest-path"].status == "contradicted"


def test_layer_patching_instances_above_fourteen_layers_are_not_enumerated() -> None:
    results = _lp_results()
    for plan in results[2]["plans"]:  # the 17-layer instance
        plan["dp"]["cost"] -= 10.0
        for c in ("first_to_last", "last_to_first", "klpatch"):
            plan[c]["cost"] -= 10.0
    out = llm.layer_patching_judge(results)
    assert out.figures["dp_off_brute_force"] == 0 and out.figures["depths_checked"] == 31
    assert out.findings["shortest-path"].status == "implementation_verified"


def test_layer_patching_fourteen_layers_are_enumerated() -> None:
    results = _lp_results()
    results[4]["plans"][3]["dp"]["cost"] -= 1.0  # the 14-layer instance, depth 3
    out = llm.layer_patching_judge(results)
    assert out.figures["dp_off_brute_force"] == 1
    assert out.figures["max_abs_gap_to_brute_force"] == pytest.approx(1.0)


@pytest.mark.parametrize("chain", ["first_to_last", "last_to_first", "klpatch"])
@pytest.mark.parametrize(("below", "counted"), [(1e-9, 0), (2e-9, 1)])
def test_layer_patching_dp_above_a_chain(chain: str, below: float, counted: int) -> None:
    """A reachable chain cheaper than the DP (at depth 0, where the DP costs 0 exactly) by more than 1e-9."""
    results = _lp_results()
    results[3]["plans"][0][chain]["cost"] = -below
    out = llm.layer_patching_judge(results)
    assert out.figures["dp_above_a_chain"] == counted
    assert out.figures["dp_off_brute_force"] == 0
    assert out.findings["shortest-path"].status == ("contradicted" if counted else "implementation_verified")
    assert out.reason.endswith(f"DP above a chain {counted} times")


def test_layer_patching_dp_above_a_chain_in_every_result_but_only_when_reachable() -> None:
    results = _lp_results()
    results[1]["plans"][0]["klpatch"]["cost"] = -6.0  # the monotone example
    results[0]["plans"][0]["last_to_first"]["cost"] = -3.0  # the knapsack example
    out = llm.layer_patching_judge(results)
    assert out.figures["dp_above_a_chain"] == 2
    results[0]["plans"][0]["last_to_first"]["reachable"] = False
    assert llm.layer_patching_judge(results).figures["dp_above_a_chain"] == 1


def _plot_lp(results: list[dict[str, Any]]) -> Any:
    return llm.layer_patching_plot(results, llm.layer_patching_judge(results))


def test_layer_patching_plot() -> None:
    results = _lp_results()
    fig = _plot_lp(results)
    assert tuple(fig.get_size_inches()) == (8.0, 3.5)
    left, right = fig.axes
    bars = left.patches
    assert [t.get_text() for t in left.get_xticklabels()] == ["dp", "klpatch", "last_to_first"]
    assert [b.get_height() for b in bars] == [-2.587, -1.606, 0.065]
    assert [b.get_facecolor() for b in bars] == [rgba("#1f77b4"), rgba("#ff7f0e"), rgba("#2ca02c")]
    assert left.get_ylabel() == "cost at added depth 2"
    assert left.get_title() == "knapsack example"
    gaps = [
        min(sum(d[:r]), sum(d[len(d) - r :])) - sum(sorted(d)[:r])
        for d in _seeded_instances(3)
        for r in range(len(d) + 1)
    ]
    counts, edges = np.histogram(gaps, bins=30)
    assert len(right.patches) == 30
    assert [p.get_height() for p in right.patches] == counts.tolist()
    assert [p.get_x() for p in right.patches] == pytest.approx(edges[:-1].tolist())
    assert right.get_xlabel() == "best sequential cost - DP cost"
    assert right.get_ylabel() == "(instance, depth) pairs"
    assert right.get_title() == "3 additive instances"
    assert fig.subplotpars.left != rcParams["figure.subplot.left"]  # laid out tightly


def test_layer_patching_plot_every_method_reachable() -> None:
    results = _lp_results(1)
    results[0]["plans"][0]["first_to_last"] = _chain(-1.0)
    fig = _plot_lp(results)
    left = fig.axes[0]
    assert [t.get_text() for t in left.get_xticklabels()] == ["dp", "klpatch", "last_to_first", "first_to_last"]
    assert [b.get_height() for b in left.patches] == [-2.587, -1.606, 0.065, -1.0]
    assert [b.get_facecolor() for b in left.patches] == [rgba(c) for c in ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")]
    assert fig.axes[1].get_title() == "1 additive instances"


def test_layer_patching_plot_panels_side_by_side() -> None:
    left, right = _plot_lp(_lp_results(1)).axes
    a, b = left.get_position(), right.get_position()
    assert a.x1 < b.x0  # left of it
    assert (a.y0, a.y1) == (b.y0, b.y1)  # the same row


# --- persona steering -------------------------------------------------------------------------------------------

DEVS = np.array([1.0, 1.0, 1.0, -3.0])
"""Sample standard deviation exactly 2 (sum of squares 12 over 3 degrees of freedom), so over 4 examples the
standard error of the mean is exactly 1."""


def _setting(pressures: list[np.ndarray]) -> dict[str, Any]:
    """Gradients whose projection on v̂ = e₁ is minus the given pressures (axis 2e₁, so v̂ is its unit vector)."""
    grads = {f"alpha{i}": np.stack([-p, np.full(p.size, 0.5 + i)], axis=1) for i, p in enumerate(pressures)}
    return {
        "axis": np.array([2.0, 0.0]),
        "unit": np.array([1.0, 0.0]),
        "grads": grads,
        "mean_p": [0.41, 0.62, 0.83, 0.97],
        "target_rate": 0.8,
    }


def _good_pressures() -> list[np.ndarray]:
    """Mean 4 (se 1), then steps of exactly −5 (se 0), mean −6 at α = 2 (se 1), and a rise to 94 at α = 3."""
    p0 = 4.0 + DEVS
    return [p0, p0 - 5.0, p0 - 10.0, p0 + 90.0]


def _signatures(measured: list[float]) -> list[dict[str, Any]]:
    sigs = [{"method": f"alpha{i}", "layers": [{"pressure": p}]} for i, p in enumerate(measured)]
    return [{"signatures": sigs[::-1]}]  # read by name, not by position


def _steer(monkeypatch: pytest.MonkeyPatch, pressures: list[np.ndarray], measured: list[float] | None = None) -> Any:
    monkeypatch.setattr(llm, "steering_setting", lambda: _setting(pressures))
    direct = [float(p.mean()) for p in pressures]
    return llm.steering_judge(_signatures(direct if measured is None else measured))


def test_steering_judge_both_findings_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _steer(monkeypatch, _good_pressures())
    assert out.figures == {
        "alphas": [0.0, 1.0, 2.0, 3.0],
        "pressure": [4.0, -1.0, -6.0, 94.0],
        "pressure_direct": [4.0, -1.0, -6.0, 94.0],
        "pressure_se": [1.0, 1.0, 1.0, 1.0],
        "mean_trait_probability": [0.41, 0.62, 0.83, 0.97],
        "target_trait_rate": 0.8,
    }
    computation = (
        "a 10-16-32-1 tanh network trained with numpy on a non-linear teacher; persona direction = difference of its "
        "mean activations on rows it calls trait-positive and negative; gradients by the chain rule of its "
        "cross-entropy on a fine-tuning set with an 80 % trait rate; pressures also projected directly"
    )
    rev = out.findings["pressure-reversal"]
    assert (rev.status, rev.expected_source) == ("consistent", "paper_text")
    assert rev.expected == "pressure > 0 unsteered, < 0 once steering over-predicts the trait"
    assert rev.measured == {
        "pressure": [4.0, -1.0, -6.0, 94.0],
        "se": [1.0, 1.0, 1.0, 1.0],
        "mean_trait_probability": [0.41, 0.62, 0.83, 0.97],
    }
    assert rev.tolerance == "3 standard errors over the examples"
    assert (
        rev.computation == computation + "; competing hypothesis: a purely associative shift keeps the pressure's sign"
    )
    att = out.findings["attenuating-shift"]
    assert (att.status, att.expected_source) == ("consistent", "paper_text")
    assert att.expected == "pressure falls as alpha grows towards over-prediction"
    assert att.measured == {
        "alphas": [0.0, 1.0, 2.0, 3.0],
        "pressure": [4.0, -1.0, -6.0, 94.0],
        "step_se": [0.0, 0.0, 0.0],
    }
    assert att.tolerance == "3 standard errors of each paired difference over the examples (alpha 0 to 2)"
    assert att.computation == computation
    assert out.reason == (
        "on a trained two-layer network the trait pressure along its persona direction goes "
        "+4.000, -1.000, -6.000, +94.000 (+- 1.000) at alpha = 0, 1, 2, 3 while its mean trait probability rises "
        "0.41, 0.62, 0.83, 0.97 past the data's 0.80"
    )


def test_steering_judge_step_standard_errors_and_largest_se(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unequal standard errors: se of α = 3 is 2.5 (the reason quotes the largest), steps' se from paired
    differences (α 2 → 3 differs by 1.5·DEVS: se 1.5)."""
    p = _good_pressures()
    p[3] = p[2] + 100.0 + 1.5 * DEVS
    out = _steer(monkeypatch, p)
    assert out.figures["pressure_se"] == [1.0, 1.0, 1.0, 2.5]
    assert out.findings["attenuating-shift"].measured["step_se"] == [0.0, 0.0, 1.5]
    assert "(+- 2.500)" in out.reason


@pytest.mark.parametrize(
    ("case", "reverses", "falls"),
    [
        ("unsteered at exactly 3 se", False, True),
        ("unsteered just above 3 se", True, True),
        ("alpha 2 at exactly -3 se", False, True),
        ("alpha 2 just below -3 se", True, True),
        ("alpha 3 positive only", True, True),
        ("first step at exactly -3 se", True, False),
        ("second step at exactly -3 se", True, False),
        ("first step just below -3 se", True, True),
        ("last step falls or not", True, True),
    ],
)
def test_steering_margins(monkeypatch: pytest.MonkeyPatch, case: str, reverses: bool, falls: bool) -> None:
    d = DEVS
    p = {
        "unsteered at exactly 3 se": [3.0 + d, -2.0 + d, -7.0 + d, -8.0 + d],
        "unsteered just above 3 se": [3.01 + d, -2.0 + d, -7.0 + d, -8.0 + d],
        "alpha 2 at exactly -3 se": [4.0 + d, 0.0 + d, -3.0 + d, -8.0 + d],
        "alpha 2 just below -3 se": [4.0 + d, 0.0 + d, -3.01 + d, -8.0 + d],
        "alpha 3 positive only": [4.0 + d, 0.0 + d, -6.0 + d, 50.0 + d],
        # a step of mean −3 and se 1: the second array carries 2·DEVS, the first DEVS
        "first step at exactly -3 se": [4.0 + d, 1.0 + 2 * d, -7.0 + 2 * d, -8.0 + d],
        "second step at exactly -3 se": [4.0 + d, -5.0 + d, -8.0 + 2 * d, -8.0 + d],
        "first step just below -3 se": [4.0 + d, 0.99 + 2 * d, -7.0 + 2 * d, -8.0 + d],
        "last step falls or not": [4.0 + d, -1.0 + d, -6.0 + d, 10.0 - 9 * d],
    }[case]
    assert float(DEVS.std(ddof=1) / math.sqrt(DEVS.size)) == 1.0 and DEVS.mean() == 0.0  # exact margins below
    assert float((1.0 + 2 * d - (4.0 + d)).mean()) == -3.0 and float((-8.0 + 2 * d - (-5.0 + d)).mean()) == -3.0
    out = _steer(monkeypatch, p)
    assert out.findings["pressure-reversal"].status == ("consistent" if reverses else "contradicted")
    assert out.findings["attenuating-shift"].status == ("consistent" if falls else "contradicted")


@pytest.mark.parametrize(
    ("pressures", "ses", "reverses"),
    [
        ([5.0 + 2 * DEVS, 2 * DEVS, -7.0 + DEVS, -8.0 + DEVS], [2.0, 2.0, 1.0], False),  # 5 < 3 · 2 unsteered
        ([7.0 + 2 * DEVS, 2 * DEVS, -7.0 + DEVS, -8.0 + DEVS], [2.0, 2.0, 1.0], True),
        ([4.0 + DEVS, -1.0 + DEVS, -5.0 + 2 * DEVS, -8.0 + DEVS], [1.0, 1.0, 2.0], False),  # -5 > -3 · 2 at alpha 2
        ([4.0 + DEVS, -1.0 + DEVS, -7.0 + 2 * DEVS, -8.0 + DEVS], [1.0, 1.0, 2.0], True),
    ],
)
def test_steering_reversal_scales_with_each_alphas_own_standard_error(
    monkeypatch: pytest.MonkeyPatch, pressures: list[np.ndarray], ses: list[float], reverses: bool
) -> None:
    out = _steer(monkeypatch, pressures)
    assert out.figures["pressure_se"][:3] == ses
    assert out.findings["pressure-reversal"].status == ("consistent" if reverses else "contradicted")
    assert out.findings["attenuating-shift"].status == "consistent"


@pytest.mark.parametrize(("offset", "agrees"), [(1e-9, True), (-1e-9, True), (2e-9, False), (-2e-9, False)])
def test_steering_estimator_must_equal_the_direct_projection(
    monkeypatch: pytest.MonkeyPatch, offset: float, agrees: bool
) -> None:
    """α = 3's pressure is 0 exactly, so the estimator's value is off by exactly `offset`."""
    p = _good_pressures()
    p[3] = 0.0 * DEVS
    measured = [4.0, -1.0, -6.0, offset]
    out = _steer(monkeypatch, p, measured)
    assert out.figures["pressure"] == measured and out.figures["pressure_direct"] == [4.0, -1.0, -6.0, 0.0]
    want = "consistent" if agrees else "contradicted"
    assert out.findings["pressure-reversal"].status == want
    assert out.findings["attenuating-shift"].status == want


def test_steering_each_alpha_is_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(4):
        measured = [4.0, -1.0, -6.0, 94.0]
        measured[i] += 0.5
        out = _steer(monkeypatch, _good_pressures(), measured)
        assert out.findings["pressure-reversal"].status == "contradicted"
        assert out.findings["attenuating-shift"].status == "contradicted"


def test_steering_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    p = _good_pressures()
    monkeypatch.setattr(llm, "steering_setting", lambda: _setting(p))
    (step,) = llm.steering_steps()
    assert step.name == "steering.gradient_signature"
    assert step.params["axis"] == [[2.0, 0.0]] and step.params["baseline"] == "alpha0"
    grads = step.params["grads"]
    assert list(grads) == ["alpha0", "alpha1", "alpha2", "alpha3"]
    for i, x in enumerate(p):
        assert grads[f"alpha{i}"] == [[[-v, 0.5 + i]] for v in x]  # (examples, one layer, width)


def test_steering_plot(monkeypatch: pytest.MonkeyPatch) -> None:
    p = _good_pressures()
    p[3] = p[2] + 100.0 + 1.5 * DEVS
    out = _steer(monkeypatch, p)
    fig = llm.steering_plot([], out)
    assert tuple(fig.get_size_inches()) == (5.5, 4.0)
    (ax,) = fig.axes
    line, zero = ax.lines[0], ax.lines[-1]
    assert list(line.get_xdata()) == [0.0, 1.0, 2.0, 3.0]
    assert list(line.get_ydata()) == [4.0, -1.0, -6.0, 94.0]
    assert (line.get_marker(), line.get_linestyle()) == ("o", "-")
    (bars,) = ax.collections
    segs = [s.tolist() for s in bars.get_segments()]
    se = [1.0, 1.0, 1.0, 2.5]
    assert segs == [[[a, y - 3 * s], [a, y + 3 * s]] for a, y, s in zip([0, 1, 2, 3], [4, -1, -6, 94], se, strict=True)]
    (container,) = ax.containers
    data, caps, _ = container.lines
    assert data is line and len(caps) == 2
    assert [c.get_markersize() for c in caps] == [6.0, 6.0]  # capsize 3 points: caps 6 points wide
    assert [list(c.get_ydata()) for c in caps] == [[1.0, -4.0, -9.0, 86.5], [7.0, 2.0, -3.0, 101.5]]
    assert len(ax.lines) == 4  # the curve, its two cap rows and the zero line
    assert list(zero.get_ydata()) == [0.0, 0.0]
    assert rgba(zero.get_color()) == rgba("k") and zero.get_linewidth() == 0.5
    assert ax.get_xlabel() == "steering coefficient alpha (units of the persona direction)"
    assert ax.get_ylabel() == "pressure along the trait axis (> 0 amplifies)"
    assert fig.subplotpars.left != rcParams["figure.subplot.left"]


def test_steering_setting_fine_tuning_set() -> None:
    """The trained setting (cached): 200 trait and 50 other rows, an 80 % trait rate, one gradient set per α."""
    s = llm.steering_setting()
    assert list(s["grads"]) == ["alpha0", "alpha1", "alpha2", "alpha3"]
    assert all(g.shape[0] == 250 for g in s["grads"].values())
    assert s["target_rate"] == 0.8
    assert np.linalg.norm(s["unit"]) == pytest.approx(1.0)
