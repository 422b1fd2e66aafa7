"""C-MinHash-(σ, π) hashing and the Minner estimator simulated directly (Li & Li 2022; Ahle 2020)."""

import numpy as np


def minner_mse_circulant(
    intersection: int, query_size: int, stored_size: int, universe: int, num_perm: int, trials: int, seed: int
) -> dict[str, float]:
    """Empirical mean and MSE of Minner's T_v = min{C n_x/(C+M), C n_y/K} under circulant hashing
    h_k(x) = π((σ(x) + k) mod D), k = 1..K, with fresh σ, π per trial; X = [0, n_x), Y = [n_x − v, n_x − v + n_y)."""
    v, n_x, n_y, d, k = intersection, query_size, stored_size, universe, num_perm
    rng = np.random.default_rng(seed)
    in_x = np.zeros(d, dtype=bool)
    in_x[:n_x] = True
    y = np.arange(n_x - v, n_x - v + n_y)
    x = np.arange(n_x)
    shifts = np.arange(1, k + 1)
    estimates = np.empty(trials)
    for t in range(trials):
        sigma, pi = rng.permutation(d), rng.permutation(d)
        hy = pi[(sigma[y][None, :] + shifts[:, None]) % d]
        hx = pi[(sigma[x][None, :] + shifts[:, None]) % d]
        arg = y[np.argmin(hy, axis=1)]
        r = hy.min(axis=1)
        c = int(in_x[arg].sum())
        m = int((hx < r[:, None]).sum())
        estimates[t] = 0.0 if c == 0 else min(c * n_x / (c + m), c * n_y / k)
    se = float(np.std((estimates - v) ** 2, ddof=1) / np.sqrt(trials))
    return {"mean": float(estimates.mean()), "mse": float(np.mean((estimates - v) ** 2)), "mse_se": se}


def cminhash_jaccard_variance(
    intersection: int, union: int, universe: int, num_perm: int, trials: int, seed: int
) -> dict[str, float]:
    """Empirical mean and variance (ddof = 1) of C-MinHash-(σ, π)'s Jaccard estimate Ĵ = (1/K) Σ_k 1[argmin_k ∈ A ∩ B]
    under h_k(x) = π((σ(x) + k) mod D), k = 1..K, fresh σ, π per trial; the union is [0, f) with A ∩ B = [0, a)."""
    a, f, d, k = intersection, union, universe, num_perm
    rng = np.random.default_rng(seed)
    elements = np.arange(f)
    shifts = np.arange(1, k + 1)
    estimates = np.empty(trials)
    for t in range(trials):
        sigma, pi = rng.permutation(d), rng.permutation(d)
        hashes = pi[(sigma[elements][None, :] + shifts[:, None]) % d]
        estimates[t] = float(np.mean(np.argmin(hashes, axis=1) < a))
    return {"mean": float(estimates.mean()), "variance": float(estimates.var(ddof=1))}
