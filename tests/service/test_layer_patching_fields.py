"""layer_patching.plan: M and R from copied teacher layers, the chain costs of a measured table with a
non-patchable layer, and the reconstructed lists (docs/layer_patching.md)."""

import itertools

import pytest

from service.estimators.layer_patching import PlanParams, PlanResult, plan
from service.registry import no_progress
from tests.service.field_paths import names_a_field

# M = 3 student layers; bit i of the index set means layer i is patched (index 0, the student, is not in any chain
# sum). Asymmetric on purpose.
LOSS = [0.25, 0.9, 5.0, 0.4, -1.2, 0.7, -0.3, 2.0]


def unary(delta: list[float]) -> dict:
    return {"kind": "unary", "delta": delta}


def test_layer_count_and_maximum_added_depth_from_copied_teacher_layers() -> None:
    """ℓ = [0, 2, 3, 6] of a 9-layer teacher: blocks n = [2, 1, 3, 3], so M = 4, R = Σ(n_i − 1) = 5 (≠ Σ n_i = 9);
    the default targets are every reachable depth, 0..5 (layer 1 cannot be patched: w = [1, 0, 2, 2])."""
    params = PlanParams(copied_teacher_layers=[0, 2, 3, 6], n_teacher_layers=9, cost_model=unary([1.0, 2.0, 3.0, 4.0]))
    res = plan(params, no_progress)
    assert res.num_layers == 4
    assert res.max_added_depth == 5
    assert res.teacher_layers == 9 and res.non_patchable == [1]
    reachable = {
        sum(w for w, z in zip([1, 0, 2, 2], bits, strict=True) if z) for bits in itertools.product((0, 1), repeat=4)
    }
    assert [p.added_depth for p in res.plans] == sorted(reachable) == list(range(res.max_added_depth + 1))


def test_chain_costs_of_a_table_with_a_non_patchable_layer() -> None:
    """Blocks [2, 1, 2]: layer 1 is not patchable, so every chain runs over layers {0, 2} only. Σ_k loss[S_k]:
    first-to-last {0} then {0, 2}: loss[1] + loss[5] = 0.9 + 0.7 = 1.6; last-to-first {2} then {0, 2}:
    loss[4] + loss[5] = −1.2 + 0.7 = −0.5; the greedy picks {2} (−1.2 < 0.9), so it equals last-to-first, and the
    lattice path, the better of the two orders, is −0.5 too."""
    res = plan(PlanParams(block_sizes=[2, 1, 2], cost_model={"kind": "table", "loss": LOSS}), no_progress)
    assert res.chain_costs.first_to_last == pytest.approx(0.9 + 0.7, abs=1e-15)
    assert res.chain_costs.last_to_first == pytest.approx(-1.2 + 0.7, abs=1e-15)
    assert res.chain_costs.klpatch == res.chain_costs.lattice == pytest.approx(-0.5, abs=1e-15)
    full = plan(PlanParams(block_sizes=[2, 2, 2], cost_model={"kind": "table", "loss": LOSS}), no_progress)
    # all three patchable: first-to-last {0}, {0,1}, {0,1,2} = 0.9 + 0.4 + 2.0
    assert full.chain_costs.first_to_last == pytest.approx(0.9 + 0.4 + 2.0, abs=1e-15)
    assert full.chain_costs.last_to_first == pytest.approx(-1.2 - 0.3 + 2.0, abs=1e-15)


def test_reconstructed_lists_the_plans_and_in_table_mode_the_lattice() -> None:
    """docs/layer_patching.md: the problem, the graphs and KLPatch are RECONSTRUCTED, so the plans and the greedy
    order always, and the lattice path and chain costs in table mode; the counts M, R are not."""
    additive = plan(PlanParams(block_sizes=[2, 2], cost_model=unary([1.0, -1.0])), no_progress)
    assert additive.reconstructed == ["plans", "klpatch_order"]
    table = plan(PlanParams(block_sizes=[2, 1, 2], cost_model={"kind": "table", "loss": LOSS}), no_progress)
    assert table.reconstructed == ["plans", "klpatch_order", "lattice_chain_cost", "lattice_path", "chain_costs"]
    assert all(names_a_field(PlanResult, name) for name in table.reconstructed)
