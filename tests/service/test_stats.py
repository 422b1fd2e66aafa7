"""Shared statistics (service/stats): the checks of docs/scoring.md, "Shared statistics (`service/stats/`)"."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import comb, logsumexp
from scipy.stats import binomtest, bootstrap

from service.errors import Degenerate, InvalidInput
from service.stats import (
    binom_tail_ge,
    binom_two_sided,
    binomial_se,
    bootstrap_mean_ci,
    bootstrap_means,
    check_budget,
    cluster_robust_se,
    factorize,
    holm,
    mcnemar,
    mcnemar_exact,
    mean_stderr,
    paired_bootstrap,
    percentile_interval,
    poisson_binomial_tail_ge,
    poisson_binomial_tail_le,
    poisson_binomial_two_sided,
    wilson,
    wilson_interval,
    z_value,
)
from service.stats.tails import _convolve_groups


def _log_pmf_dp(p: np.ndarray) -> np.ndarray:
    """Reference Poisson-binomial log-pmf by the O(n²) recursion in log space."""
    lp = np.array([0.0])
    for pi in p:
        nxt = np.full(lp.size + 1, -np.inf)
        nxt[:-1] = lp + np.log1p(-pi)
        nxt[1:] = np.logaddexp(nxt[1:], lp + np.log(pi))
        lp = nxt
    return lp


def test_z_value_at_95_percent():
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)  # docs/scoring.md: z = 1.959964


def test_wilson_v6_boundaries_are_clamped():
    # docs/scoring.md: 10/10 = [0.7225, 1], 0/10 = [0, 0.2775] (4 decimals)
    low, high = wilson(10, 10)
    assert low == pytest.approx(0.7225, abs=5e-5) and high == 1.0
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=5e-5)


def test_wilson_spec_examples():
    assert wilson(6, 10) == pytest.approx((0.3127, 0.8318), abs=5e-5)  # docs/scoring.md: the synthetic film set
    assert wilson(3, 10) == pytest.approx((0.108, 0.603), abs=5e-4)  # docs/scoring.md: TELEVAL's Caption Trap figure
    assert wilson(122, 200) == pytest.approx((0.541, 0.675), abs=5e-4)  # docs/scoring.md: 61 % of n = 200


def test_wilson_contains_estimate_and_stays_in_unit_interval():
    rng = np.random.default_rng(0)
    n = rng.integers(1, 500, 2000)
    k = rng.integers(0, n + 1)
    low, high = wilson_interval(k, n, 0.99)
    p = k / n
    assert np.all((low >= 0) & (low <= p) & (p <= high) & (high <= 1))
    narrow_low, narrow_high = wilson_interval(k, n, 0.8)
    assert np.all(narrow_high - narrow_low <= high - low + 1e-15)  # monotone in the confidence level


def test_wilson_rejects_bad_counts():
    with pytest.raises(Degenerate):
        wilson(1, 0)
    with pytest.raises(Degenerate):
        wilson(5, 4)


def test_standard_errors_v11_and_binomial_form():
    assert mean_stderr([1] * 7 + [0] * 3) == pytest.approx(0.152753, abs=1e-6)  # V11
    assert float(binomial_se(6, 10)) == pytest.approx(0.15492, abs=5e-6)  # docs/scoring.md: iid sqrt(p(1-p)/n)
    with pytest.raises(Degenerate):
        mean_stderr([1.0])


def test_binomial_tail_v7_equals_hand_sum():
    hand = sum(comb(10, i) * 0.25**i * 0.75 ** (10 - i) for i in range(6, 11))
    assert binom_tail_ge(6, 10, 0.25) == pytest.approx(hand, rel=1e-12, abs=0)
    assert binom_tail_ge(6, 10, 0.25) == pytest.approx(0.019728, abs=5e-7)  # V7
    assert binom_tail_ge(0, 10, 0.25) == 1.0 and binom_tail_ge(11, 10, 0.25) == 0.0


def test_binomial_scale_checks_from_spec_section_4():
    assert binom_tail_ge(122, 200, 0.25) == pytest.approx(5.7e-27, rel=0.01, abs=0)  # 61% at n=200
    assert binom_two_sided(135, 500, 0.25) == pytest.approx(0.30, abs=0.005)  # 27% at n=500


def _enumerate_tail(p: list[float], k: int) -> float:
    total = 0.0
    for outcome in itertools.product([0, 1], repeat=len(p)):
        if sum(outcome) >= k:
            total += math.prod(pi if o else 1 - pi for pi, o in zip(p, outcome, strict=True))
    return total


def test_poisson_binomial_v8_matches_enumeration():
    p = [1 / k for k in (4, 4, 5, 5, 2)]
    assert poisson_binomial_tail_ge(3, p) == pytest.approx(_enumerate_tail(p, 3), rel=1e-12, abs=0)
    assert poisson_binomial_tail_ge(3, p) == pytest.approx(0.12875, abs=1e-12)  # V8 (exact rational)


def test_poisson_binomial_matches_log_space_recursion_deep_in_the_tail():
    rng = np.random.default_rng(1)
    p = 1.0 / rng.integers(2, 7, 300)
    lp = _log_pmf_dp(p)
    for k in (0, 40, 75, 150, 250, 299, 300):
        exact_ge = np.exp(logsumexp(lp[k:]))
        exact_le = np.exp(logsumexp(lp[: k + 1]))
        # relative 1e-9: tails down to ~1e-174 keep full precision thanks to exponential tilting
        assert poisson_binomial_tail_ge(k, p) == pytest.approx(exact_ge, rel=1e-9, abs=0)
        assert poisson_binomial_tail_le(k, p) == pytest.approx(min(exact_le, 1.0), rel=1e-9, abs=0)


def test_poisson_binomial_grouped_form_and_single_group():
    assert poisson_binomial_tail_ge(30, [0.25, 0.2], [60, 40]) == pytest.approx(
        poisson_binomial_tail_ge(30, [0.25] * 60 + [0.2] * 40), rel=1e-12, abs=0
    )
    assert poisson_binomial_tail_ge(40, [0.25] * 100) == pytest.approx(binom_tail_ge(40, 100, 0.25), rel=1e-12, abs=0)


def test_poisson_binomial_certain_and_impossible_trials():
    # two sure successes, one impossible trial, one fair coin: S = 2 + Bernoulli(1/2)
    p = [1.0, 1.0, 0.0, 0.5]
    assert poisson_binomial_tail_ge(2, p) == 1.0
    assert poisson_binomial_tail_ge(3, p) == pytest.approx(0.5)
    assert poisson_binomial_tail_ge(4, p) == 0.0
    assert poisson_binomial_two_sided(4, p) == 0.0


def test_poisson_binomial_two_sided_minimum_likelihood():
    p = np.array([1 / k for k in (4, 4, 5, 5, 2, 3, 3)])
    pmf = np.exp(_log_pmf_dp(p))
    for k in range(p.size + 1):
        expected = pmf[pmf <= pmf[k] * (1 + 1e-7)].sum()
        assert poisson_binomial_two_sided(k, p) == pytest.approx(min(1.0, expected), rel=1e-10, abs=0)
    assert poisson_binomial_two_sided(135, [0.25] * 500) == pytest.approx(binomtest(135, 500, 0.25).pvalue)


def test_poisson_binomial_rejects_invalid_probabilities():
    with pytest.raises(Degenerate):
        poisson_binomial_tail_ge(1, [0.5, 1.5])


def test_cluster_robust_se_v9_and_relabelling_invariance():
    correct = np.array([1, 1, 0, 1, 0, 1, 0, 0, 1, 1], dtype=float)
    films = ["A"] * 4 + ["B"] * 4 + ["C"] * 2
    codes, names = factorize(films)
    assert names == ["A", "B", "C"]
    assert cluster_robust_se(correct, codes) == pytest.approx(0.21071, abs=5e-6)  # V9
    assert cluster_robust_se(correct, 2 - codes) == pytest.approx(cluster_robust_se(correct, codes), rel=1e-14, abs=0)
    with pytest.raises(Degenerate):
        cluster_robust_se(correct, np.zeros(10, dtype=np.int64))


def test_cluster_robust_se_with_singleton_clusters_is_the_hc1_form():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2, 50).astype(float)
    expected = np.sqrt(50 / 49 * np.sum((x - x.mean()) ** 2)) / 50  # G = N clusters of one item
    assert cluster_robust_se(x, np.arange(50)) == pytest.approx(expected, rel=1e-12, abs=0)


def test_mcnemar_exact_spec_value_and_symmetry():
    assert mcnemar_exact(12, 4) == pytest.approx(0.0768, abs=5e-5)  # docs/scoring.md
    assert mcnemar_exact(4, 12) == mcnemar_exact(12, 4)
    assert mcnemar_exact(0, 0) == 1.0
    a = np.array([1] * 12 + [0] * 4 + [1] * 5)
    b = np.array([0] * 12 + [1] * 4 + [1] * 5)
    assert mcnemar(a, b) == {"b": 12, "c": 4, "p_value": mcnemar_exact(12, 4)}


def test_holm_hand_example_and_monotonicity():
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, max(0.06, 0.04·1) = 0.06
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    rng = np.random.default_rng(3)
    p = rng.random(40)
    adj = holm(p)
    assert np.all(adj >= p) and np.all(adj <= 1)
    order = np.argsort(p)
    assert np.all(np.diff(adj[order]) >= 0)
    assert holm([]).size == 0


def test_bootstrap_budget():
    check_budget(10_000, 5_000)
    with pytest.raises(InvalidInput):
        check_budget(10_001, 1)
    with pytest.raises(InvalidInput) as err:
        check_budget(1_000, 50_001)
    assert err.value.loc == ("params", "n_resamples")


@pytest.mark.parametrize(
    "kind",
    ["binary", "graded", "continuous"],
)
def test_bootstrap_replicates_have_the_bootstrap_standard_error(kind):
    rng = np.random.default_rng(4)
    n = 4_000
    x = {
        "binary": rng.integers(0, 2, n).astype(float),
        "graded": (rng.integers(0, 6, n) / 5.0) ** 2 * 100,
        "continuous": rng.normal(size=n),
    }[kind]
    reps = bootstrap_means(x, 4_000, np.random.default_rng(5))
    expected_sd = x.std() / np.sqrt(n)  # bootstrap law of the mean: sd(x, ddof=0)/sqrt(n)
    # B = 4000: the replicate SD has relative MC error ~1/sqrt(2B) = 1.1%; the mean ~sd/63
    assert reps.std(ddof=1) == pytest.approx(expected_sd, rel=0.05, abs=0)
    assert reps.mean() == pytest.approx(x.mean(), abs=4 * expected_sd / np.sqrt(4_000))


def test_bootstrap_is_reproducible_and_seed_dependent():
    x = np.random.default_rng(6).normal(size=1_000)
    assert bootstrap_mean_ci(x, 500, seed=7) == bootstrap_mean_ci(x, 500, seed=7)
    assert bootstrap_mean_ci(x, 500, seed=7) != bootstrap_mean_ci(x, 500, seed=8)


def test_bootstrap_percentile_interval_agrees_with_scipy():
    x = np.random.default_rng(9).exponential(size=5_000)
    low, high, se = bootstrap_mean_ci(x, 1_000, seed=10)
    ref = bootstrap(
        (x,), np.mean, vectorized=True, method="percentile", n_resamples=1_000, rng=np.random.default_rng(10)
    ).confidence_interval
    # same law; endpoints agree within Monte Carlo error (0.5 SE; scipy 1.17 draws the same indices: equal)
    assert abs(low - ref.low) < 0.5 * se and abs(high - ref.high) < 0.5 * se


def test_percentile_interval_of_known_replicates():
    assert percentile_interval(np.arange(101.0), 0.9) == pytest.approx((5.0, 95.0))


def test_paired_bootstrap():
    rng = np.random.default_rng(11)
    a = rng.normal(size=400)
    same = paired_bootstrap(a, a, 500, seed=1)
    assert same["mean_diff"] == 0.0 and same["ci_low"] == 0.0 and same["ci_high"] == 0.0 and same["p_value"] == 1.0
    shifted = paired_bootstrap(a + 0.5, a + rng.normal(scale=0.1, size=400), 1_000, seed=1)
    assert shifted["ci_low"] > 0.4 and shifted["ci_high"] < 0.6 and shifted["p_value"] < 0.01
    with pytest.raises(Degenerate):
        paired_bootstrap(a, a[:3], 10)


def test_z_value_stays_finite_next_to_one():
    from service.stats import z_value

    assert z_value(0.95) == pytest.approx(1.959963984540054, abs=1e-12)
    z = z_value(0.9999999999999999)  # 0.5 + c/2 rounds to 1.0 here
    assert 8.0 < z < 9.0
    low, high = wilson(5, 10, 0.9999999999999999)
    assert 0.0 <= low < 0.5 < high <= 1.0


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 1.5])
def test_z_value_rejects_levels_outside_the_open_unit_interval(confidence):
    with pytest.raises(Degenerate) as err:
        z_value(confidence)
    assert err.value.loc == ("confidence",)


def test_wilson_rejects_an_empty_sample_and_negative_counts():
    with pytest.raises(Degenerate) as err:
        wilson(0, 0)
    assert err.value.loc == ("n",)
    with pytest.raises(Degenerate) as err:
        wilson(-1, 5)
    assert err.value.loc == ("k",)
    with pytest.raises(Degenerate):
        binomial_se(0, 0)
    # the boundaries are accepted: k = 0 and k = n
    assert wilson(0, 1)[0] == 0.0 and wilson(1, 1)[1] == 1.0


def test_wilson_hand_computation_off_the_boundary():
    z = 1.959963984540054
    k, n = 3, 7
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert wilson(k, n) == pytest.approx((centre - half, centre + half), rel=1e-14, abs=0)


def test_cluster_robust_se_is_unchanged_by_empty_cluster_codes():
    correct = np.array([1, 1, 0, 1, 0, 1, 0, 0, 1, 1], dtype=float)
    codes = np.array([0] * 4 + [1] * 4 + [2] * 2)
    base = cluster_robust_se(correct, codes)
    assert base == pytest.approx(0.21071, abs=5e-6)  # V9: G = 3 films
    gapped = np.where(codes == 2, 5, codes)  # codes 2, 3, 4 unused
    assert cluster_robust_se(correct, gapped) == pytest.approx(base, rel=1e-14, abs=0)
    assert cluster_robust_se(correct, codes, n_clusters=9) == pytest.approx(base, rel=1e-14, abs=0)
    # hand: p̂ = 0.6; residuals c_g − p̂ n_g = 3 − 2.4, 1 − 2.4, 2 − 1.2; sqrt(3/2 · 2.96)/10
    assert base == pytest.approx(math.sqrt(1.5 * (0.6**2 + 1.4**2 + 0.8**2)) / 10, rel=1e-14, abs=0)
    with pytest.raises(Degenerate):  # one non-empty cluster among several codes is still one cluster
        cluster_robust_se(correct, np.full(10, 3), n_clusters=5)
    with pytest.raises(Degenerate):
        cluster_robust_se(correct, codes[:-1])


def test_paired_bootstrap_reports_the_replicates_statistics():
    rng = np.random.default_rng(13)
    a, b = rng.normal(size=300), rng.normal(0.1, 1.0, size=300)
    out = paired_bootstrap(a, b, 400, seed=5, confidence=0.9)
    reps = bootstrap_means(a - b, 400, np.random.default_rng(5))
    assert out["se"] == float(np.std(reps, ddof=1)) and out["se"] != float(np.std(reps, ddof=0))
    assert (out["ci_low"], out["ci_high"]) == percentile_interval(reps, 0.9)
    assert out["p_value"] == min(1.0, 2.0 * min(float(np.mean(reps <= 0)), float(np.mean(reps >= 0))))
    assert out["mean_diff"] == pytest.approx(float(np.mean(a - b)), rel=1e-14, abs=0)
    assert bootstrap_mean_ci(a, 400, seed=5, confidence=0.9) == (
        *percentile_interval(bootstrap_means(a, 400, np.random.default_rng(5)), 0.9),
        float(np.std(bootstrap_means(a, 400, np.random.default_rng(5)), ddof=1)),
    )


def test_bootstrap_replicate_means_are_exact_sums_of_the_values_over_n():
    rng = np.random.default_rng(14)
    n = 320
    graded = rng.choice([0.0, 1.0, 2.0, 5.0], size=n)  # 4 values <= n/32: the multinomial path
    reps = bootstrap_means(graded, 2_000, np.random.default_rng(15))
    sums = reps * n
    assert np.max(np.abs(sums - np.round(sums))) < 1e-9  # a sum of n values from {0, 1, 2, 5}, over n
    assert reps.min() >= 0.0 and reps.max() <= 5.0
    assert reps.mean() == pytest.approx(graded.mean(), abs=4 * graded.std() / np.sqrt(n * 2_000))
    assert reps.std(ddof=1) == pytest.approx(graded.std() / np.sqrt(n), rel=0.08)  # B = 2000: MC error ~1.6%
    binary = np.where(rng.random(n) < 0.3, 0.25, 0.75)  # two values: a + (b - a)·Binomial(n, p̂)/n
    hits = (bootstrap_means(binary, 2_000, np.random.default_rng(16)) - 0.25) / 0.5 * n
    assert np.max(np.abs(hits - np.round(hits))) < 1e-9 and hits.min() >= 0 and hits.max() <= n
    assert bootstrap_means(np.full(5, 2.5), 3, np.random.default_rng(0)).tolist() == [2.5, 2.5, 2.5]
    with pytest.raises(Degenerate):
        bootstrap_means([], 10, np.random.default_rng(0))


def test_deep_tails_keep_their_relative_precision():
    # P(X >= 300 | 300 trials with p = 1/K_i): the product of the p_i, about 1e-174 here
    rng = np.random.default_rng(1)
    p = 1.0 / rng.integers(2, 7, 300)
    exact = math.exp(float(np.log(p).sum()))
    assert exact < 1e-150
    assert poisson_binomial_tail_ge(300, p) == pytest.approx(exact, rel=1e-12, abs=0)
    assert poisson_binomial_tail_ge(300, p) != pytest.approx(3.7e-46, rel=1e-6, abs=0)
    assert binom_tail_ge(200, 200, 0.25) == pytest.approx(0.25**200, rel=1e-12, abs=0)  # 3.9e-121
    assert poisson_binomial_tail_le(0, p) == pytest.approx(math.exp(float(np.log1p(-p).sum())), rel=1e-12, abs=0)


@pytest.mark.parametrize(
    ("call", "loc"),
    [
        (lambda: bootstrap_means([], 10, np.random.default_rng(0)), ("x",)),
        (lambda: cluster_robust_se([1.0, 0.0], [0]), ("clusters",)),
        (lambda: cluster_robust_se([1.0, 0.0], [0, 0]), ("clusters",)),
        (lambda: binomial_se(1, 0), ("n",)),
        (lambda: mean_stderr([1.0]), ("x",)),
        (lambda: mcnemar([1, 0], [1]), ("b",)),
        (lambda: mcnemar_exact(-1, 3), ("b",)),
        (lambda: mcnemar_exact(3, -1), ("b",)),
        (lambda: paired_bootstrap([], [], 10), ("b",)),
        (lambda: poisson_binomial_tail_ge(1, [0.5, 0.5], [1]), ("counts",)),
        (lambda: poisson_binomial_tail_ge(1, [0.5], [-1]), ("counts",)),
        (lambda: poisson_binomial_tail_ge(1, [0.5, float("nan")]), ("probs",)),
        (lambda: poisson_binomial_tail_ge(1, [-0.1]), ("probs",)),
    ],
)
def test_degenerate_inputs_name_their_argument(call, loc):
    with pytest.raises(Degenerate) as err:
        call()
    assert err.value.loc == loc


def test_check_budget_names_the_given_field():
    with pytest.raises(InvalidInput) as err:
        check_budget(10_001, 1, ("params", "B"))
    assert err.value.loc == ("params", "B")
    check_budget(1, 50_000_000)  # B·n exactly at the budget is accepted


def test_defaults_are_the_documented_ones():
    x = np.random.default_rng(20).normal(size=200)
    assert bootstrap_mean_ci(x, 300) == bootstrap_mean_ci(x, 300, seed=0, confidence=0.95)
    assert paired_bootstrap(x, x[::-1], 300) == paired_bootstrap(x, x[::-1], 300, seed=0, confidence=0.95)
    reps = np.arange(1001.0)
    assert percentile_interval(reps) == pytest.approx((25.0, 975.0), rel=1e-12, abs=0)
    assert [v.tolist() for v in wilson_interval([3], [7])] == [[w] for w in wilson(3, 7, 0.95)]
    # a non-default level reaches the interval: z(0.8) = 1.281552
    z = 1.2815515655446004
    centre = (0.5 + z * z / 20) / (1 + z * z / 10)
    half = z / (1 + z * z / 10) * math.sqrt(0.025 + z * z / 400)
    assert wilson(5, 10, 0.8) == pytest.approx((centre - half, centre + half), rel=1e-12, abs=0)


def test_one_and_two_resamples():
    x = np.random.default_rng(21).normal(size=50)
    assert bootstrap_mean_ci(x, 1)[2] == 0.0  # one replicate: no spread
    assert paired_bootstrap(x, x + 1.0, 1)["se"] == 0.0
    reps = bootstrap_means(x, 2, np.random.default_rng(0))
    assert bootstrap_mean_ci(x, 2)[2] == pytest.approx(abs(reps[0] - reps[1]) / math.sqrt(2), rel=1e-12, abs=0)
    d = x - x[::-1]
    reps = bootstrap_means(d, 2, np.random.default_rng(0))
    assert paired_bootstrap(x, x[::-1], 2)["se"] == pytest.approx(abs(reps[0] - reps[1]) / math.sqrt(2), rel=1e-12)


def test_bootstrap_draws_are_the_documented_streams():
    """The three draws of the module docstring, reproduced from the same seed (results are bit-for-bit stable)."""
    n, b = 96, 50
    values = np.array([0.0, 0.5, 1.0])  # m = 3 = n // 32: the multinomial path
    x = np.resize(values, n)
    rng = np.random.default_rng(3)
    expected = (rng.multinomial(n, np.full(3, 1 / 3), size=b) @ values) / n
    assert bootstrap_means(x, b, np.random.default_rng(3)).tolist() == expected.tolist()
    x4 = np.resize(np.array([0.0, 0.5, 1.0, 2.0]), n)  # m = 4 > n // 32: index resampling
    rng = np.random.default_rng(3)
    idx = rng.integers(0, n, size=(b, n), dtype=np.int32)
    assert bootstrap_means(x4, b, np.random.default_rng(3)).tolist() == (np.take(x4, idx).sum(axis=1) / n).tolist()
    # several chunks of 262 144 // n rows each, int32 draws
    y = np.random.default_rng(4).normal(size=1000)
    rng = np.random.default_rng(5)
    chunks = [
        np.take(y, rng.integers(0, 1000, size=(r, 1000), dtype=np.int32)).sum(axis=1) / 1000 for r in (262, 262, 76)
    ]
    assert bootstrap_means(y, 600, np.random.default_rng(5)).tolist() == np.concatenate(chunks).tolist()
    binary = np.resize([0.0, 1.0], 10)
    rng = np.random.default_rng(6)
    assert bootstrap_means(binary, 20, np.random.default_rng(6)).tolist() == (rng.binomial(10, 0.5, 20) / 10).tolist()


def test_small_sample_edges():
    assert float(binomial_se(1, 1)) == 0.0 and float(binomial_se(1, 2)) == pytest.approx(math.sqrt(0.125))
    assert mean_stderr([1.0, 0.0]) == pytest.approx(0.5, rel=1e-12, abs=0)  # sd 0.7071 / sqrt 2
    out = paired_bootstrap([1.0], [0.0], 5)
    assert out["mean_diff"] == 1.0 and out["se"] == 0.0 and out["p_value"] == 0.0
    assert mcnemar_exact(0, 3) == 0.25 and mcnemar_exact(3, 0) == 0.25  # 2 · (1/2)³
    with pytest.raises(Degenerate):
        cluster_robust_se(np.ones((2, 3)), np.zeros((2, 3), dtype=np.int64))  # equal shapes, not vectors


def test_wilson_is_exact_at_zero_and_at_n_and_positive_at_one():
    n = np.arange(1, 3001)
    low, _ = wilson_interval(np.zeros(n.size), n)
    _, high = wilson_interval(n, n)
    assert np.all(low == 0.0) and np.all(high == 1.0)  # the formula leaves 1e-17 off in 40% of these
    z = 1.959963984540054
    centre = (0.1 + z * z / 20) / (1 + z * z / 10)
    half = z / (1 + z * z / 10) * math.sqrt(0.009 + z * z / 400)
    assert wilson(1, 10)[0] == pytest.approx(centre - half, rel=1e-12, abs=0)  # 0.017875
    assert wilson(1, 10)[0] > 0.0178


def _two_binomial_pmf(n1: int, p1: float, n2: int, p2: float) -> np.ndarray:
    """Exact law of Bin(n1, p1) + Bin(n2, p2) by a direct convolution of the two pmfs."""
    from scipy.stats import binom

    return np.convolve(binom.pmf(np.arange(n1 + 1), n1, p1), binom.pmf(np.arange(n2 + 1), n2, p2))


def test_poisson_binomial_two_large_groups_against_a_direct_convolution():
    pmf = _two_binomial_pmf(6000, 0.25, 4000, 0.2)  # mean 2300, sd 41: windows start far from 0
    for k in (2300, 2420, 2600):
        assert poisson_binomial_tail_ge(k, [0.25, 0.2], [6000, 4000]) == pytest.approx(pmf[k:].sum(), rel=1e-9, abs=0)
        assert poisson_binomial_tail_le(k, [0.25, 0.2], [6000, 4000]) == pytest.approx(
            pmf[: k + 1].sum(), rel=1e-9, abs=0
        )
        expected = min(1.0, pmf[pmf <= pmf[k] * (1 + 1e-7)].sum())
        assert poisson_binomial_two_sided(k, [0.25, 0.2], [6000, 4000]) == pytest.approx(expected, rel=1e-9, abs=0)


def test_poisson_binomial_two_groups_small():
    # S = Bernoulli(1/2) + Bernoulli(1/4): P(0, 1, 2) = 3/8, 1/2, 1/8
    assert poisson_binomial_tail_ge(2, [0.5, 0.25]) == pytest.approx(0.125, rel=1e-14, abs=0)
    assert poisson_binomial_tail_ge(1, [0.5, 0.25]) == pytest.approx(0.625, rel=1e-14, abs=0)
    assert poisson_binomial_tail_le(0, [0.5, 0.25]) == pytest.approx(0.375, rel=1e-14, abs=0)
    assert poisson_binomial_two_sided(2, [0.5, 0.25]) == pytest.approx(0.125, rel=1e-12, abs=0)
    assert poisson_binomial_two_sided(0, [0.5, 0.25]) == pytest.approx(0.5, rel=1e-12, abs=0)
    # two sure successes in front: the same law shifted by 2
    assert poisson_binomial_two_sided(4, [1.0, 1.0, 0.5, 0.25]) == pytest.approx(0.125, rel=1e-12, abs=0)
    assert poisson_binomial_two_sided(2, [1.0, 1.0, 0.5, 0.25]) == pytest.approx(0.5, rel=1e-12, abs=0)
    assert poisson_binomial_two_sided(3, [1.0, 1.0, 0.5, 0.25]) == 1.0
    # only certain and impossible trials: S = 2 surely
    assert poisson_binomial_two_sided(2, [1.0, 1.0, 0.0]) == 1.0
    assert poisson_binomial_two_sided(1, [1.0, 1.0, 0.0]) == 0.0
    # a zero count is allowed and contributes nothing
    assert poisson_binomial_tail_ge(1, [0.5, 0.3], [2, 0]) == pytest.approx(0.75, rel=1e-14, abs=0)


def test_poisson_binomial_grouped_lower_tail_and_far_two_sided():
    flat = [0.25] * 60 + [0.2] * 40
    assert poisson_binomial_tail_le(20, [0.25, 0.2], [60, 40]) == pytest.approx(
        poisson_binomial_tail_le(20, flat), rel=1e-12, abs=0
    )
    # k far beyond the computed window: the doubled one-sided tail
    k = 90
    far = poisson_binomial_two_sided(k, [0.25, 0.2], [60, 40])
    assert far == pytest.approx(
        2 * min(poisson_binomial_tail_ge(k, flat), poisson_binomial_tail_le(k, flat)), rel=1e-12, abs=0
    )
    lp = _log_pmf_dp(np.array(flat))
    assert far == pytest.approx(2 * np.exp(logsumexp(lp[k:])), rel=1e-9, abs=0)  # about 1e-41
    assert poisson_binomial_tail_ge(0, [0.25, 0.2, 0.5], [60, 40, 7]) == 1.0  # k <= 0: certain, exactly
    assert poisson_binomial_tail_ge(-3, [1 / k for k in (4, 4, 5, 5, 2)]) == 1.0


@pytest.mark.slow
def test_poisson_binomial_tails_stay_probabilities():
    # the tilted sum can round above 1 (1 + 2e-14 here): every tail is clamped to [0, 1], and k <= 0 is certain
    rng = np.random.default_rng(22)
    for _ in range(200):
        g = int(rng.integers(2, 5))
        p, m = rng.uniform(0.05, 0.95, g), rng.integers(1, 200, g)
        assert poisson_binomial_tail_ge(0, p, m) == 1.0
        for k in (1, 2, 3):
            assert 0.0 < poisson_binomial_tail_ge(k, p, m) <= 1.0
            assert 0.0 < poisson_binomial_tail_le(int(m.sum()) - k, p, m) <= 1.0
    assert poisson_binomial_tail_ge(1, [0.5219664, 0.26003118, 0.60471905], [155, 62, 155]) == 1.0


def test_poisson_binomial_two_sided_far_lower_tail_and_window_edge():
    p, m = [0.25, 0.2], [600, 400]
    lower = 0.75**600 * 0.8**400  # P(S = 0) = P(S <= 0), about 2e-114: far below the computed window
    assert poisson_binomial_two_sided(0, p, m) == pytest.approx(2 * lower, rel=1e-9, abs=0)
    offset, dist, _ = _convolve_groups(np.array(p), np.array(m))
    edge = offset + dist.size  # the first count past the window's upper end
    flat = [0.25] * 600 + [0.2] * 400
    expected = 2 * min(poisson_binomial_tail_ge(edge, flat), poisson_binomial_tail_le(edge, flat))
    assert poisson_binomial_two_sided(edge, p, m) == pytest.approx(expected, rel=1e-12, abs=0)


def test_proportion_statistics_do_not_depend_on_the_input_dtype():
    """Counts and scores are read as float64 whatever their type (float32, small or unsigned ints, Python ints
    beyond int64): every result is bit-for-bit the one of the same values given as float64."""
    k, n = np.array([3, 0, 7, 12, 1]), np.array([7, 5, 7, 40, 3])
    ref_low, ref_high = wilson_interval(k.astype(np.float64), n.astype(np.float64))
    for kk, nn in [(k.astype(np.float32), n.astype(np.float32)), (k.astype(np.int32), n.astype(np.uint16))]:
        low, high = wilson_interval(kk, nn)
        assert low.tolist() == ref_low.tolist() and high.tolist() == ref_high.tolist()
        assert binomial_se(kk, nn).tolist() == binomial_se(k.astype(np.float64), n.astype(np.float64)).tolist()
    big_k, big_n = [2**70, 3], [2**71, 7]  # Python ints past int64: an object array unless converted
    assert [v.tolist() for v in wilson_interval(big_k, big_n)] == [
        v.tolist() for v in wilson_interval([2.0**70, 3.0], [2.0**71, 7.0])
    ]
    assert binomial_se(big_k, big_n).tolist() == binomial_se([2.0**70, 3.0], [2.0**71, 7.0]).tolist()
    x = np.random.default_rng(23).normal(size=1_000).astype(np.float32)  # float32 sums would be off by ~1e-7
    assert mean_stderr(x) == mean_stderr(x.astype(np.float64))


def test_wilson_upper_end_is_clamped_where_the_formula_rounds_above_one():
    # k = n − 1 at n ≈ 2.7e15: centre + half rounds to 1 + 2.2e-16 although the exact bound lies below 1
    z = 1.959963984540054
    n = 2_661_671_053_461_820
    k = n - 1
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert centre + half > 1.0  # the unclamped formula leaves the unit interval
    low, high = wilson(k, n)
    assert high == 1.0 and 0.0 <= low <= high


def _two_binomial_tail_ge(k: int, n1: int, p1: float, n2: int, p2: float) -> float:
    """Exact P(Bin(n1, p1) + Bin(n2, p2) >= k) = Σ_j P(B1 = j) · P(B2 >= k − j), summed in log space."""
    from scipy.stats import binom

    j = np.arange(n1 + 1)
    return float(np.exp(logsumexp(binom.logpmf(j, n1, p1) + binom.logsf(k - j - 1, n2, p2))))


def test_poisson_binomial_tail_of_a_large_benchmark_thirty_sd_out():
    # 2·10⁵ items: mean 45 000, sd 184.4; k = mean + 30 sd has P ≈ 1.27e-192. The tilting parameter must be found
    # precisely: the tilted law is only ~25 sd wide after the e⁻⁸⁰ cut, so θ off by 0.05 moves it past k.
    n1, p1, n2, p2 = 100_000, 0.25, 100_000, 0.2
    for k in (46_864, 50_592):  # 10 and 30 sd
        expected = _two_binomial_tail_ge(k, n1, p1, n2, p2)
        assert poisson_binomial_tail_ge(k, [p1, p2], [n1, n2]) == pytest.approx(expected, rel=1e-9, abs=0)
    assert _two_binomial_tail_ge(50_592, n1, p1, n2, p2) == pytest.approx(1.2728e-192, rel=1e-4, abs=0)


def test_poisson_binomial_two_sided_of_large_groups_stays_exact_far_in_the_tail():
    """Windows of a few thousand entries (10⁵ items per group): each entry of the law keeps its relative
    precision, so the minimum-likelihood p-value is exact to 1e-9 down to ~1e-23 (an FFT convolution, ~1e-16 of
    the peak in absolute error, gave 0.6% off at 8 sd and 0 from 9 sd on)."""
    from scipy.stats import binom

    n1, p1, n2, p2 = 100_000, 0.25, 100_000, 0.2
    lo1, lo2 = 25_000 - 2_800, 20_000 - 2_600  # ±20 sd windows: the mass left out is below 1e-80
    pmf = np.convolve(
        binom.pmf(np.arange(lo1, lo1 + 5_601), n1, p1), binom.pmf(np.arange(lo2, lo2 + 5_201), n2, p2)
    )  # direct sums of positive terms: full relative precision in every entry
    for k in (46_118, 46_491, 46_677, 46_864):  # 6, 8, 9 and 10 sd above the mean 45 000 (sd 184.4)
        expected = pmf[pmf <= pmf[k - lo1 - lo2] * (1 + 1e-7)].sum()
        assert expected < 3e-9
        assert poisson_binomial_two_sided(k, [p1, p2], [n1, n2]) == pytest.approx(expected, rel=1e-9, abs=0)


def test_poisson_binomial_two_sided_is_the_doubled_tail_where_the_law_drops_below_e_minus_80():
    # documented switch: once P(k) < e⁻⁸⁰ · max P, the doubled one-sided tail (an upper bound) is returned
    from scipy.stats import binom

    n1, p1, n2, p2 = 6000, 0.25, 4000, 0.2
    j = np.arange(n1 + 1)

    def log_pmf(s: int) -> float:
        return float(logsumexp(binom.logpmf(j, n1, p1) + binom.logpmf(s - j, n2, p2)))

    log_mode = log_pmf(2300)
    assert log_pmf(2844) - log_mode > -80.0 > log_pmf(2845) - log_mode  # −79.83 and −80.11
    doubled = 2 * _two_binomial_tail_ge(2845, n1, p1, n2, p2)
    assert poisson_binomial_two_sided(2845, [p1, p2], [n1, n2]) == pytest.approx(doubled, rel=1e-9, abs=0)
    assert poisson_binomial_two_sided(2844, [p1, p2], [n1, n2]) < doubled  # inside: the pmf sum, no doubling


def test_poisson_binomial_probabilities_are_read_in_double_precision():
    # float32 probabilities: the same values as float64 give bit-for-bit the same tails (float32 logits would not)
    p32 = (1.0 / np.random.default_rng(24).integers(2, 7, 300)).astype(np.float32)
    p64 = p32.astype(np.float64)
    for k in (40, 150, 250):
        assert poisson_binomial_tail_ge(k, p32) == poisson_binomial_tail_ge(k, p64)
        assert poisson_binomial_two_sided(k, p32) == poisson_binomial_two_sided(k, p64)


def test_cluster_robust_se_accepts_two_clusters_and_factorize_codes_index_the_labels():
    # two films: p̂ = 0.6; residuals 1 − 0.6·2 = −0.2 and 2 − 0.6·3 = 0.2; sqrt(2/1 · 0.08)/5 = 0.08
    labels = ["B", "B", "A", "A", "A"]
    codes, names = factorize(labels)
    assert [names[c] for c in codes] == labels  # integer codes, in first-appearance order
    assert codes.tolist() == [0, 0, 1, 1, 1] and codes.dtype == np.int64
    assert cluster_robust_se([1, 0, 1, 1, 0], codes) == pytest.approx(0.08, rel=1e-12, abs=0)


def test_impossible_trials_leave_the_two_sided_binomial_test_unchanged():
    # p = 0 trials never succeed: with one other probability left, the result is the exact binomial test, also
    # far in the tail (k = 600 of 1000 at p = 0.3, P ≈ 1.7e-85), where the doubled tail 2.8e-85 would differ
    for k in (250, 400, 600):
        expected = binom_two_sided(k, 1000, 0.3)
        assert poisson_binomial_two_sided(k, [0.0, 0.3], [5, 1000]) == pytest.approx(expected, rel=1e-12, abs=0)
    assert binom_two_sided(600, 1000, 0.3) == pytest.approx(1.684255e-85, rel=1e-6, abs=0)


def test_bootstrap_and_clustered_se_read_their_inputs_in_double_precision():
    """float32 scores, float32 replicates and float or unsigned cluster codes give bit-for-bit the results of the
    same values as float64 / int64 (float32 sums and quantiles would be off by ~1e-7 relative)."""
    x32 = np.random.default_rng(25).normal(size=400).astype(np.float32)  # 400 distinct values: index resampling
    x64 = x32.astype(np.float64)
    reps32 = bootstrap_means(x32, 50, np.random.default_rng(26))
    assert reps32.tolist() == bootstrap_means(x64, 50, np.random.default_rng(26)).tolist()
    rng = np.random.default_rng(27)
    for _ in range(300):  # float32 interpolation rounds differently in a few % of these
        r32, level = rng.normal(size=int(rng.integers(2, 500))).astype(np.float32), float(rng.uniform(0.01, 0.99))
        assert percentile_interval(r32, level) == percentile_interval(r32.astype(np.float64), level)
    codes = np.repeat(np.arange(8), 50)
    expected = cluster_robust_se(x64, codes)
    assert cluster_robust_se(x32, codes) == expected
    assert cluster_robust_se(x64, codes.astype(np.float64)) == expected
    assert cluster_robust_se(x64, codes.astype(np.uint64)) == expected
