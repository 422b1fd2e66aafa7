"""The predictive-coding check (service/reproductions/dynamics_checks.py: the PC steps, predictive_coding_judge,
_pc_formulas, _pc_optimal, _pc_trajectories, _pc_reference, predictive_coding_plot) on hand-made results: dyadic
gaps and standard errors put every margin exactly on its boundary, the reference and the trained runs are replaced
by hand-made ones where the judge's arithmetic is under test, and the drawn error bars are read back (written for
the mutation run's survivors, docs/testing.md)."""

import math
from collections.abc import Callable

import numpy as np
import pytest

from service.reproductions import dynamics_checks as dyn
from service.reproductions.base import Outcome, Step
from service.reproductions.reference import predictive_coding as ref_pc
from service.reproductions.training_models import Trajectory

S = 1 / 64
"""A standard error small next to every gap of the base curve."""
THREE = 3 / 128
FOUR = 4 / 128
"""Two standard errors whose root sum of squares is exactly 5/128 (so three of them are 15/128)."""
BASE_GAPS = [0.25, 0.5, 0.625, 0.75, 0.875, 0.25]
"""PC − BP at depths 2, 4, 6, 8, 12 (width 8), then depth 8 width 64: growing with depth, smaller when wider."""


def _curve(gaps: list[float], ses: list[float]) -> list[dict]:
    ta_bp = [0.5, 0.4375, 0.375, 0.3125, 0.25, 0.1875]
    return [
        {"ta_bp": b, "ta_pc": b + g, "pc_minus_bp": g, "pc_minus_bp_se": s}
        for b, g, s in zip(ta_bp, gaps, ses, strict=True)
    ]


def _status(gaps: list[float], ses: list[float]) -> str:
    return dyn.predictive_coding_judge(_curve(gaps, ses)).findings["pc-more-efficient"].status


def test_pc_dims_are_input_20_hidden_layers_output_5() -> None:
    assert dyn._pc_dims(4, 8) == [20, 8, 8, 8, 5]
    assert dyn._pc_dims(2, 64) == [20, 64, 5]
    assert dyn._pc_dims(1, 3) == [20, 5]


def test_pc_steps_are_the_depth_curve_the_formula_and_optimal_runs_then_the_checkpoints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def dims(depth: int, width: int) -> list[int]:
        return [20, *[width] * (depth - 1), 5]

    name = "predictive_coding.target_alignment"
    curve = [Step(name, {"dims": dims(d, w), "n_draws": 500}) for d, w in [(2, 8), (4, 8), (6, 8), (8, 8), (12, 8)]]
    formulas = [Step(name, {"dims": dims(d, 8), "n_draws": 50, "lr": lr}) for lr in (1e-3, 1e-4) for d in (4, 8)]
    optimal = [Step(name, {"dims": dims(d, 8), "n_draws": 200, "lr": 1e-3, "optimal_pc_lr": True}) for d in (4, 8)]
    expected = (*curve, Step(name, {"dims": dims(8, 64), "n_draws": 500}), *formulas, *optimal)
    assert expected == dyn.PC_STEPS
    marker = (Step("checkpoint", {"t": 0}), Step("checkpoint", {"t": 300}))
    monkeypatch.setattr(dyn, "pc_checkpoint_steps", lambda: marker)
    assert dyn.pc_steps() == (*expected, *marker)


def test_pc_checkpoint_steps_take_the_weights_after_0_100_and_300_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def train(method: str, nonlinear: bool, lr: float, samples: int, seed: int) -> Trajectory:
        calls.append((method, nonlinear, lr, samples, seed))
        weights = [[np.full((2, 2), float(k))] for k in range(7)]  # every 50 samples: 0, 50, ..., 300
        return Trajectory([1.0] * 7, weights)

    monkeypatch.setattr(dyn.training, "train", train)
    steps = dyn.pc_checkpoint_steps.__wrapped__()
    assert calls == [("bp", False, 0.01, 300, 0)]
    assert steps == tuple(
        Step("predictive_coding.target_alignment", {"weights": [[[k, k], [k, k]]], "n_draws": 200})
        for k in (0.0, 2.0, 6.0)
    )


def test_pc_training_takes_each_methods_best_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def best_rate(method: str, nonlinear: bool, lrs: list[float], samples: int, seeds: list[int]) -> tuple:
        calls.append((method, nonlinear, lrs, samples, seeds))
        return len(calls) / 100, [float(len(calls))], {0.1: 2.0 * len(calls)}

    monkeypatch.setattr(dyn.training, "best_rate", best_rate)
    out = dyn.pc_training.__wrapped__()
    rates, seeds = [0.003, 0.01, 0.03, 0.1, 0.3], [0, 1, 2, 3, 4]
    assert calls == [(m, nl, rates, 300, seeds) for nl in (False, True) for m in ("bp", "pc")]
    assert out == {
        "linear_bp": {"rate": 0.01, "areas": [1.0], "mean_area_by_rate": {0.1: 2.0}},
        "linear_pc": {"rate": 0.02, "areas": [2.0], "mean_area_by_rate": {0.1: 4.0}},
        "tanh_bp": {"rate": 0.03, "areas": [3.0], "mean_area_by_rate": {0.1: 6.0}},
        "tanh_pc": {"rate": 0.04, "areas": [4.0], "mean_area_by_rate": {0.1: 8.0}},
    }


def test_pc_reference_runs_the_reference_on_the_estimators_draws() -> None:
    def expected(dims: list[int], count: int, lr: float) -> list[dict]:
        weights, x, y = ref_pc.draws(0, dims, count)
        return [ref_pc.alignments([w[i] for w in weights], x[i], y[i], lr) for i in range(count)]

    assert dyn._pc_reference(4, 2, 1e-4) == expected([20, 8, 8, 8, 5], 2, 1e-4)
    assert dyn._pc_reference(2, 3) == expected([20, 8, 5], 3, 1e-3)  # the default rate
    assert dyn._pc_reference(2, 1, 1e-4)[0]["ta_bp"] != dyn._pc_reference(2, 1)[0]["ta_bp"]


def test_depth_curve_alone_growing_with_depth_is_consistent() -> None:
    results = _curve(BASE_GAPS, [S] * 6)
    out = dyn.predictive_coding_judge(results)
    assert out.figures == {
        "depth_width": [(2, 8), (4, 8), (6, 8), (8, 8), (12, 8), (8, 64)],
        "draws": 500,
        "ta_bp": [0.5, 0.4375, 0.375, 0.3125, 0.25, 0.1875],
        "ta_pc": [0.75, 0.9375, 1.0, 1.0625, 1.125, 0.4375],
        "pc_minus_bp": BASE_GAPS,
        "pc_minus_bp_se": [S] * 6,
        "peak_depth": 12,
        "pc_beats_bp_everywhere": True,
    }
    assert list(out.findings) == ["pc-more-efficient"]
    f = out.findings["pc-more-efficient"]
    assert (f.status, f.expected_source) == ("consistent", "paper_text")
    assert f.expected == "PC > BP at every depth; the gap grows with depth and shrinks with width"
    assert f.measured == {
        "depths": [2, 4, 6, 8, 12],
        "gap_width_8": BASE_GAPS[:5],
        "se": [S] * 5,
        "gap_depth_8_width_64": 0.25,
    }
    assert f.tolerance == "3 standard errors"
    assert out.reason == (
        "over 500 single-sample draws PC beats BP by 0.250, 0.500, 0.625, 0.750, 0.875 at depths 2, 4, 6, 8, 12 "
        "(width 8) and by 0.250 at depth 8 width 64: the gap peaks at depth 12 and falls by 0.000 (0.0 standard "
        "errors) to depth 12"
    )


def test_depth_curve_falling_after_depth_4_is_contradicted_and_said_so() -> None:
    gaps = [0.25, 0.75, 0.625, 0.5, 0.375, 0.125]
    ses = [S, THREE, S, S, FOUR, S]
    out = dyn.predictive_coding_judge(_curve(gaps, ses))
    f = out.findings["pc-more-efficient"]
    assert f.status == "contradicted" and out.figures["peak_depth"] == 4
    assert f.computation == (
        "target alignment over 500 single-sample draws per network; where contradicted: the gap peaks at depth 4 "
        "(0.750) and falls to 0.375 at depth 12 (9.6 SE); PC beats BP at every depth (yes), the gap shrinks with "
        "width (yes); pre-trained networks are not tested"
    )
    assert out.reason.endswith("the gap peaks at depth 4 and falls by 0.375 (9.6 standard errors) to depth 12")


def test_depth_curve_fall_counts_beyond_three_standard_errors() -> None:
    edge = 0.75 - 15 / 128  # exactly 3·hypot(3/128, 4/128) below the peak at depth 4
    ses = [S, THREE, S, S, FOUR, S]
    assert _status([0.25, 0.75, 0.7, 0.7, edge, 0.125], ses) == "consistent"
    assert _status([0.25, 0.75, 0.7, 0.7, edge - 1 / 1024, 0.125], ses) == "contradicted"


def test_depth_curve_first_rise_must_exceed_three_standard_errors() -> None:
    ses = [THREE, FOUR, S, S, S, S]
    rise = 0.25 + 15 / 128
    assert _status([0.25, rise, 0.5, 0.625, 0.75, 0.125], ses) == "contradicted"  # not a rise: direction fails
    assert _status([0.25, rise + 1 / 1024, 0.5, 0.625, 0.75, 0.125], ses) == "consistent"


def test_depth_curve_width_must_shrink_the_gap_by_three_standard_errors() -> None:
    ses = [S, S, S, THREE, S, FOUR]
    edge = 0.75 - 15 / 128
    assert _status([0.25, 0.5, 0.625, 0.75, 0.875, edge], ses) == "contradicted"
    assert _status([0.25, 0.5, 0.625, 0.75, 0.875, edge - 1 / 1024], ses) == "consistent"


def test_pc_must_beat_bp_by_three_standard_errors_at_every_depth() -> None:
    ses = [S] * 5 + [1 / 32]
    tie = dyn.predictive_coding_judge(_curve([*BASE_GAPS[:5], 3 / 32], ses))
    assert tie.figures["pc_beats_bp_everywhere"] is False
    assert tie.findings["pc-more-efficient"].status == "contradicted"
    assert "PC beats BP at every depth (no)" in tie.findings["pc-more-efficient"].computation
    over = dyn.predictive_coding_judge(_curve([*BASE_GAPS[:5], 3 / 32 + 1 / 1024], ses))
    assert over.figures["pc_beats_bp_everywhere"] is True
    assert over.findings["pc-more-efficient"].status == "consistent"
    narrow = [S] * 6
    narrow[0] = 0.25 / 3  # 3·se = 0.25 = the gap at depth 2
    assert _status(BASE_GAPS, narrow) == "contradicted"


def test_depth_curve_that_no_longer_shrinks_with_width_says_so() -> None:
    f = dyn.predictive_coding_judge(_curve([*BASE_GAPS[:5], 0.75], [S] * 6)).findings["pc-more-efficient"]
    assert f.status == "contradicted"
    assert "PC beats BP at every depth (yes), the gap shrinks with width (no);" in f.computation


# The formula, optimal-rate and trajectory parts with the reference and the training replaced by hand-made ones.


def _ref(bp: float, pc: float, d_bp: float, d_pc: float, optimal: float = 1.0) -> dict:
    """A reference draw: finite-step TAs bp and pc, first-order ones d_bp and d_pc away, PC-optimal first order."""
    return {
        "ta_bp": bp,
        "ta_pc": pc,
        "ta_bp_first_order": bp + d_bp,
        "ta_pc_first_order": pc + d_pc,
        "pc_optimal_first_order": optimal,
    }


def _estimated(ref: dict) -> dict:
    """The estimator's draw agreeing exactly with the reference's."""
    return {k: ref[k] for k in ("ta_bp", "ta_pc", "ta_bp_first_order", "ta_pc_first_order")}


NONE_DRAW = dict.fromkeys(("ta_bp", "ta_pc", "ta_bp_first_order", "ta_pc_first_order"))
FORMULA_REF = {
    (4, 1e-3): [_ref(0.5, 0.75, 1 / 1024, 1 / 2048), _ref(0.5, 0.75, 1 / 4096, -1 / 512)],
    (8, 1e-3): [_ref(0.5, 0.75, 1 / 2, 1 / 2), _ref(0.5, 0.75, -1 / 256, 1 / 1024), _ref(0.5, 0.75, 0, 1 / 2048)],
    (4, 1e-4): [_ref(0.5, 0.75, 1 / 16384, -1 / 2048), _ref(0.5, 0.75, 1 / 8192, 1 / 8192)],
    (8, 1e-4): [_ref(0.5, 0.75, 1 / 4096, 1 / 4096), _ref(0.5, 0.75, 1 / 16384, 1 / 16384)],
}
"""Largest first-order-to-finite distance 1/256 at η = 1e-3 (depth 8, BP), 1/2048 at η = 1e-4 (depth 4, PC): a
shrink of 8. The first draw at depth 8, η = 1e-3, has no alignment in the estimator's results (a zero error):
skipped."""
OPTIMAL_REF = {
    4: [_ref(0.5, 0.75, 0, 0, 1 - 2**-48), _ref(0.5, 0.75, 0, 0, 1.0)],
    8: [_ref(0.5, 0.75, 0, 0, 1 - 2**-50), _ref(0.5, 0.75, 0, 0, 1 - 2**-49), _ref(0.5, 0.75, 0, 0, 1.0)],
}
OPTIMAL_DRAWS = {
    4: [{"ta_pc_first_order": 1 - 2**-46, "ta_pc": 0.995}, {"ta_pc_first_order": 1.0, "ta_pc": 0.9975}],
    8: [
        {"ta_pc_first_order": None, "ta_pc": 0.5},  # some x·a ≤ 0: excluded
        {"ta_pc_first_order": 1 - 2**-45, "ta_pc": 0.9921875},
        {"ta_pc_first_order": 1.0, "ta_pc": 0.999},
    ],
}
"""Largest first-order gaps 2⁻⁴⁵ (the estimator's) and 2⁻⁴⁸ (the reference's), smallest finite-step TA 0.9921875."""


def _fake_reference(calls: list, formula: dict | None = None, optimal: dict | None = None) -> Callable[..., list[dict]]:
    def reference(depth: int, count: int, lr: float | None = None) -> list[dict]:
        calls.append((depth, count, lr))
        out = (
            (OPTIMAL_REF if optimal is None else optimal)[depth] if lr is None else (formula or FORMULA_REF)[depth, lr]
        )
        assert len(out) == count
        return out

    return reference


def _formula_results(ref: dict) -> list[dict]:
    means = {(4, 1e-3): (0.3, 0.6), (8, 1e-3): (0.2, 0.7), (4, 1e-4): (0.31, 0.61), (8, 1e-4): (0.21, 0.71)}
    out = []
    for key in [(4, 1e-3), (8, 1e-3), (4, 1e-4), (8, 1e-4)]:
        draws = [_estimated(r) for r in ref[key]]
        if key == (8, 1e-3):
            draws[0] = dict(NONE_DRAW)
        out.append({"n_draws": len(draws), "per_draw": draws, "ta_bp": means[key][0], "ta_pc": means[key][1]})
    return out


def _optimal_results(draws: dict) -> list[dict]:
    return [{"n_draws": len(draws[d]), "per_draw": draws[d], "ta_bp": b} for d, b in ((4, 0.4), (8, 0.45))]


def _areas(bp: float, diffs: list[float]) -> list[float]:
    return [bp - d for d in diffs]


def _training(linear_diffs: list[float], tanh_diffs: list[float]) -> dict:
    """BP's areas 10 (linear) and 16 (tanh) at every seed; PC's BP − diff. Rates with a diverged mean area: inf, nan."""
    by_rate = {0.003: 12.5, 0.01: 11.0, 0.03: 10.0, 0.1: math.inf, 0.3: math.nan}
    return {
        "linear_bp": {"rate": 0.03, "areas": [10.0] * 5, "mean_area_by_rate": by_rate},
        "linear_pc": {"rate": 0.1, "areas": _areas(10.0, linear_diffs), "mean_area_by_rate": {0.1: 9.0}},
        "tanh_bp": {"rate": 0.01, "areas": [16.0] * 5, "mean_area_by_rate": {0.01: 16.0}},
        "tanh_pc": {"rate": 0.3, "areas": _areas(16.0, tanh_diffs), "mean_area_by_rate": {0.3: math.inf}},
    }


LINEAR_DIFFS = [2.0, 0.75, 0.75, 0.75, 0.75]
"""Mean 1, deviations 0.25·(4, −1, −1, −1, −1): Σ dev² = 20·0.25², so the standard error √(Σ dev²/4/5) is 0.25."""
TANH_DIFFS = [4.0, 1.5, 1.5, 1.5, 1.5]
"""Mean 2, standard error 0.5."""
CHECKPOINTS = [
    {"pc_minus_bp": 0.5, "pc_minus_bp_se": 0.0625},
    {"pc_minus_bp": 0.375, "pc_minus_bp_se": 0.0625},
    {"pc_minus_bp": 0.25, "pc_minus_bp_se": 0.0625},
]


def test_whole_check_on_hand_made_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list = []
    monkeypatch.setattr(dyn, "_pc_reference", _fake_reference(calls))
    monkeypatch.setattr(dyn, "pc_training", lambda: _training(LINEAR_DIFFS, TANH_DIFFS))
    results = [
        *_curve(BASE_GAPS, [S] * 6),
        *_formula_results(FORMULA_REF),
        *_optimal_results(OPTIMAL_DRAWS),
        *CHECKPOINTS,
    ]
    out = dyn.predictive_coding_judge(results)
    assert calls == [(4, 2, 1e-3), (8, 3, 1e-3), (4, 2, 1e-4), (8, 2, 1e-4), (4, 2, None), (8, 3, None)]
    assert list(out.findings) == [
        "pc-more-efficient",
        "analytical-expressions",
        "optimal-conditions",
        "training-trajectories",
    ]
    assert {k: f.status for k, f in out.findings.items()} == {
        "pc-more-efficient": "consistent",
        "analytical-expressions": "implementation_verified",
        "optimal-conditions": "implementation_verified",
        "training-trajectories": "consistent",
    }
    assert out.figures["pc_minus_bp"] == BASE_GAPS and out.figures["peak_depth"] == 12
    assert out.figures["formulas"] == {
        "depths": [4, 8],
        "lrs": [1e-3, 1e-4],
        "draws": 8,
        "max_first_order_difference": 0.0,
        "max_closed_form_vs_finite": [1 / 256, 1 / 2048],
        "shrink": 8.0,
        "mean_ta_bp": [0.3, 0.2],
        "mean_ta_pc": [0.6, 0.7],
    }
    assert out.figures["optimal_rates"] == {
        "depths": [4, 8],
        "included_draws": 4,
        "excluded_draws": 1,
        "max_first_order_gap": 2**-45,
        "reference_max_first_order_gap": 2**-48,
        "min_finite_ta_pc": 0.9921875,
        "mean_ta_bp_same_normalisation": [0.4, 0.45],
        "equal_rate_mean_ta_pc": [0.6, 0.7],
    }
    none = None
    assert out.figures["trajectories"] == {
        "rates": {"linear_bp": 0.03, "linear_pc": 0.1, "tanh_bp": 0.01, "tanh_pc": 0.3},
        "mean_area_by_rate": {
            "linear_bp": {"0.003": 12.5, "0.01": 11.0, "0.03": 10.0, "0.1": none, "0.3": none},
            "linear_pc": {"0.1": 9.0},
            "tanh_bp": {"0.01": 16.0},
            "tanh_pc": {"0.3": none},
        },
        "benefit": {
            "linear": {"bp_minus_pc": 1.0, "se": 0.25, "bp_area": 10.0, "pc_area": 9.0},
            "tanh": {"bp_minus_pc": 2.0, "se": 0.5, "bp_area": 16.0, "pc_area": 14.0},
        },
        "relative_benefit": {"linear": 0.1, "tanh": 0.125},
        "verdicts": {"linear": "benefit", "tanh": "benefit"},
        "checkpoint_samples": [0, 100, 300],
        "checkpoint_ta_gap": [0.5, 0.375, 0.25],
        "checkpoint_ta_gap_se": [0.0625] * 3,
    }
    assert out.reason == (
        "over 500 single-sample draws PC beats BP by 0.250, 0.500, 0.625, 0.750, 0.875 at depths 2, 4, 6, 8, 12 "
        "(width 8) and by 0.250 at depth 8 width 64: the gap peaks at depth 12 and falls by 0.000 (0.0 standard "
        "errors) to depth 12; the closed forms match the estimator's first-order TAs within 0.0e+00 and its "
        "finite-step TAs come 8.0 times closer at a tenth of the rate; under the layer-wise rates the first-order "
        "TA_PC is 1 within 2.8e-14; over 300 samples of online training PC's mean test loss is 10.0% below BP's in "
        "the linear network and 12.5% below it in the tanh network (each at its best rate)"
    )
    a = out.findings["analytical-expressions"]
    assert a.expected_source == "independent_computation"
    assert a.expected == {"closed_form_vs_estimator_at_most": 1e-9, "shrink_with_lr_over_10_at_least": 5.0}
    assert a.measured == {
        "draws": 8,
        "max_first_order_difference": 0.0,
        "max_closed_form_vs_finite": [1 / 256, 1 / 2048],
        "shrink": 8.0,
    }
    assert a.tolerance == {"per_draw_match": 1e-9, "finite_step_approach": "linear in lr (at least 5x)"}
    assert a.computation == (
        "reference.predictive_coding: per draw (the estimator's documented draws, seed 0, depths 4 and 8, width 8, "
        "50 draws each, lr 1e-3 and 1e-4) the PC equilibrium by least squares over the stacked hidden activities, "
        "both updates applied and the network run forward, and the closed forms TA_BP = cos(Σ_l ‖a_{l−1}‖² U_l U_lᵀ e, "
        "e) and TA_PC = cos(Σ_l (x_{l−1}ᵀa_{l−1}) U_l U_lᵀ S⁻¹e, e), S = Σ_l U_l U_lᵀ, derived by hand for one "
        "sample; the estimator's finite-step TAs approach them as lr falls (the empirical validation)"
    )
    o = out.findings["optimal-conditions"]
    assert o.expected_source == "independent_computation"
    assert o.expected == {"first_order_ta_pc": 1.0, "finite_step_ta_pc_at_least": 0.99}
    assert o.measured == {
        "included_draws": 4,
        "max_first_order_gap": 2**-45,
        "min_finite_ta_pc": 0.9921875,
        "equal_rate_mean_ta_pc": [0.6, 0.7],
    }
    assert o.tolerance == {"first_order": 1e-12, "finite_step_at_least": 0.99}
    assert o.computation == (
        "by hand, for one sample, η_l = η/(x_{l−1}ᵀa_{l−1}) gives Δŷ_PC = η Σ_l U_l U_lᵀ S⁻¹e = η e, so TA_PC = 1; "
        "reference.predictive_coding recomputes it per draw from its least-squares equilibrium errors (Σ_l U_l ε_l); "
        "draws with some x_{l−1}ᵀa_{l−1} <= 0 are excluded; competing hypothesis: equal rates already align "
        "optimally (their mean TA_PC stays below 0.99)"
    )
    t = out.findings["training-trajectories"]
    assert (t.expected_source, t.expected) == (
        "paper_text",
        "PC learns faster than BP over full training, in linear and non-linear networks",
    )
    assert t.measured == {
        "relative_benefit": {"linear": 0.1, "tanh": 0.125},
        "bp_minus_pc": {"linear": [1.0, 0.25], "tanh": [2.0, 0.5]},
        "checkpoint_ta_gap": [0.5, 0.375, 0.25],
    }
    assert t.tolerance == (
        "3 SE of the paired difference over seeds; absent when a benefit of 10% of BP's area is excluded"
    )
    assert t.computation == TRAJECTORY_COMPUTATION


TRAJECTORY_COMPUTATION = (
    "training_models: online training (one sample per update, 300 samples, seeds 0-4) of 20-8-8-8-5 networks, "
    "linear and tanh, on a teacher of the same shape; BP by the chain rule, PC at the exact equilibrium (linear) "
    "or relaxed by steps of 0.2 until every |dF/dx| < 1e-4 (tanh); each method at its best rate of 0.003-0.3 "
    "by the area under the test-loss curve; the estimator's TA gap at the BP-trained linear network's weights "
    "after 0, 100 and 300 samples; competing hypothesis: the benefit vanishes once the assumptions (one step, "
    "linear network, random weights) are violated"
)


def _formulas(monkeypatch: pytest.MonkeyPatch, ref: dict, results: list[dict] | None = None) -> tuple:
    monkeypatch.setattr(dyn, "_pc_reference", _fake_reference([], formula=ref))
    found, figures = dyn._pc_formulas(_formula_results(ref) if results is None else results)
    return found.status, figures


def test_formulas_per_draw_match_is_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    """One draw whose reference finite-step TA_BP is 1e-9 and the estimator's 0: a distance of exactly 1e-9 (the
    estimator's finite step stays 1/8192 from the first-order TA_BP, below the largest distance)."""
    results = _formula_results(FORMULA_REF)
    results[2]["per_draw"][1] = {**_estimated(_ref(0.0, 0.75, 1 / 8192, 1 / 8192))}
    expected = _formulas(monkeypatch, FORMULA_REF)[1]
    for ours, status in ((1e-9, "implementation_verified"), (math.nextafter(1e-9, 1.0), "contradicted")):
        ref = {**FORMULA_REF, (4, 1e-4): [FORMULA_REF[4, 1e-4][0], _ref(ours, 0.75, 1 / 8192 - ours, 1 / 8192)]}
        assert ref[4, 1e-4][1]["ta_bp_first_order"] == 1 / 8192
        assert _formulas(monkeypatch, ref, results) == (status, {**expected, "max_first_order_difference": ours})


def test_formulas_each_of_the_four_tas_must_match(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("ta_bp", "ta_pc", "ta_bp_first_order", "ta_pc_first_order"):
        results = _formula_results(FORMULA_REF)
        results[3]["per_draw"][0] = {**results[3]["per_draw"][0], key: results[3]["per_draw"][0][key] - 2**-20}
        status, figures = _formulas(monkeypatch, FORMULA_REF, results)
        assert (status, figures["max_first_order_difference"]) == ("contradicted", 2**-20), key


def test_formulas_shrink_of_five_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    ref = dict(FORMULA_REF)
    ref[8, 1e-3] = [_ref(0.5, 0.75, 1 / 2, 1 / 2), _ref(0.5, 0.75, -5 / 1024, 1 / 1024), _ref(0.5, 0.75, 0, 1 / 2048)]
    ref[4, 1e-4] = [_ref(0.5, 0.75, 1 / 16384, -1 / 1024), _ref(0.5, 0.75, 1 / 8192, 1 / 8192)]
    status, figures = _formulas(monkeypatch, ref)
    assert figures["max_closed_form_vs_finite"] == [5 / 1024, 1 / 1024] and figures["shrink"] == 5.0
    assert status == "implementation_verified"
    ref[4, 1e-4] = [_ref(0.5, 0.75, 1 / 16384, -(1 / 1024 + 2**-20)), _ref(0.5, 0.75, 1 / 8192, 1 / 8192)]
    status, figures = _formulas(monkeypatch, ref)
    assert figures["shrink"] < 5.0 and status == "contradicted"


def test_formulas_skip_draws_without_alignment_but_read_the_ones_after(monkeypatch: pytest.MonkeyPatch) -> None:
    ref = dict(FORMULA_REF)
    ref[8, 1e-3] = [_ref(0.5, 0.75, 1 / 2, 1 / 2), _ref(0.5, 0.75, 0, 1 / 1024), _ref(0.5, 0.75, 1 / 64, 0)]
    _, figures = _formulas(monkeypatch, ref)  # the skipped draw's distance 1/2 counts nowhere
    assert figures["max_closed_form_vs_finite"] == [1 / 64, 1 / 2048] and figures["shrink"] == 32.0
    assert figures["draws"] == 8


def test_formulas_on_the_real_reference_approach_linearly_in_the_rate() -> None:
    """The estimator's draws replaced by the reference's own (two per run): an exact match, and the finite-step TAs
    come about ten times closer to the closed forms at a tenth of the rate."""
    results = []
    for lr in (1e-3, 1e-4):
        for depth in (4, 8):
            weights, x, y = ref_pc.draws(0, [20, *[8] * (depth - 1), 5], 2)
            draws = [ref_pc.alignments([w[i] for w in weights], x[i], y[i], lr) for i in range(2)]
            results.append({"n_draws": 2, "per_draw": draws, "ta_bp": 0.5, "ta_pc": 0.6})
    found, figures = dyn._pc_formulas(results)
    assert found.status == "implementation_verified"
    assert figures["max_first_order_difference"] == 0.0 and figures["draws"] == 8
    assert 8.0 < figures["shrink"] < 12.0


def _optimal(monkeypatch: pytest.MonkeyPatch, draws: dict, equal: list[float], ref: dict | None = None) -> tuple:
    monkeypatch.setattr(dyn, "_pc_reference", _fake_reference([], optimal=ref))
    found, figures = dyn._pc_optimal(_optimal_results(draws), equal)
    return found.status, figures


def _draws(**changes: dict) -> dict:
    """OPTIMAL_DRAWS with the depth-8 draw 2 (the one after the excluded draw) changed."""
    out = {d: [dict(r) for r in rs] for d, rs in OPTIMAL_DRAWS.items()}
    out[8][1].update(changes)
    return out


def test_optimal_first_order_gap_of_the_estimator_and_of_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _optimal(monkeypatch, OPTIMAL_DRAWS, [0.6, 0.7])[0] == "implementation_verified"
    status, figures = _optimal(monkeypatch, _draws(ta_pc_first_order=1 - 2**-39), [0.6, 0.7])  # 1.8e-12
    assert status == "contradicted" and figures["max_first_order_gap"] == 2**-39
    ref = {d: list(rs) for d, rs in OPTIMAL_REF.items()}
    ref[8] = [ref[8][0], {**ref[8][1], "pc_optimal_first_order": 1 - 2**-39}, ref[8][2]]
    status, figures = _optimal(monkeypatch, OPTIMAL_DRAWS, [0.6, 0.7], ref)
    assert status == "contradicted" and figures["reference_max_first_order_gap"] == 2**-39
    ref[8] = [{**ref[8][0], "pc_optimal_first_order": 0.0}, *OPTIMAL_REF[8][1:]]  # the excluded draw's: not read
    status, figures = _optimal(monkeypatch, OPTIMAL_DRAWS, [0.6, 0.7], ref)
    assert status == "implementation_verified" and figures["reference_max_first_order_gap"] == 2**-48


def test_optimal_finite_step_ta_at_least_099(monkeypatch: pytest.MonkeyPatch) -> None:
    status, figures = _optimal(monkeypatch, _draws(ta_pc=0.99), [0.6, 0.7])
    assert (status, figures["min_finite_ta_pc"]) == ("implementation_verified", 0.99)
    status, figures = _optimal(monkeypatch, _draws(ta_pc=math.nextafter(0.99, 0.0)), [0.6, 0.7])
    assert status == "contradicted"


def test_optimal_equal_rates_must_stay_below_099(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _optimal(monkeypatch, OPTIMAL_DRAWS, [0.6, 0.99])[0] == "contradicted"
    assert _optimal(monkeypatch, OPTIMAL_DRAWS, [0.99, 0.6])[0] == "contradicted"
    status, figures = _optimal(monkeypatch, OPTIMAL_DRAWS, [0.6, math.nextafter(0.99, 0.0)])
    assert status == "implementation_verified" and figures["equal_rate_mean_ta_pc"] == [0.6, math.nextafter(0.99, 0)]


def _trajectories(monkeypatch: pytest.MonkeyPatch, linear: list[float], tanh: list[float], checkpoints: list) -> tuple:
    monkeypatch.setattr(dyn, "pc_training", lambda: _training(linear, tanh))
    return dyn._pc_trajectories(checkpoints)


def _shift(diffs: list[float], by: float) -> list[float]:
    return [d + by for d in diffs]


BENEFIT_EDGE = [1.75, 0.5, 0.5, 0.5, 0.5]
"""Mean 0.75 = 3 · its standard error 0.25."""
ABSENT_EDGE = [1.25, 0.0, 0.0, 0.0, 0.0]
"""Mean 0.25, standard error 0.25: mean + 3 SE = 1.0 = a tenth of BP's area 10."""


def test_trajectories_benefit_beyond_three_standard_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    found, figures = _trajectories(monkeypatch, BENEFIT_EDGE, TANH_DIFFS, CHECKPOINTS)
    assert figures["benefit"]["linear"] == {"bp_minus_pc": 0.75, "se": 0.25, "bp_area": 10.0, "pc_area": 9.25}
    assert figures["verdicts"] == {"linear": "undecided", "tanh": "benefit"}
    assert found.status == "not_checked"  # no benefit excluded either: the margin is missing
    assert found.computation == TRAJECTORY_COMPUTATION
    found, figures = _trajectories(monkeypatch, _shift(BENEFIT_EDGE, 1 / 1024), TANH_DIFFS, CHECKPOINTS)
    assert figures["verdicts"] == {"linear": "benefit", "tanh": "benefit"} and found.status == "consistent"


def test_trajectories_absent_when_a_tenth_of_bps_area_is_excluded(monkeypatch: pytest.MonkeyPatch) -> None:
    found, figures = _trajectories(monkeypatch, ABSENT_EDGE, TANH_DIFFS, CHECKPOINTS)
    assert figures["verdicts"]["linear"] == "undecided" and found.status == "not_checked"
    found, figures = _trajectories(monkeypatch, _shift(ABSENT_EDGE, -1 / 1024), TANH_DIFFS, CHECKPOINTS)
    assert figures["verdicts"] == {"linear": "absent", "tanh": "benefit"}
    assert figures["relative_benefit"]["linear"] == (0.25 - 1 / 1024) / 10
    assert found.status == "contradicted"
    assert found.computation == (
        TRAJECTORY_COMPUTATION + "; where contradicted: linear: PC's area 9.751 against BP's 10.000 (difference "
        "+0.2490 ± 0.2500)"
    )


def test_trajectories_name_every_absent_benefit(monkeypatch: pytest.MonkeyPatch) -> None:
    tanh = [d * 1.6 for d in _shift(ABSENT_EDGE, -1 / 1024)]  # BP's area 16: mean + 3 SE just under 1.6
    found, figures = _trajectories(monkeypatch, _shift(ABSENT_EDGE, -1 / 1024), tanh, CHECKPOINTS)
    assert figures["verdicts"] == {"linear": "absent", "tanh": "absent"}
    assert found.computation == (
        TRAJECTORY_COMPUTATION + "; where contradicted: linear: PC's area 9.751 against BP's 10.000 (difference "
        "+0.2490 ± 0.2500); tanh: PC's area 15.602 against BP's 16.000 (difference +0.3984 ± 0.4000)"
    )


def test_trajectories_ta_gap_at_every_checkpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    tie = [*CHECKPOINTS[:2], {"pc_minus_bp": 0.1875, "pc_minus_bp_se": 0.0625}]
    found, figures = _trajectories(monkeypatch, LINEAR_DIFFS, TANH_DIFFS, tie)
    assert found.status == "not_checked" and figures["checkpoint_ta_gap"] == [0.5, 0.375, 0.1875]
    first = [{"pc_minus_bp": 0.1875, "pc_minus_bp_se": 0.0625}, *CHECKPOINTS[1:]]
    assert _trajectories(monkeypatch, LINEAR_DIFFS, TANH_DIFFS, first)[0].status == "not_checked"
    over = [*CHECKPOINTS[:2], {"pc_minus_bp": 0.1875 + 1 / 1024, "pc_minus_bp_se": 0.0625}]
    assert _trajectories(monkeypatch, LINEAR_DIFFS, TANH_DIFFS, over)[0].status == "consistent"


def test_predictive_coding_plot_draws_the_gap_with_three_standard_errors() -> None:
    gaps = [0.25, 0.5, 0.625, 0.75, 0.875, 0.375]
    ses = [1 / 64, 1 / 32, 1 / 16, 1 / 64, 1 / 32, 1 / 8]
    fig = dyn.predictive_coding_plot([], Outcome({"pc_minus_bp": gaps, "pc_minus_bp_se": ses}, "", {}))
    (ax,) = fig.axes
    assert tuple(fig.get_size_inches()) == pytest.approx((6, 4))
    narrow, wide = ax.containers
    line, caps, (bars,) = narrow.lines
    assert list(line.get_xdata()) == [2, 4, 6, 8, 12] and list(line.get_ydata()) == gaps[:5]
    assert (line.get_marker(), line.get_linestyle()) == ("o", "-")
    segments = [s.tolist() for s in bars.get_segments()]
    assert segments == [
        [[d, g - 3 * s], [d, g + 3 * s]] for d, g, s in zip([2, 4, 6, 8, 12], gaps[:5], ses[:5], strict=True)
    ]
    assert [c.get_markersize() for c in caps] == [6, 6]  # capsize 3
    assert narrow.get_label() == "width 8"
    wline, wcaps, (wbars,) = wide.lines
    assert list(wline.get_xdata()) == [8] and list(wline.get_ydata()) == [0.375]
    assert (wline.get_marker(), wline.get_linestyle()) == ("s", "None")
    assert [s.tolist() for s in wbars.get_segments()] == [[[8, 0.375 - 3 / 8], [8, 0.375 + 3 / 8]]]
    assert wcaps == () and wide.get_label() == "width 64"
    zero = [ln for ln in ax.lines if list(ln.get_ydata()) == [0.0, 0.0]]
    assert len(zero) == 1 and (zero[0].get_color(), zero[0].get_linewidth()) == ("k", 0.5)
    assert ax.get_xlabel() == "depth (weight layers)"
    assert ax.get_ylabel() == "TA(PC) - TA(BP), mean of 500 draws (bars: 3 SE)"
    texts = ax.get_legend().get_texts()
    assert [t.get_text() for t in texts] == ["width 8", "width 64"]
    assert {t.get_fontsize() for t in texts} == {8}
    assert ax.get_position().x0 != pytest.approx(0.125)  # tight_layout moved the axes


def test_optimal_counts_every_excluded_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    draws = {d: [dict(r) for r in rs] for d, rs in OPTIMAL_DRAWS.items()}
    draws[4][1]["ta_pc_first_order"] = None
    status, figures = _optimal(monkeypatch, draws, [0.6, 0.7])
    assert (figures["included_draws"], figures["excluded_draws"]) == (3, 2)
    assert status == "implementation_verified"


def test_formula_and_optimal_parts_refuse_runs_missing_or_draws_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run or a draw fewer than the check's steps asked for is an error, not a shorter comparison."""
    monkeypatch.setattr(dyn, "_pc_reference", _fake_reference([]))
    with pytest.raises(ValueError):
        dyn._pc_formulas(_formula_results(FORMULA_REF)[:3])
    short = _formula_results(FORMULA_REF)
    short[0]["per_draw"] = short[0]["per_draw"][:1]  # n_draws still 2
    with pytest.raises(ValueError):
        dyn._pc_formulas(short)
    with pytest.raises(ValueError):
        dyn._pc_optimal(_optimal_results(OPTIMAL_DRAWS)[:1], [0.6, 0.7])
    short = _optimal_results(OPTIMAL_DRAWS)
    short[1]["per_draw"] = short[1]["per_draw"][:2]  # n_draws still 3
    with pytest.raises(ValueError):
        dyn._pc_optimal(short, [0.6, 0.7])
