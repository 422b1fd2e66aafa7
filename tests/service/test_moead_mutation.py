"""MOEA/D on OneMinMax: the checks written for the survivors of the second wave's mutation run (docs/testing.md).

The plot and overlay tests draw a hand-made result, so every drawn number is known in advance; the simulator tests
compare with exact values computed here by hand or by brute force over the bit strings."""

import itertools
import math
from collections import defaultdict
from fractions import Fraction
from functools import cache

import numpy as np
import pytest
from scipy.stats import binom, chisquare

from service.errors import Degenerate, InvalidInput
from service.estimators.moead import (
    OmmRuntimeParams,
    OmmScalingParams,
    OmmScalingPoint,
    OmmScalingResult,
    omm_runtime,
    omm_scaling,
    runtime_cost,
    scaling_cost,
    scaling_curves,
    scaling_plot,
)
from service.estimators.moead_sim import T_MAX, _archive_batch, _neighbourhoods, omm_runtime_bits, omm_runtimes
from service.plot_overlay import Curve, Curves
from service.registry import no_progress


def hand_result(ns: list[int], means: list[float], ses: list[float | None]) -> OmmScalingResult:
    """A scaling result with chosen means, standard errors and slope CI (the other fields are not drawn)."""
    points = [
        OmmScalingPoint(
            n=n,
            max_evals=10**6,
            finished=30,
            unfinished=0,
            mean=m,
            sd=None if se is None else se * math.sqrt(30),
            se=se,
            median=m,
            evals_over_n2=m / n**2,
            evals_over_n2_log_n=m / (n**2 * math.log(n)),
        )
        for n, m, se in zip(ns, means, ses, strict=True)
    ]
    return OmmScalingResult(
        points=points,
        slope=2.034,
        slope_ci_low=1.9049,
        slope_ci_high=2.1751,
        slope_log_adjusted=1.5,
        slope_log_adjusted_ci_low=1.4,
        slope_log_adjusted_ci_high=1.6,
        ci_level=0.95,
        bootstrap=2000,
        warnings=[],
        reconstructed=[],
    )


def test_scaling_plot_draws_each_mean_with_its_1_96_se_bar_and_the_ols_power_law() -> None:
    ns, means, ses = [4, 16, 64], [40.0, 900.0, 9000.0], [5.0, None, 120.0]
    fig = scaling_plot(hand_result(ns, means, ses))
    ax = fig.axes[0]
    assert tuple(fig.get_size_inches()) == (6.0, 4.0)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("n", "evaluations to cover the Pareto front")
    assert ax.get_xscale() == ax.get_yscale() == "log"

    markers = ax.lines[0]
    assert (markers.get_marker(), markers.get_linestyle()) == ("o", "None")  # points only, not joined
    assert list(markers.get_xdata()) == ns and list(markers.get_ydata()) == means
    # the error bars: mean ± 1.96·se, none where se is null
    bars = ax.containers[0].lines[2][0].get_segments()
    half = [(seg[1][1] - seg[0][1]) / 2 for seg in bars]
    assert half == pytest.approx([1.96 * 5.0, 0.0, 1.96 * 120.0], rel=1e-12, abs=0)
    assert [(seg[0][1] + seg[1][1]) / 2 for seg in bars] == pytest.approx(means, rel=1e-12)

    # the fitted line: exp(a + b ln n) with the OLS a, b of ln(mean) on ln n, written out by hand
    x, y = [math.log(n) for n in ns], [math.log(m) for m in means]
    xm, ym = sum(x) / 3, sum(y) / 3
    b = sum((xi - xm) * (yi - ym) for xi, yi in zip(x, y, strict=True)) / sum((xi - xm) ** 2 for xi in x)
    a = ym - b * xm
    fit = ax.lines[-1]
    assert fit is not markers and fit.get_linestyle() == "-"
    assert list(fit.get_xdata()) == ns
    assert list(fit.get_ydata()) == pytest.approx([math.exp(a + b * xi) for xi in x], rel=1e-10)

    legend = ax.get_legend()
    assert sorted(t.get_text() for t in legend.get_texts()) == ["OLS slope 2.03 [1.90, 2.18]", "mean runtime"]
    assert {t.get_fontsize() for t in legend.get_texts()} == {8.0}


def test_scaling_plot_of_two_sizes_still_draws_the_fitted_line() -> None:
    """The smallest grid a scaling run accepts has two sizes: the line through both means is drawn."""
    ax = scaling_plot(hand_result([8, 32], [100.0, 1700.0], [4.0, 30.0])).axes[0]
    fit = ax.lines[-1]
    assert fit is not ax.lines[0]
    assert list(fit.get_ydata()) == pytest.approx([100.0, 1700.0], rel=1e-12)  # two points: the line is exact


def test_scaling_curves_are_the_plotted_means_on_log_log_axes() -> None:
    result = hand_result([4, 16, 64], [40.0, 900.0, 9000.0], [5.0, None, 120.0])
    assert scaling_curves(result) == Curves(
        "n",
        "evaluations to cover the Pareto front",
        (Curve("mean runtime", [4, 16, 64], [40.0, 900.0, 9000.0]),),
        x_log=True,
        y_log=True,
    )


def test_scaling_cost_uses_the_grids_evaluation_factor() -> None:
    """Each n is priced at its cap ceil(factor·n²·ln n), the factor of the params, not the default 50."""
    grid = OmmScalingParams(ns=[16, 32], r=1, reps=30, max_evals_factor=10.0)
    expected = sum(
        runtime_cost(OmmRuntimeParams(n=n, r=1, reps=30, max_evals=math.ceil(10.0 * n * n * math.log(n))))
        for n in (16, 32)
    )
    assert scaling_cost(grid) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------- the simulator against the exact law


def mutation_law(n: int, mutation: str, beta: float) -> list[list[tuple[int, float]]]:
    """law[k]: the (|y|₁, probability) pairs of a mutant of x = 1^k 0^(n−k), by enumerating the flipped bits."""
    law = []
    for k in range(n + 1):
        out: dict[int, float] = defaultdict(float)
        if mutation == "standard_bit":  # every subset of bits, each bit flipped with probability 1/n
            for mask in itertools.product((0, 1), repeat=n):
                m = sum(mask)
                out[k - sum(mask[:k]) + sum(mask[k:])] += (1 / n) ** m * (1 - 1 / n) ** (n - m)
        else:  # ℓ with probability ∝ ℓ^(−β), then each ℓ-subset of the n bits equally likely
            z = sum(ell**-beta for ell in range(1, n + 1))
            for ell in range(1, n + 1):
                subsets = list(itertools.combinations(range(n), ell))
                for s in subsets:
                    ones = sum(1 for b in s if b < k)
                    out[k - ones + (ell - ones)] += ell**-beta / z / len(subsets)
        law.append(sorted(out.items()))
    return law


def exact_runtime_law(
    n: int,
    num_sub: int,
    r: int,
    parent: str = "own",
    tie_rule: str = "<=",
    scalarization: str = "tchebycheff",
    mutation: str = "standard_bit",
    beta: float = 1.5,
    tail: float = 1e-7,
) -> np.ndarray:
    """P(runtime = t) for t = 0, 1, …: the MOEA/D of the module docstring run as a Markov chain on the states
    (|x_0|₁, …, |x_N|₁, archive), one evaluation per transition, until less than ``tail`` of the mass is left."""
    big_n, full = num_sub - 1, (1 << (n + 1)) - 1
    law = mutation_law(n, mutation, beta)

    def g(j: int, k: int) -> int:  # N·g_j with weights j/N and ideal point (n, n)
        a, b = j * k, (big_n - j) * (n - k)
        return max(a, b) if scalarization == "tchebycheff" else a + b

    def takes(j: int, y: int, k: int) -> bool:
        return g(j, y) < g(j, k) or (tie_rule == "<=" and g(j, y) == g(j, k))

    @cache
    def step(i: int, ks: tuple[int, ...], archive: int) -> tuple[tuple[object, float], ...]:
        lo, hi = max(0, i - r), min(big_n, i + r)
        parents = [i] if parent == "own" else list(range(lo, hi + 1))
        out: dict[object, float] = defaultdict(float)
        for j in parents:
            for y, q in law[ks[j]]:
                a = archive | (1 << y)
                if a == full:
                    out[None] += q / len(parents)
                else:
                    new = tuple(y if lo <= jj <= hi and takes(jj, y, kk) else kk for jj, kk in enumerate(ks))
                    out[(new, a)] += q / len(parents)
        return tuple(out.items())

    p_t = [0.0]
    dist: dict[tuple[tuple[int, ...], int], float] = {((), 0): 1.0}
    for _ in range(num_sub):  # initialisation: N + 1 uniform strings, |x|₁ ~ Bin(n, 1/2)
        new_dist: dict[tuple[tuple[int, ...], int], float] = defaultdict(float)
        done = 0.0
        for (ks, archive), p in dist.items():
            for k in range(n + 1):
                q = p * math.comb(n, k) / 2**n
                if archive | (1 << k) == full:
                    done += q
                else:
                    new_dist[((*ks, k), archive | (1 << k))] += q
        dist = new_dist
        p_t.append(done)
    i = 0
    while sum(dist.values()) > tail:
        new_dist, done = defaultdict(float), 0.0
        for state, p in dist.items():
            for nxt, q in step(i, *state):
                if nxt is None:
                    done += p * q
                else:
                    new_dist[nxt] += p * q
        dist = new_dist
        p_t.append(done)
        i = (i + 1) % num_sub
    return np.array(p_t)


@pytest.mark.parametrize(
    ("n", "num_sub", "r", "variant"),
    [
        (3, 4, 1, {}),
        (4, 3, 1, {}),
        (3, 4, 2, {"tie_rule": "<"}),
        (3, 3, 1, {"parent": "uniform", "tie_rule": "<", "scalarization": "weighted_sum"}),
        (3, 4, 1, {"parent": "uniform", "scalarization": "weighted_sum"}),
        (3, 2, 1, {"scalarization": "weighted_sum"}),
        (4, 3, 1, {"scalarization": "weighted_sum"}),  # the middle subproblem ties on every offspring
        (4, 3, 1, {"scalarization": "weighted_sum", "tie_rule": "<"}),
        (3, 3, 0, {"mutation": "power_law", "beta": 2.0}),
        (2, 3, 0, {"mutation": "power_law", "beta": 3.5, "scalarization": "weighted_sum"}),
    ],
)
def test_runtime_law_is_the_exact_markov_chain_law(n: int, num_sub: int, r: int, variant: dict) -> None:
    """20 000 seeded replicates against the exact law of the chain: chi-square over every runtime with at least 20
    expected replicates (the rest pooled into the two tails) at level 10⁻³, and the mean within 4 standard errors."""
    reps = 20_000
    evals, _ = omm_runtimes(n, num_sub, r, reps, np.random.default_rng(11), max_evals=10**6, **variant)
    p = exact_runtime_law(n, num_sub, r, **variant)
    expected = p * reps
    big = np.flatnonzero(expected >= 20)
    lo, hi = big[0], big[-1]
    observed = np.concatenate(
        [[np.sum(evals <= lo)], np.bincount(evals, minlength=hi)[lo + 1 : hi], [np.sum(evals >= hi)]]
    )
    pooled = np.concatenate([[expected[: lo + 1].sum()], expected[lo + 1 : hi], [reps - expected[:hi].sum()]])
    assert chisquare(observed, pooled).pvalue > 1e-3
    t = np.arange(p.size)
    mean, var = (p * t).sum(), (p * t**2).sum() - (p * t).sum() ** 2
    assert abs(evals.mean() - mean) < 4 * math.sqrt(var / reps)


def test_archive_batch_finds_each_completing_step_by_brute_force() -> None:
    """Random batches against a step-by-step walk of each replicate's archive (a Python set)."""
    rng = np.random.default_rng(3)
    completed = 0
    for _ in range(300):
        n, width, steps = int(rng.integers(1, 6)), int(rng.integers(1, 7)), int(rng.integers(1, 9))
        seen = rng.random((width, n + 1)) < rng.random()
        buf = rng.integers(0, n + 1, size=(steps, width))
        active = rng.random(width) < 0.8
        walk = []
        for c in range(width):
            archive = set(np.flatnonzero(seen[c]).tolist())
            first_full = None if len(archive) < n + 1 else -1
            for s in range(steps):
                archive.add(int(buf[s, c]))
                if first_full is None and len(archive) == n + 1:
                    first_full = s
            walk.append((archive, first_full))
        fresh = any(len(a) > int(seen[c].sum()) for c, (a, _) in enumerate(walk))
        done, step = _archive_batch(buf, seen, active, np.arange(width), n)
        expected = {c: f for c, (_, f) in enumerate(walk) if active[c] and f is not None}
        if not fresh:  # nothing new: nothing can have completed in this batch
            assert done.size == step.size == 0
            continue
        assert dict(zip(done.tolist(), step.tolist(), strict=True)) == expected
        assert [set(np.flatnonzero(row).tolist()) for row in seen] == [a for a, _ in walk]  # merged in place
        completed += len(expected)
    assert completed > 50


def test_neighbourhoods_are_the_index_windows_of_radius_r() -> None:
    assert _neighbourhoods(5, 0) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    assert _neighbourhoods(5, 1) == [(0, 2), (0, 3), (1, 4), (2, 5), (3, 5)]
    assert _neighbourhoods(4, 2) == [(0, 3), (0, 4), (0, 4), (1, 4)]


# ---------------------------------------------------------------- omm_scaling


def test_each_scaling_point_is_the_runtime_call_at_that_n_and_the_ci_is_the_seeded_bootstrap() -> None:
    """A non-default variant and cap factor: every point is ``omm_runtime`` at n with n + 1 subproblems, the same
    seed and cap ceil(factor·n²·ln n); the slope CI is the 2.5/97.5 % quantile of the OLS slopes of 2000 resampled
    mean pairs (replicates resampled within each n from the generator seeded [seed, 1])."""
    variant = {"r": 2, "reps": 6, "seed": 9, "parent_selection": "uniform", "tie_rule": "<"}
    res = omm_scaling(OmmScalingParams(ns=[6, 12], max_evals_factor=20.0, **variant), no_progress)
    samples = []
    for n, point in zip([6, 12], res.points, strict=True):
        cap = math.ceil(20.0 * n * n * math.log(n))
        single = omm_runtime(OmmRuntimeParams(n=n, max_evals=cap, **variant), no_progress)
        assert single.num_subproblems == n + 1
        assert (point.n, point.max_evals, point.finished, point.unfinished) == (n, cap, 6, 0)
        assert (point.mean, point.sd, point.se, point.median) == (single.mean, single.sd, single.se, single.median)
        samples.append(np.array(single.evals, dtype=float))
    rng = np.random.default_rng([9, 1])
    boot = np.stack([s[rng.integers(0, s.size, size=(2000, s.size))].mean(axis=1) for s in samples])
    x = np.log([6.0, 12.0])
    slopes = np.diff(np.log(boot), axis=0)[0] / np.diff(x)[0]  # two points: the OLS line joins them
    assert res.slope == pytest.approx(np.diff(np.log([p.mean for p in res.points]))[0] / np.diff(x)[0], rel=1e-12)
    assert (res.slope_ci_low, res.slope_ci_high) == pytest.approx(tuple(np.quantile(slopes, [0.025, 0.975])), rel=1e-9)
    assert res.warnings == []  # n + 1 subproblems at every n: no configuration note


def test_scaling_reports_progress_inside_each_n_and_ends_with_the_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("service.estimators.moead_sim.PROGRESS_SECONDS", -1.0)  # report after every batch
    calls: list[tuple[float, str]] = []
    omm_scaling(OmmScalingParams(ns=[8, 16], reps=4), lambda f, m="": calls.append((f, m)))
    assert calls[0] == (0.0, "n=8") and calls[-1] == (1.0, "fit")
    for idx, n in enumerate([8, 16]):
        inside = [f for f, m in calls[:-1] if m == f"n={n}"][1:]  # after the call opening this n
        assert inside and all(idx / 2 <= f <= (idx + 1) / 2 for f in inside), (n, inside)
    assert [m for _, m in calls].count("n=16") >= 2 and calls.index((0.5, "n=16")) > 0


def test_scaling_names_the_cap_factor_when_no_replicate_finishes_and_counts_the_unfinished() -> None:
    with pytest.raises(Degenerate) as e:
        omm_scaling(OmmScalingParams(ns=[16, 32], reps=3, max_evals_factor=0.01), no_progress)
    assert e.value.loc == ("max_evals_factor",)
    res = omm_scaling(OmmScalingParams(ns=[16, 17], r=0, reps=40, max_evals_factor=1.9), no_progress)
    expected = [
        f"n={p.n}: {p.unfinished} replicates hit max_evals={math.ceil(1.9 * p.n * p.n * math.log(p.n))}."
        for p in res.points
    ]
    assert all(0 < p.unfinished < 40 for p in res.points)
    assert res.warnings == expected


def test_scaling_grid_must_increase_strictly_and_r_may_reach_the_first_ns_n() -> None:
    with pytest.raises(InvalidInput) as e:
        omm_scaling(OmmScalingParams(ns=[16, 16], reps=2), no_progress)
    assert e.value.loc == ("ns",)
    res = omm_scaling(OmmScalingParams(ns=[4, 8], r=4, reps=2), no_progress)  # r = N = 4 at the first n
    assert [p.n for p in res.points] == [4, 8]
    notes = omm_scaling(OmmScalingParams(ns=[4, 8], reps=2, scalarization="weighted_sum"), no_progress).warnings
    assert notes == ["weighted_sum: the g-optima are only |x|₁ ∈ {0, n} (every |x|₁ for i = N/2)."]


def test_runtime_configuration_notes_name_each_unusual_setting() -> None:
    share = "N + 1 = 10 > n + 1: several subproblems share a g-optimum."
    gap = (
        "N < n: some Pareto points are no g-optimum and must be hit by mutation; once the population sits on the "
        "g-optima, standard bit mutation needs ~n^(n/(2N)) evaluations per gap (Doerr, Krejca & Weeks 2024)."
    )
    weighted = "weighted_sum: the g-optima are only |x|₁ ∈ {0, n} (every |x|₁ for i = N/2)."

    def notes(**kw: object) -> list[str]:
        return omm_runtime(OmmRuntimeParams(reps=2, seed=1, **kw), no_progress).warnings

    assert notes(n=8, num_subproblems=10) == [share]  # N + 1 = n + 2
    assert notes(n=8, num_subproblems=9) == []
    assert notes(n=8, num_subproblems=10, scalarization="weighted_sum") == [weighted]
    assert notes(n=6, num_subproblems=6) == [gap]  # N + 1 = n
    assert notes(n=6, num_subproblems=6, mutation="power_law") == []  # power-law mutation jumps the gaps


def test_runtime_reports_progress_with_its_n(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("service.estimators.moead_sim.PROGRESS_SECONDS", -1.0)  # report after every batch
    calls: list[tuple[float, str]] = []
    omm_runtime(OmmRuntimeParams(n=16, reps=3), lambda f, m="": calls.append((f, m)))
    assert calls and {m for _, m in calls} == {"n=16"}
    assert all(0 <= f <= 1 for f, _ in calls)


def test_reconstructed_fields_are_named() -> None:
    res = omm_scaling(OmmScalingParams(ns=[4, 8], reps=2), no_progress)
    assert res.reconstructed == ["points", "slope", "slope_log_adjusted"]


def test_cost_with_r_equal_to_n_counts_every_subproblem_in_each_neighbourhood() -> None:
    """r = N: every B(i) is all N + 1 = 17 subproblems, so the work is max_evals·(reps·(1 + 17/40) + 100)."""
    params = OmmRuntimeParams(n=16, r=16, reps=30, max_evals=1000)
    assert runtime_cost(params) == pytest.approx(1000 * (30 * (1 + 17 / 40) + 100), rel=1e-12)


@pytest.mark.parametrize(
    ("n", "num_sub", "r", "variant"),
    [
        (3, 4, 1, {}),
        (3, 3, 1, {"parent": "uniform", "tie_rule": "<", "scalarization": "weighted_sum"}),
        (3, 3, 2, {"mutation": "power_law", "beta": 2.0, "tie_rule": "<"}),
        (2, 3, 1, {"mutation": "power_law", "beta": 0.5}),  # ℓ = 2 flips both bits: 0 ↔ 2
    ],
)
def test_bit_level_reference_follows_the_exact_markov_chain_law(n: int, num_sub: int, r: int, variant: dict) -> None:
    """The bit-level reference (one Python step per evaluation) on 1500 seeded runs: chi-square against the exact
    law at level 10⁻³, as for the count-level simulator."""
    reps, rng = 1500, np.random.default_rng(5)
    evals = np.array([omm_runtime_bits(n, num_sub, r, rng, max_evals=10**6, **variant) for _ in range(reps)])
    expected = exact_runtime_law(n, num_sub, r, **variant) * reps
    big = np.flatnonzero(expected >= 20)
    lo, hi = big[0], big[-1]
    counts = np.bincount(evals, minlength=hi)
    observed = np.concatenate([[np.sum(evals <= lo)], counts[lo + 1 : hi], [np.sum(evals >= hi)]])
    pooled = np.concatenate([[expected[: lo + 1].sum()], expected[lo + 1 : hi], [reps - expected[:hi].sum()]])
    assert chisquare(observed, pooled).pvalue > 1e-3


def test_bit_level_reference_reports_the_cap() -> None:
    """A cap below every possible runtime gives −1; runs that finish report at most the cap."""
    rng = np.random.default_rng(2)
    assert [omm_runtime_bits(6, 7, 1, rng, max_evals=7) for _ in range(50)].count(-1) >= 49  # 7 strings cover 7 values
    runs = [omm_runtime_bits(3, 4, 1, rng, max_evals=12) for _ in range(400)]
    assert set(runs) <= {-1, *range(4, 13)} and 0 < runs.count(-1) < 400


def test_simulator_defaults_to_beta_1_5_and_guards_its_step_clock() -> None:
    def run(**kw: object) -> np.ndarray:
        return omm_runtimes(6, 7, 1, 20, np.random.default_rng(4), max_evals=10**5, mutation="power_law", **kw)[0]

    assert run().tolist() == run(beta=1.5).tolist() != run(beta=2.5).tolist()
    # the clock counts max_evals + num_sub steps in T_BITS bits: the largest cap it takes, and one more
    evals, _ = omm_runtimes(2, 3, 1, 2, np.random.default_rng(0), max_evals=T_MAX - 3)
    assert (evals > 0).all()
    with pytest.raises(ValueError):
        omm_runtimes(2, 3, 1, 2, np.random.default_rng(0), max_evals=T_MAX - 2)


def test_runtime_ratios_divide_the_mean_by_n_squared_and_by_n_squared_ln_n() -> None:
    res = omm_runtime(OmmRuntimeParams(n=12, reps=5, seed=2), no_progress)
    mean = sum(res.evals) / 5
    assert res.mean == pytest.approx(mean, rel=1e-12)
    assert res.evals_over_n2 == pytest.approx(mean / 144, rel=1e-12)
    assert res.evals_over_n2_log_n == pytest.approx(mean / (144 * math.log(12)), rel=1e-12)


# ---------------------------------------------------------------- the simulator against a replay of fixed draws


class ScriptedRng:
    """Stands in for the ``np.random.Generator`` of a one-replicate ``omm_runtimes`` run. Every draw is the inverse
    CDF, at a uniform of a seeded stream indexed by (generation, subproblem), of the law the simulator asks for, so
    ``replay`` can run the same trajectory step by step; batching does not change which draw a step gets."""

    def __init__(self, seed: int, num_sub: int, gens: int = 2000) -> None:
        src = np.random.default_rng(seed)
        self.init, self.pick, self.ell = (src.random((gens, num_sub)) for _ in range(3))
        self.raw = src.bit_generator.random_raw((gens, num_sub))
        self.hyper = src.random(gens * num_sub)
        self.bit_generator = self
        self.offset = {"raw": 0, "choice": 0, "integers": 0}
        self.h = 0

    def _rows(self, stream: str, shape: tuple[int, int, int]) -> slice:
        gens, _, width = shape
        assert width == 1
        g0 = self.offset[stream]
        self.offset[stream] += gens
        return slice(g0, g0 + gens)

    def binomial(self, n: int, p: float, size: tuple[int, int]) -> np.ndarray:
        num_sub, reps = size
        assert reps == 1
        return binom.ppf(self.init[0, :num_sub], n, p).astype(np.int64)[:, None]

    def random_raw(self, shape: tuple[int, int, int]) -> np.ndarray:
        return self.raw[self._rows("raw", shape), : shape[1], None].copy()

    def choice(self, a: np.ndarray, size: tuple[int, int, int], p: np.ndarray) -> np.ndarray:
        cdf = np.cumsum(p)
        u = self.ell[self._rows("choice", size), : size[1], None]
        return a[np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), a.size - 1)]

    def integers(self, low: int, high: np.ndarray, size: tuple[int, int, int]) -> np.ndarray:
        u = self.pick[self._rows("integers", size), : size[1], None]
        return (low + np.floor(u * (high - low))).astype(np.int64)

    def hypergeometric(self, ngood: np.ndarray, nbad: np.ndarray, nsample: np.ndarray) -> np.ndarray:
        u = self.hyper[self.h]
        self.h += 1
        return np.array([hypergeometric_quantile(u, int(ngood[0]), int(nbad[0]), int(nsample[0]))])


def hypergeometric_quantile(u: float, good: int, bad: int, draws: int) -> int:
    """The smallest h with P(H ≤ h) > u, H the ones among ``draws`` bits drawn without replacement."""
    total, cdf = math.comb(good + bad, draws), 0
    for h in range(draws + 1):
        cdf += math.comb(good, h) * math.comb(bad, draws - h)
        if cdf > u * total:
            return h
    raise AssertionError("u < 1")


@cache
def bit_mutation_cdf(n: int, k: int) -> list[int]:
    """round(2⁵³·P(|y|₁ ≤ y)) for y = 0..n under standard bit mutation of |x|₁ = k, in exact rational arithmetic:
    y = k − (ones flipped) + (zeros flipped), each bit flipped with probability 1/n."""
    p = Fraction(1, n)
    pmf = [Fraction(0)] * (n + 1)
    for a in range(k + 1):
        for b in range(n - k + 1):
            pa = math.comb(k, a) * p**a * (1 - p) ** (k - a)
            pmf[k - a + b] += pa * math.comb(n - k, b) * p**b * (1 - p) ** (n - k - b)
    return [round(sum(pmf[: y + 1]) * 2**53) for y in range(n + 1)]


def replay(
    n: int,
    num_sub: int,
    r: int,
    rng: ScriptedRng,
    *,
    parent: str = "own",
    tie_rule: str = "<=",
    scalarization: str = "tchebycheff",
    mutation: str = "standard_bit",
    beta: float = 1.5,
    max_evals: int,
    same_generation_ties: str = "newer",
) -> int:
    """The algorithm of moead_sim's docstring one evaluation at a time on the draws of ``rng`` (consumed from its
    streams directly): the runtime, or −1 past ``max_evals``. ``same_generation_ties="older"`` breaks the "<=" rule
    on purpose: an x_j set earlier in the same generation keeps a tie."""
    big_n = num_sub - 1

    def g(j: int, k: int) -> int:
        a, b = j * k, (big_n - j) * (n - k)
        return max(a, b) if scalarization == "tchebycheff" else a + b

    ks = [int(binom.ppf(u, n, 0.5)) for u in rng.init[0, :num_sub]]
    archive: set[int] = set()
    for evals, k in enumerate(ks, start=1):
        archive.add(k)
        if len(archive) == n + 1:
            return evals
    weights = [ell**-beta for ell in range(1, n + 1)]
    ell_cdf = np.cumsum(weights) / sum(weights)
    h, gen = 0, 0
    while evals < max_evals:
        set_now: set[int] = set()  # the x_j replaced in this generation
        for i in range(num_sub):
            lo, hi = max(0, i - r), min(big_n, i + r)
            j = i if parent == "own" else lo + int(rng.pick[gen, i] * (hi - lo + 1))
            k = ks[j]
            if mutation == "standard_bit":
                u = int(rng.raw[gen, i]) >> 11  # 53 uniform bits
                y = next(v for v, c in enumerate(bit_mutation_cdf(n, k)) if c > u)
            else:
                ell = 1 + min(int(np.searchsorted(ell_cdf, rng.ell[gen, i] * ell_cdf[-1], side="right")), n - 1)
                y = k + ell - 2 * hypergeometric_quantile(rng.hyper[h], k, n - k, ell)
                h += 1
            evals += 1
            archive.add(y)
            if len(archive) == n + 1:
                return evals if evals <= max_evals else -1
            for jj in range(lo, hi + 1):
                tie = tie_rule == "<=" and g(jj, y) == g(jj, ks[jj])
                if g(jj, y) < g(jj, ks[jj]) or (tie and not (same_generation_ties == "older" and jj in set_now)):
                    ks[jj] = y
                    set_now.add(jj)
        gen += 1
    return -1


@pytest.mark.parametrize(
    ("n", "num_sub", "r", "variant"),
    [
        (4, 5, 1, {}),
        (5, 5, 2, {}),  # N < n
        (4, 5, 1, {"tie_rule": "<"}),
        (4, 5, 2, {"parent": "uniform"}),
        (4, 3, 1, {"parent": "uniform", "tie_rule": "<", "scalarization": "weighted_sum"}),
        (4, 5, 1, {"mutation": "power_law", "beta": 2.5}),
        (5, 4, 1, {"mutation": "power_law", "parent": "uniform", "tie_rule": "<"}),
        (6, 7, 1, {"max_evals": 45}),  # some runs hit the cap
    ],
)
def test_runtime_is_the_step_by_step_algorithm_on_the_same_draws(n: int, num_sub: int, r: int, variant: dict) -> None:
    """One replicate per seed, fed fixed draws: the count-level simulator (batched generations, the state words'
    clocks deciding ties inside a generation) returns exactly the runtime of the step-by-step replay."""
    kw = {"max_evals": 10**4, **variant}
    got, want = [], []
    for seed in range(30):
        got.append(int(omm_runtimes(n, num_sub, r, 1, ScriptedRng(seed, num_sub), **kw)[0][0]))
        want.append(replay(n, num_sub, r, ScriptedRng(seed, num_sub), **kw))
    assert got == want
    assert len(set(want)) > 5 and (-1 in want) == ("max_evals" in variant)


@pytest.mark.parametrize(
    ("n", "num_sub", "r", "variant", "seeds"),
    [
        (6, 7, 2, {}, [261, 386, 469]),
        (6, 7, 2, {"parent": "uniform"}, [123, 649]),
        (6, 5, 2, {"mutation": "power_law"}, [27, 75, 103, 179]),
    ],
)
def test_a_later_offspring_of_the_same_generation_wins_a_tie(
    n: int, num_sub: int, r: int, variant: dict, seeds: list[int]
) -> None:
    """Seeds (found by searching 1000) where two offspring of one generation tie at some g_j with different |x|₁
    and the tie decides the runtime: the replay gives another runtime when the earlier one keeps x_j; the simulator
    gives the replay's ("<=": the newer y replaces x_j)."""
    kw = {"max_evals": 10**4, **variant}
    for seed in seeds:
        want = replay(n, num_sub, r, ScriptedRng(seed, num_sub), **kw)
        assert replay(n, num_sub, r, ScriptedRng(seed, num_sub), **kw, same_generation_ties="older") != want
        assert omm_runtimes(n, num_sub, r, 1, ScriptedRng(seed, num_sub), **kw)[0][0] == want


def test_bit_level_reference_defaults_are_own_parent_le_tchebycheff_standard_bit_and_beta_1_5() -> None:
    """Same seeds, defaults left out or spelled out: the same runtimes; each other setting changes some of them."""

    def runs(**kw: object) -> list[int]:
        return [omm_runtime_bits(4, 5, 1, np.random.default_rng(s), max_evals=10**4, **kw) for s in range(25)]

    explicit = {"parent": "own", "tie_rule": "<=", "scalarization": "tchebycheff", "mutation": "standard_bit"}
    assert runs() == runs(**explicit)
    for key, other in [("parent", "uniform"), ("tie_rule", "<"), ("scalarization", "weighted_sum")]:
        assert runs(**{**explicit, key: other}) != runs(), key
    assert runs(mutation="power_law") == runs(mutation="power_law", beta=1.5) != runs(mutation="power_law", beta=2.5)


class RecordingRng:
    """A seeded generator that records the shape of every batch of mutation draws (``random_raw``)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.bit_generator = self
        self.shapes: list[tuple[int, int, int]] = []

    def random_raw(self, size: tuple[int, int, int]) -> np.ndarray:
        self.shapes.append(size)
        return self.rng.bit_generator.random_raw(size)

    def binomial(self, n: int, p: float, size: tuple[int, int]) -> np.ndarray:
        return self.rng.binomial(n, p, size=size)


def test_batches_grow_with_the_run_stay_within_chunk_elements_and_stop_at_max_evals() -> None:
    """No replicate can finish (n = 60 in 86 generations): every batch runs in full, so its length is the documented
    rule, max(1, min(2¹⁸ // (5·3000) = 17, generations left, max(8, generations so far + 1))): 8, 9, 17, 17, 17, 17
    and the 1 left before max_evals = 5 + 86·5; the work is every replicate for all 86 generations."""
    rng = RecordingRng(0)
    evals, work = omm_runtimes(60, 5, 1, 3000, rng, max_evals=435)
    assert (evals == -1).all()
    assert rng.shapes == [(g, 5, 3000) for g in (8, 9, 17, 17, 17, 17, 1)]
    assert work == 3000 * 5 * 86


def test_finished_replicates_are_dropped_from_later_batches() -> None:
    """Runtimes spread over several batches: the batches are the documented schedule replayed from the returned
    runtimes. A batch (length as above) draws for the replicates unfinished before it and ends after the first
    generation that leaves at most half of them unfinished; the work is their evaluations in the generations run."""
    m, reps = 9, 40
    rng = RecordingRng(1)
    evals, work = omm_runtimes(8, m, 1, reps, rng, max_evals=10**5)
    assert (evals > 0).all()
    expected, base, total = [], m, 0
    while (evals > base).any():
        width = int((evals > base).sum())
        gens = max(1, min(2**18 // (m * width), -(-(10**5 - base) // m), max(8, base // m)))
        expected.append((gens, m, width))
        for _ in range(gens):
            base += m
            total += width * m
            if 2 * int((evals > base).sum()) <= width:
                break
    assert rng.shapes == expected and len(expected) >= 3
    assert work == total


def test_bit_level_uniform_parent_is_drawn_from_the_neighbourhood() -> None:
    """parent="uniform": step i draws its parent index uniformly from B(i) = [max(0, i − r), min(N, i + r)]."""
    calls: list[tuple[int, int]] = []
    rng = np.random.default_rng(6)

    class Recording:
        def __getattr__(self, name: str) -> object:
            return getattr(rng, name)

        def integers(self, low: int, high: int) -> int:
            calls.append((low, high))
            return rng.integers(low, high)

    omm_runtime_bits(6, 5, 1, Recording(), parent="uniform", max_evals=10**4)  # type: ignore[arg-type]
    windows = [(0, 2), (0, 3), (1, 4), (2, 5), (3, 5)]  # (lo, hi + 1) for N = 4, r = 1
    assert len(calls) >= 10 and calls == [windows[s % 5] for s in range(len(calls))]


def test_bit_level_reference_finishing_exactly_at_the_cap_is_finished() -> None:
    """The draws do not depend on max_evals, so a run with runtime t gives t again at max_evals = t, and −1 at t − 1."""
    for seed in range(10):
        t = omm_runtime_bits(4, 3, 1, np.random.default_rng(seed), max_evals=10**4)
        assert t > 3
        assert omm_runtime_bits(4, 3, 1, np.random.default_rng(seed), max_evals=t) == t
        assert omm_runtime_bits(4, 3, 1, np.random.default_rng(seed), max_evals=t - 1) == -1
