"""ubench.uscore at asymmetric weights and α (docs/ubench.md): Eq. 2's weighted harmonic mean and Eq. 3 by hand."""

import math

import pytest

from service.estimators import ubench as U
from service.registry import no_progress

UNET_BUSI = {"iou": 0.6557507, "params_m": 34.527041, "gflops": 65.522368512, "fps": 137.05495, "dataset": "busi"}


def uscore(**kw: object) -> U.UScoreResult:
    return U.uscore_fn(U.UScoreParams(**{**UNET_BUSI, **kw}), no_progress)


def test_asymmetric_weights_and_alpha_by_hand() -> None:
    """p = (4.32 − ln 34.527)/(4.32 − 0.39), g = (4.20 − ln 65.52)/(4.20 − 0.88) = 0.0053 → floor 0.05, s = 1;
    Eff = Σw/Σ(w/v) and U = 100/(α/a + (1 − α)/Eff)."""
    p = (4.32 - math.log(34.527041)) / (4.32 - 0.39)
    g = max((4.20 - math.log(65.522368512)) / (4.20 - 0.88), 0.05)
    a = uscore().a
    for w in ([0.6, 0.3, 0.1], [0.1, 0.3, 0.6], [2.0, 1.0, 1.0]):
        r = uscore(weights=w, alpha=0.8)
        eff = sum(w) / (w[0] / p + w[1] / g + w[2] / 1.0)
        assert r.eff == pytest.approx(eff, rel=1e-12)
        assert r.uscore_100 == pytest.approx(100 / (0.8 / a + 0.2 / eff), rel=1e-12)
    heavy_params, heavy_speed = uscore(weights=[0.6, 0.3, 0.1]), uscore(weights=[0.1, 0.3, 0.6])
    # swapping the weights of p and s moves Eff from 1/(0.6/p + 6 + 0.1) to 1/(0.1/p + 6 + 0.6)
    assert heavy_speed.eff - heavy_params.eff == pytest.approx(
        1 / (0.1 / p + 6.0 + 0.6) - 1 / (0.6 / p + 6.0 + 0.1), rel=1e-10
    )
    assert uscore(alpha=0.8).uscore_100 != pytest.approx(uscore(alpha=0.2).uscore_100, rel=1e-3)
    r = uscore(alpha=0.2)
    assert r.uscore_100 == pytest.approx(100 / (0.2 / a + 0.8 / r.eff), rel=1e-12)
