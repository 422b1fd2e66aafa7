"""Edge cases of estimators that their family tests leave open: Minner's Newton root in a dense universe, the
codelength count cap, and a MOEA/D run that covers the front exactly at its evaluation cap."""

import math

import numpy as np
import pytest
from pydantic import ValidationError
from scipy.optimize import brentq
from scipy.special import gammaln

from service.errors import InvalidInput
from service.estimators.compression_nml import (
    MAX_NML_N,
    MAX_TOTAL_COUNT,
    CodelengthParams,
    codelength,
    codelength_cost,
)
from service.estimators.minhash_minner import MinnerObservation, _score, minner_newton, mle
from service.estimators.moead import OmmRuntimeParams, omm_runtime
from service.estimators.moead_sim import omm_runtimes
from service.registry import ESTIMATORS, no_progress


def _dense_observation(rng: np.random.Generator) -> MinnerObservation:
    """Query X and set Y in a universe of D items with n_x + n_y > D, K random permutations as hashes."""
    universe = int(rng.integers(40, 400))
    n_x = int(rng.integers(universe // 3, universe))
    n_y = int(rng.integers(max(1, universe - n_x + 1), universe + 1))
    low, high = n_x + n_y - universe, min(n_x, n_y)
    inter = int(rng.integers(low, high + 1))
    perm = rng.permutation(universe)
    x = perm[:n_x]
    y = np.concatenate([perm[:inter], perm[n_x : n_x + n_y - inter]])
    k = int(rng.integers(16, 257))
    h = rng.permuted(np.tile(np.arange(universe), (k, 1)), axis=1)  # h_k: a bijection of [D]
    hy = h[:, y]
    ranks = hy.min(axis=1)
    argmin = y[hy.argmin(axis=1)]
    in_x = np.zeros(universe, dtype=bool)
    in_x[x] = True
    minner = (h[:, x] < ranks[:, None]).sum(axis=1)
    return MinnerObservation(in_x[argmin], minner, ranks, n_x, n_y, universe)


def test_minner_newton_is_the_root_of_its_score_in_a_dense_universe():
    rng = np.random.default_rng(16)
    interior = 0
    for _ in range(300):
        obs = _dense_observation(rng)
        assert obs.n_x + obs.n_y > obs.universe
        v = minner_newton(obs)
        lo, hi = float(obs.n_x + obs.n_y - obs.universe), float(min(obs.n_x, obs.n_y))
        assert lo <= v <= hi
        if obs.c == 0:
            assert v == 0.0
            continue
        r_sum = float(obs.ranks.sum())
        eps = 1e-9 * max(1.0, hi)
        if hi - lo <= 2 * eps:  # Y or X is the whole universe: the intersection is forced
            assert v == hi
            continue
        if v == hi:  # the score is still positive next to hi: the likelihood increases up to hi
            assert _score(obs, hi - eps, r_sum)[0] >= 0
            continue
        if lo > 0 and _score(obs, lo + eps, r_sum)[0] <= 0:  # X ∪ Y fills the universe: the maximum is at lo
            assert v == pytest.approx(lo, rel=0, abs=2 * eps)
            continue
        interior += 1
        score, slope = _score(obs, v, r_sum)
        assert abs(score) <= 1e-9 * slope * max(1.0, v)  # the Newton step left at v is below 1e-9 relative
        # an independent root on the open interval (lo, hi) (the score runs from +inf at lo to -inf at hi)
        root = brentq(lambda t, o=obs, r=r_sum: _score(o, t, r)[0], lo + eps, hi - eps, xtol=1e-13, rtol=1e-14)
        assert v == pytest.approx(root, rel=1e-9, abs=1e-9)
    assert interior > 200  # most cases exercise the Newton iteration, not the shortcuts


def _lbinom(n, j):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((j < 0) | (j > n), -np.inf, gammaln(n + 1) - gammaln(j + 1) - gammaln(n - j + 1))


def _exact_loglik(obs: MinnerObservation, vs: np.ndarray) -> np.ndarray:
    """sum_k log P(c_k, m_k, r_k | v): Y holds v of X's n_x items and n_y - v others, all above rank r_k except its
    argmin (in X when c_k = 1), none of X's m_k items below r_k (Ahle, "Maximum Likelihood")."""
    ck, mk, rk = (np.asarray(a, dtype=np.int64)[:, None] for a in (obs.collided, obs.minner, obs.ranks))
    above_outside_x = obs.universe - rk - (1 - ck) - (obs.n_x - mk)
    per_hash = _lbinom(obs.n_x - mk - ck, vs - ck) + _lbinom(above_outside_x, obs.n_y - vs - (1 - ck))
    ll = per_hash.sum(axis=0)
    prior = obs.k * (_lbinom(obs.n_x, vs) + _lbinom(obs.universe - obs.n_x, obs.n_y - vs))
    return np.where(np.isfinite(prior), ll - np.where(np.isfinite(prior), prior, 0.0), -np.inf)  # v impossible


def test_mle_is_the_exact_likelihood_argmax_in_a_dense_universe():
    """Dense universes put the stored minimum far up the ranks, (r_k - m_k)/L(v) > 1/2: the branch that evaluates
    log(L / (L - r_k + m_k)) without cancellation; the argmax must equal the brute-force one (ties: smallest v)."""
    rng = np.random.default_rng(17)
    far = 0
    for _ in range(40):
        obs = _dense_observation(rng)
        vs = np.arange(0, min(obs.n_x, obs.n_y) + 1)
        ll = _exact_loglik(obs, vs)
        assert mle(obs) == float(np.argmax(ll))
        assert mle(obs, chunk=7 * obs.k) == mle(obs)  # the scan in chunks of 7 values of v
        lv = obs.universe - obs.n_x - obs.n_y + vs[np.isfinite(ll)] + 1
        far += bool(((obs.ranks - obs.minner)[:, None] > 0.5 * lv[None, :]).any())
    assert far > 20


def test_codelength_accepts_counts_summing_to_exactly_the_cap():
    half = MAX_TOTAL_COUNT // 2
    at_cap = CodelengthParams(counts=[half, MAX_TOTAL_COUNT - half], method="ml")
    out = codelength(at_cap, no_progress)
    assert out.n == MAX_TOTAL_COUNT
    assert out.codelength_nats == pytest.approx(MAX_TOTAL_COUNT * math.log(2), rel=1e-12)  # two equal halves
    bayes = codelength(CodelengthParams(counts=[half, MAX_TOTAL_COUNT - half], method="bayes"), no_progress)
    kt = gammaln(MAX_TOTAL_COUNT + 1.0) - gammaln(1.0) - 2 * (gammaln(half + 0.5) - gammaln(0.5))
    assert bayes.codelength_nats == pytest.approx(kt, rel=1e-12)
    with pytest.raises(InvalidInput) as err:
        codelength(CodelengthParams(counts=[half, MAX_TOTAL_COUNT - half + 1], method="ml"), no_progress)
    assert err.value.loc == ("counts",)
    with pytest.raises(ValidationError):  # one count alone above the cap is a schema error
        CodelengthParams(counts=[MAX_TOTAL_COUNT + 1])


@pytest.mark.slow
def test_nml_codelength_accepts_exactly_its_cap():
    counts = [MAX_NML_N // 2, MAX_NML_N - MAX_NML_N // 2]
    params = CodelengthParams(counts=counts, method="nml")
    assert codelength_cost(params) <= ESTIMATORS["compression.codelength"].hard_cap
    out = codelength(params, no_progress)
    # Rissanen: log C(2, n) = ½ log(n / 2π) + log π + O(n^-1/2); n = 10⁷ leaves a gap far below 1e-3
    assert out.regret_vs_ml_nats == pytest.approx(
        0.5 * math.log(MAX_NML_N / (2 * math.pi)) + math.log(math.pi), abs=1e-3
    )
    with pytest.raises(InvalidInput):
        codelength(CodelengthParams(counts=[counts[0], counts[1] + 1], method="nml"), no_progress)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_moead_run_covering_the_front_exactly_at_max_evals_is_finished(seed):
    n, num_sub = 12, 13
    # one replicate of the default variant: its random stream does not depend on the cap, so the same run
    # finishes at the same evaluation whatever max_evals allows
    free, _ = omm_runtimes(n, num_sub, 1, 1, np.random.default_rng(seed), max_evals=10**6)
    finish = int(free[0])
    assert finish > num_sub
    exact, _ = omm_runtimes(n, num_sub, 1, 1, np.random.default_rng(seed), max_evals=finish)
    assert exact.tolist() == [finish]
    short, _ = omm_runtimes(n, num_sub, 1, 1, np.random.default_rng(seed), max_evals=finish - 1)
    assert short.tolist() == [-1]
    out = omm_runtime(OmmRuntimeParams(n=n, reps=1, seed=seed, max_evals=finish), no_progress)
    assert (out.finished, out.unfinished, out.evals) == (1, 0, [finish])
