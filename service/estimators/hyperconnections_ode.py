"""Continuous-depth self-attention with hyper-connections: vector field, RK4 runs and the spectrum at H = 0."""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

DIVERGENCE_NORM = 1e6
"""A run counts as diverged once ‖H‖_F exceeds this."""
COLLAPSE_NORM = 1e-6
HYPERBOLIC_TOL = 1e-9
CONVERGED_SPEED = 1e-4
"""‖dH/dt‖_F / ‖H‖_F below this at the end of a bounded run: a non-trivial equilibrium."""
DECAY_SLOPE = -1e-3
OSC_MIN_CROSSINGS = 4
FD_STEP = 1e-7


@dataclass(frozen=True)
class System:
    """dH/dt = (A_r − I)^T H + β SA(Σ_i α_i H_i), SA(Z) = softmax(Z W Z^T + M) Z V, H of shape n × N × d."""

    a_r: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    w: np.ndarray
    v: np.ndarray
    n_tokens: int
    causal: bool

    @property
    def r(self) -> np.ndarray:
        """R = (A_r − I)^T, the residual block acting on the stream index."""
        return (self.a_r - np.eye(self.a_r.shape[0])).T


def field(system: System, h: np.ndarray) -> np.ndarray:
    """The vector field at a batch of states ``h`` (..., n, N, d); the softmax subtracts the row max after masking."""
    z = np.einsum("i,...ind->...nd", system.alpha, h)
    scores = z @ system.w @ np.swapaxes(z, -1, -2)
    if system.causal:
        scores = np.where(np.tri(system.n_tokens, dtype=bool), scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    attended = weights @ z @ system.v
    return np.einsum("ij,...jnd->...ind", system.r, h) + system.beta[:, None, None] * attended[..., None, :, :]


def attention_spectrum(n_tokens: int, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues p of the attention matrix at H = 0 and their multiplicities.

    Bidirectional: P0 = 11^T/N, p ∈ {1, 0} with multiplicities 1 and N − 1; causal: rows 1/i on and below the
    diagonal, p = 1/i for i = 1..N.
    """
    if causal:
        return 1.0 / np.arange(1, n_tokens + 1), np.ones(n_tokens, dtype=np.int64)
    return np.array([1.0, 0.0]), np.array([1, n_tokens - 1], dtype=np.int64)


def grouped_eigenvalues(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct eigenvalues μ of V (equal within 1e-9·max(1, |μ|max)) and their algebraic multiplicities."""
    mu = np.linalg.eigvals(v).astype(np.complex128)
    tol = 1e-9 * max(1.0, float(np.abs(mu).max()))
    label = np.argmax(np.abs(mu[:, None] - mu[None, :]) <= tol, axis=1)
    heads, counts = np.unique(label, return_counts=True)
    return mu[heads], counts


@dataclass(frozen=True)
class Spectrum:
    """Eigenvalues of the Jacobian at H = 0, one row per eigenvalue of each (p, μ) block."""

    values: np.ndarray
    p: np.ndarray
    mu: np.ndarray
    multiplicity: np.ndarray
    blocks: np.ndarray
    """The distinct blocks C = R + p·μ·β α^T, shape (n_blocks, n, n)."""
    block_p: np.ndarray
    block_mu: np.ndarray
    block_multiplicity: np.ndarray

    @property
    def abscissa(self) -> float:
        return float(self.values.real.max())

    def leading(self) -> complex:
        """An eigenvalue of largest real part (the one with the largest |Im| among ties within 1e-12)."""
        re = self.values.real
        top = self.values[re >= re.max() - 1e-12]
        return complex(top[np.argmax(np.abs(top.imag))])


def block_matrices(system: System, block_p: np.ndarray, block_mu: np.ndarray) -> np.ndarray:
    """The blocks C = R + p·μ·β α^T, shape (n_blocks, n, n); real when every p·μ is real."""
    scale = block_p * block_mu
    if not np.any(scale.imag):
        scale = scale.real
    return system.r[None, :, :] + scale[:, None, None] * np.outer(system.beta, system.alpha)[None, :, :]


def spectrum(system: System) -> Spectrum:
    """spec(J) = ∪_{p ∈ spec(P0)} ∪_{μ ∈ spec(V)} spec(R + p·μ·β α^T), each block with multiplicity m_p·m_μ.

    Exact because J = R ⊗ I + βα^T ⊗ (P0 ⊗ V^T) and a Schur triangularisation of P0 ⊗ V^T makes J block
    triangular with the blocks above on its diagonal.
    """
    p, p_mult = attention_spectrum(system.n_tokens, system.causal)
    mu, mu_mult = grouped_eigenvalues(system.v)
    n = system.a_r.shape[0]
    block_p = np.repeat(p, mu.size)
    block_mu = np.tile(mu, p.size)
    block_mult = np.repeat(p_mult, mu.size) * np.tile(mu_mult, p.size)
    blocks = block_matrices(system, block_p, block_mu)
    values = np.linalg.eigvals(blocks).astype(np.complex128)
    return Spectrum(
        values=values.ravel(),
        p=np.repeat(block_p, n),
        mu=np.repeat(block_mu, n),
        multiplicity=np.repeat(block_mult, n),
        blocks=blocks,
        block_p=block_p,
        block_mu=block_mu,
        block_multiplicity=block_mult,
    )


def fd_jacobian(system: System) -> np.ndarray:
    """Central-difference Jacobian of the full non-linear field at H = 0 (step 1e-7), on the flattened state."""
    n = system.a_r.shape[0]
    shape = (n, system.n_tokens, system.w.shape[0])
    m = int(np.prod(shape))
    basis = (FD_STEP * np.eye(m)).reshape(m, *shape)
    diff = field(system, basis) - field(system, -basis)
    return (diff.reshape(m, m) / (2 * FD_STEP)).T


def kronecker_jacobian(system: System) -> np.ndarray:
    """J = R ⊗ I_{Nd} + βαᵀ ⊗ (P0 ⊗ Vᵀ) on the flattened state (stream, token, dim), P0 the attention at H = 0."""
    big_n, d = system.n_tokens, system.w.shape[0]
    p0 = np.full((big_n, big_n), 1.0 / big_n)
    if system.causal:
        p0 = np.tri(big_n) / np.arange(1, big_n + 1)[:, None]
    coupling = np.outer(system.beta, system.alpha)
    return np.kron(system.r, np.eye(big_n * d)) + np.kron(coupling, np.kron(p0, system.v.T))


def spectrum_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Largest |a_i − b_π(i)| under the matching π minimising the total distance (no sorting of eigenvalues)."""
    cost = np.abs(a[:, None] - b[None, :])
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].max())


@dataclass(frozen=True)
class Run:
    """An RK4 run: regime, end time, norms and projections at every step."""

    regime: str
    t_end: float
    times: np.ndarray
    norms: np.ndarray
    frequency: float | None


def rk4(
    system: System,
    h0: np.ndarray,
    t_max: float,
    dt: float,
    progress: Callable[[float], None],
) -> Run:
    """Classical RK4 with step dt until t_max (steps = round(t_max/dt)) or until ‖H‖_F > 1e6 (divergence; a norm
    that overflowed is recorded as the largest double)."""
    steps = max(1, round(t_max / dt))
    norms = np.empty(steps + 1)
    proj = np.empty(steps + 1)
    direction = h0 / max(float(np.linalg.norm(h0)), np.finfo(float).tiny)
    h = h0.copy()
    norms[0] = np.linalg.norm(h)
    proj[0] = np.vdot(direction, h)
    report = max(1, steps // 50)
    last = steps
    for k in range(1, steps + 1):
        k1 = field(system, h)
        k2 = field(system, h + 0.5 * dt * k1)
        k3 = field(system, h + 0.5 * dt * k2)
        k4 = field(system, h + dt * k3)
        h = h + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        norms[k] = np.linalg.norm(h)
        proj[k] = np.vdot(direction, h)
        if not norms[k] <= DIVERGENCE_NORM:
            if not np.isfinite(norms[k]):
                norms[k] = np.finfo(float).max
            last = k
            break
        if k % report == 0:
            progress(k / steps)
    times = dt * np.arange(last + 1)
    norms, proj = norms[: last + 1], proj[: last + 1]
    if not norms[-1] <= DIVERGENCE_NORM:
        return Run("divergence", float(times[-1]), times, norms, None)
    speed = float(np.linalg.norm(field(system, h))) / max(float(norms[-1]), np.finfo(float).tiny)
    frequency = _frequency(times, proj, norms)
    return Run(_regime(times, norms, speed, frequency), float(times[-1]), times, norms, frequency)


def _frequency(times: np.ndarray, proj: np.ndarray, norms: np.ndarray) -> float | None:
    """Angular frequency π·(c − 1)/(t_last − t_first) from the c mean crossings of the projection of H on H0
    over the second half of the run (crossing times interpolated linearly); None for fewer than 4 crossings or an
    oscillation amplitude below 1e-3 of the mean norm."""
    half = times.size // 2
    t, x = times[half:], proj[half:]
    x = x - x.mean()
    if x.std() <= 1e-3 * norms[half:].mean():
        return None
    idx = np.flatnonzero(np.signbit(x[:-1]) != np.signbit(x[1:]))
    if idx.size < OSC_MIN_CROSSINGS:
        return None
    crossing = t[idx] - x[idx] * (t[idx + 1] - t[idx]) / (x[idx + 1] - x[idx])
    return float(np.pi * (idx.size - 1) / (crossing[-1] - crossing[0]))


def _slope(times: np.ndarray, log_norm: np.ndarray) -> float:
    t = times - times.mean()
    return float(t @ (log_norm - log_norm.mean()) / (t @ t))


def _regime(times: np.ndarray, norms: np.ndarray, speed: float, frequency: float | None) -> str:
    """collapse (‖H‖ < 1e-6, or a steady exponential decay: log-slope < −1e-3 over the last quarter and at least
    half the slope of the third quarter), nontrivial (‖dH/dt‖/‖H‖ < 1e-4 at the end), oscillation (≥ 4 crossings
    of the projection in the second half), else undetermined."""
    if norms[-1] < COLLAPSE_NORM:
        return "collapse"
    q = times.size // 4
    if q >= 2:
        log_norm = np.log(np.maximum(norms, np.finfo(float).tiny))
        s3 = _slope(times[2 * q : 3 * q], log_norm[2 * q : 3 * q])
        s4 = _slope(times[3 * q :], log_norm[3 * q :])
        if s4 < DECAY_SLOPE and s4 <= 0.5 * s3:
            return "collapse"
    if speed < CONVERGED_SPEED:
        return "nontrivial"
    if frequency is not None:
        return "oscillation"
    return "undetermined"
