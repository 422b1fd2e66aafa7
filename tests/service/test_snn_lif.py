"""snn_lif's numerics at their edges: the hard spike at u = 0, the rect surrogate away from a = 1 and at |u| = a/2,
LocalZO's chunked draws against one draw of all M samples."""

import numpy as np
import pytest

from service.estimators.snn_lif import Lif, forward, hard_spike, localzo_node_grad, surrogate_cdf, surrogate_grad


def test_hard_spike_is_zero_at_the_threshold() -> None:
    # H(0) = 0 (LocalZO's ``input > 0``): a potential exactly at ϑ does not fire.
    assert hard_spike(np.array([-1.0, 0.0, 1e-300, 2.0])).tolist() == [0.0, 0.0, 1.0, 1.0]
    assert hard_spike(np.array([0.0])).dtype == np.float64
    # x = 1, W = 0.5, b = 0.5, ϑ = 1: v = 1 = ϑ, no spike; β·(1 − 0)·1 + 1 = 1.5 at the next step fires
    traj = forward(np.ones((2, 1, 1)), [np.array([[0.5]])], [np.array([0.5])], Lif(0.5, 1.0, "zero"), hard_spike)
    assert traj.v[0].ravel().tolist() == [1.0, 1.5] and traj.s[0].ravel().tolist() == [0.0, 1.0]


@pytest.mark.parametrize("a", [0.5, 2.0])
def test_rect_surrogate_is_one_over_a_strictly_inside(a: float) -> None:
    # F(u) = clip(u/a + ½, 0, 1): F′ = 1/a on |u| < a/2 and 0 outside; at |u| = a/2 the strict reading gives 0.
    u = np.array([0.0, 0.3 * a, -0.3 * a, 0.5 * a, -0.5 * a, 0.7 * a])
    assert surrogate_grad("rect", a, u).tolist() == [1 / a, 1 / a, 1 / a, 0.0, 0.0, 0.0]
    # the slope of the CDF inside the band
    assert (surrogate_cdf("rect", a, np.array([0.1 * a])) - surrogate_cdf("rect", a, np.array([0.0])))[0] == (
        pytest.approx(0.1)
    )


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64])
def test_localzo_chunks_consume_the_generator_as_one_draw(chunk: int) -> None:
    # ĥ = (1/(2δM))·Σ_m 1{|u| < δ|z_m|}·|z_m| with z drawn as one (M, T, B, n) array per layer, layer by layer.
    u_layers = [np.linspace(-1, 1, 12).reshape(2, 2, 3), np.array([[[0.05, -0.4]], [[0.2, 0.0]]])]
    delta, samples = 0.4, 5
    rng = np.random.default_rng(3)
    expected = []
    for u in u_layers:
        z = np.abs(rng.standard_normal((samples, *u.shape)))
        expected.append(np.where(np.abs(u) / delta < z, z, 0.0).sum(axis=0) / (2 * delta * samples))
    got = localzo_node_grad(np.random.default_rng(3), u_layers, delta, samples, chunk)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=0)
    assert np.count_nonzero(got[0]) > 0
