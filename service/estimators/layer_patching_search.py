"""Patch-set search for layer patching: layered DP, subset-table optimum, greedy and sequential chains, lattice path.

A student layer i stands for a teacher block of n_i layers; patching it adds w_i = n_i − 1 layers (w_i = 0: not
patchable). Costs are minimised. A cost model is unary (cost(S) = Σ_{i∈S} δ_i), pairwise (plus
Σ_j interaction_j·[j ∈ S][j+1 ∈ S]) or a table (cost(S) = loss[Σ_{i∈S} 2^i], M ≤ 16), after "Understanding
Layer Patching in Model Size Interpolation" (ICML 2026 AdaptFM workshop) and Kangaslahti et al., "Boomerang
Distillation Enables Zero-Shot Model Size Interpolation" (ICLR 2026).
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CostModel:
    """One of the three cost models; ``delta``/``interaction`` (unary, pairwise) or ``loss`` (table) is set."""

    kind: str
    widths: np.ndarray
    delta: np.ndarray | None = None
    interaction: np.ndarray | None = None
    loss: np.ndarray | None = None

    @property
    def m(self) -> int:
        return int(self.widths.size)

    def cost(self, z: np.ndarray) -> float:
        """cost(S) of the patch set with indicator ``z`` (bool, length M)."""
        if self.kind == "table":
            return float(self.loss[int(np.dot(z.astype(np.int64), 1 << np.arange(self.m, dtype=np.int64)))])
        total = float(self.delta @ z)
        if self.kind == "pairwise":
            total += float(self.interaction @ (z[:-1] & z[1:]))
        return total

    def candidate_costs(self, z: np.ndarray) -> np.ndarray:
        """cost(S ∪ {i}) for every i (length M); +inf where i ∈ S or layer i is not patchable."""
        if self.kind == "table":
            mask = int(np.dot(z.astype(np.int64), 1 << np.arange(self.m, dtype=np.int64)))
            out = self.loss[mask | (1 << np.arange(self.m, dtype=np.int64))].astype(np.float64)
        else:
            out = self.cost(z) + self.delta
            if self.kind == "pairwise" and self.m > 1:
                zf = z.astype(np.float64)
                out[1:] += self.interaction * zf[:-1]
                out[:-1] += self.interaction * zf[1:]
        out[z | (self.widths == 0)] = np.inf
        return out


@dataclass(frozen=True)
class Chain:
    """A nested sequence ∅ = S_0 ⊂ S_1 ⊂ …: the layer added at each step, and the added depth and cost after it."""

    order: list[int]
    depths: np.ndarray
    costs: np.ndarray
    """Length len(order) + 1: index 0 is the empty set."""

    def at_depth(self, r: int) -> tuple[list[int], float] | None:
        """(sorted patched layers, cost) of the chain state with added depth r, or None if the chain skips r."""
        hit = np.flatnonzero(self.depths == r)
        if hit.size == 0:
            return None
        k = int(hit[0])
        return sorted(self.order[:k]), float(self.costs[k])

    @property
    def area(self) -> float:
        """Σ_{k ≥ 1} cost(S_k): the chain cost the lattice shortest path minimises."""
        return float(self.costs[1:].sum())


def chain_of(model: CostModel, order: list[int]) -> Chain:
    """Costs and added depths of the chain adding ``order`` one layer at a time."""
    z = np.zeros(model.m, dtype=bool)
    costs = [model.cost(z)]
    for i in order:
        z[i] = True
        costs.append(model.cost(z))
    depths = np.concatenate([[0], np.cumsum(model.widths[order])]).astype(np.int64)
    return Chain(order=list(order), depths=depths, costs=np.asarray(costs))


def sequential_chain(model: CostModel, reverse: bool) -> Chain:
    """First-to-last (or last-to-first) patching over the patchable layers, as the Boomerang code does."""
    layers = np.flatnonzero(model.widths > 0).tolist()
    return chain_of(model, layers[::-1] if reverse else layers)


def greedy_chain(model: CostModel, variant: str) -> Chain:
    """KLPatch. ``iterative``: add argmin_i cost(S ∪ {i}) each step; ``one_shot``: order by cost({i}) once.

    Ties go to the lowest index.
    """
    empty = np.zeros(model.m, dtype=bool)
    if variant == "one_shot":
        single = model.candidate_costs(empty)
        order = [int(i) for i in np.argsort(single, kind="stable") if np.isfinite(single[i])]
        return chain_of(model, order)
    z = empty.copy()
    order: list[int] = []
    for _ in range(int((model.widths > 0).sum())):
        i = int(np.argmin(model.candidate_costs(z)))
        z[i] = True
        order.append(i)
    return chain_of(model, order)


def layered_dp(model: CostModel) -> tuple[np.ndarray, np.ndarray]:
    """Exact minimum cost at every added depth r = 0..R by DP over the layered graph (nodes (i, r, z_i)).

    Edge (i−1, r, z') → (i, r + z·w_i, z) costs z·δ_i + z'·z·interaction_{i−1}; one pass, O(M·R) vectorised over r.
    Returns ``best`` (R + 1; +inf where unreachable) and ``patched`` ((R + 1) × M bool, an optimal set per depth,
    the lowest mask Σ 2^i on ties as in :func:`table_dp`).
    """
    widths = model.widths
    m, big_r = model.m, int(widths.sum())
    inter = model.interaction if model.kind == "pairwise" else np.zeros(max(m - 1, 0))
    best0 = np.full(big_r + 1, np.inf)
    best1 = np.full(big_r + 1, np.inf)
    best0[0] = 0.0
    from1_if0 = np.zeros((m, big_r + 1), dtype=bool)
    from1_if1 = np.zeros((m, big_r + 1), dtype=bool)
    for i in range(m):
        w = int(widths[i])
        new0 = np.minimum(best0, best1)
        from1_if0[i] = best1 < best0
        new1 = np.full(big_r + 1, np.inf)
        if w > 0:
            prev0 = best0[: big_r + 1 - w]
            prev1 = best1[: big_r + 1 - w] + (inter[i - 1] if i > 0 else 0.0)
            from1_if1[i, w:] = prev1 < prev0
            new1[w:] = model.delta[i] + np.minimum(prev0, prev1)
        best0, best1 = new0, new1
    best = np.minimum(best0, best1)
    state = best1 < best0
    r = np.arange(big_r + 1)
    patched = np.zeros((big_r + 1, m), dtype=bool)
    for i in range(m - 1, -1, -1):
        patched[:, i] = state
        prev_state = np.where(state, from1_if1[i, r], from1_if0[i, r])
        r = np.where(state, r - widths[i], r)
        state = prev_state
    patched[~np.isfinite(best)] = False
    return best, patched


def mask_bits(masks: np.ndarray, m: int) -> np.ndarray:
    """(len(masks), m) bool matrix of the bits of ``masks``."""
    return ((masks[:, None] >> np.arange(m, dtype=np.int64)) & 1).astype(bool)


def table_dp(model: CostModel) -> tuple[np.ndarray, np.ndarray]:
    """Exact minimum of loss[S] over all patchable subsets S of each added depth (table model), lowest mask on ties.

    Returns ``best`` (R + 1; +inf where unreachable) and ``patched`` ((R + 1) × M bool).
    """
    m = model.m
    big_r = int(model.widths.sum())
    masks = np.arange(1 << m, dtype=np.int64)
    blocked = int(np.dot((model.widths == 0).astype(np.int64), 1 << np.arange(m, dtype=np.int64)))
    masks = masks[(masks & blocked) == 0]
    depth = mask_bits(masks, m).astype(np.int64) @ model.widths
    loss = model.loss[masks]
    order = np.lexsort((masks, loss, depth))
    first = order[np.r_[True, depth[order][1:] != depth[order][:-1]]]
    best = np.full(big_r + 1, np.inf)
    patched = np.zeros((big_r + 1, m), dtype=bool)
    best[depth[first]] = loss[first]
    patched[depth[first]] = mask_bits(masks[first], m)
    return best, patched


def lattice_path(model: CostModel) -> Chain:
    """Shortest ∅ → full path on the Boolean lattice of patchable layers, edge S → S ∪ {i} costing loss[S ∪ {i}].

    dist(S) = loss[S] + min_{i∈S} dist(S \\ {i}), evaluated one popcount level at a time (vectorised over the
    level's subsets and the removed layer); it minimises Σ_k loss[S_k] over nested chains, O(2^M·M).
    """
    layers = np.flatnonzero(model.widths > 0)
    k = layers.size
    nodes = np.arange(1 << k, dtype=np.int32)
    full = np.zeros(1 << k, dtype=np.int64)
    for j, layer in enumerate(layers.tolist()):
        full |= ((nodes >> j) & 1).astype(np.int64) << layer
    node_loss = model.loss[full].astype(np.float64)
    dist = np.full(1 << k, np.inf)
    dist[0] = 0.0
    back = np.zeros(1 << k, dtype=np.int64)
    popcount = np.bitwise_count(nodes)
    bits = np.int32(1) << np.arange(k, dtype=np.int32)
    for level in range(1, k + 1):
        idx = np.flatnonzero(popcount == level)
        # S ^ bit is S \ {i} (level − 1, final) for i ∈ S, and S ∪ {i} (level + 1, still +inf) otherwise.
        cand = dist[idx[:, None] ^ bits]
        j = np.argmin(cand, axis=1)
        dist[idx] = cand[np.arange(idx.size), j] + node_loss[idx]
        back[idx] = j
    order: list[int] = []
    node = (1 << k) - 1
    while node:
        j = int(back[node])
        order.append(int(layers[j]))
        node ^= 1 << j
    return chain_of(model, order[::-1])
