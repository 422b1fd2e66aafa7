"""Exact binomial and Poisson-binomial tails.

The Poisson-binomial law of ``S = Σ_i Bernoulli(p_i)`` is computed exactly (no normal approximation) as the
convolution of one binomial per *distinct* success probability: an MCQ benchmark with mixed option counts
``K_i ∈ {2..26}`` has at most 25 distinct ``p = 1/K``, so ``n = 10⁶`` items cost a handful of convolutions of
windows ``O(σ)`` wide instead of the ``O(n²)`` Bernoulli-by-Bernoulli recursion.

Upper tails use exponential tilting: ``P(S = s) = P_θ(S = s) · exp(-θ s) · M(θ)`` where ``P_θ`` is again a
Poisson-binomial law with ``p_i(θ) = expit(θ + logit p_i)`` and ``θ`` is chosen so that ``E_θ[S] = k``. Under
``P_θ`` the terms that make up ``P(S ≥ k)`` sit at the centre of the distribution, so nothing underflows and
tails down to ~1e-300 keep full relative precision. Each binomial window is cut where its pmf falls below
``e⁻⁸⁰`` (1.8e-35) of its mode; the discarded mass is far below float64 resolution of the result.
"""

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import expit, logsumexp
from scipy.stats import binom, binomtest

from service.errors import Degenerate

_LOG_CUT = 80.0
"""Relative log-threshold below which pmf entries are dropped (e⁻⁸⁰ ≈ 1.8e-35 of the mode)."""


def binom_tail_ge(k: int, n: int, p: float) -> float:
    """One-sided exact binomial ``P(X ≥ k)``, ``X ~ Bin(n, p)`` (6 of 10 at p = 0.25 gives 0.019728)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return float(binom.sf(k - 1, n, p))


def binom_two_sided(k: int, n: int, p: float) -> float:
    """Exact two-sided binomial test (minimum-likelihood method, as ``scipy.stats.binomtest``)."""
    if n == 0:
        return 1.0
    return float(binomtest(int(k), int(n), float(p)).pvalue)


def _grouped(probs: ArrayLike, counts: ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct success probabilities and the number of trials having each."""
    p = np.asarray(probs, dtype=np.float64).ravel()
    m = np.ones_like(p, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64).ravel()
    if p.shape != m.shape:
        raise Degenerate("probs and counts must have the same length", ("counts",))
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise Degenerate("success probabilities must lie in [0, 1]", ("probs",))
    if np.any(m < 0):
        raise Degenerate("counts must be non-negative", ("counts",))
    uniq, inverse = np.unique(p, return_inverse=True)
    return uniq, np.bincount(inverse, weights=m, minlength=uniq.size).astype(np.int64)


def _binom_window(n: int, q: float) -> tuple[int, np.ndarray, float]:
    """Support start, pmf scaled to max 1, and the log of that max, of ``Bin(n, q)`` cut at ``e⁻⁸⁰``."""
    mu = n * q
    sd = np.sqrt(n * q * (1.0 - q))
    lo = int(max(0, np.floor(mu - 15.0 * sd - 60.0)))
    hi = int(min(n, np.ceil(mu + 15.0 * sd + 60.0)))
    x = np.arange(lo, hi + 1)
    lp = binom.logpmf(x, n, q)
    top = float(lp.max())
    keep = np.flatnonzero(lp >= top - _LOG_CUT)
    first, last = int(keep[0]), int(keep[-1])
    return lo + first, np.exp(lp[first : last + 1] - top), top


def _convolve_groups(p: np.ndarray, m: np.ndarray) -> tuple[int, np.ndarray, float]:
    """Law of ``Σ_j Bin(m_j, p_j)`` as (support start, pmf scaled to max 1, log of the scale), trimmed.

    Direct convolution (``np.convolve``), not FFT: a sum of non-negative products keeps every entry's relative
    precision down to the e⁻⁸⁰ cut, while FFT round-off (~1e-16 of the peak) swamped the entries below it, so
    two-sided p-values under ~1e-13 came out wrong or 0 once scipy chose FFT (windows of a few thousand)."""
    dist = np.ones(1)
    offset = 0
    log_scale = 0.0
    for n_j, p_j in zip(m.tolist(), p.tolist(), strict=True):
        lo, pmf, top = _binom_window(n_j, p_j)
        dist = np.convolve(dist, pmf)
        peak = float(dist.max())
        dist /= peak
        log_scale += top + np.log(peak)
        keep = np.flatnonzero(dist >= np.exp(-_LOG_CUT))
        first, last = int(keep[0]), int(keep[-1])
        dist = dist[first : last + 1]
        offset += lo + first
    return offset, dist, log_scale


def poisson_binomial_tail_ge(k: int, probs: ArrayLike, counts: ArrayLike | None = None) -> float:
    """``P(S ≥ k)`` for ``S = Σ Bernoulli(p_i)`` (``counts[j]`` trials with ``probs[j]`` when given).

    Exact law, evaluated by exponential tilting and a convolution of one binomial per distinct ``p``
    (module docstring). For ``p = 1/K`` for ``K = [4, 4, 5, 5, 2]``, ``P(S ≥ 3) = 0.12875``.
    """
    p, m = _grouped(probs, counts)
    shift = int(m[p == 1.0].sum())
    inner = (p > 0.0) & (p < 1.0)
    p, m = p[inner], m[inner]
    k_eff = int(k) - shift
    total = int(m.sum())
    if k_eff <= 0:
        return 1.0
    if k_eff > total:
        return 0.0
    if p.size == 1:
        return binom_tail_ge(k_eff, total, float(p[0]))
    if k_eff == total:
        return float(np.exp(m @ np.log(p)))
    logit = np.log(p) - np.log1p(-p)
    theta = 0.0
    if k_eff > m @ p:
        upper = np.log(total) - float(logit.min()) + 1.0
        theta = brentq(lambda t: float(m @ expit(t + logit)) - k_eff, 0.0, upper, xtol=1e-12)
    q = expit(theta + logit)
    log_mgf = float(m @ (np.log1p(-p) + np.logaddexp(0.0, theta + logit)))
    offset, dist, log_scale = _convolve_groups(q, m)
    s = offset + np.arange(dist.size)
    sel = (s >= k_eff) & (dist > 0.0)
    if not np.any(sel):
        return 0.0
    log_terms = np.log(dist[sel]) + log_scale - theta * s[sel] + log_mgf
    return float(min(1.0, np.exp(logsumexp(log_terms))))


def poisson_binomial_tail_le(k: int, probs: ArrayLike, counts: ArrayLike | None = None) -> float:
    """``P(S ≤ k)``, via ``P(N - S ≥ N - k)`` with the complementary probabilities."""
    p, m = _grouped(probs, counts)
    return poisson_binomial_tail_ge(int(m.sum()) - int(k), 1.0 - p, m)


def poisson_binomial_two_sided(k: int, probs: ArrayLike, counts: ArrayLike | None = None) -> float:
    """Exact two-sided test of ``S = k`` (minimum-likelihood method: sum of ``P(x) ≤ P(k)``).

    A single distinct probability reduces to :func:`binom_two_sided`. When ``k`` lies beyond the computed
    window (``P(k) < e⁻⁸⁰`` relative to the mode) the doubled one-sided tail is returned, an upper bound that
    is itself below 1e-30.
    """
    p, m = _grouped(probs, counts)
    inner = (p > 0.0) & (p < 1.0)
    shift = int(m[p == 1.0].sum())
    pi, mi = p[inner], m[inner]
    k_eff = int(k) - shift
    if pi.size == 0:
        return 1.0 if k_eff == 0 else 0.0
    if k_eff < 0 or k_eff > int(mi.sum()):
        return 0.0
    if pi.size == 1:
        return binom_two_sided(k_eff, int(mi[0]), float(pi[0]))
    offset, dist, log_scale = _convolve_groups(pi, mi)
    idx = k_eff - offset
    if idx < 0 or idx >= dist.size:
        ge = poisson_binomial_tail_ge(k, p, m)
        le = poisson_binomial_tail_le(k, p, m)
        return float(min(1.0, 2.0 * min(ge, le)))
    pmf = dist * np.exp(log_scale)
    return float(min(1.0, pmf[pmf <= pmf[idx] * (1.0 + 1e-7)].sum()))
