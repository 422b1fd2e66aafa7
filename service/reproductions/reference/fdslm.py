"""The lag of a leaky-integrator dialogue state by hand: z_k = 1 − (1 − κ)^k after the onset, steered by α."""

import math


def leaky_lag(kappa: float, alpha: float) -> int:
    """The first frame k ≥ 0 after the onset with z_k + α > ½, i.e. (1 − κ)^k < ½ + α: 0 when α ≥ ½, else
    ⌊ln(½ + α)/ln(1 − κ)⌋ + 1 (z rises monotonically, so every later frame stays perceptive)."""
    if alpha >= 0.5:
        return 0
    return math.floor(math.log(0.5 + alpha) / math.log(1.0 - kappa)) + 1
