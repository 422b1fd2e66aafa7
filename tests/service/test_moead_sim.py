"""MOEA/D on OneMinMax (docs/moead.md): the work counter of the simulator and the log-adjusted slope's CI."""

import math

import numpy as np
import pytest

from service.estimators.moead import OmmRuntimeParams, OmmScalingParams, omm_runtime, omm_scaling
from service.registry import no_progress


def test_simulated_evals_bound_the_replicates_own_evaluations() -> None:
    """Replicates run in lockstep, one generation (num_subproblems evaluations) at a time, until all finish: the
    work is a whole number of generations, at least the evaluations after initialisation of every replicate
    and at most every replicate running as long as the slowest."""
    res = omm_runtime(OmmRuntimeParams(n=24, r=1, reps=12, seed=5), no_progress)
    evals, m = np.array(res.evals), res.num_subproblems
    assert res.finished == 12 and res.simulated_evals % m == 0
    assert np.sum(evals - m) <= res.simulated_evals <= 12 * m * math.ceil((evals.max() - m) / m)
    assert res.mean_generations == pytest.approx(np.mean((evals - m) / m), rel=1e-12)


def test_log_adjusted_slope_and_its_ci_are_the_slope_shifted_by_the_log_log_slope() -> None:
    """OLS is linear in y, so slope(ln n, ln mean − ln ln n) = slope − c with c = slope(ln n, ln ln n), for the
    estimate and for every bootstrap replicate, hence for the percentile CI ends; the CI is the 95 % one of
    2000 resamples (moead.py BOOTSTRAP, CI_LEVEL)."""
    res = omm_scaling(OmmScalingParams(ns=[16, 32, 64], r=1, reps=20, seed=4), no_progress)
    x = np.log([16.0, 32.0, 64.0])
    c = np.polyfit(x, np.log(x), 1)[0]
    assert res.slope == pytest.approx(np.polyfit(x, np.log([p.mean for p in res.points]), 1)[0], rel=1e-12)
    assert res.slope_log_adjusted == pytest.approx(res.slope - c, rel=1e-12)
    assert res.slope_log_adjusted_ci_low == pytest.approx(res.slope_ci_low - c, rel=1e-9, abs=1e-12)
    assert res.slope_log_adjusted_ci_high == pytest.approx(res.slope_ci_high - c, rel=1e-9, abs=1e-12)
    assert res.slope_log_adjusted_ci_low < res.slope_log_adjusted < res.slope_log_adjusted_ci_high
    assert (res.ci_level, res.bootstrap) == (0.95, 2000)
    assert math.isclose(c, 1 / math.log(32), rel_tol=0.05)  # d ln ln n / d ln n = 1/ln n at the middle of the grid
