"""layer_patching.plan's figure, overlay curves, cost and parameter budgets, for a two-layer instance small enough
to solve by hand: blocks n = (2, 3) (widths 1 and 2, added depths 0…3) and unary costs delta = (1, −2)."""

from typing import Any

import pytest
from matplotlib.colors import to_rgba

from service.estimators.layer_patching import SPEC, PlanParams, PlanResult, plan, plan_cost, plan_curves, plot_plan
from service.registry import no_progress

UNARY = {"kind": "unary", "delta": [1.0, -2.0]}


def run(**params: Any) -> PlanResult:
    return plan(PlanParams.model_validate(params), no_progress)


@pytest.fixture(scope="module")
def two_layers() -> PlanResult:
    # Patch sets by depth: r = 0 ∅ (cost 0), 1 {0} (1), 2 {1} (−2), 3 {0, 1} (−1); that is the DP.
    # first_to_last visits ∅, {0}, {0, 1}: depths 0, 1, 3. last_to_first visits ∅, {1}, {0, 1}: depths 0, 2, 3.
    # KLPatch adds argmin cost(S ∪ {i}): {1} (−2 < 1), then {0, 1}: depths 0, 2, 3.
    return run(block_sizes=[2, 3], cost_model=UNARY)


DEPTHS = [0, 1, 2, 3]
DP = [0.0, 1.0, -2.0, -1.0]
CHAINS = {
    "klpatch": [0.0, None, -2.0, -1.0],
    "first_to_last": [0.0, 1.0, None, -1.0],
    "last_to_first": [0.0, None, -2.0, -1.0],
}


def test_the_hand_solved_instance(two_layers: PlanResult) -> None:
    assert [p.added_depth for p in two_layers.plans] == DEPTHS
    assert [p.dp.cost for p in two_layers.plans] == DP
    assert [(p.dp.reachable, p.dp.gap_to_dp) for p in two_layers.plans] == [(True, 0.0)] * 4
    assert [p.dp.patched for p in two_layers.plans] == [[], [0], [1], [0, 1]]
    for name, costs in CHAINS.items():
        assert [getattr(p, name).cost for p in two_layers.plans] == costs
        assert [getattr(p, name).reachable for p in two_layers.plans] == [c is not None for c in costs]
        # every chain set here is also the DP's at its depth
        assert [getattr(p, name).gap_to_dp for p in two_layers.plans] == [None if c is None else 0.0 for c in costs]


def test_overlay_curves_are_the_dp_and_each_chain_with_gaps_where_it_never_goes(two_layers: PlanResult) -> None:
    curves = plan_curves(two_layers)
    assert (curves.x_label, curves.y_label) == ("added depth r (teacher layers added)", "cost (unary)")
    assert (curves.x_log, curves.y_log) == (False, False)
    assert [(c.label, list(c.x), list(c.y)) for c in curves.curves] == [
        ("dp (exact)", DEPTHS, DP),
        *((name, DEPTHS, costs) for name, costs in CHAINS.items()),
    ]
    assert SPEC.overlay is plan_curves and SPEC.plot is plot_plan


def test_figure_draws_the_dp_solid_and_each_chain_dashed_where_it_goes() -> None:
    # Blocks (3, 3): widths 2 and 2, so the reachable depths 0, 2, 4 are not the default x 0, 1, 2; costs (1, −2):
    # dp 0, −2, −1; first_to_last 0, 1, −1 ({0} first); last_to_first and KLPatch 0, −2, −1.
    result = run(block_sizes=[3, 3], cost_model=UNARY)
    fig = plot_plan(result)
    assert tuple(fig.get_size_inches()) == (7.0, 4.5)
    (ax,) = fig.axes
    dp, *chains = ax.get_lines()
    assert (list(dp.get_xdata()), list(dp.get_ydata())) == ([0, 2, 4], [0.0, -2.0, -1.0])
    assert dp.get_label() == "dp (exact)" and dp.get_linestyle() == "-"
    assert to_rgba(dp.get_color()) == to_rgba("black")
    expected = [("klpatch", "o", [0.0, -2.0, -1.0]), ("first_to_last", "^", [0.0, 1.0, -1.0])]
    expected.append(("last_to_first", "v", [0.0, -2.0, -1.0]))
    assert [(c.get_label(), c.get_marker(), c.get_linestyle()) for c in chains] == [
        (name, marker, "--") for name, marker, _ in expected
    ]
    assert [(list(c.get_xdata()), list(c.get_ydata())) for c in chains] == [([0, 2, 4], y) for *_, y in expected]
    assert ax.get_xlabel() == "added depth r (teacher layers added)"
    assert ax.get_ylabel() == "cost (unary)"
    assert ax.get_title() == "Layer patching: cost of the patch set per added depth"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "dp (exact)",
        "klpatch",
        "first_to_last",
        "last_to_first",
    ]


def test_figure_leaves_out_a_chain_that_reaches_no_requested_depth() -> None:
    # Only r = 1 requested: {0} is the DP and first_to_last; last_to_first and KLPatch ({1} first) never reach it.
    result = run(block_sizes=[2, 3], cost_model=UNARY, added_depths=[1])
    (ax,) = plot_plan(result).axes
    assert [line.get_label() for line in ax.get_lines()] == ["dp (exact)", "first_to_last"]
    assert plan_curves(result).curves[1].y == [None]


@pytest.mark.parametrize(
    ("params", "cells"),
    [
        # M·max(1, N − M + 1) + M² (N = Σ n_i, R + 1 = N − M + 1 depths): 2·4 + 4.
        ({"block_sizes": [2, 3], "cost_model": UNARY}, 2 * 4 + 4),
        # Blocks of one layer: R = 0, one depth each: 2·1 + 4.
        ({"block_sizes": [1, 1], "cost_model": UNARY}, 2 * 1 + 4),
        # ℓ = (0, 2, 5) of N = 8 teacher layers: 3·6 + 9.
        (
            {
                "copied_teacher_layers": [0, 2, 5],
                "n_teacher_layers": 8,
                "cost_model": {"kind": "unary", "delta": [0.0] * 3},
            },
            3 * 6 + 9,
        ),
        # Table mode: 2^M·M subset cells plus M²: 8·3 + 9.
        ({"block_sizes": [2, 2, 2], "cost_model": {"kind": "table", "loss": [0.0] * 8}}, 8 * 3 + 9),
    ],
)
def test_cost_counts_dp_cells_and_greedy_candidates(params: dict[str, Any], cells: int) -> None:
    assert plan_cost(PlanParams.model_validate(params)) == cells


def test_a_greedy_gap_of_exactly_the_tolerance_still_counts_as_optimal() -> None:
    # Table over M = 3 (n = 2, 2, 3: widths 1, 1, 2). KLPatch first takes {0} (loss −1, the least single layer),
    # then {0, 1} (1e-9 < loss[{0, 2}] = 5): depth 2 at 1e-9, where the DP takes {2} at 0. A gap of exactly 1e-9 is
    # "within 1e-9"; one of 1e-8 is not.
    loss = [0.0, -1.0, 5.0, 1e-9, 0.0, 5.0, 5.0, 0.0]
    calls: list[tuple[Any, ...]] = []
    result = plan(
        PlanParams.model_validate({"block_sizes": [2, 2, 3], "cost_model": {"kind": "table", "loss": loss}}),
        lambda *args: calls.append(args),
    )
    depth2 = result.plans[2]
    assert (depth2.dp.patched, depth2.klpatch.patched) == ([2], [0, 1])
    assert depth2.klpatch.gap_to_dp == 1e-9
    assert depth2.greedy_is_optimal is True
    assert calls == [(0.3, "chains"), (0.6, "lattice")]
    worse = run(block_sizes=[2, 2, 3], cost_model={"kind": "table", "loss": [*loss[:3], 1e-8, *loss[4:]]})
    assert worse.plans[2].greedy_is_optimal is False


def test_progress_without_a_table_reports_the_chains_only() -> None:
    calls: list[tuple[Any, ...]] = []
    plan(PlanParams.model_validate({"block_sizes": [2, 3], "cost_model": UNARY}), lambda *args: calls.append(args))
    assert calls == [(0.3, "chains")]
