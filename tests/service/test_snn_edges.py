"""snn's edges: the caps at their exact limits, the cost formulas by hand, the width ranges' ends, the input checks."""

import numpy as np
import pytest

from service.errors import InvalidInput
from service.estimators import snn
from service.registry import no_progress


def test_caps_admit_their_exact_limits() -> None:
    # T·B = 50·200 = 10⁴; sizes [125, 400]: Σ n_l·n_(l−1) = 5·10⁴ and Σ n_l = 400, so T·B·Σ n_l·n_(l−1) = 5·10⁸ and
    # T·B·Σ n_l = 4·10⁶, both caps exactly; one more input or unit is over.
    at = snn.GradientMismatchParams(sizes=[125, 400], time_steps=50, batch_size=200)
    per_pass = 5e8 + 40 * 4e6
    assert snn.gradient_mismatch_cost(at) == 4 * per_pass
    for sizes in ([126, 400], [1, 401]):
        with pytest.raises(InvalidInput) as err:
            snn.gradient_mismatch_cost(snn.GradientMismatchParams(sizes=sizes, time_steps=50, batch_size=200))
        assert err.value.loc == ("sizes",)


def test_localzo_cap_and_cost_by_hand() -> None:
    # sizes [1, 100], T = 8, B = 20: T·B·Σ n_l = 16,000 nodes; R·M = 250·50 = 12,500 → 2·10⁸ normals, the cap.
    zo = {"draws": 250, "samples": 50}
    params = snn.GradientMismatchParams(sizes=[1, 100], time_steps=8, batch_size=20, localzo=zo)
    macs, nodes = 8 * 20 * 100, 16_000
    per_pass = macs + 40 * nodes
    assert snn.gradient_mismatch_cost(params) == 4 * per_pass + (3 + 250) * per_pass + 250 * 50 * 20 * nodes
    over = snn.GradientMismatchParams(sizes=[1, 100], time_steps=8, batch_size=20, localzo=zo | {"samples": 51})
    with pytest.raises(InvalidInput) as err:
        snn.gradient_mismatch_cost(over)
    assert err.value.loc == ("localzo", "draws")


def test_fd_check_admits_two_thousand_parameters() -> None:
    # sizes [39, 50]: P = 50·40 = 2000 (the cap); 2P·T·B·Σ n_l·n_(l−1) = 4000·256·1950 ≈ 2.0·10⁹ ≤ 2·10⁹.
    params = snn.GradientMismatchParams(sizes=[39, 50], fd_check=True)
    per_pass = 256 * 1950 + 40 * 256 * 50
    assert snn.gradient_mismatch_cost(params) == (4 + 2 * 2000) * per_pass
    with pytest.raises(InvalidInput) as err:
        snn.gradient_mismatch_cost(snn.GradientMismatchParams(sizes=[39, 50], fd_check=True, time_steps=9))
    assert err.value.loc == ("fd_check",)


@pytest.mark.parametrize(
    ("kind", "lo", "hi"), [("gaussian", 1e-3, 10.0), ("sigmoid", 0.1, 1e3), ("atan", 0.1, 1e3), ("rect", 1e-3, 10.0)]
)
def test_width_range_ends_are_allowed(kind: str, lo: float, hi: float) -> None:
    for width in (lo, hi):
        assert snn.resolve_width(kind, width) == width
    for width in (lo * 0.999, hi * 1.001):
        with pytest.raises(InvalidInput) as err:
            snn.resolve_width(kind, width)
        assert err.value.loc == ("width",)
    assert snn.resolve_width(kind, None) == {"gaussian": 0.5, "sigmoid": 4.0, "atan": 2.0, "rect": 1.0}[kind]


def test_threshold_tail_cost_of_json_traces() -> None:
    # Two layers T×B×n = 2×1×3 and 2×1×1: 8 offsets × (2 ε + 4).
    v = [[[[0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]]], [[[0.0]], [[0.0]]]]
    assert snn.threshold_tail_cost(snn.ThresholdTailParams(v=v, eps=[0.1, 0.2])) == 8 * 6
    assert snn.threshold_tail_cost(snn.ThresholdTailParams(v=v)) == 8 * 9  # the default grid has 5 ε


def test_threshold_tail_one_threshold_for_every_layer() -> None:
    # ϑ = 0.5 for both layers: u = 0.55, −0.5 | 0.45; band_frac(0.5) = 2/3 (|u| ≤ ε inclusive).
    v = [[[[1.05, 0.0]]], [[[0.95]]]]
    res = snn.threshold_tail(snn.ThresholdTailParams(v=v, threshold=0.5, eps=[0.5]), no_progress)
    assert res.band_frac == [pytest.approx(2 / 3)]
    assert res.n_u == 3


def test_resolved_trace_arrays_are_checked() -> None:
    ref = {"array": "sha256:" + "0" * 64}
    base = snn.ThresholdTailParams(v=[ref])
    cases = [
        (np.zeros((2, 3)), "expected a 3-dimensional array"),
        (np.zeros((2, 0, 3)), "empty"),
        (np.array([[[0.0, np.nan]]]), "NaN"),
    ]
    for arr, _ in cases:
        with pytest.raises(InvalidInput) as err:
            snn.threshold_tail(base.model_copy(update={"v": [arr]}), no_progress)
        assert err.value.loc == ("v", 0)
    # a resolved array is not held to the JSON cap of 100,000 values
    res = snn.threshold_tail(base.model_copy(update={"v": [np.full((1, 1000, 101), 2.0)]}), no_progress)
    assert res.n_u == 101_000 and res.band_frac[-1] == 1.0
