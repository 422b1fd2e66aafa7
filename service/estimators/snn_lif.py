"""Leaky integrate-and-fire network numerics: surrogates, hard and smoothed forward passes, one BPTT adjoint.

Notation of the SNN direct-training paper (SG / LocalZO convergence): β leak, ϑ threshold, v pre-reset potential,
u = v − ϑ threshold offset, H(u) = 1{u > 0} the hard spike, F a surrogate CDF with derivative F′. Arrays keep time
on axis −3, batch on −2 and units on −1; any leading axes are independent replicas (used by the finite-difference
check), so every pass is one matmul per layer plus an elementwise loop over time steps.
"""

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import erfc, expit, ndtr

SurrogateKind = Literal["gaussian", "sigmoid", "atan", "rect"]
Reset = Literal["zero", "subtract"]

WIDTH_DEFAULT: dict[str, float] = {"gaussian": 0.5, "sigmoid": 4.0, "atan": 2.0, "rect": 1.0}
WIDTH_RANGE: dict[str, tuple[float, float]] = {
    "gaussian": (1e-3, 10.0),
    "sigmoid": (0.1, 1e3),
    "atan": (0.1, 1e3),
    "rect": (1e-3, 10.0),
}
INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def hard_spike(u: np.ndarray) -> np.ndarray:
    """H(u) = 1 if u > 0 else 0 (H(0) = 0, as LocalZO's ``input > 0``)."""
    return (u > 0).astype(np.float64)


def surrogate_cdf(kind: SurrogateKind, w: float, u: np.ndarray) -> np.ndarray:
    """F(u): Φ(u/δ), σ(ku), ½ + arctan(παu/2)/π or clip(u/a + ½, 0, 1)."""
    if kind == "gaussian":
        return ndtr(u / w)
    if kind == "sigmoid":
        return expit(w * u)
    if kind == "atan":
        return 0.5 + np.arctan(0.5 * np.pi * w * u) / np.pi
    return np.clip(u / w + 0.5, 0.0, 1.0)


def surrogate_grad(kind: SurrogateKind, w: float, u: np.ndarray) -> np.ndarray:
    """F′(u): φ(u/δ)/δ, kσ(ku)σ(−ku), (α/2)/(1 + (παu/2)²) or 1{|u| < a/2}/a (strict)."""
    if kind == "gaussian":
        z = u / w
        return np.exp(-0.5 * z * z) * (INV_SQRT_2PI / w)
    if kind == "sigmoid":
        return w * expit(w * u) * expit(-w * u)
    if kind == "atan":
        return (0.5 * w) / (1.0 + (0.5 * np.pi * w * u) ** 2)
    return (np.abs(u) < 0.5 * w) / w


def kernel_tail_mass(kind: SurrogateKind, w: float, u: np.ndarray) -> np.ndarray:
    """κ_F(u) = 2|F(u) − H(u)|: the surrogate kernel's mass beyond |u|."""
    a = np.abs(u)
    if kind == "gaussian":
        return erfc(a / (w * np.sqrt(2.0)))
    if kind == "sigmoid":
        return 2.0 * expit(-w * a)
    if kind == "atan":
        return 1.0 - (2.0 / np.pi) * np.arctan(0.5 * np.pi * w * a)
    return np.maximum(0.0, 1.0 - 2.0 * a / w)


@dataclass(frozen=True)
class Lif:
    """Neuron and reset constants shared by every layer."""

    beta: float
    threshold: float
    reset: Reset


@dataclass
class Trajectory:
    """One forward pass: the input of each layer, its pre-reset potentials v and its (hard or smoothed) spikes."""

    inputs: list[np.ndarray]
    v: list[np.ndarray]
    s: list[np.ndarray]

    @property
    def rate(self) -> np.ndarray:
        """Output rate r = (1/T)·Σ_t s^L_t."""
        return self.s[-1].mean(axis=-3)


def _affine(s_in: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """s_in Wᵀ + b over (…, T, B, n_in): one GEMM, or one batched GEMM per replica when W has leading axes."""
    if w.ndim == 2 and s_in.ndim == 3:
        return (s_in.reshape(-1, s_in.shape[-1]) @ w.T).reshape(*s_in.shape[:-1], w.shape[0]) + b
    w_t = np.ascontiguousarray(np.swapaxes(w, -1, -2))
    flat = s_in.reshape(*s_in.shape[:-3], -1, s_in.shape[-1])
    out = np.matmul(flat, w_t) + b[..., None, :]
    return out.reshape(*out.shape[:-2], *s_in.shape[-3:-1], w.shape[-2])


def forward(
    x: np.ndarray,
    weights: Sequence[np.ndarray],
    biases: Sequence[np.ndarray],
    lif: Lif,
    spike: Callable[[np.ndarray], np.ndarray],
) -> Trajectory:
    """Integrate → spike → reset for t = 1..T, layer by layer: v_t = β·m_{t−1} + s^{l−1}_t Wᵀ + b, s_t = spike(v_t − ϑ).

    Reset "zero": m_t = (1 − s_t)⊙v_t; "subtract": m_t = v_t − ϑ·s_t. ``spike`` is H (hard) or F (smoothed).
    """
    inputs: list[np.ndarray] = []
    vs: list[np.ndarray] = []
    ss: list[np.ndarray] = []
    s_in = x
    for w, b in zip(weights, biases, strict=True):
        inputs.append(s_in)
        current = _affine(s_in, w, b)
        v = np.empty_like(current)
        s = np.empty_like(current)
        m = np.zeros_like(current[..., 0, :, :])
        for t in range(current.shape[-3]):
            vt = lif.beta * m + current[..., t, :, :]
            st = spike(vt - lif.threshold)
            v[..., t, :, :] = vt
            s[..., t, :, :] = st
            m = (1.0 - st) * vt if lif.reset == "zero" else vt - lif.threshold * st
        vs.append(v)
        ss.append(s)
        s_in = s
    return Trajectory(inputs, vs, ss)


def mse(rate: np.ndarray, y: np.ndarray) -> np.ndarray:
    """L = mean over (b, k) of (r − Y)² (over the last two axes)."""
    return np.mean((rate - y) ** 2, axis=(-2, -1))


def adjoint(
    traj: Trajectory,
    y: np.ndarray,
    weights: Sequence[np.ndarray],
    lif: Lif,
    node_grad: Callable[[int, np.ndarray], np.ndarray],
    detach_reset: bool,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """BPTT of the rate loss through ``traj`` with per-node factors h = ``node_grad(l, u)``; (∇W^l, ∇b^l) per layer.

    ē^L_s = 2(r − Y)/(B·K·T); backwards in t: ē_v = ē_s⊙h + ē_m⊙D, ē_m ← β·ē_v, with D = (1 − s) − v⊙h (zero reset)
    or 1 − ϑh (subtract); detached: D = 1 − s or 1. Then ∇W = Σ_t ē_vᵀ s^{l−1}, ∇b = Σ_{t,b} ē_v, ē^{l−1}_s = ē_v W.
    """
    n_t, n_b, n_k = traj.s[-1].shape
    e_s = np.broadcast_to(2.0 * (traj.rate - y) / (n_b * n_k * n_t), traj.s[-1].shape)
    grads: list[tuple[np.ndarray, np.ndarray]] = []
    for layer in range(len(weights) - 1, -1, -1):
        v, s = traj.v[layer], traj.s[layer]
        h = node_grad(layer, v - lif.threshold)
        if lif.reset == "zero":
            d = 1.0 - s if detach_reset else (1.0 - s) - v * h
        else:
            d = np.ones_like(s) if detach_reset else 1.0 - lif.threshold * h
        e_v = np.empty_like(v)
        e_m = np.zeros_like(v[0])
        for t in range(n_t - 1, -1, -1):
            e_v[t] = e_s[t] * h[t] + e_m * d[t]
            e_m = lif.beta * e_v[t]
        n_out = v.shape[-1]
        s_in = traj.inputs[layer]
        grad_w = e_v.reshape(-1, n_out).T @ s_in.reshape(-1, s_in.shape[-1])
        grads.append((grad_w, e_v.sum(axis=(0, 1))))
        if layer:
            e_s = e_v @ weights[layer]
    return grads[::-1]


def flatten(grads: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """θ order: W^1 (row-major), b^1, …, W^L, b^L."""
    return np.concatenate([part.ravel() for pair in grads for part in pair])


def unflatten(theta: np.ndarray, sizes: Sequence[int]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Split θ (…, P) into W^l (…, n_l, n_{l−1}) and b^l (…, n_l)."""
    lead = theta.shape[:-1]
    weights: list[np.ndarray] = []
    biases: list[np.ndarray] = []
    at = 0
    for n_in, n_out in itertools.pairwise(sizes):
        weights.append(theta[..., at : at + n_in * n_out].reshape(*lead, n_out, n_in))
        at += n_in * n_out
        biases.append(theta[..., at : at + n_out])
        at += n_out
    return weights, biases


def n_params(sizes: Sequence[int]) -> int:
    """P = Σ_l n_l·(n_{l−1} + 1)."""
    return sum(n_out * (n_in + 1) for n_in, n_out in itertools.pairwise(sizes))


def localzo_node_grad(
    rng: np.random.Generator, u_layers: Sequence[np.ndarray], delta: float, samples: int, chunk: int
) -> list[np.ndarray]:
    """LocalZO per-node factor ĥ = (1/(2δM))·Σ_m 1{|u| < δ|z_m|}·|z_m|, z ~ N(0, 1) drawn per layer as (M, T, B, n_l).

    The M draws are generated ``chunk`` at a time along the first axis, which consumes the generator exactly as
    one (M, T, B, n_l) draw.
    """
    out: list[np.ndarray] = []
    for u in u_layers:
        a = np.abs(u) / delta
        acc = np.zeros_like(u)
        done = 0
        while done < samples:
            m = min(chunk, samples - done)
            z = np.abs(rng.standard_normal((m, *u.shape)))
            acc += np.where(a < z, z, 0.0).sum(axis=0)
            done += m
        out.append(acc / (2.0 * delta * samples))
    return out
