"""Tests of ``layer_patching.plan``: exact DP against brute force, the greedy/sequential figures, the lattice path."""

import itertools
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from service.errors import InvalidInput
from service.estimators.layer_patching import SPEC, PlanParams, PlanResult, plan, plan_cost
from service.registry import ESTIMATORS, no_progress

WORSE = 1e-9


def run(**params: Any) -> PlanResult:
    return plan(PlanParams.model_validate(params), no_progress)


def unary(sizes: list[int], delta: np.ndarray, **extra: Any) -> PlanResult:
    return run(block_sizes=sizes, cost_model={"kind": "unary", "delta": delta.tolist()}, **extra)


def pairwise(sizes: list[int], delta: np.ndarray, inter: np.ndarray, **extra: Any) -> PlanResult:
    model = {"kind": "pairwise", "delta": delta.tolist(), "interaction": inter.tolist()}
    return run(block_sizes=sizes, cost_model=model, **extra)


def all_masks(m: int) -> np.ndarray:
    return ((np.arange(1 << m)[:, None] >> np.arange(m)) & 1).astype(bool)


def brute_force(sizes: list[int], cost_of_mask: np.ndarray) -> dict[int, float]:
    """min cost over every patchable subset of each added depth, by enumeration."""
    widths = np.asarray(sizes) - 1
    z = all_masks(len(sizes))
    ok = ~(z & (widths == 0)).any(axis=1)
    best: dict[int, float] = {}
    for depth, cost in zip((z[ok] @ widths).tolist(), cost_of_mask[ok].tolist(), strict=True):
        best[depth] = min(best.get(depth, np.inf), cost)
    return best


def pairwise_table(delta: np.ndarray, inter: np.ndarray) -> np.ndarray:
    z = all_masks(delta.size).astype(np.float64)
    return z @ delta + (z[:, :-1] * z[:, 1:]) @ inter


# ------------------------------------------------------------------ check 1: DP = brute force


@pytest.mark.slow
def test_dp_equals_brute_force_on_300_random_instances_unary_and_pairwise() -> None:
    # 300 instances, M in [3, 10], n_i in {1, 2, 3}, N(0, 1) costs: the DP minimum equals enumeration at every
    # depth (reference: max |DP − brute| = 3.6e-15), its set has that cost and depth, and the DP is never above
    # any chain (the only theorem about the greedy).
    rng = np.random.default_rng(11)
    worst = 0.0
    for inst in range(300):
        m = int(rng.integers(3, 11))
        sizes = rng.integers(1, 4, size=m).tolist()
        delta = rng.standard_normal(m)
        inter = rng.standard_normal(m - 1) if inst % 2 else np.zeros(m - 1)
        table = pairwise_table(delta, inter)
        result = pairwise(sizes, delta, inter) if inst % 2 else unary(sizes, delta)
        brute = brute_force(sizes, table)
        assert [p.added_depth for p in result.plans] == sorted(brute)
        widths = np.asarray(sizes) - 1
        for p in result.plans:
            worst = max(worst, abs(p.dp.cost - brute[p.added_depth]))
            mask = sum(1 << i for i in p.dp.patched)
            assert table[mask] == pytest.approx(p.dp.cost, abs=1e-12)
            assert int(widths[p.dp.patched].sum()) == p.added_depth
            for name in ("first_to_last", "last_to_first", "klpatch"):
                chain = getattr(p, name)
                if chain.reachable:
                    assert chain.cost >= p.dp.cost - 1e-12
    assert worst < 1e-12


# ------------------------------------------------------------------ check 2: additive, uniform blocks


@pytest.mark.slow
def test_additive_uniform_blocks_greedy_equals_dp_and_mean_sequential_gap() -> None:
    # Reference check 2, seed 0: M = int(rng.integers(3, 20)), Δ = rng.standard_normal(M), n_i = 2. DP = greedy
    # ≤ min(sequential) at every k (0 violations); mean gap over the 3595 (instance, k) pairs with k = 0..M is
    # 2.2545 (2.4598 over k = 1..M) in the reference measurement; reproduced to 5e-5.
    rng = np.random.default_rng(0)
    gaps_all: list[float] = []
    gaps_pos: list[float] = []
    for _ in range(300):
        m = int(rng.integers(3, 20))
        delta = rng.standard_normal(m)
        result = unary([2] * m, delta)
        assert [p.added_depth for p in result.plans] == list(range(m + 1))
        for p in result.plans:
            seq = min(p.first_to_last.cost, p.last_to_first.cost)
            assert p.klpatch.cost == pytest.approx(p.dp.cost, abs=1e-12)
            assert p.greedy_is_optimal
            assert p.klpatch.cost <= seq + 1e-12
            gaps_all.append(seq - p.dp.cost)
            if p.added_depth >= 1:
                gaps_pos.append(seq - p.dp.cost)
    assert len(gaps_all) == 3595
    assert np.mean(gaps_all) == pytest.approx(2.2545, abs=5e-5)
    assert np.mean(gaps_pos) == pytest.approx(2.4598, abs=5e-5)


# ------------------------------------------------------------------ check 3: knapsack effect


def test_knapsack_counter_example() -> None:
    # n = [2, 3, 2, 3, 3, 3], Δ = [−1.243, −0.216, −1.344, −1.606, 0.426, 0.065], r = 2: DP patches layers 1 and 3
    # (1-based) at −2.587, greedy patches layer 4 at −1.606; the greedy chain visits r = 0, 2, 3, 4, 6, 8, 10 only.
    delta = np.array([-1.243, -0.216, -1.344, -1.606, 0.426, 0.065])
    result = unary([2, 3, 2, 3, 3, 3], delta)
    at2 = next(p for p in result.plans if p.added_depth == 2)
    assert at2.dp.patched == [0, 2]
    assert at2.dp.cost == pytest.approx(-2.587, abs=1e-12)
    assert at2.klpatch.patched == [3]
    assert at2.klpatch.cost == pytest.approx(-1.606, abs=1e-12)
    assert at2.klpatch.gap_to_dp == pytest.approx(0.981, abs=1e-12)
    assert at2.greedy_is_optimal is False
    assert [p.added_depth for p in result.plans if p.klpatch.reachable] == [0, 2, 3, 4, 6, 8, 10]


def test_knapsack_rates_seed_0() -> None:
    # Reference check 3, seed 0, 300 instances of n = rng.integers(1, 4, size=6), Δ = rng.standard_normal(6):
    # greedy strictly worse (> 1e-9) in A 25/1518 (visited depths), B 25/1218 (visited, r ≥ 1), C 25/1758 (r ≥ 1
    # reachable by the DP); 22/300 instances have a strict gap. Reproduced exactly.
    rng = np.random.default_rng(0)
    worse = visited = visited_pos = reachable_pos = instances = 0
    for _ in range(300):
        sizes = rng.integers(1, 4, size=6).tolist()
        delta = rng.standard_normal(6)
        result = unary(sizes, delta)
        hit = 0
        for p in result.plans:
            reachable_pos += p.added_depth >= 1
            if p.klpatch.reachable:
                visited += 1
                visited_pos += p.added_depth >= 1
                assert p.klpatch.gap_to_dp >= -1e-12
                hit += p.klpatch.gap_to_dp > WORSE
        worse += hit
        instances += hit > 0
    assert (worse, visited, visited_pos, reachable_pos, instances) == (25, 1518, 1218, 1758, 22)


# ------------------------------------------------------------------ check 4: pairwise costs


def four_weight_instance(u: np.ndarray, wt: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Convert 𝓛(z) = Σ z_i u_i + Σ_i w_i(z_{i−1}, z_i) to (Δ, interaction); also 𝓛 − C over all masks."""
    m = u.size
    inter = wt[:, 1, 1] - wt[:, 1, 0] - wt[:, 0, 1] + wt[:, 0, 0]
    delta = u.copy()
    delta[1:] += wt[:, 0, 1] - wt[:, 0, 0]
    delta[:-1] += wt[:, 1, 0] - wt[:, 0, 0]
    z = all_masks(m).astype(np.int64)
    table = z @ u + wt[np.arange(m - 1), z[:, :-1], z[:, 1:]].sum(axis=1) - wt[:, 0, 0].sum()
    return delta, inter, table


@pytest.mark.parametrize(("four_weights", "expected"), [(True, (453, 90)), (False, (258, 48))])
def test_pairwise_greedy_frequencies_seed_0(four_weights: bool, expected: tuple[int, int]) -> None:
    # Reference check 4, seed 0, 300 instances, M = 8, n_i = 2, k = 1..7 (2100 pairs): P(greedy > DP) = 453/2100
    # and P(greedy > best sequential) = 90/2100 with all four w_i(a, b) (u = standard_normal(8), then
    # Wt = standard_normal((7, 2, 2))); 258/2100 and 48/2100 with w(1, 1) only. Greedy ≤ sequential is NOT a
    # theorem here, so only the counts are asserted, and DP ≤ greedy.
    rng = np.random.default_rng(0)
    above_dp = above_seq = 0
    for _ in range(300):
        u = rng.standard_normal(8)
        if four_weights:
            delta, inter, table = four_weight_instance(u, rng.standard_normal((7, 2, 2)))
        else:
            delta, inter = u, rng.standard_normal(7)
            table = pairwise_table(delta, inter)
        result = pairwise([2] * 8, delta, inter)
        brute = brute_force([2] * 8, table)
        for p in result.plans:
            assert p.dp.cost == pytest.approx(brute[p.added_depth], abs=1e-12)
            assert p.klpatch.cost >= p.dp.cost - 1e-12
            if 1 <= p.added_depth <= 7:
                above_dp += p.klpatch.cost > p.dp.cost + WORSE
                above_seq += p.klpatch.cost > min(p.first_to_last.cost, p.last_to_first.cost) + WORSE
    assert (above_dp, above_seq) == expected


# ------------------------------------------------------------------ check 5: monotone costs


@pytest.mark.parametrize("m", [3, 7, 16])
def test_monotone_costs_last_to_first_is_optimal_with_equal_blocks(m: int) -> None:
    # Δ_i = −i (1-based): later layers help more, so last-to-first is the DP at every k (equal blocks).
    result = unary([3] * m, -np.arange(1.0, m + 1))
    for p in result.plans:
        assert p.last_to_first.reachable
        assert p.last_to_first.cost == pytest.approx(p.dp.cost, abs=1e-12)
        assert p.last_to_first.patched == p.dp.patched


def test_monotone_costs_unequal_blocks_break_last_to_first() -> None:
    # n = [2, 2, 2, 3], Δ = [−1, −2, −3, −4], depth 2: last-to-first patches layer 4 (−4), the DP layers 2, 3 (−5).
    result = unary([2, 2, 2, 3], -np.arange(1.0, 5.0), added_depths=[2])
    (p,) = result.plans
    assert (p.last_to_first.patched, p.last_to_first.cost) == ([3], -4.0)
    assert (p.dp.patched, p.dp.cost) == ([1, 2], -5.0)


# ------------------------------------------------------------------ check 6: the lattice path


def table_run(loss: np.ndarray, sizes: list[int] | None = None, **extra: Any) -> PlanResult:
    sizes = sizes or [2] * int(np.log2(loss.size))
    return run(block_sizes=sizes, cost_model={"kind": "table", "loss": loss.tolist()}, **extra)


def test_lattice_path_is_the_minimum_over_all_orderings() -> None:
    # M = 6: the vectorised lattice DP equals the best of the 720 nested orders, each scored Σ_k loss[S_k].
    rng = np.random.default_rng(5)
    loss = rng.standard_normal(64)
    result = table_run(loss)
    best = min(
        sum(loss[sum(1 << i for i in order[:k])] for k in range(1, 7)) for order in itertools.permutations(range(6))
    )
    assert result.lattice_chain_cost == pytest.approx(best, abs=1e-12)
    path = result.lattice_path
    assert sorted(path) == list(range(6))
    assert sum(loss[sum(1 << i for i in path[:k])] for k in range(1, 7)) == pytest.approx(best, abs=1e-12)


def test_lattice_at_most_greedy_chain_random_and_equal_for_modular() -> None:
    # Random tables (M = 10): lattice ≤ every nested chain, strictly below the greedy chain in some instances (the
    # reference's single example: −17.02 vs −13.50). Modular (additive) tables: the greedy chain is the lattice optimum.
    rng = np.random.default_rng(6)
    strict = 0
    for _ in range(10):
        result = table_run(rng.standard_normal(1024))
        costs = result.chain_costs
        assert costs.lattice == result.lattice_chain_cost
        for other in (costs.klpatch, costs.first_to_last, costs.last_to_first):
            assert costs.lattice <= other + 1e-12
        strict += costs.lattice < costs.klpatch - WORSE
    assert strict >= 5
    delta = rng.standard_normal(10)
    modular = table_run(all_masks(10).astype(np.float64) @ delta)
    assert modular.lattice_chain_cost == pytest.approx(modular.chain_costs.klpatch, abs=1e-12)


def test_table_mode_matches_unary_and_skips_non_patchable_layers() -> None:
    # An additive table gives the same optimum per depth as the unary model (loss[0] = 0); a size-1 block is never
    # patched by any method, and the lattice only runs over patchable layers.
    rng = np.random.default_rng(7)
    sizes = [2, 1, 3, 2, 1, 2]
    delta = rng.standard_normal(6)
    table = table_run(all_masks(6).astype(np.float64) @ delta, sizes)
    ref = unary(sizes, delta)
    assert table.non_patchable == [1, 4]
    assert [p.added_depth for p in table.plans] == [p.added_depth for p in ref.plans]
    for a, b in zip(table.plans, ref.plans, strict=True):
        assert a.dp.cost == pytest.approx(b.dp.cost, abs=1e-12)
        for name in ("dp", "first_to_last", "last_to_first", "klpatch"):
            assert not {1, 4} & set(getattr(a, name).patched or [])
    assert sorted(table.lattice_path) == [0, 2, 3, 5]


# ------------------------------------------------------------------ greedy variants, targets, validation


def test_one_shot_differs_from_iterative_under_interaction() -> None:
    # Δ = [−1, −0.9, −0.8], interaction[0] = +5 (layers 0, 1 clash). Iterative: {0} (−1), then {0, 2} (−1.8).
    # One-shot ranks by Δ alone: {0}, then {0, 1} = −1 − 0.9 + 5 = 3.1 at k = 2.
    delta, inter = np.array([-1.0, -0.9, -0.8]), np.array([5.0, 0.0])
    it = pairwise([2, 2, 2], delta, inter)
    one = pairwise([2, 2, 2], delta, inter, greedy_variant="one_shot")
    assert it.klpatch_order == [0, 2, 1] and one.klpatch_order == [0, 1, 2]
    assert it.plans[2].klpatch.cost == pytest.approx(-1.8, abs=1e-12)
    assert one.plans[2].klpatch.cost == pytest.approx(3.1, abs=1e-12)
    assert it.plans[2].dp.patched == [0, 2]
    assert it.plans[2].dp.cost == pytest.approx(-1.8, abs=1e-12)


def test_param_budgets_become_the_largest_reachable_depth() -> None:
    # n = [3, 3, 2]: reachable r = 0, 1, 2, 3, 4, 5. p_layer = 10, base = 5, student = 5 + 10·3 = 35.
    # 57 → (57 − 5)/10 − 3 = 2.2 → r = 2 (params 55); 95 → 6.0 → r = 5 (the maximum); 35 → r = 0.
    result = run(
        block_sizes=[3, 3, 2],
        cost_model={"kind": "unary", "delta": [1.0, 2.0, 3.0]},
        param_budgets=[57.0, 95.0, 35.0],
        params_per_layer=10.0,
        base_params=5.0,
    )
    assert [(p.added_depth, p.params, p.param_budget) for p in result.plans] == [
        (2, 55.0, 57.0),
        (5, 85.0, 95.0),
        (0, 35.0, 35.0),
    ]
    with pytest.raises(InvalidInput) as err:
        run(
            block_sizes=[3, 3, 2],
            cost_model={"kind": "unary", "delta": [1.0, 2, 3]},
            param_budgets=[29.0],
            params_per_layer=10.0,
        )
    assert err.value.loc == ("param_budgets", 0)


def test_default_targets_thinned_to_1000() -> None:
    # Widths 1, 2, 4, …, 256, 503 (R = 1014) reach every r in 0..1014: 1015 depths, thinned to 1000 (ends kept).
    sizes = [2, 3, 5, 9, 17, 33, 65, 129, 257, 504]
    result = unary(sizes, np.ones(10))
    depths = [p.added_depth for p in result.plans]
    assert len(depths) == 1000 and depths[0] == 0 and depths[-1] == 1014
    assert depths == sorted(set(depths))


def test_copied_teacher_layers_equal_block_sizes() -> None:
    # ℓ = [0, 2, 5, 6] with N = 8 gives n = [2, 3, 1, 2].
    a = run(
        copied_teacher_layers=[0, 2, 5, 6],
        n_teacher_layers=8,
        cost_model={"kind": "unary", "delta": [-1.0, -2, -3, -4]},
    )
    b = run(block_sizes=[2, 3, 1, 2], cost_model={"kind": "unary", "delta": [-1.0, -2, -3, -4]})
    assert a == b
    assert a.non_patchable == [2] and a.teacher_layers == 8


@pytest.mark.parametrize(
    ("params", "loc"),
    [
        ({"block_sizes": [2, 2], "cost_model": {"kind": "table", "loss": [0.0, 1, 2]}}, ("cost_model", "loss")),
        ({"block_sizes": [2] * 17, "cost_model": {"kind": "table", "loss": [0.0] * 4}}, ("cost_model", "loss")),
        ({"block_sizes": [2, 2], "cost_model": {"kind": "unary", "delta": [1.0]}}, ("cost_model", "delta")),
        (
            {"block_sizes": [2, 2], "cost_model": {"kind": "pairwise", "delta": [1.0, 1], "interaction": []}},
            ("cost_model", "interaction"),
        ),
        (
            {"block_sizes": [1, 3], "cost_model": {"kind": "unary", "delta": [1.0, 1]}, "added_depths": [1]},
            ("added_depths", 0),
        ),
        (
            {"block_sizes": [2, 2], "cost_model": {"kind": "unary", "delta": [1.0, 1]}, "added_depths": [3]},
            ("added_depths", 0),
        ),
        (
            {
                "copied_teacher_layers": [0, 2, 2],
                "n_teacher_layers": 4,
                "cost_model": {"kind": "unary", "delta": [1.0] * 3},
            },
            ("copied_teacher_layers",),
        ),
        ({"block_sizes": [600, 600], "cost_model": {"kind": "unary", "delta": [1.0, 1]}}, ("block_sizes",)),
        (
            {"block_sizes": [2, 2], "cost_model": {"kind": "unary", "delta": [1.0, 1]}, "param_budgets": [1e3]},
            ("params_per_layer",),
        ),
    ],
)
def test_inconsistent_inputs_name_the_field(params: dict[str, Any], loc: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidInput) as err:
        run(**params)
    assert err.value.loc == loc


def test_non_finite_costs_rejected_by_the_schema() -> None:
    with pytest.raises(ValidationError):
        PlanParams.model_validate({"block_sizes": [2], "cost_model": {"kind": "unary", "delta": [float("nan")]}})


def test_registry_cost_and_plot() -> None:
    # Largest allowed inputs stay under the budget (all synchronous); the plot draws exactly the result's DP curve.
    assert ESTIMATORS["layer_patching.plan"] is SPEC
    big = PlanParams.model_validate({"block_sizes": [8] * 128, "cost_model": {"kind": "unary", "delta": [0.0] * 128}})
    assert plan_cost(big) == 128 * (1024 - 128 + 1) + 128**2 <= SPEC.sync_budget
    result = unary([2, 3, 2, 3, 3, 3], np.array([-1.243, -0.216, -1.344, -1.606, 0.426, 0.065]))
    fig = SPEC.plot(result)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert list(lines["dp (exact)"].get_xdata()) == list(range(11))
    assert list(lines["dp (exact)"].get_ydata()) == [p.dp.cost for p in result.plans]
    assert list(lines["klpatch"].get_xdata()) == [0, 2, 3, 4, 6, 8, 10]
