"""Monte-Carlo mean, variance and MSE of classical MinHash, C-MinHash-(sigma, pi) and Minner (spec (a) a.3).

Sets are laid out as ``f`` labelled elements: rows ``[0, v)`` are X ∩ Y, ``[v, n_x)`` X only, ``[n_x, f)`` Y only
(for the Jaccard-only case the split of the symmetric difference is irrelevant). Per trial:

* independent hashing (classical): every (hash, element) gets an i.i.d. uniform key — the relative order of a
  set under a uniform random permutation of [D] is uniform, so this is exact in distribution;
* circulant hashing: sigma places the elements at a uniform random f-subset of Z_D (``Generator.choice``), pi is a
  uniform random order of Z_D and hash k (1..K) ranks element i by pi((sigma_i + k) mod D). pi is drawn as i.i.d.
  uniform keys either over all of Z_D (when D <= 4 K f) or over the distinct positions actually used
  (equivalent in distribution to a uniform permutation, cheaper when D is large).

Each estimate is computed from the same keys as the estimators would from sketches: J_hat = mean_k
[argmin over X ∪ Y is in X ∩ Y]; Minner: r_k = min over Y, c_k = [argmin over Y is in X], m_k = #X-only below r_k.
"""

from dataclasses import dataclass

import numpy as np

from service.registry import Progress, no_progress

BLOCK = 1 << 22
"""Elements (trials x hashes x set elements, or trials x D keys) drawn per batch."""


@dataclass(frozen=True)
class SimRow:
    """Empirical summary of one estimator over the trials."""

    estimator: str
    hashing: str
    target: str
    true_value: float
    mean: float
    variance: float
    mse: float


def _dense_rank(flat: np.ndarray) -> tuple[np.ndarray, int]:
    """Index of each value among the sorted distinct values (np.unique's inverse, via one sort)."""
    order = np.argsort(flat, kind="stable")
    s = flat[order]
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    ids = np.cumsum(new) - 1
    inv = np.empty(len(flat), dtype=np.int64)
    inv[order] = ids
    return inv, int(ids[-1]) + 1


def _circulant_keys(rng: np.random.Generator, b: int, f: int, d: int, k: int) -> np.ndarray:
    """Keys ``(b, k, f)``: pi-rank of element i under circulant hash k+1 for b independent (sigma, pi)."""
    pos = np.stack([rng.choice(d, size=f, replace=False) for _ in range(b)])
    q = pos[:, None, :] + np.arange(1, k + 1)[None, :, None]
    q %= d
    if d <= 4 * k * f:
        keys = rng.random((b, d))
        return keys[np.arange(b)[:, None, None], q]
    q += (np.arange(b) * d)[:, None, None]
    inv, n_distinct = _dense_rank(q.reshape(-1))
    return rng.random(n_distinct)[inv].reshape(b, k, f)


def _estimates(keys: np.ndarray, a: int, n_x: int, n_y: int, minner: bool) -> dict[str, np.ndarray]:
    """Per-trial Jaccard estimate and (optionally) Minner T_v from keys ``(b, K, f)``."""
    k = keys.shape[1]
    out = {"jaccard": (keys.argmin(axis=2) < a).mean(axis=1)}
    if minner:
        ky = np.concatenate([keys[:, :, :a], keys[:, :, n_x:]], axis=2)
        r = ky.min(axis=2)
        c = (ky.argmin(axis=2) < a).sum(axis=1)
        m = (keys[:, :, a:n_x] < r[:, :, None]).sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            t1 = np.where(c > 0, c * n_x / np.maximum(c + m, 1), 0.0)
        out["minner"] = np.minimum(t1, c * n_y / k)
    return out


def simulate(
    intersection: int,
    union: int,
    universe: int,
    num_perm: int,
    trials: int,
    seed: int,
    sizes: tuple[int, int] | None = None,
    progress: Progress = no_progress,
) -> list[SimRow]:
    """Empirical mean, variance (ddof=1) and MSE of each estimator over ``trials`` seeded trials."""
    rng = np.random.default_rng(seed)
    a, f, d, k = intersection, union, universe, num_perm
    n_x, n_y = sizes if sizes is not None else (a + (f - a) // 2, f - (f - a) // 2)
    minner = sizes is not None
    per = k * f + (d if d <= 4 * k * f else 0)
    batch = max(1, BLOCK // per)
    est: dict[str, list[np.ndarray]] = {}
    for t0 in range(0, trials, batch):
        b = min(batch, trials - t0)
        for hashing, keys in (
            ("independent", rng.random((b, k, f))),
            ("circulant", _circulant_keys(rng, b, f, d, k)),
        ):
            for name, vals in _estimates(keys, a, n_x, n_y, minner).items():
                est.setdefault(f"{name}/{hashing}", []).append(vals)
        progress((t0 + b) / trials, f"{t0 + b}/{trials} trials")
    jac = a / f
    rows = []
    for key, label in (("jaccard/independent", "classic"), ("jaccard/circulant", "cminhash_sigma_pi")):
        rows.append(_row(label, key.split("/")[1], "jaccard", jac, np.concatenate(est[key])))
    if minner:
        s = n_x + n_y
        for hashing in ("independent", "circulant"):
            tv = np.concatenate(est[f"minner/{hashing}"])
            rows.append(_row("minner", hashing, "intersection", float(a), tv))
            rows.append(_row("minner", hashing, "jaccard", jac, tv / (s - tv)))
    return rows


def _row(estimator: str, hashing: str, target: str, truth: float, vals: np.ndarray) -> SimRow:
    """Summary of one estimator's per-trial values."""
    var = float(vals.var(ddof=1)) if len(vals) > 1 else 0.0
    return SimRow(estimator, hashing, target, truth, float(vals.mean()), var, float(np.mean((vals - truth) ** 2)))
