"""Threshold-tail statistics of pre-reset membrane offsets u = v − ϑ: band fraction, band density, kernel tail."""

from collections.abc import Sequence

import numpy as np
from pydantic import Field

from service.estimators.snn_lif import SurrogateKind, kernel_tail_mass
from service.types import ResultModel

MAX_TIME_POINTS = 1000


class LayerTail(ResultModel):
    """Tail statistics of one layer's offsets."""

    layer: int = Field(description="Layer index l (1-based; the last is the output layer).")
    n_units: int = Field(description="Units n_l of the layer.")
    band_frac: list[float] = Field(description="Share of the layer's offsets with |u| ≤ ε, one per ε.")
    band_density: list[float] = Field(description="band_frac(ε)/(2ε), one per ε.")
    kernel_tail: float = Field(description="Mean of κ_F(u) over the layer's offsets.")


class TimeTail(ResultModel):
    """Tail statistics per time step (all layers), at most 1,000 evenly spaced steps."""

    t: list[int] = Field(description="Time steps (1-based) reported.")
    band_frac: list[list[float]] = Field(description="band_frac[i][j]: share with |u| ≤ eps[i] at step t[j].")
    kernel_tail: list[float] = Field(description="Mean κ_F(u) at each reported step.")


class TailStats(ResultModel):
    """The threshold-tail functional over all pre-reset offsets of the hard trajectory."""

    eps: list[float] = Field(description="Band half-widths ε.")
    band_frac: list[float] = Field(description="band_frac(ε) = (1/N_U)·Σ 1{|u| ≤ ε}, one per ε.")
    band_density: list[float] = Field(description="band_frac(ε)/(2ε), one per ε.")
    surrogate: str = Field(description="Surrogate kind whose kernel defines kernel_tail.")
    width: float = Field(description="Surrogate width (δ, k, α or a).")
    kernel_tail: float = Field(description="(1/N_U)·Σ κ_F(u) with κ_F(u) = 2|F(u) − H(u)|.")
    n_u: int = Field(description="N_U: number of offsets, T·B·Σ_l n_l.")
    per_layer: list[LayerTail] = Field(description="The same statistics per layer.")
    per_time: TimeTail = Field(description="The same statistics per time step.")


def tail_stats(u_layers: Sequence[np.ndarray], eps: Sequence[float], kind: SurrogateKind, width: float) -> TailStats:
    """band_frac(ε), band_density(ε) and kernel_tail over offsets given per layer as (T, B, n_l) arrays."""
    e = np.asarray(eps, dtype=np.float64)
    n_t = u_layers[0].shape[0]
    n_u = sum(u.size for u in u_layers)
    band_sum = np.zeros(e.size)
    band_t = np.zeros((e.size, n_t))
    kern_sum = 0.0
    kern_t = np.zeros(n_t)
    per_layer: list[LayerTail] = []
    for i, u in enumerate(u_layers):
        a = np.abs(u)
        counts_t = np.stack([np.count_nonzero(a <= x, axis=(1, 2)) for x in e])
        kern = kernel_tail_mass(kind, width, u).sum(axis=(1, 2))
        band_t += counts_t
        band_sum += counts_t.sum(axis=1)
        kern_t += kern
        kern_sum += float(kern.sum())
        frac = counts_t.sum(axis=1) / u.size
        per_layer.append(
            LayerTail(
                layer=i + 1,
                n_units=u.shape[2],
                band_frac=frac.tolist(),
                band_density=(frac / (2 * e)).tolist(),
                kernel_tail=float(kern.sum()) / u.size,
            )
        )
    per_step = n_u / n_t
    idx = np.unique(np.linspace(0, n_t - 1, min(n_t, MAX_TIME_POINTS)).round().astype(np.int64))
    frac = band_sum / n_u
    return TailStats(
        eps=e.tolist(),
        band_frac=frac.tolist(),
        band_density=(frac / (2 * e)).tolist(),
        surrogate=kind,
        width=width,
        kernel_tail=kern_sum / n_u,
        n_u=n_u,
        per_layer=per_layer,
        per_time=TimeTail(
            t=(idx + 1).tolist(),
            band_frac=(band_t[:, idx] / per_step).tolist(),
            kernel_tail=(kern_t[idx] / per_step).tolist(),
        ),
    )
