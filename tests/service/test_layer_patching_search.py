"""Tests of the patch-set search (``service/estimators/layer_patching_search.py``) against enumeration of every
patch set: the optimal set per depth with its tie rule, the one-layer edge, candidate costs and the greedy's ties."""

import numpy as np
import pytest

from service.estimators.layer_patching_search import (
    CostModel,
    greedy_chain,
    lattice_path,
    layered_dp,
    mask_bits,
    table_dp,
)


def enumerate_optimum(widths: np.ndarray, cost_of_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimum cost per added depth over every patchable subset and its lowest mask, by enumeration."""
    m = widths.size
    big_r = int(widths.sum())
    best = np.full(big_r + 1, np.inf)
    patched = np.zeros((big_r + 1, m), dtype=bool)
    for mask in range(1 << m):
        z = np.array([(mask >> i) & 1 for i in range(m)], dtype=bool)
        if (z & (widths == 0)).any():
            continue
        r = int(widths[z].sum())
        if cost_of_mask[mask] < best[r]:  # masks ascend: a tie keeps the lower one
            best[r], patched[r] = cost_of_mask[mask], z
    return best, patched


def mask_costs(model: CostModel) -> np.ndarray:
    m = model.m
    return np.array([model.cost(np.array([(k >> i) & 1 for i in range(m)], dtype=bool)) for k in range(1 << m)])


def test_layered_dp_is_the_enumerated_optimum_with_the_lowest_mask_on_ties() -> None:
    # Small integer costs make many ties; the DP's set per depth is the lowest mask Σ 2^i among the optimal ones,
    # the same rule as the table DP. Unreachable depths have +inf and an empty set.
    rng = np.random.default_rng(0)
    for _ in range(120):
        m = int(rng.integers(1, 7))
        widths = rng.integers(0, 3, m)
        delta = rng.integers(-1, 2, m).astype(np.float64)
        for kind in ("unary", "pairwise"):
            inter = rng.integers(-1, 2, m - 1).astype(np.float64) if kind == "pairwise" else None
            model = CostModel(kind, widths, delta=delta, interaction=inter)
            best, patched = layered_dp(model)
            want_best, want_patched = enumerate_optimum(widths, mask_costs(model))
            assert best.shape == (int(widths.sum()) + 1,)
            assert patched.dtype == bool
            assert best.tolist() == want_best.tolist()
            assert patched.tolist() == want_patched.tolist()


def test_one_layer_models() -> None:
    # M = 1, n_0 = 3: depth 0 is ∅ (cost 0), depth 2 is {0} (cost δ_0); depth 1 is unreachable.
    for inter in (None, np.zeros(0)):
        model = CostModel(
            "unary" if inter is None else "pairwise", np.array([2]), delta=np.array([1.5]), interaction=inter
        )
        best, patched = layered_dp(model)
        assert best.tolist() == [0.0, np.inf, 1.5]
        assert patched.tolist() == [[False], [False], [True]]


def test_table_dp_is_the_enumerated_optimum_with_the_lowest_mask_on_ties() -> None:
    rng = np.random.default_rng(1)
    for _ in range(60):
        m = int(rng.integers(1, 6))
        widths = rng.integers(0, 3, m)
        loss = rng.integers(0, 3, 1 << m).astype(np.float64)
        best, patched = table_dp(CostModel("table", widths, loss=loss))
        want_best, want_patched = enumerate_optimum(widths, loss)
        assert patched.dtype == bool
        assert best.tolist() == want_best.tolist()
        assert patched.tolist() == want_patched.tolist()


def test_candidate_costs_by_hand() -> None:
    # Table, M = 3, S = {1}: cost(S ∪ {0}) = loss[0b011], cost(S ∪ {2}) = loss[0b110]; layer 1 is in S (+inf).
    loss = np.arange(8, dtype=np.float64) * 10.0
    table = CostModel("table", np.ones(3, dtype=np.int64), loss=loss)
    assert table.candidate_costs(np.array([False, True, False])).tolist() == [30.0, np.inf, 60.0]
    # Pairwise, M = 2, S = {0}: cost(S ∪ {1}) = δ_0 + δ_1 + interaction_0 = 1 + 2 + 4.
    pair = CostModel("pairwise", np.ones(2, dtype=np.int64), delta=np.array([1.0, 2.0]), interaction=np.array([4.0]))
    assert pair.candidate_costs(np.array([True, False])).tolist() == [np.inf, 7.0]
    assert pair.candidate_costs(np.array([False, True])).tolist() == [7.0, np.inf]


def test_one_shot_greedy_breaks_ties_by_the_lowest_index() -> None:
    # Nine unit blocks with δ = 1, 0, 1, 0, …: cost({i}) ties among the odd and among the even layers.
    delta = np.array([1.0, 0.0] * 4 + [1.0])
    chain = greedy_chain(CostModel("unary", np.ones(9, dtype=np.int64), delta=delta), "one_shot")
    assert chain.order == [1, 3, 5, 7, 0, 2, 4, 6, 8]


@pytest.mark.parametrize("m", [1, 3])
def test_lattice_path_without_patchable_layers_is_empty(m: int) -> None:
    chain = lattice_path(CostModel("table", np.zeros(m, dtype=np.int64), loss=np.arange(1 << m, dtype=np.float64)))
    assert chain.order == []
    assert chain.area == 0.0


def test_mask_bits_by_hand() -> None:
    bits = mask_bits(np.array([0, 5, 6], dtype=np.int64), 3)
    assert bits.dtype == bool
    assert bits.tolist() == [[False, False, False], [True, False, True], [False, True, True]]
