"""Target alignment of one-sample BP and PC updates in a deep linear network, draw by draw, with the PC equilibrium
found by least squares over the stacked hidden activities (not through the closed form the estimator uses)."""

from itertools import pairwise

import numpy as np


def draws(seed: int, dims: list[int], count: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """The weights W_l ~ N(0, 1/fan_in) of ``count`` draws, then x and y ~ N(0, I) (one sample each), in the order of
    the documented generator ``default_rng(seed)`` (one chunk): every layer's weights, then x, then y."""
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal((count, o, i)) / np.sqrt(i) for i, o in pairwise(dims)]
    x = rng.standard_normal((count, dims[0], 1))
    y = rng.standard_normal((count, dims[-1], 1))
    return weights, x[:, :, 0], y[:, :, 0]


def _products(weights: list[np.ndarray]) -> list[np.ndarray]:
    """U_l = W_L ⋯ W_{l+1} for l = 1..L (U_L = I)."""
    us = [np.eye(weights[-1].shape[0])]
    for w in weights[:0:-1]:
        us.append(us[-1] @ w)
    return us[::-1]


def equilibrium(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """Activities x_0..x_L minimising F = ½ Σ_l ‖x_l − W_l x_{l−1}‖² with x_0 = x and x_L = y clamped: F is a sum of
    squares of residuals linear in the stacked hidden activities, so they solve one least-squares problem."""
    sizes = [w.shape[0] for w in weights[:-1]]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    rows, rhs = [], []
    for layer, w in enumerate(weights):
        out = w.shape[0]
        block = np.zeros((out, int(offsets[-1])))
        if layer < len(weights) - 1:  # + x_layer+1 (hidden)
            block[:, offsets[layer] : offsets[layer + 1]] += np.eye(out)
            target = np.zeros(out)
        else:
            target = -y
        if layer > 0:  # − W x_layer (hidden)
            block[:, offsets[layer - 1] : offsets[layer]] -= w
        else:
            target = target + w @ x
        rows.append(block)
        rhs.append(target)
    z = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0]
    return [x, *(z[offsets[i] : offsets[i + 1]] for i in range(len(sizes))), y]


def alignments(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray, lr: float) -> dict[str, float]:
    """One draw: TA = cos(Δŷ, e) of BP and PC at learning rate ``lr`` (the network through W + ΔW) and to first order
    (the closed forms Δŷ_BP = lr Σ_l ‖a_{l−1}‖² U_l U_lᵀ e and Δŷ_PC = lr Σ_l (x_{l−1}ᵀa_{l−1}) U_l U_lᵀ S⁻¹ e,
    S = Σ_l U_l U_lᵀ); ``pc_optimal_first_order``: the first-order PC change with η_l = lr/(x_{l−1}ᵀa_{l−1}),
    lr Σ_l U_l ε_l from the least-squares errors."""
    acts = [x]
    for w in weights:
        acts.append(w @ acts[-1])
    e = y - acts[-1]
    xs = equilibrium(weights, x, y)
    pc_err = [xs[i + 1] - w @ xs[i] for i, w in enumerate(weights)]
    bp_err = [np.zeros(0)] * len(weights)
    bp_err[-1] = e
    for i in range(len(weights) - 1, 0, -1):
        bp_err[i - 1] = weights[i].T @ bp_err[i]

    def output(deltas: list[np.ndarray]) -> np.ndarray:
        z = x
        for w, dw in zip(weights, deltas, strict=True):
            z = (w + dw) @ z
        return z - acts[-1]

    bp = output([lr * np.outer(d, a) for d, a in zip(bp_err, acts, strict=False)])
    pc = output([lr * np.outer(eps, xi) for eps, xi in zip(pc_err, xs, strict=False)])
    us = _products(weights)
    s = sum(u @ u.T for u in us)
    s_inv_e = np.linalg.solve(s, e)
    bp_first = lr * sum((a @ a) * (u @ (u.T @ e)) for a, u in zip(acts, us, strict=False))
    pc_first = lr * sum((xi @ a) * (u @ (u.T @ s_inv_e)) for xi, a, u in zip(xs, acts, us, strict=False))
    optimal = lr * sum(u @ eps for u, eps in zip(us, pc_err, strict=True))

    def cos(a: np.ndarray) -> float:
        return float(a @ e / (np.linalg.norm(a) * np.linalg.norm(e)))

    return {
        "ta_bp": cos(bp),
        "ta_pc": cos(pc),
        "ta_bp_first_order": cos(bp_first),
        "ta_pc_first_order": cos(pc_first),
        "pc_optimal_first_order": cos(optimal),
        "min_x_dot_a": float(min(xi @ a for xi, a in zip(xs, acts, strict=False))),
        "equilibrium_gap": float(max(np.abs(pc_err[i] - us[i].T @ s_inv_e).max() for i in range(len(us)))),
    }
