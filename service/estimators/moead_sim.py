"""MOEA/D on OneMinMax: exact count-level simulator and a bit-level reference (docs/moead.md).

OneMinMax f(x) = (n − |x|₁, |x|₁). The MOEA/D keeps N+1 subproblem solutions x_0..x_N with weights
w_i = i/N, ideal point z* = (n, n) and, in integer form (scaled by N so all comparisons are exact),

    tchebycheff:   G_i(k) = max(i·k, (N − i)·(n − k))          (optimum k = n(N − i)/N)
    weighted_sum:  G_i(k) = i·k + (N − i)·(n − k)

with k = |x|₁ (minimised). Init: N+1 uniform random strings (N+1 evaluations). Each generation visits
i = 0..N in order: the parent (x_i, or uniform from B(i) = {j : |i − j| ≤ r}) is mutated into y (one
evaluation), |y|₁ joins the archive, and every j ∈ B(i) with G_j(y) ≤ G_j(x_j) (tie rule "<=", or "<")
takes x_j ← y at once (steady state). Runtime = the evaluation at which the archive first holds all n+1
values of |x|₁.

Everything depends on x only through k = |x|₁ and mutation is invariant under bit permutations, so the
process lumps exactly to the count vector (k_0..k_N) plus the archive. The simulator runs R
replicates in lockstep, each subproblem step being a handful of numpy calls on R-length arrays:

* standard bit mutation: y = k − Bin(k, 1/n) + Bin(n − k, 1/n) is drawn by inversion from an integer
  CDF table (resolution 2⁻⁵³, the resolution of a double uniform): one ``searchsorted`` of k·2⁵³ + U
  in the concatenated per-k CDFs;
* power-law mutation (RECONSTRUCTED as in Doerr, Krejca & Weeks 2024): flip exactly ℓ distinct uniform
  bits, P(ℓ) ∝ ℓ^(−β) on 1..n, so y = k + ℓ − 2H with H ~ Hypergeometric(k ones, n − k zeros, ℓ draws);
* state word per (subproblem, replicate): E = G·2⁴¹ + t·2¹¹ + k (uint64, bit 10 zero), t a step clock
  that decreases over time for "<=" (ties go to the newer y) and increases for "<" (ties keep the old
  x_j). Then the replacement over the whole neighbourhood is one ``np.minimum``: min(E_j, E_j(y))
  is exactly "replace iff G_j(y) ≤ G_j(x_j)" (resp. "<").
* archive updates are batched per generation: the mutants of a generation are buffered and the first
  evaluation that completes an archive is located exactly afterwards.
"""

from collections.abc import Callable
from functools import lru_cache
from time import monotonic
from typing import Literal

import numpy as np
from scipy.stats import binom

Parent = Literal["own", "uniform"]
TieRule = Literal["<=", "<"]
Scalarization = Literal["tchebycheff", "weighted_sum"]
Mutation = Literal["standard_bit", "power_law"]

K_BITS = 11
"""Low bits of a state word holding k (bits 0..9; bit 10 stays zero so ``E << 53`` is exactly k·2⁵³)."""
T_BITS = 30
"""Bits of the step clock; max_evals ≤ 10⁹ < 2³⁰ steps."""
G_SHIFT = K_BITS + T_BITS
U_BITS = 53
T_MAX = (1 << T_BITS) - 1
CHUNK_ELEMENTS = 1 << 18
"""Random numbers drawn per batch (generations × subproblems × replicates), at most."""
MIN_CHUNK_GENERATIONS = 8
"""First batch length in generations; later batches are as long as the run so far (geometric growth),
so draws left unused when a batch ends early (all done, or half the replicates done) stay below half."""
PROGRESS_SECONDS = 0.5


def scalar_table(n: int, num_sub: int, scalarization: Scalarization) -> np.ndarray:
    """Integer subproblem values G[j, k] (N·g_j, minimised), shape (N+1, n+1)."""
    big_n = num_sub - 1
    j = np.arange(num_sub, dtype=np.int64)[:, None]
    k = np.arange(n + 1, dtype=np.int64)[None, :]
    if scalarization == "tchebycheff":
        return np.maximum(j * k, (big_n - j) * (n - k))
    return j * k + (big_n - j) * (n - k)


def standard_bit_pmf(n: int) -> np.ndarray:
    """P[k, y] = P(|y|₁ = y | |x|₁ = k) under standard bit mutation (rate 1/n): Bin(k, 1−p) + Bin(n−k, p)."""
    p = 1.0 / n
    a = np.arange(n + 1)
    k = a[:, None]
    keep_ones = binom.pmf(a[None, :], k, 1.0 - p)
    new_ones = binom.pmf(a[None, :], n - k, p)
    out = np.empty((n + 1, n + 1))
    for kk in range(n + 1):
        out[kk] = np.convolve(keep_ones[kk, : kk + 1], new_ones[kk, : n - kk + 1])
    return out


@lru_cache(maxsize=16)
def inversion_tables(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated integer CDFs for standard bit mutation: (keys, values).

    Block k holds k·2⁵³ + C_k(y) for the y with C_k(y) > C_k(y−1), C_k = round(2⁵³·CDF); then for
    U uniform on [0, 2⁵³), ``values[searchsorted(keys, k·2⁵³ + U, side="right")]`` is
    min{y : C_k(y) > U}, i.e. y drawn from the pmf rounded to multiples of 2⁻⁵³.
    """
    pmf = standard_bit_pmf(n)
    scale = float(1 << U_BITS)
    keys: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for k in range(n + 1):
        c = np.minimum(np.rint(np.cumsum(pmf[k]) * scale), scale).astype(np.uint64)
        c[-1] = 1 << U_BITS
        keep = np.flatnonzero(np.diff(c, prepend=np.uint64(0)) > 0)
        keys.append(c[keep] + np.uint64(k << U_BITS))
        values.append(keep.astype(np.intp))
    out = np.concatenate(keys), np.concatenate(values)
    for table in out:
        table.flags.writeable = False  # cached and shared between calls
    return out


def power_law_weights(n: int, beta: float) -> np.ndarray:
    """P(ℓ) ∝ ℓ^(−β) for ℓ = 1..n (index ℓ − 1)."""
    w = np.arange(1, n + 1, dtype=np.float64) ** (-beta)
    return w / w.sum()


def _neighbourhoods(num_sub: int, r: int) -> list[tuple[int, int]]:
    """B(i) = [max(0, i − r), min(N, i + r)] as half-open (lo, hi)."""
    return [(max(0, i - r), min(num_sub, i + r + 1)) for i in range(num_sub)]


def _completion_steps(buf: np.ndarray, seen: np.ndarray, idx: np.ndarray, n: int) -> np.ndarray:
    """For replicates ``idx`` whose archive completes within ``buf`` (steps × replicates): the step index.

    ``seen`` is the archive before the batch; the completing step is the latest first occurrence of a
    value missing before it.
    """
    vals = buf[:, idx]
    first = np.full((idx.size, n + 1), buf.shape[0], dtype=np.intp)
    cols = np.broadcast_to(np.arange(idx.size), vals.shape)
    steps = np.broadcast_to(np.arange(buf.shape[0])[:, None], vals.shape)
    np.minimum.at(first, (cols, vals), steps)
    return np.where(seen[idx], -1, first).max(axis=1)


def _archive_batch(
    buf: np.ndarray,
    seen: np.ndarray,
    active: np.ndarray,
    rows: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Merge a batch of evaluated |y|₁ (steps × width) into the archive; return (completed, step)."""
    fresh = ~seen[rows, buf]
    if not fresh.any():
        return np.empty(0, np.intp), np.empty(0, np.intp)
    before = seen.copy()
    seen[rows, buf] = True
    done = np.flatnonzero(active & seen.all(axis=1))
    if done.size == 0:
        return done, done
    return done, _completion_steps(buf, before, done, n)


def omm_runtimes(
    n: int,
    num_sub: int,
    r: int,
    reps: int,
    rng: np.random.Generator,
    *,
    parent: Parent = "own",
    tie_rule: TieRule = "<=",
    scalarization: Scalarization = "tchebycheff",
    mutation: Mutation = "standard_bit",
    beta: float = 1.5,
    max_evals: int,
    progress: Callable[[float], None] | None = None,
) -> tuple[np.ndarray, int]:
    """Count-level MOEA/D on OneMinMax for ``reps`` replicates.

    Returns (evals per replicate, −1 where the archive was not complete after ``max_evals``
    evaluations; replicate-evaluations simulated, the work done: replicates run in lockstep and a
    finished one is dropped at the end of its batch).
    """
    if max_evals + num_sub > T_MAX:
        raise ValueError("max_evals exceeds the step clock")
    g_tab = scalar_table(n, num_sub, scalarization).astype(np.uint64) << np.uint64(G_SHIFT)
    enc = g_tab | np.arange(n + 1, dtype=np.uint64)[None, :]
    newer_smaller = tie_rule == "<="
    hoods = _neighbourhoods(num_sub, r)
    sizes = np.array([hi - lo for lo, hi in hoods])
    lows = np.array([lo for lo, _ in hoods])
    if mutation == "standard_bit":
        keys, values = inversion_tables(n)
    else:
        ell_p = power_law_weights(n, beta)

    offsets = np.arange(num_sub, dtype=np.uint64) << np.uint64(K_BITS)

    def clocks(first_step: int) -> np.ndarray:
        if newer_smaller:
            return np.uint64((T_MAX - first_step) << K_BITS) - offsets
        return np.uint64(first_step << K_BITS) + offsets

    evals = np.full(reps, -1, dtype=np.int64)
    cols = np.arange(reps)
    k0 = rng.binomial(n, 0.5, size=(num_sub, reps))
    state = np.take_along_axis(enc, k0, axis=1) + clocks(0)[0]
    seen = np.zeros((reps, n + 1), dtype=bool)
    done, step = _archive_batch(k0, seen, np.ones(reps, bool), np.arange(reps), n)
    evals[done] = step + 1
    base = num_sub
    work = 0
    last_report = monotonic()
    shift = np.uint64(U_BITS)
    k_mask = np.uint64(1023)
    while base < max_evals:
        active = evals[cols] < 0
        if not active.any():
            break
        if not active.all():
            cols, state, seen = cols[active], np.ascontiguousarray(state[:, active]), seen[active]
        width = cols.size
        rows = np.arange(width)
        gens = max(
            1,
            min(
                CHUNK_ELEMENTS // (num_sub * width),
                -(-(max_evals - base) // num_sub),
                max(MIN_CHUNK_GENERATIONS, base // num_sub),
            ),
        )
        if mutation == "standard_bit":
            draws = rng.bit_generator.random_raw((gens, num_sub, width)) >> np.uint64(64 - U_BITS)
        else:
            draws = rng.choice(np.arange(1, n + 1), size=(gens, num_sub, width), p=ell_p)
        if parent == "uniform":
            picks = lows[None, :, None] + rng.integers(0, sizes[None, :, None], size=(gens, num_sub, width))
        buf = np.empty((num_sub, width), dtype=np.intp)
        steps = [
            (i, state[i], buf[i], enc[lo:hi], state[lo:hi], np.empty((hi - lo, width), np.uint64))
            for i, (lo, hi) in enumerate(hoods)
        ]
        for g in range(gens):
            clk = clocks(base)
            row_draws = draws[g]
            for i, word, y, enc_b, state_b, cand in steps:
                if parent == "uniform":
                    word = state[picks[g, i], rows]
                if mutation == "standard_bit":
                    key = word << shift
                    key |= row_draws[i]
                    values.take(keys.searchsorted(key, side="right"), out=y)
                else:
                    k = (word & k_mask).astype(np.intp)
                    ell = row_draws[i]
                    np.subtract(k + ell, 2 * rng.hypergeometric(k, n - k, ell), out=y)
                enc_b.take(y, axis=1, out=cand)
                cand += clk[i]
                np.minimum(state_b, cand, out=state_b)
            active = evals[cols] < 0
            done, step = _archive_batch(buf, seen, active, rows, n)
            evals[cols[done]] = base + step + 1
            work += width * num_sub
            base += num_sub
            if 2 * (active.sum() - done.size) <= width:
                break
        if progress is not None and monotonic() - last_report > PROGRESS_SECONDS:
            last_report = monotonic()
            progress(max(float(np.mean(evals >= 0)), base / max_evals))
    evals[evals > max_evals] = -1
    return evals, work


def omm_runtime_bits(
    n: int,
    num_sub: int,
    r: int,
    rng: np.random.Generator,
    *,
    parent: Parent = "own",
    tie_rule: TieRule = "<=",
    scalarization: Scalarization = "tchebycheff",
    mutation: Mutation = "standard_bit",
    beta: float = 1.5,
    max_evals: int,
) -> int:
    """Bit-level reference: one MOEA/D run on explicit bit strings, the algorithm above verbatim.

    Slow (one Python step per evaluation); it exists so tests can check the count-level simulator
    against it in distribution. Returns the runtime, or −1 if the archive is incomplete at ``max_evals``.
    """
    g_tab = scalar_table(n, num_sub, scalarization)
    xs = rng.random((num_sub, n)) < 0.5
    archive: set[int] = set()
    evals = 0
    for x in xs:
        evals += 1
        archive.add(int(x.sum()))
        if len(archive) == n + 1:
            return evals
    ell_p = power_law_weights(n, beta) if mutation == "power_law" else None
    while evals < max_evals:
        for i in range(num_sub):
            lo, hi = max(0, i - r), min(num_sub - 1, i + r)
            j = i if parent == "own" else int(rng.integers(lo, hi + 1))
            if ell_p is None:
                flips = rng.random(n) < 1.0 / n
            else:
                flips = np.zeros(n, dtype=bool)
                flips[rng.choice(n, size=rng.choice(n, p=ell_p) + 1, replace=False)] = True
            y = xs[j] ^ flips
            ky = int(y.sum())
            evals += 1
            archive.add(ky)
            if len(archive) == n + 1:
                return evals if evals <= max_evals else -1
            for jj in range(lo, hi + 1):
                gy, gx = g_tab[jj, ky], g_tab[jj, int(xs[jj].sum())]
                if gy < gx or (tie_rule == "<=" and gy == gx):
                    xs[jj] = y
            if evals >= max_evals:
                return -1
    return -1
