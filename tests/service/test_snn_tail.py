"""Per-layer threshold-tail statistics of `tail_stats`, by hand."""

import numpy as np
import pytest

from service.estimators.snn_tail import tail_stats


def test_per_layer_band_density_is_the_layer_fraction_over_the_band_width() -> None:
    # T = 2, B = 1; offsets layer 1: [0.05], [2.0]; layer 2: [0.3, −0.5], [0.0, −1.2].
    u = [np.array([[[0.05]], [[2.0]]]), np.array([[[0.3, -0.5]], [[0.0, -1.2]]])]
    res = tail_stats(u, [0.1, 0.5], "rect", 1.0)
    # layer 1: |u| ≤ 0.1 → 1 of 2, |u| ≤ 0.5 → 1 of 2; layer 2: 1 of 4 (0.0) and 3 of 4 (0.3, −0.5, 0.0).
    assert res.per_layer[0].band_density == pytest.approx([0.5 / 0.2, 0.5 / 1.0], rel=1e-12)
    assert res.per_layer[1].band_density == pytest.approx([0.25 / 0.2, 0.75 / 1.0], rel=1e-12)
    assert [p.n_units for p in res.per_layer] == [1, 2]
