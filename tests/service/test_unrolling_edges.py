"""unrolling.jacobian_error's edges: the sampled iterations, the boundaries of its input checks, hand-computed
small cases of the curve fields."""

import numpy as np
import pytest

from service.estimators.unrolling import sample_times


def test_every_iteration_is_sampled_up_to_the_budget() -> None:
    # 1000 samples less the 4 always-kept iterations: K = 996 keeps every iteration, K = 997 does not.
    assert sample_times(996, [0, 1, 5, 996]).tolist() == list(range(1, 997))
    assert sample_times(3, [0, 1]).tolist() == [1, 2, 3]
    t = sample_times(997, [0, 1, 5, 997])
    assert 0.98 * 996 <= t.size < 997 and t[0] == 1 and t[-1] == 997


@pytest.mark.parametrize("k", [1200, 20_000])
def test_long_runs_are_sampled_log_spaced_with_the_given_iterations(k: int) -> None:
    extra = [0, 1, 2, k]
    t = sample_times(k, extra)
    assert 0.98 * 996 <= t.size <= 996 and np.all(np.diff(t) > 0)
    assert t[0] == 1 and t[-1] == k and t.dtype == np.int64
    assert t[:10].tolist() == list(range(1, 11))  # dense where the log grid is finer than the integers
    if k == 20_000:  # ~230 points a decade: the top decade is far from integer rounding
        top = t[t > k / 10]
        step = np.diff(top) / top[:-1]  # a geometric grid has a constant relative step
        assert step.max() / step.min() < 1.3
    kept = sample_times(k, [300, 301, 5003, k])
    assert {e for e in (300, 301, 5003, k) if e <= k} <= set(kept.tolist())
    assert kept.min() == 1 and kept.max() == k  # an extra beyond K is dropped
